//! The memory-timeline reader on real files: the raw and coalesced forms of one run agree,
//! detection is by content, and the Kineto reader refuses timelines.

use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{
    read_memory_timeline, read_trace, sniff_path, timeline_from_bytes, timeline_from_reader,
    ContentKind, ReadOptions,
};
use kinetoscope_trace::{MemoryTimeline, TimelineFormat};

fn is_timeline(p: &Path) -> bool {
    sniff_path(p).unwrap().kind() == ContentKind::MemoryTimeline
}

fn fixtures() -> PathBuf {
    crate::common::fixtures_dir().join("memory_timelines")
}

const PEAK: [i64; 8] = [71_208, 76_896, 8_456, 4, 34_052, 44_112, 0, 0];

fn peak(tl: &MemoryTimeline) -> (i64, i64, [i64; 8]) {
    let mut best = 0;
    for i in 0..tl.times_ns.len() {
        if tl.total_at(i) > tl.total_at(best) {
            best = i;
        }
    }
    (tl.times_ns[best], tl.total_at(best), tl.sizes[best])
}

#[test]
fn raw_form_reads() {
    let p = fixtures().join("torch-2.2.2/mem.raw.json.gz");
    assert!(is_timeline(&p));
    let tl = read_memory_timeline(&p).unwrap();
    assert_eq!(tl.format, TimelineFormat::Raw);
    assert_eq!(tl.rows, 491);
    assert_eq!(tl.preexisting_rows, 21);
    let (t, total, by) = peak(&tl);
    assert_eq!(t, 1_795_238_866_200_158_049);
    assert_eq!(total, 234_728);
    assert_eq!(by, PEAK);
    // The same from the gzip bytes in memory and as a stream.
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(timeline_from_bytes(&p, &bytes).unwrap(), tl);
    assert_eq!(timeline_from_reader(&p, bytes.as_slice()).unwrap(), tl);
    // Every category ends non-negative.
    assert!(tl.sizes.last().unwrap().iter().all(|b| *b >= 0));
}

#[test]
fn coalesced_form_agrees_with_raw() {
    let p = fixtures().join("torch-2.2.2_mem_coalesced_memory_timeline.json");
    assert!(is_timeline(&p));
    let tl = read_memory_timeline(&p).unwrap();
    assert_eq!(tl.format, TimelineFormat::Coalesced);
    let (t, total, by) = peak(&tl);
    assert_eq!(t, 1_795_238_866_200_158_000);
    assert_eq!(total, 234_728);
    assert_eq!(by, PEAK);
}

#[test]
fn traces_are_not_timelines_and_timelines_not_traces() {
    let trace = fixtures().join("torch-2.2.2/plain.pt.trace.json.gz");
    assert!(!is_timeline(&trace));
    assert!(read_memory_timeline(&trace).is_err());
    let err = read_trace(
        &fixtures().join("torch-2.2.2/mem.raw.json.gz"),
        &ReadOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("memory timeline"), "{err}");
}

/// HTA's raw timeline (`shared/external/hta/memory_analysis/memory_timeline.raw.gz`):
/// 16,845 rows, all 4 actions and 8 categories.
#[test]
#[ignore = "reads ../shared (KINETOSCOPE_SHARED); fails when it is missing"]
fn hta_raw_timeline() {
    let p =
        crate::common::require_shared().join("external/hta/memory_analysis/memory_timeline.raw.gz");
    assert!(is_timeline(&p));
    let tl = read_memory_timeline(&p).unwrap();
    assert_eq!(tl.format, TimelineFormat::Raw);
    assert_eq!(tl.rows, 16_845);
    let (_, total, by) = peak(&tl);
    assert!(total > 0);
    assert_eq!(by.iter().sum::<i64>(), total);
}
