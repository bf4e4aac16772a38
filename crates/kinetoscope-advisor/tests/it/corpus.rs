//! The advisor on traces with known, planted problems (corpus/record.py; see
//! corpus/README.md): each planted problem is found and ranked first or second, the
//! clean run raises no warning, and every finding's impact is consistent with the
//! overview numbers.

use kinetoscope_advisor::{Config, Severity, TraceReport};

use crate::common::{advise_rank_traces, corpus, ids, position, read_file, report_file};

/// The advisor's report on `corpus/traces/<rel>`.
fn report(rel: &str, config: &Config) -> TraceReport {
    report_file(&corpus(rel), config)
}

/// Assert that the planted problem `id` is found in `rel`, ranked first or second, at
/// warning or above, in a consistent report.
fn assert_planted(rel: &str, id: &str) -> TraceReport {
    let r = report(rel, &Config::default());
    let pos = position(&r.findings, id)
        .unwrap_or_else(|| panic!("{id} not found in {rel}: {:?}", ids(&r.findings)));
    assert!(
        pos <= 1,
        "{id} ranked {} in {rel}: {:?}",
        pos + 1,
        ids(&r.findings)
    );
    assert!(
        r.findings[pos].severity >= Severity::Warning,
        "{:?}",
        r.findings[pos]
    );
    assert_consistent(&r);
    r
}

/// Impacts within the step; shares within 0–1 and matching impact / step; the
/// breakdown adds up to the step; host phases fit in the step.
fn assert_consistent(r: &TraceReport) {
    let step_ms = r.summary.step_stats.as_ref().expect("steps").mean_ns / 1e6;
    for f in &r.findings {
        assert!(f.impact_ns_per_step >= 0.0, "{f:?}");
        assert!(
            f.impact_ns_per_step / 1e6 <= step_ms * 1.0001,
            "{} > step {step_ms}",
            f.id
        );
        assert!((0.0..=1.0).contains(&f.impact_share), "{f:?}");
        let pct = 100.0 * f.impact_ns_per_step / 1e6 / step_ms;
        assert!(
            (pct - f.impact_share * 100.0).abs() < 0.01,
            "{}: {pct} vs {}",
            f.id,
            f.impact_share * 100.0
        );
        assert!(!f.evidence.is_empty() && !f.fix.is_empty() && !f.details.is_empty());
        assert!(f.confidence.steps <= f.confidence.of_steps, "{f:?}");
    }
    let share: f64 = r
        .summary
        .breakdown_share
        .as_ref()
        .expect("breakdown")
        .to_array()
        .iter()
        .sum();
    assert!((share - 1.0).abs() < 1e-4, "breakdown sums to {share}");
    let p = &r.summary.phases;
    let phases = [p.dataloader_ns, p.forward_ns, p.backward_ns, p.optimizer_ns]
        .iter()
        .flatten()
        .sum::<f64>()
        / 1e6;
    assert!(
        phases <= step_ms * 1.0001,
        "phases {phases} > step {step_ms}"
    );
}

#[test]
fn dataloader_stall_is_found_first() {
    let r = assert_planted("dataloader/trace.json.gz", "IN001");
    let f = &r.findings[0];
    assert_eq!(f.id, "IN001");
    assert!(f.impact_share * 100.0 > 50.0, "{f:?}");
    assert!(f
        .evidence
        .iter()
        .any(|e| e.contains("_SingleProcessDataLoaderIter")));
}

#[test]
fn memory_leak_is_found() {
    let r = assert_planted("leak/trace.json.gz", "ME001");
    let f = &r.findings[position(&r.findings, "ME001").unwrap()];
    // The loop keeps 2 MiB of activations (512 × 4 × 256 floats) plus the output per step.
    assert!(f.title.contains("CPU"), "{f:?}");
    assert!(
        f.evidence.iter().any(|e| e.contains("aten::repeat")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn item_sync_is_found_with_its_caller() {
    let r = assert_planted("item_sync/trace.json.gz", "SY001");
    let f = &r.findings[position(&r.findings, "SY001").unwrap()];
    // 32 × 2 per-sample reads + 1 loss read per step.
    assert!(f.title.starts_with("65 "), "{}", f.title);
    assert!(
        f.evidence.iter().any(|e| e.contains("record.py")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn unfused_optimizer_is_found_first() {
    let r = assert_planted("unfused_optimizer/trace.json.gz", "OP001");
    assert_eq!(r.findings[0].id, "OP001");
}

#[test]
fn clean_run_has_no_warning() {
    let r = report("clean/trace.json.gz", &Config::default());
    assert!(
        r.findings.iter().all(|f| f.severity == Severity::Info),
        "{:?}",
        ids(&r.findings)
    );
    assert_consistent(&r);
    // The clean run uses the fused optimizer and keeps nothing across steps.
    assert!(position(&r.findings, "OP001").is_none() && position(&r.findings, "ME001").is_none());
}

#[test]
fn straggler_rank_is_found() {
    let paths = ["straggler/rank0.json.gz", "straggler/rank1.json.gz"];
    let reports: Vec<TraceReport> = paths
        .iter()
        .map(|p| report(p, &Config::default()))
        .collect();
    for r in &reports {
        assert_consistent(r);
        assert!(position(&r.findings, "DI001").is_none());
    }
    let traces: Vec<_> = paths.iter().map(|p| read_file(&corpus(p))).collect();
    let f = advise_rank_traces(&traces, &Config::default(), "straggler");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].id, "DI001");
    assert_eq!(f[0].rank, Some(1), "rank 1 sleeps 30 ms per step: {f:?}");
    assert!(f[0].severity >= Severity::Warning);
    let step = reports[0].summary.step_stats.as_ref().unwrap().mean_ns / 1e6;
    // The planted delay is 30 ms per step; the wait cannot exceed the step.
    assert!(
        f[0].impact_ns_per_step / 1e6 > 15.0 && f[0].impact_ns_per_step / 1e6 <= step,
        "{f:?}"
    );
    assert!(f[0].evidence[0].contains("arrived last at"), "{f:?}");
    assert_eq!(f[0].confidence.ranks, 2);
}

#[test]
fn thresholds_come_from_config() {
    let mut c = Config::from_toml("[dataloader_stall]\nwarning_pct = 99.0\n", &[]).unwrap();
    assert!(position(&report("dataloader/trace.json.gz", &c).findings, "IN001").is_none());
    c.dataloader_stall.warning_pct = 5.0;
    c.gating.min_steps_critical = 2;
    let r = report("dataloader/trace.json.gz", &c);
    assert_eq!(r.findings[0].severity, Severity::Critical);
    // With the default gating (TraceML: 20 steps for critical) six steps give a warning.
    let r = report("dataloader/trace.json.gz", &Config::default());
    assert_eq!(r.findings[0].severity, Severity::Warning);
    assert!(r.findings[0].details.contains("torch-tb-profiler"));
}

#[test]
fn flops_and_mfu_with_peak_override() {
    let r = report("clean/trace.json.gz", &Config::default());
    // 4 × Linear(256, 256) + Linear(256, 10) on a 512 batch: forward 2·512·(4·256·256 + 256·10)
    // = 271,319,040 FLOPs; backward adds the weight and input gradients of every layer
    // except the first layer's input gradient: 2 × forward − 2·512·256·256.
    let fwd = 2.0 * 512.0 * (4.0 * 256.0 * 256.0 + 256.0 * 10.0);
    let expected = fwd + 2.0 * fwd - 2.0 * 512.0 * 256.0 * 256.0;
    let got = r.flops.flops_per_step;
    assert!(
        (got - expected).abs() / expected < 1e-9,
        "{got} vs {expected}"
    );
    assert!(r.flops.mfu.is_none(), "no GPU, no override");
    let c = Config {
        peak_tflops: Some(1.0),
        ..Config::default()
    };
    let r = report("clean/trace.json.gz", &c);
    let mfu = r.flops.mfu.expect("override gives MFU");
    assert!((mfu - r.flops.tflops_per_s.unwrap()).abs() < 1e-12);
}

/// The one timestamped sub-folder of `corpus/traces/run_folder` (nanochat's layout).
fn run_folder() -> std::path::PathBuf {
    let dir = corpus("run_folder");
    let mut subs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(subs.len(), 1, "{subs:?}");
    subs.remove(0)
}

/// nanochat's phases, recorded `with_stack`: the forward pass is the `nn.Module` spans —
/// all four microsteps' forward passes, not only the first (what the step's top-level
/// work before the first backward gave) — and a phase without a forward (model
/// construction, the optimizer step) has none. Phases a trace has no span of (no
/// DataLoader anywhere) are `None`, not 0.
#[test]
fn run_folder_phases_come_from_module_spans() {
    use kinetoscope_advisor::summary::ForwardSource;
    let dir = run_folder();
    let trace_of = |phase: &str| {
        let p = dir.join(format!("{phase}_trace.json.gz"));
        let t = read_file(&p);
        (kinetoscope_advisor::advise_trace(&t, &Config::default()), t)
    };
    let (micro, t) = trace_of("stage3-training_microsteps");
    let modules: Vec<i64> = (0..t.events.len())
        .filter(|&i| t.strings.get(t.events.name[i]) == "nn.Module: TinyGPT_0")
        .map(|i| t.events.dur_ns.at(i))
        .collect();
    assert_eq!(modules.len(), 4, "four forward passes");
    let p = &micro.summary.phases;
    assert_eq!(p.forward_source, Some(ForwardSource::ModuleSpans));
    assert_eq!(p.forward_ns, Some(modules.iter().sum::<i64>() as f64));
    assert!(p.backward_ns.unwrap() > 0.0);
    assert_eq!((p.dataloader_ns, p.optimizer_ns), (None, None));

    let (init, _) = trace_of("stage1-model_init");
    let p = &init.summary.phases;
    assert_eq!(
        (p.forward_ns, p.backward_ns, p.dataloader_ns),
        (None, None, None)
    );
    let (opt, _) = trace_of("stage4-optimizer_step");
    let p = &opt.summary.phases;
    assert_eq!(
        p.forward_ns, None,
        "clip_grad_norm_ and step are no forward pass"
    );
    assert!(p.optimizer_ns.unwrap() > 0.0);

    // Without Python stacks the step's top-level work before the first backward is the
    // forward; with a DataLoader, its time is there.
    let r = report("straggler/rank0.json.gz", &Config::default());
    assert_eq!(
        r.summary.phases.forward_source,
        Some(ForwardSource::StepChildren)
    );
    assert_eq!(r.summary.phases.dataloader_ns, None);
    let r = report("dataloader/trace.json.gz", &Config::default());
    assert!(r.summary.phases.dataloader_ns.unwrap() > 0.0);
}
