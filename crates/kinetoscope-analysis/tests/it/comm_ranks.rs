//! `kinetoscope comm` and `kinetoscope ranks` analyses: overlap against the HTA 0.5.0
//! reference on `trace_filter` (docs/metrics.md B.22), collectives on an NCCL trace,
//! and the multi-rank comparison on the real rank folder and on folders made by
//! `kinetoscope-synth` with a planted slow rank.

use std::path::{Path, PathBuf};

use kinetoscope_analysis::comm::{comm, resolve_hta, CommOptions, OverlapDefinition};
use kinetoscope_analysis::critical_path::{critical_path, CriticalPathOptions, PathCategory};
use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::ranks::{compare_ranks, ClockMode, RankSummary, RanksOptions};
use kinetoscope_analysis::sequences::{frequent_sequences, SequenceOptions};
use kinetoscope_synth::decimal::Factor;
use kinetoscope_synth::{load_source, write_ranks, LoadOptions, RankOptions, Target};

use crate::common::{rank_fixtures, read, read_json, shared_file, trace_fixture};

fn summaries(paths: &[PathBuf]) -> Vec<RankSummary> {
    paths
        .iter()
        .map(|p| RankSummary::from_trace(&read(p)))
        .collect()
}

/// HTA 0.5.0 `get_comm_comp_overlap` on trace_filter: rank 0 11.81 %, rank 1 20.05 %
/// (reference/hta/trace_filter/comm_comp_overlap.csv).
#[test]
fn overlap_matches_hta_reference() {
    let opts = CommOptions { hta_compat: true };
    let mut traces: Vec<_> = rank_fixtures()
        .iter()
        .map(|p| comm(&read(p), opts))
        .collect();
    resolve_hta(&mut traces);
    let got: Vec<f64> = traces
        .iter()
        .map(|t| {
            assert_eq!(t.overlap.definition, OverlapDefinition::Hta);
            100.0 * t.overlap.overlap_share.unwrap()
        })
        .collect();
    for (g, want) in got.iter().zip([11.81, 20.05]) {
        assert!((g - want).abs() < 0.005 + 1e-9, "overlap {g} vs HTA {want}");
    }
}

/// The default definition differs on purpose (steps window, all NCCL spellings); it
/// still sees the same communication kernels on this trace.
#[test]
fn default_overlap_and_collectives_on_trace_filter() {
    let t = comm(&read(&rank_fixtures()[0]), CommOptions::default());
    assert_eq!(t.overlap.definition, OverlapDefinition::Kinetoscope);
    assert!(t.overlap.overlap_share.is_some());
    assert!(!t.steps.is_empty());
    for s in &t.steps {
        assert!(s.exposed_ns <= s.communication_ns);
        assert_eq!(s.exposed_ns + s.overlapped_ns, s.communication_ns);
    }
    // Every kernel is `ncclKernel_SendRecv_RING_SIMPLE…`; the calls that launched them
    // say which collective each was (`nccl:all_to_all` inside `c10d::alltoall_base_`).
    let names: Vec<(&str, u64)> = t
        .collectives
        .iter()
        .map(|c| (c.collective.as_str(), c.count))
        .collect();
    assert_eq!(
        names,
        [
            ("all_to_all", 4),
            ("all_reduce", 4),
            ("_all_gather_base", 2)
        ],
        "{:#?}",
        t.collectives
    );
    for c in &t.collectives {
        assert!(c.on_gpu);
        assert_eq!(c.algorithm.as_deref(), Some("RING_SIMPLE"));
        assert_eq!(c.group_size, None, "no collective arguments in this trace");
    }
}

/// Collective args copied onto NCCL kernels (PyTorch 2.x): bytes and bus bandwidth, on
/// HTA's `nccl_data` trace (in `../shared`; too big to copy here).
#[test]
#[ignore = "reads shared/external/hta/nccl_parser_config (KINETOSCOPE_SHARED); fails when it is missing"]
fn collectives_with_args_have_bandwidth() {
    let p = shared_file("external/hta/nccl_parser_config/nccl_data.json.gz");
    let t = comm(&read(&p), CommOptions::default());
    let ar = t
        .collectives
        .iter()
        .find(|c| c.collective == "allreduce")
        .expect("allreduce row");
    assert_eq!(ar.count, 15);
    assert_eq!(ar.process_group, "0");
    assert_eq!(ar.group_size, Some(2));
    assert_eq!(ar.algorithm.as_deref(), Some("RING_LL"));
    let bytes = ar.bytes.expect("sized");
    assert!(bytes > 0 && bytes % 4 == 0);
    let algbw = ar.algbw_gbps.unwrap();
    // all-reduce over 2 ranks: busbw = 2(n-1)/n × algbw = algbw.
    assert!((ar.busbw_gbps.unwrap() - algbw).abs() < 1e-9);
}

#[test]
fn real_rank_folder() {
    let r = compare_ranks(summaries(&rank_fixtures()), RanksOptions::default());
    assert_eq!(r.ranks.len(), 2);
    assert_eq!(r.ranks[0].rank, 0);
    assert_eq!(r.ranks[1].rank, 1);
    assert!(r.skew.matched > 0, "SendRecv kernels match by order");
    for c in &r.collectives {
        let waits: Vec<i64> = c.wait_ns.iter().flatten().copied().collect();
        assert!(waits.contains(&0), "the last arriver waits 0");
        assert!(c.start_skew_ns >= waits.iter().copied().max().unwrap());
    }
    assert!(!r.steps.is_empty());
}

/// The two sampled ranks keep different collectives (HTA's `trace_filter` samples):
/// pairing them by order joined calls that ran up to 231 ms apart, one rank's finished
/// before the other's began, and named a straggler from them. Those pairings are
/// dropped with a note; what stays matched ran at the same time on both ranks.
#[test]
fn collectives_paired_by_order_that_ran_apart_are_not_matched() {
    let r = compare_ranks(summaries(&rank_fixtures()), RanksOptions::default());
    let (dropped, kept) = r
        .warnings
        .iter()
        .find_map(|w| match w {
            Note::CollectivesApartInTime { dropped, kept } => Some((*dropped, *kept)),
            _ => None,
        })
        .expect("a note on the pairings dropped");
    assert!(dropped > 0 && kept > 0, "{dropped} dropped, {kept} kept");
    assert_eq!(kept as u64, r.skew.matched as u64);
    // The largest start skew left is one the longest collective can hold (40 ms),
    // not the 164-231 ms between different calls.
    assert!(r.skew.max_skew_ns < 50_000_000, "{:?}", r.skew);
}

fn synth_folder(dir: &Path, ranks: u64, slow: Option<u64>) -> Vec<PathBuf> {
    let src_path = &rank_fixtures()[0];
    let src = load_source(src_path, &LoadOptions::default()).unwrap();
    let stats = write_ranks(
        &src,
        Some(src_path),
        dir,
        &RankOptions {
            ranks,
            gzip: true,
            slow: slow.map(|r| (r, Factor::parse("1.3").unwrap())),
            target: Target::Copies(2),
            jobs: 2,
        },
    )
    .unwrap();
    stats.into_iter().map(|s| s.path).collect()
}

/// A folder made by the generator with rank 2 slowed down 1.3×: the straggler ranking
/// names rank 2, with its slower phase.
#[test]
fn planted_slow_rank_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let files = synth_folder(dir.path(), 4, Some(2));
    let r = compare_ranks(summaries(&files), RanksOptions::default());
    assert_eq!(r.ranks.len(), 4);
    let top = r.stragglers.first().expect("a straggler");
    assert_eq!(top.rank, 2, "{:#?}", r.stragglers);
    assert_eq!(
        r.stragglers.len(),
        1,
        "only the slow rank makes others wait"
    );
    assert!(top.arrived_last > 0 && top.arrived_last == top.matched);
    assert!(top.slower_phase.is_some());
    assert!(top.outside_excess_ns > 0.0);
    // No constant offset explains a stretched timeline: clocks are left alone.
    assert!(r.ranks.iter().all(|x| !x.clock_offset_applied));
}

/// A constant clock offset on one rank is detected from collective ends and removed:
/// skews and waits come out as without it.
#[test]
fn clock_offset_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let files = synth_folder(dir.path(), 3, Some(1));
    let base = summaries(&files);
    let plain = compare_ranks(base.clone(), RanksOptions::default());
    // Rank 2 (a normal rank) runs 3 s ahead (more than the slow rank drifts).
    let mut shifted = base;
    let r2 = shifted.remove(2).shifted(3_000_000_000);
    shifted.push(r2);
    let fixed = compare_ranks(shifted.clone(), RanksOptions::default());
    let row = &fixed.ranks[2];
    assert!(row.clock_offset_applied);
    assert_eq!(row.clock_offset_ns, 3_000_000_000);
    assert_eq!(fixed.skew.matched, plain.skew.matched);
    assert_eq!(fixed.skew.max_skew_ns, plain.skew.max_skew_ns);
    assert_eq!(fixed.stragglers[0].rank, 1);
    // Without alignment, the shifted rank's calls ran 3 s away from the others': taken
    // on trust, they cannot be the same collectives, so they are left unmatched (with
    // a note) rather than making the shifted rank look like a straggler.
    let raw = compare_ranks(
        shifted,
        RanksOptions {
            clock: ClockMode::None,
            ..RanksOptions::default()
        },
    );
    assert!(
        raw.warnings
            .iter()
            .any(|w| matches!(w, Note::CollectivesApartInTime { dropped, .. } if *dropped > 0)),
        "{:?}",
        raw.warnings
    );
    assert!(
        raw.stragglers.iter().all(|s| s.rank != 2),
        "{:#?} {:#?}",
        raw.stragglers,
        raw.ranks
    );
}

/// docs/hta-differences.md §8: the default window is the kept steps (both steps of
/// trace_filter), so the numbers differ from HTA's on purpose.
#[test]
fn default_overlap_differs_from_hta() {
    let got: Vec<f64> = rank_fixtures()
        .iter()
        .map(|p| {
            let t = comm(&read(p), CommOptions::default());
            assert_eq!(t.steps.len(), 2);
            100.0 * t.overlap.overlap_share.unwrap()
        })
        .collect();
    assert!((got[0] - 14.95).abs() < 0.01, "{got:?}");
    assert!((got[1] - 19.93).abs() < 0.01, "{got:?}");
}

/// A tiny trace: thread 1 runs `foo` (with a nested `foo`), thread 2 runs `bar > foo`;
/// each `foo` root launches three kernels.
fn two_thread_trace() -> String {
    let mut ev = Vec::new();
    let mut corr = 0;
    let mut launches = |tid: i64, t0: i64, ev: &mut Vec<String>| {
        for (k, name) in ["k_a", "k_b", "k_c"].iter().enumerate() {
            corr += 1;
            let ts = t0 + 10 * k as i64;
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":{tid},"ts":{ts},"dur":2,"args":{{"correlation":{corr}}}}}"#));
            ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{},"dur":5,"args":{{"correlation":{corr},"stream":7,"device":0}}}}"#, ts + 1000));
        }
    };
    ev.push(
        r#"{"ph":"X","cat":"cpu_op","name":"foo","pid":1,"tid":1,"ts":100,"dur":100}"#.to_string(),
    );
    ev.push(
        r#"{"ph":"X","cat":"cpu_op","name":"foo","pid":1,"tid":1,"ts":105,"dur":50}"#.to_string(),
    );
    launches(1, 110, &mut ev);
    ev.push(
        r#"{"ph":"X","cat":"cpu_op","name":"bar","pid":1,"tid":2,"ts":300,"dur":100}"#.to_string(),
    );
    ev.push(
        r#"{"ph":"X","cat":"cpu_op","name":"foo","pid":1,"tid":2,"ts":305,"dur":80}"#.to_string(),
    );
    launches(2, 310, &mut ev);
    format!("{{\"traceEvents\":[{}]}}", ev.join(","))
}

/// docs/hta-differences.md §10: roots are the outermost matches on every thread, so the
/// deeper `foo` on thread 2 counts too (HTA's minimum depth would keep only thread 1's).
#[test]
fn sequences_operator_roots_are_outermost() {
    let trace = read_json(&two_thread_trace());
    let r = frequent_sequences(
        &trace,
        &SequenceOptions {
            op: Some("foo".into()),
            ..SequenceOptions::default()
        },
    );
    assert_eq!(r.roots, 2);
    assert_eq!(r.sequences.len(), 1);
    let s = &r.sequences[0];
    assert_eq!(s.count, 2);
    assert_eq!(s.kernels, vec!["k_a", "k_b", "k_c"]);
    assert_eq!(s.op.as_deref(), Some("foo"));
    assert_eq!(s.kernel_time_ns, 30_000);
    assert_eq!(s.op_time_ns, Some(180_000));
}

/// Step mode: a repeated run of kernels is found once (not its rotations or parts).
#[test]
fn step_mode_finds_repeated_runs() {
    let t = read(&rank_fixtures()[0]);
    let r = frequent_sequences(&t, &SequenceOptions::default());
    assert_eq!(r.roots, 2);
    assert!(!r.sequences.is_empty());
    for (i, a) in r.sequences.iter().enumerate() {
        assert!(a.count >= 2 && a.kernels.len() >= 3 && a.kernels.len() <= 6);
        for b in &r.sequences[..i] {
            let inside = b
                .kernels
                .windows(a.kernels.len())
                .any(|w| w == a.kernels.as_slice());
            assert!(!inside, "{:?} inside {:?}", a.kernels, b.kernels);
        }
    }
}

/// HTA's cuda_event_sync trace: the path covers the step window, goes through a
/// synchronisation into the GPU and back through a launch edge.
#[test]
fn critical_path_through_a_sync() {
    let t = read(&trace_fixture("event_sync_trace.json.gz"));
    let cp = critical_path(&t, CriticalPathOptions { step: None, top: 0 });
    let [w0, w1] = cp.window_ns.unwrap();
    assert_eq!(cp.length_ns, w1 - w0, "{cp:#?}");
    let share: f64 = cp.categories.iter().map(|c| c.share).sum();
    assert!((share - 1.0).abs() < 1e-8);
    let has = |c: PathCategory| cp.categories.iter().any(|x| x.category == c);
    assert!(has(PathCategory::Sync), "{:#?}", cp.categories);
    assert!(has(PathCategory::GpuCompute));
    assert!(has(PathCategory::KernelLaunchDelay));
    assert!(cp.warnings.is_empty(), "{:?}", cp.warnings);
    let listed: i64 = cp.top_events.iter().map(|e| e.time_ns).sum();
    assert_eq!(listed, cp.length_ns, "top 0 lists every event");
}

/// `--step N` picks that step; an unknown step is a warning, not a panic.
#[test]
fn critical_path_step_choice() {
    let t = read(&rank_fixtures()[0]);
    let cp = critical_path(
        &t,
        CriticalPathOptions {
            step: Some(551),
            top: 5,
        },
    );
    assert_eq!(cp.step.as_deref(), Some("ProfilerStep#551"));
    assert!(cp.top_events.len() <= 5);
    let [w0, w1] = cp.window_ns.unwrap();
    assert!(((cp.length_ns - (w1 - w0)) as f64).abs() < 0.01 * (w1 - w0) as f64);
    let none = critical_path(
        &t,
        CriticalPathOptions {
            step: Some(7),
            top: 5,
        },
    );
    assert!(none.step.is_none());
    assert_eq!(none.warnings[0], Note::NoSuchStep { step: Some(7) });
}
