//! The per-step memory pattern of a trace recorded with `profile_memory=True`: for each
//! `ProfilerStep#N`, the allocated bytes entering the step, its trough (minimum), peak
//! (maximum) and exit, and a verdict over the steps (the rising-trough leak signature
//! behind advisor rule ME001, `docs/rules.md`):
//!
//! - **gradual increase** (a leak signature): the trough rises from step to step — it
//!   rises in at least half of the step transitions, falls in at most a fifth, and grows
//!   in total by at least 0.1 % of the highest step peak and 64 KiB; the growth per step
//!   is the least-squares slope of the troughs.
//! - **sudden spike**: some step's peak is more than 1.5 × the median step peak.
//!
//! - **stable**: neither.
//!
//! The thresholds are kinetoscope's own (no reference tool gives numbers for the rising
//! trough). The result is numbers and a verdict; the renderers word them.
//!
//! Allocated bytes are `Total Allocated` when every record of the device has it, else the
//! net bytes allocated since profiling started. Needs at least 3 steps with
//! `ProfilerStep#N` markers; without them there is no verdict.

use std::collections::BTreeMap;

use kinetoscope_trace::Trace;
use serde::{Deserialize, Serialize};

use super::{Device, MemoryInput, MemoryRecord, MemoryView};
use crate::range_extremes::RangeExtremes;
use crate::steps::{find_steps, Step, StepSource};

/// Fewest steps for a verdict.
pub const MIN_STEPS: usize = 3;

/// Smallest total trough growth called a leak, as a share of the highest step peak.
pub const MIN_GROWTH_SHARE: f64 = 0.001;

/// Smallest total trough growth called a leak, bytes.
pub const MIN_GROWTH_BYTES: i64 = 64 << 10;

/// A step peak above this multiple of the median step peak is a spike.
pub const SPIKE_FACTOR: f64 = 1.5;

/// Allocated memory over one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepMemory {
    /// `ProfilerStep#N`.
    pub step: String,
    /// Start, epoch ns.
    pub start_ns: i64,
    /// Memory records inside the step.
    pub records: u64,
    /// Allocated bytes when the step began.
    pub enter_bytes: i64,
    /// Lowest allocated bytes during the step (including on entry).
    pub trough_bytes: i64,
    /// Highest allocated bytes during the step.
    pub peak_bytes: i64,
    /// Allocated bytes when the step ended.
    pub exit_bytes: i64,
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryPattern {
    /// Troughs and peaks level.
    Stable,
    /// Troughs rise step after step: memory is kept across steps (a leak).
    GradualIncrease,
    /// One or more steps peak far above the others.
    SuddenSpike,
}

/// The highest step peak among the spike steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spike {
    /// `ProfilerStep#N`.
    pub step: String,
    /// Its peak allocated bytes.
    pub peak_bytes: i64,
    /// That peak over the median step peak.
    pub ratio: f64,
}

/// The per-step pattern of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepPattern {
    /// The verdict.
    pub verdict: MemoryPattern,
    /// Last step's trough minus the first's.
    pub trough_growth_bytes: i64,
    /// Least-squares slope of the troughs, bytes per step: the leak rate.
    pub growth_per_step_bytes: f64,
    /// Step-to-step changes of the trough that are rises.
    pub trough_rises: usize,
    /// Step-to-step changes of the trough that are falls.
    pub trough_falls: usize,
    /// Median of the step peaks, bytes.
    pub median_peak_bytes: f64,
    /// Steps whose peak exceeds 1.5 × the median step peak.
    pub spike_steps: Vec<String>,
    /// The highest of those steps, when there is one.
    pub largest_spike: Option<Spike>,
    /// Per step, in time order.
    pub steps: Vec<StepMemory>,
}

/// Add each device's step pattern to a trace's memory view.
pub fn attach(view: &mut MemoryView, trace: &Trace, input: &MemoryInput) {
    let (steps, source) = find_steps(trace);
    if source != StepSource::ProfilerStep || steps.len() < MIN_STEPS {
        return;
    }
    let mut by_device: BTreeMap<Device, Vec<&MemoryRecord>> = BTreeMap::new();
    for r in &input.records {
        by_device.entry(r.device).or_default().push(r);
    }
    for d in &mut view.devices {
        let device = Device {
            device_type: d.device_type,
            device_id: d.device_id,
        };
        let records = by_device.get(&device).map_or(&[][..], Vec::as_slice);
        d.step_pattern = step_pattern(records, &steps);
    }
}

/// The pattern of one device's records (time order) over `steps` (time order). Each
/// step's trough and peak is a scan of its records when no steps overlap, else a range
/// query, so steps that overlap (or repeat) cost O(log n) each, not a scan of the
/// records they share.
pub fn step_pattern(records: &[&MemoryRecord], steps: &[Step]) -> Option<StepPattern> {
    if records.is_empty() || steps.len() < MIN_STEPS {
        return None;
    }
    let totals = records.iter().all(|r| r.total_allocated.is_some());
    let mut net = 0i64;
    // (time, allocated after the record, allocated before it)
    let levels: Vec<(i64, i64, i64)> = records
        .iter()
        .map(|r| {
            let before = net;
            net += r.bytes;
            match r.total_allocated {
                Some(t) if totals => (r.ts_ns, t, t - r.bytes),
                _ => (r.ts_ns, net, before),
            }
        })
        .collect();
    // Steps in time order that do not overlap read each record at most once: a scan of
    // each step's records then costs less than building the range structure.
    let disjoint = steps
        .windows(2)
        .all(|w| w[1].start_ns >= w[0].start_ns + w[0].dur_ns.max(0));
    let extremes = (!disjoint).then(|| RangeExtremes::new(levels.iter().map(|l| l.1)));
    let range = |lo: usize, hi: usize| match &extremes {
        Some(x) => x.get(lo, hi),
        None => levels[lo..hi].iter().fold(None, |acc, l| match acc {
            None => Some((l.1, l.1)),
            Some((a, b)) => Some((l.1.min(a), l.1.max(b))),
        }),
    };
    let mut rows = Vec::with_capacity(steps.len());
    for s in steps {
        let end = s.start_ns + s.dur_ns.max(0);
        let lo = levels.partition_point(|l| l.0 < s.start_ns);
        let hi = levels.partition_point(|l| l.0 < end).max(lo);
        let enter = if lo > 0 {
            levels[lo - 1].1
        } else {
            levels[0].2
        };
        let (trough, peak) = range(lo, hi).unwrap_or((enter, enter));
        rows.push(StepMemory {
            step: s.name.clone(),
            start_ns: s.start_ns,
            records: (hi - lo) as u64,
            enter_bytes: enter,
            trough_bytes: trough.min(enter),
            peak_bytes: peak.max(enter),
            exit_bytes: if hi > lo { levels[hi - 1].1 } else { enter },
        });
    }
    Some(verdict(rows))
}

fn verdict(steps: Vec<StepMemory>) -> StepPattern {
    let n = steps.len();
    let troughs: Vec<i64> = steps.iter().map(|s| s.trough_bytes).collect();
    let rises = troughs.windows(2).filter(|w| w[1] > w[0]).count();
    let falls = troughs.windows(2).filter(|w| w[1] < w[0]).count();
    let growth = troughs[n - 1] - troughs[0];
    let slope = slope(&troughs);
    let max_peak = steps.iter().map(|s| s.peak_bytes).max().unwrap_or(0);
    let mut peaks: Vec<i64> = steps.iter().map(|s| s.peak_bytes).collect();
    peaks.sort_unstable();
    let median = if n % 2 == 1 {
        peaks[n / 2] as f64
    } else {
        (peaks[n / 2 - 1] + peaks[n / 2]) as f64 / 2.0
    };
    let is_spike = |s: &StepMemory| median > 0.0 && s.peak_bytes as f64 > SPIKE_FACTOR * median;
    let spike_steps: Vec<String> = steps
        .iter()
        .filter(|s| is_spike(s))
        .map(|s| s.step.clone())
        .collect();
    let leak = growth > 0
        && slope > 0.0
        && 2 * rises >= n - 1
        && 5 * falls < n
        && growth as f64 >= (MIN_GROWTH_SHARE * max_peak as f64).max(MIN_GROWTH_BYTES as f64);
    let largest_spike = steps
        .iter()
        .filter(|s| is_spike(s))
        .max_by_key(|s| s.peak_bytes)
        .map(|s| Spike {
            step: s.step.clone(),
            peak_bytes: s.peak_bytes,
            ratio: s.peak_bytes as f64 / median,
        });
    let verdict = if leak {
        MemoryPattern::GradualIncrease
    } else if !spike_steps.is_empty() {
        MemoryPattern::SuddenSpike
    } else {
        MemoryPattern::Stable
    };
    StepPattern {
        verdict,
        trough_growth_bytes: growth,
        growth_per_step_bytes: slope,
        trough_rises: rises,
        trough_falls: falls,
        median_peak_bytes: median,
        spike_steps,
        largest_spike,
        steps,
    }
}

/// Least-squares slope of `y` against 0, 1, 2, ...
fn slope(y: &[i64]) -> f64 {
    let n = y.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = y.iter().map(|v| *v as f64).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        let dx = i as f64 - mx;
        num += dx * (*v as f64 - my);
        den += dx * dx;
    }
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ts: i64, bytes: i64, total: i64) -> MemoryRecord {
        MemoryRecord {
            ts_ns: ts,
            device: Device::cuda(0),
            addr: Some(1),
            bytes,
            total_allocated: Some(total),
            total_reserved: None,
            op: None,
            module: None,
        }
    }

    fn steps(n: i64) -> Vec<Step> {
        (0..n)
            .map(|i| Step {
                name: format!("ProfilerStep#{i}"),
                number: Some(i),
                start_ns: i * 1000,
                dur_ns: 1000,
            })
            .collect()
    }

    #[test]
    fn slope_of_a_line() {
        assert!((slope(&[0, 2, 4, 6]) - 2.0).abs() < 1e-12);
        assert_eq!(slope(&[5]), 0.0);
    }

    #[test]
    fn needs_three_steps() {
        let r = [rec(10, 1, 1)];
        let refs: Vec<&MemoryRecord> = r.iter().collect();
        assert!(step_pattern(&refs, &steps(2)).is_none());
        assert!(step_pattern(&[], &steps(5)).is_none());
    }

    #[test]
    fn gradual_increase_and_spike() {
        // Each step: +100 then −100 KiB of temporaries, +20 KiB kept (a leak).
        const K: i64 = 1 << 10;
        let mut r = Vec::new();
        let mut total = 1000 * K;
        for i in 0..6i64 {
            for (dt, b) in [(100, 100 * K), (200, 20 * K), (300, -100 * K)] {
                total += b;
                r.push(rec(i * 1000 + dt, b, total));
            }
        }
        let refs: Vec<&MemoryRecord> = r.iter().collect();
        let p = step_pattern(&refs, &steps(6)).unwrap();
        assert_eq!(p.verdict, MemoryPattern::GradualIncrease, "{p:?}");
        assert_eq!(p.trough_growth_bytes, 100 * K);
        assert_eq!((p.trough_rises, p.trough_falls), (5, 0));
        assert!((p.growth_per_step_bytes - 20.0 * K as f64).abs() < 1e-6);
        assert_eq!(p.steps[0].enter_bytes, 1000 * K);
        assert_eq!(p.steps[0].peak_bytes, 1120 * K);
        // The same growth under the 64 KiB floor is noise, not a leak.
        let small: Vec<MemoryRecord> = r
            .iter()
            .map(|x| MemoryRecord {
                bytes: x.bytes / K,
                total_allocated: x.total_allocated.map(|t| t / K),
                ..x.clone()
            })
            .collect();
        let refs: Vec<&MemoryRecord> = small.iter().collect();
        let p = step_pattern(&refs, &steps(6)).unwrap();
        assert_eq!(p.verdict, MemoryPattern::Stable, "{p:?}");

        // Spike: flat, but step 3 allocates 5000 transiently.
        let mut r = Vec::new();
        for i in 0..6i64 {
            let b = if i == 3 { 5000 } else { 100 };
            r.push(rec(i * 1000 + 100, b, 1000 + b));
            r.push(rec(i * 1000 + 300, -b, 1000));
        }
        let refs: Vec<&MemoryRecord> = r.iter().collect();
        let p = step_pattern(&refs, &steps(6)).unwrap();
        assert_eq!(p.verdict, MemoryPattern::SuddenSpike, "{p:?}");
        assert_eq!(p.spike_steps, vec!["ProfilerStep#3"]);
        let spike = p.largest_spike.unwrap();
        assert_eq!(
            (spike.step.as_str(), spike.peak_bytes),
            ("ProfilerStep#3", 6000)
        );
        assert!((spike.ratio - 6000.0 / 1100.0).abs() < 1e-12);
    }
}
