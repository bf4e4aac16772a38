//! `kinetoscope diff` on real recorded pairs (`corpus/pairs`, `corpus/pairs-h100`,
//! `corpus/pairs-h200`), each
//! with one planted change that the comparison must put first; on noise (a trace
//! against itself, the same code twice, a slower machine); saved baselines; and HTA's
//! `trace_diff` pair from the shared folder.

use std::path::Path;

use kinetoscope_advisor::{Config, Severity};
use kinetoscope_analysis::diff::items::{ItemStatus, MatchKind};
use kinetoscope_analysis::diff::steps::Verdict;
use kinetoscope_analysis::diff::uniform::MachineVerdict;
use kinetoscope_engine::diff::document::FindingDirection;
use kinetoscope_engine::diff::gate::GateOutcome;
use kinetoscope_engine::{
    to_json, DiffDocument, DiffOptions, Engine, EngineError, GateExpr, Source,
};

use crate::common::{corpus, lenient, pair, require_shared};

fn engine() -> Engine {
    Engine::new(lenient(2))
}

fn diff_paths(base: &Path, new: &Path, gates: &[&str]) -> DiffDocument {
    let opts = DiffOptions {
        fail_if: gates
            .iter()
            .map(|g| g.parse::<GateExpr>().unwrap())
            .collect(),
        ..DiffOptions::default()
    };
    engine()
        .diff(
            &Source::Path(base.to_owned()),
            &Source::Path(new.to_owned()),
            &Config::default(),
            &opts,
        )
        .unwrap()
}

fn diff_pair(set: &str, name: &str, gates: &[&str]) -> DiffDocument {
    let (b, n) = pair(set, name);
    diff_paths(&b, &n, gates)
}

const STEP_GATE: &str = "step_time.median > +5%";

#[test]
fn fused_optimizer_is_the_change() {
    let d = diff_pair("pairs", "optimizer", &[]);
    assert_eq!(d.phases[0].category, "optimizer", "{:?}", d.phases);
    assert!(d.phases[0].delta_ns < 0.0);
    assert_eq!(
        d.findings.resolved[0].id, "OP001",
        "{:?}",
        d.findings.resolved
    );
    // The fused kernel replaces the for-loop's per-parameter element-wise ops.
    let fused = d
        .ops
        .iter()
        .find(|o| o.name == "aten::_fused_adamw_")
        .unwrap();
    assert_eq!(fused.status, ItemStatus::Added);
    assert!(d.ops[0].structural(), "{:?}", d.ops[0]);
    let calls = d.counts.iter().find(|c| c.metric == "ops.calls").unwrap();
    assert!(calls.value.delta.unwrap() < -100.0, "{calls:?}");
}

#[test]
fn dataloader_workers_are_the_change() {
    let d = diff_pair("pairs", "dataloader", &[STEP_GATE]);
    assert_eq!(d.breakdown[0].category, "dataloader");
    assert_eq!(d.breakdown[0].significant, Some(true));
    assert!(d.breakdown[0].delta_ns < 0.0);
    assert_eq!(d.phases[0].category, "dataloader");
    assert_eq!(d.steps.verdict, Verdict::Faster);
    let in001 = d
        .findings
        .changed
        .iter()
        .find(|c| c.subject == "IN001:trace")
        .unwrap();
    assert_eq!(in001.direction, FindingDirection::Better);
    assert!(d.gate.passed);
}

#[test]
fn item_per_sample_is_the_change() {
    let d = diff_pair("pairs", "item_sync", &["sync.calls > 0"]);
    let first = &d.ops[0];
    assert!(
        [
            "aten::argmax",
            "aten::select",
            "aten::item",
            "aten::_local_scalar_dense"
        ]
        .contains(&first.name.as_str()),
        "{first:?}"
    );
    assert!(first.structural());
    let sync = d.counts.iter().find(|c| c.metric == "sync.calls").unwrap();
    assert_eq!(sync.value.delta, Some(-65.0));
    assert!(d.findings.resolved.iter().any(|f| f.id == "SY001"));
    // The count gate is noise-free: fewer syncs pass `> 0`.
    assert!(d.gate.passed, "{:?}", d.gate);
}

/// The optimizer pair recorded on an H200: the fused AdamW is the change on a GPU too.
#[test]
fn fused_optimizer_is_the_change_on_a_gpu() {
    let d = diff_pair("pairs-h200", "optimizer", &[]);
    assert_eq!(d.phases[0].category, "optimizer", "{:?}", d.phases);
    assert!(d.phases[0].delta_ns < 0.0);
    assert_eq!(d.steps.verdict, Verdict::Faster);
    assert_eq!(
        d.findings.resolved[0].id, "OP001",
        "{:?}",
        d.findings.resolved
    );
    let fused = d
        .ops
        .iter()
        .find(|o| o.name == "aten::_fused_adamw_")
        .unwrap();
    assert_eq!(fused.status, ItemStatus::Added);
    let launches = d
        .counts
        .iter()
        .find(|c| c.metric == "kernels.launches")
        .unwrap();
    assert!(launches.value.delta.unwrap() < -100.0, "{launches:?}");
}

/// The `.item()` pair recorded on an H200: the per-sample reads are the change; what
/// stays (one `.tolist()` per step) is neither a transfer problem worth a warning nor a
/// resolved sync.
#[test]
fn item_per_sample_is_the_change_on_a_gpu() {
    let d = diff_pair("pairs-h200", "item_sync", &["sync.calls > 0"]);
    let first = &d.ops[0];
    assert!(
        [
            "aten::argmax",
            "aten::select",
            "aten::item",
            "aten::_local_scalar_dense"
        ]
        .contains(&first.name.as_str()),
        "{first:?}"
    );
    let sync = d.counts.iter().find(|c| c.metric == "sync.calls").unwrap();
    assert!(sync.value.delta.unwrap() <= -60.0, "{sync:?}");
    let sy001 = d
        .findings
        .changed
        .iter()
        .find(|c| c.subject == "SY001:trace")
        .unwrap();
    assert_eq!(sy001.direction, FindingDirection::Better);
    assert!(d.findings.resolved.iter().any(|f| f.id == "TR002"));
    // The one 8-byte `.tolist()` copy left per step is pageable, and costs nothing: at
    // most an info, never a warning.
    assert!(
        d.findings
            .new
            .iter()
            .all(|f| f.id != "TR001" || f.severity == Severity::Info),
        "{:?}",
        d.findings.new
    );
    assert!(d.gate.passed, "{:?}", d.gate);
}

#[test]
fn fixed_leak_is_the_change() {
    let d = diff_pair("pairs", "leak", &["memory.growth > +64KiB"]);
    let g = d.memory.growth_bytes_per_step;
    assert!(g.base.unwrap() > 1e6 && g.delta.unwrap() < -1e6, "{g:?}");
    assert!(d.findings.resolved.iter().any(|f| f.id == "ME001"));
    assert!(d.findings.new.is_empty(), "{:?}", d.findings.new);
    assert!(d.gate.passed);
    // The reverse is a new leak: the gate trips.
    let (b, n) = pair("pairs", "leak");
    let r = diff_paths(&n, &b, &["memory.growth > +64KiB"]);
    assert!(!r.gate.passed);
    assert_eq!(r.gate.failed[0].outcome, GateOutcome::Tripped);
}

#[test]
fn a_trace_against_itself_is_no_change() {
    let t = corpus().join("clean/trace.json.gz");
    let d = diff_paths(
        &t,
        &t,
        &[STEP_GATE, "findings.new >= info", "kernels.launches > 0"],
    );
    assert_eq!(d.steps.verdict, Verdict::Unchanged);
    assert_eq!(d.steps.delta_median_ns, Some(0.0));
    assert!(d
        .ops
        .iter()
        .all(|o| o.status == ItemStatus::Same && o.delta_ns == 0.0));
    assert!(
        d.findings.new.is_empty()
            && d.findings.resolved.is_empty()
            && d.findings.changed.is_empty()
    );
    assert_eq!(d.machine.change.verdict, MachineVerdict::NotUniform);
    assert!(d.gate.passed, "{:?}", d.gate);
}

#[test]
fn the_same_code_twice_passes_the_gate() {
    let d = diff_pair(
        "pairs",
        "repeat",
        &[STEP_GATE, "findings.new >= warning", "ops.calls > 0"],
    );
    assert_eq!(d.matching.ops.added + d.matching.ops.removed, 0);
    assert!(d.gate.passed, "{:?}", d.gate);
    // The H100 host ran the first recording slower: the gate in that direction passes,
    // and the kernels are the same.
    let h = diff_pair("pairs-h100", "repeat", &[STEP_GATE]);
    assert!(h.gate.passed);
    assert_eq!(h.matching.kernels.by_key, h.kernels.len());
    let kernels = h
        .counts
        .iter()
        .find(|c| c.metric == "kernels.launches")
        .unwrap();
    assert_eq!(kernels.value.delta, Some(0.0));
}

#[test]
fn a_slower_machine_is_named_and_normalised() {
    // corpus/pairs/machine/new.json.gz is pairs/repeat/base.json.gz with every duration
    // × 1.18 (corpus/scale_trace.py): the same code on a uniformly slower machine.
    let (b, _) = pair("pairs", "repeat");
    let (_, n) = pair("pairs", "machine");
    let d = diff_paths(&b, &n, &["step_time.normalized > +5%"]);
    assert_eq!(d.machine.change.verdict, MachineVerdict::UniformSlowdown);
    let f = d.machine.change.host.factor.unwrap();
    assert!((f - 1.18).abs() < 0.01, "{f}");
    let normal = d.machine.steps_normalized.relative.unwrap();
    assert!(normal.abs() < 0.01, "{normal}");
    assert!(d.gate.passed);
    assert!(d.ops.iter().all(|o| o
        .unexplained_ns
        .is_some_and(|u| u.abs() <= 0.01 * o.new_ns + 1.0)));
}

#[test]
fn a_planted_slowdown_trips_the_gate() {
    let d = diff_pair(
        "pairs-h100",
        "slowdown",
        &[STEP_GATE, "step_time.normalized > +5%"],
    );
    assert_eq!(d.steps.verdict, Verdict::Slower);
    assert!(d.steps.relative.unwrap() > 0.15, "{:?}", d.steps);
    assert_eq!(d.breakdown[0].category, "other");
    assert_eq!(d.machine.change.verdict, MachineVerdict::NotUniform);
    assert!(!d.gate.passed);
    assert_eq!(d.gate.failed.len(), 2);
    assert!(d
        .gate
        .failed
        .iter()
        .all(|c| c.outcome == GateOutcome::Tripped));
}

#[test]
fn renamed_kernels_match_through_their_launching_call() {
    let d = diff_pair("pairs-h100", "tf32", &["kernels.launches > 0"]);
    let renamed: Vec<_> = d
        .kernels
        .iter()
        .filter(|k| k.match_kind == Some(MatchKind::Launcher))
        .collect();
    assert!(renamed.len() >= 4, "{:?}", d.matching.kernels);
    assert_eq!(d.matching.kernels.by_launcher, renamed.len());
    for k in &renamed {
        assert!(
            k.name.contains("tf32") || k.name.contains("tensorop"),
            "{}",
            k.name
        );
        assert_ne!(k.base_key.as_deref(), Some(k.name.as_str()));
    }
    // Operators did not change, kernels did: the largest kernel change is a renamed GEMM.
    assert_eq!(d.matching.ops.added + d.matching.ops.removed, 0);
    assert_eq!(d.kernels[0].match_kind, Some(MatchKind::Launcher));
    assert!(d
        .breakdown
        .iter()
        .any(|p| p.category == "kernel" && p.delta_ns < 0.0));
    let launches = &d.gate.checks[0];
    assert_eq!(launches.outcome, GateOutcome::Passed, "{launches:?}");
}

#[test]
fn a_saved_report_is_a_baseline() {
    let (b, n) = pair("pairs", "item_sync");
    let saved = tempfile::tempdir().unwrap();
    let json = saved.path().join("base.json");
    let report = engine()
        .report(&Source::Path(b.clone()), &Config::default())
        .unwrap();
    std::fs::write(&json, to_json(&report).unwrap()).unwrap();
    let from_trace = diff_paths(&b, &n, &[STEP_GATE]);
    let from_saved = diff_paths(&json, &n, &[STEP_GATE]);
    assert_eq!(
        from_saved.base.from,
        kinetoscope_engine::diff::document::SideFrom::SavedReport
    );
    let sections = |d: &DiffDocument| {
        let mut v = serde_json::to_value(d).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("base");
        v
    };
    assert_eq!(sections(&from_trace), sections(&from_saved));
}

#[test]
fn old_and_foreign_documents_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(&old, "{\n  \"schema_version\": 2,\n  \"input\": \"x\"\n}").unwrap();
    let t = corpus().join("clean/trace.json.gz");
    let err = |base: &Path| {
        engine()
            .diff(
                &Source::Path(base.to_owned()),
                &Source::Path(t.clone()),
                &Config::default(),
                &DiffOptions::default(),
            )
            .unwrap_err()
    };
    let e = err(&old);
    assert!(e.to_string().contains("schema 2"), "{e}");
    assert!(
        e.hint().unwrap().contains("kinetoscope report"),
        "{:?}",
        e.hint()
    );
    let summary = dir.path().join("summary.json");
    let doc = engine().summary(&Source::Path(t.clone())).unwrap();
    std::fs::write(&summary, to_json(&doc).unwrap()).unwrap();
    let e = err(&summary);
    assert!(matches!(e, EngineError::WrongInput { .. }));
    assert!(
        e.to_string().contains("not a saved `report` document"),
        "{e}"
    );
}

#[test]
fn rank_folders_compare_rank_by_rank() {
    let f = corpus().join("straggler");
    let d = diff_paths(&f, &f, &[STEP_GATE]);
    assert_eq!(d.communication.ranks.len(), 2);
    assert_eq!(d.communication.straggler.base, Some(1));
    assert_eq!(d.communication.straggler.delta, Some(0));
    assert!(d.gate.passed);
    // Deterministic: the same inputs give the same document.
    assert_eq!(
        to_json(&d).unwrap(),
        to_json(&diff_paths(&f, &f, &[STEP_GATE])).unwrap()
    );
}

#[test]
fn exposed_communication_agrees_with_the_comm_view() {
    let f = crate::common::fixtures_dir().join("ranks");
    let d = diff_paths(&f, &f, &[]);
    let comm = engine()
        .comm(&Source::Path(f.clone()), Default::default())
        .unwrap();
    assert_eq!(d.communication.ranks.len(), comm.traces.len());
    for (r, c) in d.communication.ranks.iter().zip(&comm.traces) {
        assert_eq!(Some(r.rank), c.rank);
        let per_step = c.overlap.exposed_communication_ns as f64 / c.steps.len() as f64;
        let mine = r.exposed_ns.base.unwrap();
        // The breakdown also gives copies and sets priority over communication; the comm
        // view counts only computation kernels as overlap: within 2 % here.
        assert!(
            (mine - per_step).abs() <= 0.02 * per_step,
            "{mine} vs {per_step}"
        );
    }
    let overlap = d.communication.overlap_share.base.unwrap();
    assert!(overlap > 0.1 && overlap < 0.25, "{overlap}");
}

#[test]
#[ignore = "needs ../shared"]
fn hta_trace_diff_pair() {
    let hta = require_shared().join("external/hta/trace_diff");
    let d = diff_paths(
        &hta.join("control/control.json.gz"),
        &hta.join("test/test.json.gz"),
        &[STEP_GATE, "kernels.launches > +10%"],
    );
    assert_eq!(d.steps.verdict, Verdict::Slower);
    // The test run adds torch.compile'd regions: compiled functions are new operators.
    assert!(d
        .ops
        .iter()
        .take(3)
        .any(|o| o.name.starts_with("CompiledFunction") && o.status == ItemStatus::Added));
    assert!(d.matching.kernels.by_key > 100 && d.matching.kernels.by_launcher > 0);
    assert_eq!(
        d.gpu.devices.len(),
        1,
        "one GPU each side, paired: {:?}",
        d.gpu.devices
    );
    assert!(!d.gate.passed);
    assert_eq!(d.gate.failed.len(), 2);
}
