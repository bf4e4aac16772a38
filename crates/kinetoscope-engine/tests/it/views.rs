//! The engine's views: bytes in memory read like the file, folders give one result
//! per trace, errors name the file and hint at the right command.

use std::sync::Arc;

use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_engine::{Engine, EngineError, InputLayout, MemoryOptions, MemoryResult, Source};

use kinetoscope_advisor::Config;
use kinetoscope_analysis::ops::OpSortKey;
use kinetoscope_trace::ArtifactKind;

use crate::common::{corpus, fixture, fixtures_dir, lenient};

fn engine() -> Engine {
    Engine::new(lenient(2))
}

#[test]
fn bytes_in_memory_read_like_the_file() {
    let path = fixture("torch-2.15.0_py_export.json.gz");
    let data: Arc<[u8]> = std::fs::read(&path).unwrap().into();
    let from_file = engine().summary(&Source::Path(path)).unwrap();
    let from_bytes = engine()
        .summary(&Source::Bytes {
            name: "upload.json.gz".into(),
            data,
        })
        .unwrap();
    assert_eq!(from_bytes.input, "upload.json.gz");
    assert!(matches!(from_bytes.layout, InputLayout::File));
    let a = &from_file.traces[0];
    let b = &from_bytes.traces[0];
    assert!(a.total_events > 0);
    assert_eq!(a.total_events, b.total_events);
    assert_eq!(a.events_by_category, b.events_by_category);
    assert_eq!(a.span_ns, b.span_ns);
    assert_eq!(a.steps.len(), b.steps.len());
}

#[test]
fn a_rank_folder_gives_one_result_per_rank_and_hta_decides_across_ranks() {
    let doc = engine()
        .temporal(&Source::Path(fixtures_dir().join("ranks")), Compat::Hta)
        .unwrap();
    assert!(matches!(doc.layout, InputLayout::RankFolder));
    assert_eq!(doc.traces.len(), 2);
    assert!(doc.errors.is_empty());
    let ranks: Vec<_> = doc.traces.iter().map(|t| t.rank).collect();
    assert_eq!(ranks, [Some(0), Some(1)]);
}

#[test]
fn a_pickle_given_to_a_trace_view_hints_at_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("snap.pickle");
    std::fs::write(&p, b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00}\x94.").unwrap();
    let err = engine().summary(&Source::Path(p.clone())).unwrap_err();
    assert!(
        matches!(&err, EngineError::NothingRead { path, .. } if *path == p),
        "{err:?}"
    );
    let hint = err.hint().expect("a hint");
    assert!(hint.contains("kinetoscope memory"), "{hint}");
}

#[test]
fn ranks_refuses_a_single_file_with_a_hint() {
    let err = engine()
        .ranks(
            &Source::Path(fixture("backward_thread.json")),
            Default::default(),
        )
        .unwrap_err();
    assert!(matches!(err, EngineError::WrongInput { .. }), "{err:?}");
    assert!(err.hint().is_some());
}

#[test]
fn memory_dispatches_by_content() {
    let snaps = fixtures_dir().join("snapshots");
    let snap = std::fs::read_dir(&snaps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "pickle"))
        .expect("a snapshot fixture");
    let opts = MemoryOptions {
        points: 50,
        top: 5,
        ..MemoryOptions::default()
    };
    let r = engine().memory(&Source::Path(snap), &opts).unwrap();
    assert!(matches!(r, MemoryResult::Snapshot(_)));
    let r = engine()
        .memory(&Source::Path(fixture("backward_thread.json")), &opts)
        .unwrap();
    assert!(matches!(r, MemoryResult::Traces(d) if d.traces.len() == 1));
}

#[test]
fn a_run_folder_without_traces_is_refused_by_trace_views_with_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("stage1-model_init_memory_timeline.html"),
        b"<!DOCTYPE html>",
    )
    .unwrap();
    let src = Source::Path(tmp.path().to_owned());
    let err = engine().overview(&src).unwrap_err();
    assert!(matches!(err, EngineError::WrongInput { .. }), "{err:?}");
    assert!(err.hint().unwrap().contains("kinetoscope memory"));
    // The summary lists what the folder holds instead.
    let doc = engine().summary(&src).unwrap();
    assert!(doc.traces.is_empty());
    assert!(matches!(doc.layout, InputLayout::RunFolder { ref phases } if phases.len() == 1));
}

/// `report` on the corpus's nanochat-style run folder: the phases side by side, in
/// stage order, each with its time (shares add up to 1), host phases, peak memory, top
/// operators and the findings that matter (the for-loop AdamW of the optimizer step).
#[test]
fn report_puts_the_run_folder_phases_side_by_side() {
    let doc = engine()
        .report(
            &Source::Path(corpus().join("run_folder")),
            &Config::default(),
        )
        .unwrap();
    let run = doc.run.as_ref().expect("a run view");
    let names: Vec<(u32, &str)> = run
        .phases
        .iter()
        .map(|p| (p.stage, p.phase.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (1, "model_init"),
            (2, "eval_bpb"),
            (3, "training_microsteps"),
            (4, "optimizer_step")
        ]
    );
    let shares: f64 = run.phases.iter().filter_map(|p| p.time_share).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    for (p, t) in run.phases.iter().zip(&doc.traces) {
        assert_eq!(p.trace.as_deref(), Some(t.path.as_str()));
        let steps = t.summary.step_stats.as_ref().unwrap();
        assert_eq!(p.time_ns, Some(steps.mean_ns * steps.count as f64));
        let peak = p.peak_memory.as_ref().expect("a memory peak");
        assert_eq!(peak.source, ArtifactKind::Trace);
        assert_eq!(peak.bytes, t.summary.memory[0].peak_allocated_bytes);
        let ops = p.top_ops.as_ref().unwrap();
        assert_eq!(ops.by, OpSortKey::HostSelf, "a CPU-only run");
        assert_eq!(ops.ops.len(), 3);
        assert!(ops.ops.windows(2).all(|w| w[0].self_ns >= w[1].self_ns));
        assert_eq!(p.findings_total, t.findings.len());
    }
    let micro = &run.phases[2];
    assert!(micro.phases.as_ref().unwrap().forward_ns.unwrap() > 0.0);
    assert_eq!(micro.top_ops.as_ref().unwrap().ops[0].name, "aten::mm");
    let opt = &run.phases[3];
    assert_eq!(opt.findings[0].id, "OP001");
    assert!(
        run.phases[..3].iter().all(|p| p.findings.is_empty()),
        "only info findings without impact there"
    );
}
