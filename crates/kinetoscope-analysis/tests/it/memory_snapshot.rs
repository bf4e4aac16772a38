//! The snapshot memory view against the synthetic snapshots of
//! `kinetoscope-trace/tests/fixtures/snapshots` (values planted by `make_snapshots.py`;
//! no GPU was available to record real ones, so they are built from the documented
//! layouts, `v2_6_requested_sizes.pickle` with the sizes and stacks PyTorch records).

use kinetoscope_analysis::memory::snapshot::{
    analyze_snapshot, replay, OomCause, SitesAt, SnapshotOptions, SnapshotView,
};
use kinetoscope_analysis::memory::DeviceFilter;
use kinetoscope_analysis::note::Note;
use kinetoscope_trace::read::read_snapshot;

use crate::common::trace_fixture;

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

fn view(name: &str, opts: &SnapshotOptions) -> SnapshotView {
    let p = trace_fixture("snapshots").join(name);
    analyze_snapshot(&read_snapshot(&p).unwrap(), opts)
}

fn check_state(v: &SnapshotView) {
    assert_eq!(v.devices.len(), 1);
    let s = &v.devices[0].state;
    assert_eq!(s.segments, 2);
    assert_eq!((s.large_segments, s.small_segments), (1, 1));
    assert_eq!(s.reserved_bytes, 22 * MIB);
    assert_eq!(s.allocated_bytes, 12 * MIB + 512 * KIB);
    assert_eq!(s.requested_bytes, 4_000_000 + 8 * MIB + 500_000);
    assert_eq!(
        s.rounding_waste_bytes,
        4 * MIB - 4_000_000 + 512 * KIB - 500_000
    );
    assert_eq!(s.active_bytes, s.allocated_bytes);
    assert_eq!(s.pending_free_bytes, 0);
    assert_eq!(s.inactive_bytes, 9 * MIB + 512 * KIB);
    assert_eq!(s.free_bytes, s.inactive_bytes);
    assert_eq!(s.reserved_unallocated_bytes, 9 * MIB + 512 * KIB);
    assert_eq!(s.largest_free_block_bytes, 8 * MIB);
    let f = s.fragmentation.unwrap();
    assert!((f - (1.0 - 8.0 / 9.5)).abs() < 1e-12, "{f}");
    assert_eq!((s.blocks_active_allocated, s.blocks_inactive), (10, 3));
    let seg = &v.devices[0].segments;
    assert_eq!(seg[0].address, "0x7f0000000000");
    assert_eq!(seg[0].total_size_bytes, 20 * MIB);
    assert_eq!(seg[1].largest_free_block_bytes, MIB);
}

fn check_history(v: &SnapshotView, timed: bool) {
    let d = &v.devices[0];
    let h = d.history.as_ref().unwrap();
    assert_eq!(h.entries, 35);
    assert_eq!(h.actions["alloc"], 17);
    assert_eq!(h.actions["oom"], 1);
    // The pre-existing small block (512 KiB) was live before the history began.
    assert_eq!(h.start_active_bytes, 512 * KIB);
    // Params 4 MiB + activation 2 MiB + 8 leaks + 512 KiB, first reached at entry 31.
    assert_eq!(h.peak_active_bytes, 14 * MIB + 512 * KIB);
    assert_eq!(h.peak_index, 31);
    assert_eq!(h.end_active_bytes, 12 * MIB + 512 * KIB);
    assert_eq!(
        h.start_reserved_bytes,
        2 * MIB,
        "22 MiB minus the traced segment_alloc"
    );
    assert_eq!(h.peak_reserved_bytes, 22 * MIB);
    assert_eq!(h.late_segment_events, 0);
    assert_eq!(h.first_time_ns.is_some(), timed);

    // Every entry is a timeline point (35 ≤ 500); the last one is after the OOM.
    assert_eq!(d.timeline.len(), 35);
    assert_eq!(d.timeline[31].active_bytes, h.peak_active_bytes);
    assert_eq!(d.timeline[0].reserved_bytes, 22 * MIB);

    let ts = &d.top_sites;
    assert_eq!(ts.at, SitesAt::Peak);
    assert_eq!(ts.index, Some(31));
    assert_eq!(ts.bytes, h.peak_active_bytes);
    let sites: Vec<(u64, u64, &str, Option<&str>)> = ts
        .sites
        .iter()
        .map(|s| {
            (
                s.bytes,
                s.count,
                s.frames[0].as_str(),
                s.user_frame.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        sites,
        vec![
            (
                8 * MIB,
                8,
                "train.py:42:train_step",
                Some("train.py:42:train_step")
            ),
            (
                4 * MIB,
                1,
                "module.py:1160:to",
                Some("train.py:12:build_model")
            ),
            (
                2 * MIB,
                1,
                "linear.py:125:forward",
                Some("model.py:40:forward")
            ),
            (512 * KIB, 1, "<no stack recorded>", None),
        ]
    );

    assert_eq!(d.ooms.len(), 1);
    let o = &d.ooms[0];
    assert_eq!(o.index, 34);
    assert_eq!(o.requested_bytes, 64 * MIB);
    assert_eq!(o.device_free_bytes, Some(32 * MIB));
    assert_eq!(o.active_bytes, 12 * MIB + 512 * KIB);
    assert_eq!(o.reserved_bytes, 22 * MIB);
    assert_eq!(o.reserved_unused_bytes, 9 * MIB + 512 * KIB);
    assert_eq!(
        o.frames,
        vec![
            "??:0:c10::cuda::CUDACachingAllocator::malloc",
            "model.py:41:forward",
            "train.py:30:train_step"
        ]
    );
    assert_eq!(o.user_frame.as_deref(), Some("model.py:41:forward"));
    assert_eq!(
        o.top_sites.len(),
        3,
        "the activation was freed before the OOM"
    );
    // 64 MiB asked for, 9.5 MiB cached unused: 54.5 MiB short, not fragmentation.
    assert_eq!(o.cause, OomCause::ExceedsCache);
    assert_eq!(o.shortfall_bytes, 54 * MIB + 512 * KIB);
    assert!(!o.device_free_covers_request, "32 MiB free < 64 MiB asked");
    assert!(o.state_is_at_oom, "the OOM is the last entry");
    assert_eq!(d.state.largest_free_block_bytes, 8 * MIB);

    assert_eq!(d.leak_groups_total, 2, "leaks and parameters");
    let l = &d.leak_suspects[0];
    assert!(l.growing);
    assert_eq!(l.frames[0], "train.py:42:train_step");
    assert_eq!((l.count, l.bytes), (8, 8 * MIB));
    assert_eq!(l.per_quarter, [2, 2, 2, 2]);
    assert_eq!((l.first_index, l.last_index), (3, 31));
    // 8 MiB over 28 entries × 100 µs.
    match (timed, l.growth_bytes_per_s) {
        (true, Some(g)) => assert!((g - 8.0 * MIB as f64 / 2.8e-3).abs() < 1.0, "{g}"),
        (false, None) => {}
        other => panic!("{other:?}"),
    }
    let params = &d.leak_suspects[1];
    assert!(!params.growing, "parameters are long-lived, not a leak");
    assert_eq!(params.count, 1);
}

#[test]
fn full_snapshot_view() {
    let v = view("v2_6_full.pickle", &SnapshotOptions::default());
    assert_eq!(v.pytorch_versions, "2.7+");
    assert!(v.notes.is_empty(), "{:?}", v.notes);
    check_state(&v);
    check_history(&v, true);
    assert_eq!(
        v.allocator_settings.as_ref().unwrap()["max_split_size"],
        serde_json::json!(-1)
    );
}

#[test]
fn older_layouts_give_the_same_numbers() {
    let v = view("v2_0_no_time.pickle", &SnapshotOptions::default());
    assert_eq!(v.pytorch_versions, "2.0+");
    check_state(&v);
    check_history(&v, false);
    let v = view("v2_15_protocol5.pickle", &SnapshotOptions::default());
    assert_eq!(v.pytorch_versions, "2.10+");
    check_state(&v);
}

#[test]
fn without_history_sites_are_those_live_at_snapshot_time() {
    let v = view("history_off.pickle", &SnapshotOptions::default());
    check_state(&v);
    let d = &v.devices[0];
    assert!(d.history.is_none());
    assert!(d.timeline.is_empty() && d.ooms.is_empty() && d.leak_suspects.is_empty());
    assert_eq!(d.top_sites.at, SitesAt::Snapshot);
    assert_eq!(d.top_sites.bytes, 12 * MIB + 512 * KIB);
    assert_eq!(d.top_sites.sites[0].bytes, 8 * MIB);
    assert_eq!(v.notes[0], Note::NoAllocationHistory);
}

#[test]
fn bare_list_1_13() {
    let v = view("v1_13_bare_list.pickle", &SnapshotOptions::default());
    assert_eq!(v.pytorch_versions, "1.13");
    let s = &v.devices[0].state;
    assert_eq!(s.allocated_bytes, 1536 * KIB);
    assert_eq!(s.requested_bytes, 1_400_000);
    assert_eq!(s.inactive_bytes, 512 * KIB);
    assert_eq!(s.fragmentation, Some(0.0));
    let sites = &v.devices[0].top_sites.sites;
    assert_eq!(sites[0].frames[0], "linear.py:125:forward");
}

#[test]
fn top_and_device_filter() {
    let opts = SnapshotOptions {
        top: 1,
        device: Some(DeviceFilter::Gpu(0)),
        ..SnapshotOptions::default()
    };
    let v = view("v2_6_full.pickle", &opts);
    let d = &v.devices[0];
    assert_eq!((d.top_sites.sites.len(), d.top_sites.sites_total), (1, 4));
    assert_eq!((d.segments.len(), d.segments_total), (1, 2));
    let opts = SnapshotOptions {
        device: Some(DeviceFilter::Gpu(3)),
        ..SnapshotOptions::default()
    };
    let v = view("v2_6_full.pickle", &opts);
    assert!(v.devices.is_empty());
    assert_eq!(v.notes, vec![Note::NoDeviceMatches]);
}

#[test]
fn timeline_downsampling_keeps_the_peak() {
    let opts = SnapshotOptions {
        points: 10,
        ..SnapshotOptions::default()
    };
    let v = view("v2_6_full.pickle", &opts);
    let t = &v.devices[0].timeline;
    assert!(t.len() <= 10, "{}", t.len());
    assert_eq!(
        t.iter().map(|p| p.active_bytes).max(),
        Some(14 * MIB + 512 * KIB)
    );
    assert!(t.windows(2).all(|w| w[0].index < w[1].index));
}

/// The replay ends exactly at the snapshot's own active bytes (allocated, plus blocks
/// freed but pending when completions are recorded) on every fixture with a history;
/// where nothing is pending, that is the segments' allocated bytes.
#[test]
fn replay_ends_at_the_snapshot_allocated_bytes() {
    let dir = trace_fixture("snapshots");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "pickle") {
            continue;
        }
        let snap = read_snapshot(&p).unwrap();
        let v = analyze_snapshot(&snap, &SnapshotOptions::default());
        for d in &v.devices {
            let Some(h) = &d.history else { continue };
            let segments_allocated: u64 = snap
                .segments
                .iter()
                .filter(|s| s.device == d.device_id)
                .flat_map(|s| &s.blocks)
                .filter(|b| b.state == kinetoscope_trace::snapshot::BlockState::ActiveAllocated)
                .map(|b| b.size)
                .sum();
            assert_eq!(d.state.allocated_bytes, segments_allocated);
            assert_eq!(
                h.end_active_bytes,
                segments_allocated + d.state.pending_free_bytes,
                "{}",
                p.display()
            );
            checked += 1;
        }
    }
    assert_eq!(
        checked, 4,
        "v2_0, v2_6, v2_15 and v2_6_requested_sizes have histories"
    );
}

/// As PyTorch records them: `alloc` carries the bytes asked for, blocks the rounded
/// size; blocks allocated before recording are freed during it (one still pending on
/// another stream at the snapshot); stacks hold C++ frames before the Python ones.
#[test]
fn requested_sizes_and_blocks_from_before_the_recording() {
    let v = view("v2_6_requested_sizes.pickle", &SnapshotOptions::default());
    let d = &v.devices[0];
    let h = d.history.as_ref().unwrap();
    // P 4 MiB (alive) + X 2,000,000 (freed in the trace) + Y 1 MiB (pending at the end).
    assert_eq!(h.start_active_bytes, 4 * MIB + 2_000_000 + MIB);
    // The cache's unsplit 10 MiB block and the 1 KiB small block count at their block
    // sizes from their alloc on: P + cache + small + Y.
    assert_eq!(h.end_active_bytes, 4 * MIB + 10 * MIB + KIB + MIB);
    assert_eq!(h.end_active_bytes, d.state.active_bytes);
    // Peak: after X is freed, cache + small + one 1,000,000-byte activation.
    assert_eq!(
        h.peak_active_bytes,
        4 * MIB + MIB + 10 * MIB + KIB + 1_000_000
    );
    let snap = read_snapshot(&trace_fixture("snapshots/v2_6_requested_sizes.pickle")).unwrap();
    let segments: Vec<_> = snap.segments.iter().filter(|s| s.device == 0).collect();
    let r = replay::replay(&segments, &snap.device_traces.as_ref().unwrap()[0]);
    let never: Vec<u64> = r.never_freed.iter().map(|(_, a)| a.size).collect();
    assert_eq!(never, [10 * MIB, KIB]);

    let sites: Vec<(u64, Option<&str>, usize)> = d
        .top_sites
        .sites
        .iter()
        .map(|s| (s.bytes, s.user_frame.as_deref(), s.frames.len()))
        .collect();
    assert_eq!(
        sites,
        [
            (10 * MIB, Some("train.py:51:build_cache"), 5),
            (5 * MIB, None, 1),
            (1_000_000 + KIB, Some("model.py:40:forward"), 7),
        ]
    );
    // The full stack is kept: allocator frames first, torch's Python frames, the user's.
    let act = &d.top_sites.sites[2].frames;
    assert!(act[0].contains("CUDACachingAllocator"), "{act:?}");
    assert_eq!(act[3], "linear.py:125:forward");
    assert_eq!(act[5], "model.py:40:forward");
}
