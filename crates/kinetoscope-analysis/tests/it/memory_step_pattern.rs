//! Per-step memory pattern on a real trace (`worker0…pt.trace.json.gz`, PyTorch 1.8,
//! 6 ProfilerSteps, profile_memory=True, no `Total Allocated`): clean as recorded, then with a leak and a spike planted into its
//! `[memory]` records.

use kinetoscope_analysis::memory::step_pattern::{step_pattern, MemoryPattern};
use kinetoscope_analysis::memory::trace_source::from_trace;
use kinetoscope_analysis::memory::{analyze_trace, Device, MemoryOptions, MemoryRecord};
use kinetoscope_analysis::steps::find_steps;
use kinetoscope_trace::Trace;

use crate::common::{read, trace_fixture};

const MIB: i64 = 1 << 20;

/// The fixture, read.
fn trace() -> Trace {
    read(&trace_fixture("worker0.1623143089861.pt.trace.json.gz"))
}

#[test]
fn the_recorded_trace_is_stable() {
    let t = trace();
    let v = analyze_trace(&t, &MemoryOptions::default());
    let gpu = v.devices.iter().find(|d| d.device == "GPU0").unwrap();
    let p = gpu.step_pattern.as_ref().unwrap();
    assert_eq!(p.verdict, MemoryPattern::Stable, "{p:?}");
    assert_eq!(p.steps.len(), 6);
    assert_eq!(p.trough_growth_bytes, 0);
    assert!(p.spike_steps.is_empty());
    let cpu = v.devices.iter().find(|d| d.device == "CPU").unwrap();
    assert_eq!(
        cpu.step_pattern.as_ref().unwrap().verdict,
        MemoryPattern::Stable
    );
}

/// GPU0 records with `plant(ts)` extra bytes allocated at `ts` (and kept).
fn planted(t: &Trace, extra: &[(i64, i64)]) -> Vec<MemoryRecord> {
    let input = from_trace(t);
    let mut recs: Vec<MemoryRecord> = input
        .records
        .into_iter()
        .filter(|r| r.device == Device::cuda(0))
        .collect();
    assert!(recs.len() > 100, "the fixture has GPU [memory] events");
    // PyTorch 1.8 records have no `Total Allocated`: the pattern then follows the net
    // bytes, so a planted record is just its `Bytes`. With totals, later totals shift.
    let totals = recs.iter().all(|r| r.total_allocated.is_some());
    for &(ts, bytes) in extra {
        let at = recs.partition_point(|r| r.ts_ns <= ts);
        let before = if at > 0 {
            recs[at - 1].total_allocated
        } else {
            Some(0)
        };
        if totals {
            for r in &mut recs[at..] {
                *r.total_allocated.as_mut().unwrap() += bytes;
            }
        }
        recs.insert(
            at,
            MemoryRecord {
                ts_ns: ts,
                device: Device::cuda(0),
                addr: Some(0xdead_0000 + at as u64),
                bytes,
                total_allocated: before.filter(|_| totals).map(|b| b + bytes),
                total_reserved: None,
                op: None,
                module: None,
            },
        );
    }
    recs
}

#[test]
fn a_planted_per_step_leak_is_a_gradual_increase() {
    let t = trace();
    let (steps, _) = find_steps(&t);
    // 4 MiB allocated in the middle of every step and never freed.
    let leaks: Vec<(i64, i64)> = steps
        .iter()
        .map(|s| (s.start_ns + s.dur_ns / 2, 4 * MIB))
        .collect();
    let recs = planted(&t, &leaks);
    let refs: Vec<&MemoryRecord> = recs.iter().collect();
    let p = step_pattern(&refs, &steps).unwrap();
    assert_eq!(p.verdict, MemoryPattern::GradualIncrease, "{p:?}");
    assert!(
        (p.growth_per_step_bytes - 4.0 * MIB as f64).abs() <= 0.5 * MIB as f64,
        "{}",
        p.growth_per_step_bytes
    );
    assert!(
        p.trough_growth_bytes >= 16 * MIB,
        "{}",
        p.trough_growth_bytes
    );
    assert!(p.trough_rises >= p.steps.len() / 2, "{p:?}");
}

#[test]
fn a_planted_transient_spike_is_a_sudden_spike() {
    let t = trace();
    let (steps, _) = find_steps(&t);
    let s = &steps[3];
    // When step 3 reaches its own peak (net bytes), 2 GiB more for 1 ns: peaks are
    // 2.6 GiB per step, so step 3 peaks at 1.77× the median.
    let clean = planted(&t, &[]);
    let mut net = 0;
    let mut at_peak = (i64::MIN, s.start_ns);
    for r in &clean {
        net += r.bytes;
        if r.ts_ns >= s.start_ns && r.ts_ns < s.start_ns + s.dur_ns && net > at_peak.0 {
            at_peak = (net, r.ts_ns);
        }
    }
    let ts = at_peak.1;
    let recs = planted(&t, &[(ts, 2 << 30), (ts + 1, -(2 << 30))]);
    let refs: Vec<&MemoryRecord> = recs.iter().collect();
    let p = step_pattern(&refs, &steps).unwrap();
    assert_eq!(p.verdict, MemoryPattern::SuddenSpike, "{p:?}");
    assert_eq!(p.spike_steps, vec![s.name.clone()]);
    let spike = p.largest_spike.as_ref().unwrap();
    assert_eq!(spike.step, s.name);
    assert!(spike.ratio > 1.5, "{p:?}");
}

/// Each step's trough and peak is the least and greatest level among its records (or
/// the level on entry), whether the steps are disjoint (a scan per step) or overlap
/// (range queries): both checked against a direct reading of the levels, on the
/// fixture's GPU records over its own six steps and over overlapping steps made from
/// them.
#[test]
fn step_troughs_and_peaks_match_a_scan_for_disjoint_and_overlapping_steps() {
    let t = trace();
    let recs = planted(&t, &[]);
    let refs: Vec<&MemoryRecord> = recs.iter().collect();
    let (steps, _) = find_steps(&t);
    assert_eq!(steps.len(), 6);
    let mut overlapping = steps.clone();
    for (k, s) in overlapping.iter_mut().enumerate() {
        // Each step stretched over half of the next one.
        s.dur_ns += steps.get(k + 1).map_or(0, |n| n.dur_ns / 2);
    }
    assert!(overlapping
        .windows(2)
        .any(|w| w[1].start_ns < w[0].start_ns + w[0].dur_ns));
    // Net bytes: the fixture (PyTorch 1.8) has no `Total Allocated`.
    let mut net = 0i64;
    let levels: Vec<(i64, i64)> = recs
        .iter()
        .map(|r| {
            net += r.bytes;
            (r.ts_ns, net)
        })
        .collect();
    for steps in [&steps, &overlapping] {
        let p = step_pattern(&refs, steps).unwrap();
        for (s, row) in steps.iter().zip(&p.steps) {
            let end = s.start_ns + s.dur_ns;
            let inside: Vec<i64> = levels
                .iter()
                .filter(|l| l.0 >= s.start_ns && l.0 < end)
                .map(|l| l.1)
                .collect();
            let enter = row.enter_bytes;
            let trough = inside.iter().copied().fold(enter, i64::min);
            let peak = inside.iter().copied().fold(enter, i64::max);
            assert_eq!(row.records, inside.len() as u64, "{}", s.name);
            assert_eq!(
                (row.trough_bytes, row.peak_bytes),
                (trough, peak),
                "{}",
                s.name
            );
        }
    }
}
