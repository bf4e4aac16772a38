//! The per-trace summary on the reader's fixtures (`kinetoscope-trace/tests/fixtures`):
//! rank and its source, steps (host `ProfilerStep#` spans only, in time order, or the
//! whole trace), categories and warnings.

use std::path::{Path, PathBuf};

use kinetoscope_analysis::steps::StepSource;
use kinetoscope_analysis::summary::{summarize, TraceSummary};
use kinetoscope_trace::read::{read_trace, read_trace_bytes, ReadOptions};
use kinetoscope_trace::RankSource;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-trace/tests/fixtures")
        .join(name)
}

fn summary(name: &str) -> TraceSummary {
    summarize(&read_trace(&fixture(name), &ReadOptions::default()).unwrap())
}

/// A few facts stated in `shared/external/hta/SOURCE.md`.
#[test]
fn hta_inventory_facts() {
    let s = summary("ranks/sampled_rank-1.json.gz");
    assert_eq!((s.rank, s.world_size), (Some(1), Some(128)));
    assert_eq!(s.rank_source, Some(RankSource::DistributedInfo));
    assert_eq!(s.backend.as_deref(), Some("nccl"));
    assert_eq!(s.total_events, 4720);
    assert_eq!(s.events_by_category["kernel"], 1104);
    assert_eq!(s.steps.len(), 2);

    let s = summary("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    assert_eq!((s.rank, s.world_size), (Some(34), Some(300)));
    assert_eq!(s.backend.as_deref(), Some("gloo"));
    assert!(s.devices.is_empty());

    let s = summary("mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_eq!(s.devices.len(), 4);
    // The GPU-side `ProfilerStep#1` (`gpu_user_annotation`) is not a step.
    assert_eq!(
        s.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["ProfilerStep#1", "ProfilerStep#2"]
    );
}

/// 1.9-era steps (category `Operator`): #5–#10 in time order.
#[test]
fn torch_1_9_steps() {
    let s = summary("worker0.1623143089861.pt.trace.json.gz");
    assert_eq!(s.step_source, StepSource::ProfilerStep);
    let names: Vec<&str> = s.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ProfilerStep#5",
            "ProfilerStep#6",
            "ProfilerStep#7",
            "ProfilerStep#8",
            "ProfilerStep#9",
            "ProfilerStep#10"
        ]
    );
    assert!(s.steps.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
}

/// The rank from the file name when there is no `distributedInfo`, with its source; a
/// trace without step markers is one whole-trace step; a truncated tail is warned about.
#[test]
fn file_name_rank_whole_trace_step_and_warnings() {
    let text = br#"{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
{"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 20, "dur": 5},
{"ph": "X", "cat": "cpu_op", "na"#;
    let t = read_trace_bytes(
        Path::new("job/rank-7.pt.trace.json"),
        text,
        &ReadOptions::default(),
    )
    .unwrap();
    let s = summarize(&t);
    assert_eq!(
        (s.rank, s.rank_source),
        (Some(7), Some(RankSource::FileName))
    );
    assert_eq!(s.step_source, StepSource::WholeTrace);
    assert_eq!(s.steps.len(), 1);
    assert_eq!((s.steps[0].start_ns, s.steps[0].dur_ns), (10_000, 15_000));
    assert!(
        s.warnings.iter().any(|w| matches!(
            w,
            kinetoscope_analysis::note::Note::LenientRead { defects }
                if defects[0].kind == kinetoscope_trace::DefectKind::TruncatedTail
        )),
        "{:?}",
        s.warnings
    );
}
