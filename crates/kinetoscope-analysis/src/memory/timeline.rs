//! Bytes per memory category over time, from any source: a profiler memory timeline
//! file (`export_memory_timeline`, read by `kinetoscope_trace::read::read_memory_timeline`) or the
//! categories kinetoscope infers from a trace ([`super::categories`]).
//!
//! [`CategorySeries`] is the shared shape: category names, points (bytes per category
//! after each event, down-sampled keeping each bucket's first, last, lowest-total and
//! highest-total point so the exact peak survives) and the peak with every category's
//! bytes at that instant.

use kinetoscope_trace::{MemoryTimeline, TimelineFormat, TIMELINE_CATEGORIES};
use serde::{Deserialize, Serialize};

/// One point: bytes live per category (same order as [`CategorySeries::categories`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryPoint {
    /// When, epoch ns.
    pub ts_ns: i64,
    /// Bytes per category after the events at `ts_ns`.
    pub bytes: Vec<i64>,
}

impl CategoryPoint {
    /// The sum over categories.
    pub fn total(&self) -> i64 {
        self.bytes.iter().sum()
    }
}

/// The highest total, when first reached, and each category's bytes then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryPeak {
    /// When first reached, epoch ns.
    pub ts_ns: i64,
    /// The total bytes.
    pub total_bytes: i64,
    /// Bytes per category at that instant.
    pub by_category: Vec<i64>,
    /// Each category's share of `total_bytes` (0–1); `None` when the total is 0.
    pub share_by_category: Option<Vec<f64>>,
}

impl CategoryPeak {
    /// The peak at `ts_ns` with these bytes per category.
    pub fn new(ts_ns: i64, by_category: Vec<i64>) -> Self {
        let total_bytes: i64 = by_category.iter().sum();
        let share_by_category = (total_bytes != 0).then(|| {
            by_category
                .iter()
                .map(|b| *b as f64 / total_bytes as f64)
                .collect()
        });
        Self {
            ts_ns,
            total_bytes,
            by_category,
            share_by_category,
        }
    }
}

/// Bytes per category over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategorySeries {
    /// Category names, in column order.
    pub categories: Vec<String>,
    /// Points before down-sampling.
    pub raw_points: usize,
    /// Whether `points` is a down-sampled subset.
    pub downsampled: bool,
    /// The points, in time order.
    pub points: Vec<CategoryPoint>,
    /// The sum over categories of each point of `points`.
    pub totals: Vec<i64>,
    /// The peak (at full resolution); `None` without points.
    pub peak: Option<CategoryPeak>,
    /// The highest bytes each category reached on its own (not necessarily at once).
    pub max_by_category: Vec<i64>,
}

impl CategorySeries {
    /// Build from full-resolution points, down-sampled to at most `max_points`.
    pub fn new(categories: Vec<String>, full: Vec<CategoryPoint>, max_points: usize) -> Self {
        let mut peak: Option<&CategoryPoint> = None;
        let mut max_by_category = vec![0i64; categories.len()];
        for p in &full {
            if peak.is_none_or(|q| p.total() > q.total()) {
                peak = Some(p);
            }
            for (m, b) in max_by_category.iter_mut().zip(&p.bytes) {
                *m = (*m).max(*b);
            }
        }
        let peak = peak.map(|p| CategoryPeak::new(p.ts_ns, p.bytes.clone()));
        let raw_points = full.len();
        let points = downsample(full, max_points.max(10));
        CategorySeries {
            categories,
            raw_points,
            downsampled: points.len() < raw_points,
            totals: points.iter().map(CategoryPoint::total).collect(),
            points,
            peak,
            max_by_category,
        }
    }

    /// The state at time `ts_ns` (the last point at or before it; zeros before the
    /// first). Uses the kept points, exact only where not down-sampled.
    pub fn at(&self, ts_ns: i64) -> Vec<i64> {
        let k = self.points.partition_point(|p| p.ts_ns <= ts_ns);
        if k == 0 {
            vec![0; self.categories.len()]
        } else {
            self.points[k - 1].bytes.clone()
        }
    }
}

/// Keep per time bucket the first, last, lowest-total and highest-total points.
fn downsample(points: Vec<CategoryPoint>, max_points: usize) -> Vec<CategoryPoint> {
    if points.len() <= max_points {
        return points;
    }
    let buckets = (max_points / 4).max(1) as i128;
    let t0 = points[0].ts_ns;
    let width = (points[points.len() - 1].ts_ns - t0) as i128 + 1;
    let bucket = |p: &CategoryPoint| ((p.ts_ns - t0) as i128 * buckets / width) as i64;
    let mut keep = Vec::new();
    let mut a = 0;
    while a < points.len() {
        let b = bucket(&points[a]);
        let mut z = a + 1;
        while z < points.len() && bucket(&points[z]) == b {
            z += 1;
        }
        let mut hi = a;
        let mut lo = a;
        for k in a..z {
            if points[k].total() > points[hi].total() {
                hi = k;
            }
            if points[k].total() < points[lo].total() {
                lo = k;
            }
        }
        let mut ks = vec![a, z - 1, hi, lo];
        ks.sort_unstable();
        ks.dedup();
        keep.extend(ks);
        a = z;
    }
    let mut it = keep.into_iter().peekable();
    points
        .into_iter()
        .enumerate()
        .filter(|(i, _)| {
            if it.peek() == Some(i) {
                it.next();
                true
            } else {
                false
            }
        })
        .map(|(_, p)| p)
        .collect()
}

/// The view of a profiler memory timeline file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimelineView {
    /// The file.
    pub path: String,
    /// `coalesced` (`.json`) or `raw` (`.raw.json.gz`).
    pub format: TimelineFormat,
    /// Rows in the file.
    pub rows: usize,
    /// Raw form: rows for allocations alive before profiling.
    pub preexisting_rows: usize,
    /// First timestamp, epoch ns (time zero for relative times).
    pub origin_ns: i64,
    /// Last timestamp, epoch ns.
    pub end_ns: i64,
    /// Bytes per category over time, with the peak.
    pub series: CategorySeries,
}

/// Analyse a memory timeline: per-category bytes over time (down-sampled to at most
/// `points` points) and the peak.
pub fn analyze_timeline(path: &str, tl: &MemoryTimeline, points: usize) -> TimelineView {
    let full: Vec<CategoryPoint> = tl
        .times_ns
        .iter()
        .zip(&tl.sizes)
        .map(|(t, s)| CategoryPoint {
            ts_ns: *t,
            bytes: s.to_vec(),
        })
        .collect();
    TimelineView {
        path: path.to_owned(),
        format: tl.format,
        rows: tl.rows,
        preexisting_rows: tl.preexisting_rows,
        origin_ns: tl.times_ns.first().copied().unwrap_or(0),
        end_ns: tl.times_ns.last().copied().unwrap_or(0),
        series: CategorySeries::new(
            TIMELINE_CATEGORIES.iter().map(|s| s.to_string()).collect(),
            full,
            points,
        ),
    }
}

/// PyTorch's categories (from its memory timeline file) next to kinetoscope's inferred
/// ones for the same run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CategoryComparison {
    /// The timeline file.
    pub timeline: String,
    /// The trace device compared (`CPU`, `GPU0`): the first GPU, else the CPU, as
    /// `export_memory_timeline` defaults to `cuda:0` when CUDA is available.
    pub device: String,
    /// Category names: the timeline's 8 then `untracked` (kinetoscope only).
    pub categories: Vec<String>,
    /// The timeline's peak (its `untracked` is 0).
    pub timeline_peak: CategoryPeak,
    /// kinetoscope's inferred peak.
    pub inferred_peak: CategoryPeak,
    /// kinetoscope's inferred bytes at the timeline's peak time (same clock: epoch ns).
    pub inferred_at_timeline_peak: Vec<i64>,
    /// Their sum.
    pub inferred_at_timeline_peak_total: i64,
}

/// Compare a timeline with the categories inferred for one device of the same run;
/// `None` when either has no peak.
pub fn compare(
    timeline: &TimelineView,
    device: &str,
    inferred: &CategorySeries,
) -> Option<CategoryComparison> {
    let tp = timeline.series.peak.as_ref()?;
    let ip = inferred.peak.as_ref()?;
    let mut by_category = tp.by_category.clone();
    by_category.resize(inferred.categories.len(), 0);
    let at_peak = inferred.at(tp.ts_ns);
    Some(CategoryComparison {
        timeline: timeline.path.clone(),
        device: device.to_owned(),
        categories: inferred.categories.clone(),
        timeline_peak: CategoryPeak::new(tp.ts_ns, by_category),
        inferred_peak: ip.clone(),
        inferred_at_timeline_peak_total: at_peak.iter().sum(),
        inferred_at_timeline_peak: at_peak,
    })
}

/// Attach the comparison with `timeline` to a trace's memory view: against the first
/// GPU with inferred categories, else the CPU. Returns whether one was attached.
pub fn attach_comparison(view: &mut super::MemoryView, timeline: &TimelineView) -> bool {
    let pick = view
        .devices
        .iter()
        .filter(|d| d.categories.is_some())
        .min_by_key(|d| (d.device_type != 1, d.device_id));
    let cmp = pick.and_then(|d| {
        compare(
            timeline,
            &d.device,
            &d.categories.as_ref().expect("filtered").series,
        )
    });
    view.timeline_comparison = cmp;
    view.timeline_comparison.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(t: i64, b: &[i64]) -> CategoryPoint {
        CategoryPoint {
            ts_ns: t,
            bytes: b.to_vec(),
        }
    }

    #[test]
    fn peak_survives_downsampling() {
        let mut full: Vec<CategoryPoint> = (0..1000).map(|i| pt(i, &[i % 7, 1])).collect();
        full[537] = pt(537, &[500, 3]);
        let s = CategorySeries::new(vec!["a".into(), "b".into()], full, 40);
        assert!(s.downsampled);
        assert!(s.points.len() <= 45);
        let peak = s.peak.as_ref().unwrap();
        assert_eq!((peak.ts_ns, peak.total_bytes), (537, 503));
        assert_eq!(peak.by_category, vec![500, 3]);
        let share = peak.share_by_category.as_ref().unwrap();
        assert!((share[0] - 500.0 / 503.0).abs() < 1e-11);
        assert_eq!(s.totals.len(), s.points.len());
        assert!(s.totals.contains(&503));
        assert!(s.points.iter().any(|p| p.ts_ns == 537));
        assert_eq!(s.max_by_category, vec![500, 3]);
        assert_eq!(s.at(-5), vec![0, 0]);
        assert_eq!(s.at(537), vec![500, 3]);
    }
}
