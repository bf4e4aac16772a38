//! Memory curves and peaks per device.
//!
//! A curve has one point per memory record: the bytes allocated and reserved on the
//! device after that event (`Total Allocated`, `Total Reserved`), a step function of time.
//! Traces older than PyTorch 1.10 record no totals; their curve is the running sum of
//! `Bytes` since profiling started ([`CurveKind::NetSinceStart`]: the level before
//! profiling is unknown, so it can go below zero).
//!
//! Down-sampling for display splits the time range into equal buckets and keeps, per
//! bucket, the first and last point, the points of least and most allocated bytes and
//! the point of most reserved bytes, so the exact peak (and every bucket's min and max)
//! survives. The plugin uses LTTB instead, which can drop the peak.

use serde::{Deserialize, Serialize};

use super::{MemoryRecord, OpForest};

/// How a curve's values were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveKind {
    /// `Total Allocated` / `Total Reserved` as recorded after each event.
    Recorded,
    /// Running sum of `Bytes` since profiling started (no totals in the trace): the net
    /// change, with an unknown baseline; no reserved bytes.
    NetSinceStart,
    /// No points.
    Empty,
}

/// One point of a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// When, epoch ns.
    pub ts_ns: i64,
    /// Bytes allocated after this event.
    pub allocated_bytes: i64,
    /// Bytes reserved by the caching allocator after this event, when recorded.
    pub reserved_bytes: Option<i64>,
}

/// A device's curve, down-sampled for display.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Curve {
    /// How the values were obtained.
    pub kind: CurveKind,
    /// Points before down-sampling.
    pub raw_points: usize,
    /// Whether `points` is a down-sampled subset.
    pub downsampled: bool,
    /// The points, in time order.
    pub points: Vec<CurvePoint>,
}

/// A peak: the highest value, when it was first reached and by which operator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peak {
    /// The value, bytes.
    pub bytes: i64,
    /// When first reached, epoch ns.
    pub ts_ns: i64,
    /// The operator whose memory event reached it.
    pub op: Option<String>,
    /// That operator's parent operator.
    pub parent_op: Option<String>,
}

/// A curve at full resolution, with the record behind each point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullCurve {
    /// How the values were obtained.
    pub kind: CurveKind,
    /// One point per record used.
    pub points: Vec<CurvePoint>,
    /// Index into the records for each point.
    pub record: Vec<usize>,
}

/// The full curve of one device's records (time-ordered): one point per record with
/// `Total Allocated`; or, when no record has it, the running sum of `Bytes`.
pub fn build(records: &[&MemoryRecord]) -> FullCurve {
    let mut points = Vec::new();
    let mut record = Vec::new();
    let recorded = records.iter().any(|r| r.total_allocated.is_some());
    if recorded {
        for (k, r) in records.iter().enumerate() {
            if let Some(a) = r.total_allocated {
                points.push(CurvePoint {
                    ts_ns: r.ts_ns,
                    allocated_bytes: a,
                    reserved_bytes: r.total_reserved,
                });
                record.push(k);
            }
        }
    } else {
        let mut sum = 0i64;
        for (k, r) in records.iter().enumerate() {
            if r.bytes == 0 {
                continue;
            }
            sum += r.bytes;
            points.push(CurvePoint {
                ts_ns: r.ts_ns,
                allocated_bytes: sum,
                reserved_bytes: None,
            });
            record.push(k);
        }
    }
    let kind = match (points.is_empty(), recorded) {
        (true, _) => CurveKind::Empty,
        (false, true) => CurveKind::Recorded,
        (false, false) => CurveKind::NetSinceStart,
    };
    FullCurve {
        kind,
        points,
        record,
    }
}

fn peak_by(
    full: &FullCurve,
    records: &[&MemoryRecord],
    ops: &OpForest,
    value: impl Fn(&CurvePoint) -> Option<i64>,
) -> Option<Peak> {
    let (bytes, k) = best_point(full, value)?;
    let r = records[full.record[k]];
    let op = r.op;
    Some(Peak {
        bytes,
        ts_ns: full.points[k].ts_ns,
        op: op.map(|o| ops.name_of(o).to_owned()),
        parent_op: op
            .and_then(|o| ops.parent_of(o))
            .map(|p| ops.name_of(p).to_owned()),
    })
}

/// The highest value of a curve and the first point that reaches it.
fn best_point(
    full: &FullCurve,
    value: impl Fn(&CurvePoint) -> Option<i64>,
) -> Option<(i64, usize)> {
    let mut best: Option<(i64, usize)> = None;
    for (k, p) in full.points.iter().enumerate() {
        if let Some(v) = value(p) {
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, k));
            }
        }
    }
    best
}

/// The highest allocated bytes and the record (an index of the curve's records) that
/// first reached them.
pub fn peak_allocated_record(full: &FullCurve) -> Option<(i64, usize)> {
    best_point(full, |p| Some(p.allocated_bytes)).map(|(v, k)| (v, full.record[k]))
}

/// The highest allocated bytes, first time reached.
pub fn peak_allocated(full: &FullCurve, records: &[&MemoryRecord], ops: &OpForest) -> Option<Peak> {
    peak_by(full, records, ops, |p| Some(p.allocated_bytes))
}

/// The highest reserved bytes, first time reached (only when recorded and above zero:
/// the CPU allocator reserves nothing).
pub fn peak_reserved(full: &FullCurve, records: &[&MemoryRecord], ops: &OpForest) -> Option<Peak> {
    peak_by(full, records, ops, |p| p.reserved_bytes).filter(|p| p.bytes > 0)
}

/// At most `max_points` points of a time-ordered curve: all of them when they fit, else
/// per equal-time bucket the first, last, least-allocated, most-allocated and
/// most-reserved points (`max_points / 5` buckets, at least one).
pub fn downsample(points: &[CurvePoint], max_points: usize) -> Vec<CurvePoint> {
    if points.len() <= max_points {
        return points.to_vec();
    }
    let buckets = (max_points / 5).max(1) as i128;
    let t0 = points[0].ts_ns;
    let width = (points[points.len() - 1].ts_ns - t0) as i128 + 1;
    let bucket = |p: &CurvePoint| ((p.ts_ns - t0) as i128 * buckets / width) as i64;
    let mut out = Vec::with_capacity(max_points);
    let mut a = 0;
    while a < points.len() {
        let b = bucket(&points[a]);
        let mut z = a + 1;
        while z < points.len() && bucket(&points[z]) == b {
            z += 1;
        }
        let group = &points[a..z];
        let first_max = |f: &dyn Fn(&CurvePoint) -> Option<i64>| {
            let mut best: Option<(i64, usize)> = None;
            for (k, p) in group.iter().enumerate() {
                if let Some(v) = f(p) {
                    if best.is_none_or(|(bv, _)| v > bv) {
                        best = Some((v, k));
                    }
                }
            }
            best.map(|(_, k)| k)
        };
        let mut keep = vec![0, group.len() - 1];
        keep.extend(first_max(&|p| Some(p.allocated_bytes)));
        keep.extend(first_max(&|p| Some(-p.allocated_bytes)));
        keep.extend(first_max(&|p| p.reserved_bytes));
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| group[k]));
        a = z;
    }
    out
}

/// The display curve: `full` down-sampled to at most `max_points` points.
pub fn downsampled(full: FullCurve, max_points: usize) -> Curve {
    let raw_points = full.points.len();
    let points = downsample(&full.points, max_points);
    Curve {
        kind: full.kind,
        raw_points,
        downsampled: points.len() < raw_points,
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ts: i64, a: i64, r: i64) -> CurvePoint {
        CurvePoint {
            ts_ns: ts,
            allocated_bytes: a,
            reserved_bytes: Some(r),
        }
    }

    #[test]
    fn keeps_everything_when_it_fits() {
        let pts = vec![p(0, 1, 2), p(5, 3, 4)];
        assert_eq!(downsample(&pts, 10), pts);
    }

    #[test]
    fn keeps_peak_and_bucket_extremes() {
        // A noisy curve with one narrow spike and one reserved spike.
        let mut pts: Vec<CurvePoint> = (0..10_000)
            .map(|i| p(i * 1000, (i * 7919) % 1000, 5000))
            .collect();
        pts[6_123].allocated_bytes = 1_000_000;
        pts[2_222].reserved_bytes = Some(9_999);
        let out = downsample(&pts, 50);
        assert!(out.len() <= 50, "{} points", out.len());
        assert!(out.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
        assert!(out.contains(&pts[6_123]));
        assert!(out.contains(&pts[2_222]));
        assert_eq!(out.first(), pts.first());
        assert_eq!(out.last(), pts.last());
        // Every bucket's minimum survives too: the global minimum is there.
        let min = pts.iter().map(|q| q.allocated_bytes).min().unwrap();
        assert!(out.iter().any(|q| q.allocated_bytes == min));
    }

    #[test]
    fn same_timestamp_everywhere() {
        let pts: Vec<CurvePoint> = (0..100).map(|i| p(7, i, 0)).collect();
        let out = downsample(&pts, 10);
        assert!(out.len() <= 10);
        assert!(out.iter().any(|q| q.allocated_bytes == 99));
    }
}
