//! Idle-time breakdown (docs/metrics.md B.7): per stream, the gap before each kernel,
//! memcpy or memset (after the previous one on the same stream ended), classified as
//! **host wait** (the launch call came after the stream had drained), **kernel wait** (a
//! short gap between back-to-back work, below a threshold, 30 µs by default) or **other**.

use serde::Serialize;

use kinetoscope_trace::Trace;

use super::{select, Compat, GpuRows, LaunchIndex, RowKind, Window};
use crate::stats::percentile;

/// HTA's default `consecutive_kernel_delay`: 30 µs.
pub const DEFAULT_KERNEL_WAIT_NS: i64 = 30_000;

/// An idle category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleCategory {
    /// The launch call started after the previous row on the stream had ended.
    HostWait,
    /// Launched in time, gap below the threshold.
    KernelWait,
    /// Everything else (including the first row of a stream, with no gap).
    Other,
}

impl IdleCategory {
    /// The three categories, in HTA's order.
    pub const ALL: [IdleCategory; 3] = [Self::HostWait, Self::KernelWait, Self::Other];

    /// HTA's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HostWait => "host_wait",
            Self::KernelWait => "kernel_wait",
            Self::Other => "other",
        }
    }
}

/// Statistics of the gaps in one category (pandas `describe()` plus p90). Times ns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GapStats {
    /// Number of gaps.
    pub count: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Sample standard deviation (ddof 1); null for a single gap.
    pub std_ns: Option<f64>,
    /// Smallest.
    pub min_ns: i64,
    /// 25th percentile (linear interpolation).
    pub p25_ns: f64,
    /// Median.
    pub p50_ns: f64,
    /// 75th percentile.
    pub p75_ns: f64,
    /// 90th percentile.
    pub p90_ns: f64,
    /// Largest.
    pub max_ns: i64,
}

impl GapStats {
    /// Statistics of `gaps` (sorted in place); `None` when empty.
    pub fn of(gaps: &mut [i64]) -> Option<Self> {
        if gaps.is_empty() {
            return None;
        }
        gaps.sort_unstable();
        let n = gaps.len() as f64;
        let mean = gaps.iter().map(|&g| g as f64).sum::<f64>() / n;
        let std = (gaps.len() > 1).then(|| {
            (gaps.iter().map(|&g| (g as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        });
        Some(Self {
            count: gaps.len() as u64,
            mean_ns: mean,
            std_ns: std,
            min_ns: gaps[0],
            p25_ns: percentile(gaps, 0.25),
            p50_ns: percentile(gaps, 0.5),
            p75_ns: percentile(gaps, 0.75),
            p90_ns: percentile(gaps, 0.9),
            max_ns: gaps[gaps.len() - 1],
        })
    }
}

/// One category of one stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CategoryIdle {
    /// The category.
    pub category: IdleCategory,
    /// Σ gaps, ns.
    pub idle_ns: i64,
    /// Share of the stream's idle time (2 decimals); null when the stream has none.
    pub ratio: Option<f64>,
    /// Gap statistics; null when there is no gap in the category.
    pub stats: Option<GapStats>,
}

/// One stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamIdle {
    /// CUDA stream id.
    pub stream: i64,
    /// Kernels, memcpys and memsets on it.
    pub rows: u64,
    /// Σ gaps over all categories, ns.
    pub idle_ns: i64,
    /// Host wait, kernel wait, other.
    pub categories: Vec<CategoryIdle>,
}

/// The idle-time breakdown of one rank.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdleBreakdown {
    /// The file.
    pub path: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// What was looked at.
    pub window: Window,
    /// Gaps shorter than this (ns) after an in-time launch are kernel wait.
    pub kernel_wait_ns: i64,
    /// Streams in order of their first row in the file.
    pub streams: Vec<StreamIdle>,
}

struct StreamAcc {
    stream: i64,
    first_event: u32,
    rows: u64,
    prev_end: Option<i64>,
    gaps: [Vec<i64>; 3],
    first_other: bool,
}

/// The breakdown from already selected rows (sync rows are skipped, as in HTA).
pub fn idle_of(trace: &Trace, rows: &GpuRows, kernel_wait_ns: i64) -> IdleBreakdown {
    let e = &trace.events;
    let launches = LaunchIndex::build(trace);
    let mut streams: Vec<StreamAcc> = Vec::new();
    for (k, &id) in rows.rows.iter().enumerate() {
        if rows.kind[k] == RowKind::Sync {
            continue;
        }
        let i = id as usize;
        let stream = rows.stream[k];
        let s = match streams.iter().position(|s| s.stream == stream) {
            Some(p) => p,
            None => {
                streams.push(StreamAcc {
                    stream,
                    first_event: id,
                    rows: 0,
                    prev_end: None,
                    gaps: Default::default(),
                    first_other: false,
                });
                streams.len() - 1
            }
        };
        let acc = &mut streams[s];
        acc.rows += 1;
        acc.first_event = acc.first_event.min(id);
        let (ts, end) = rows.clock.span(trace, i);
        match acc.prev_end {
            None => acc.first_other = true,
            Some(prev_end) => {
                let gap = ts - prev_end;
                let launch_ts = launches
                    .get(e.correlation[i])
                    .filter(|_| e.correlation[i] != 0)
                    .map(|l| rows.clock.start(e.ts_ns[l as usize]));
                let cat = if launch_ts.is_some_and(|t| t > prev_end) {
                    IdleCategory::HostWait
                } else if gap < kernel_wait_ns {
                    IdleCategory::KernelWait
                } else {
                    IdleCategory::Other
                };
                acc.gaps[cat as usize].push(gap);
            }
        }
        acc.prev_end = Some(end);
    }
    streams.sort_by_key(|s| s.first_event);
    let streams = streams
        .into_iter()
        .map(|mut s| {
            let sums: Vec<i64> = s.gaps.iter().map(|g| g.iter().sum()).collect();
            let total: i64 = sums.iter().sum();
            let categories = IdleCategory::ALL
                .iter()
                .zip(s.gaps.iter_mut())
                .zip(sums)
                .filter(|((c, g), _)| {
                    !g.is_empty() || (**c == IdleCategory::Other && s.first_other)
                })
                .map(|((&category, gaps), idle_ns)| CategoryIdle {
                    category,
                    idle_ns,
                    ratio: (total != 0)
                        .then(|| (100.0 * idle_ns as f64 / total as f64).round() / 100.0),
                    stats: GapStats::of(gaps),
                })
                .collect();
            StreamIdle {
                stream: s.stream,
                rows: s.rows,
                idle_ns: total,
                categories,
            }
        })
        .collect();
    IdleBreakdown {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        window: rows.window.clone(),
        kernel_wait_ns,
        streams,
    }
}

/// The idle-time breakdown of a trace (`filter`: apply HTA's step filter, see
/// [`super::PerRank`]).
pub fn idle_breakdown(
    trace: &Trace,
    compat: Compat,
    filter: bool,
    kernel_wait_ns: i64,
) -> IdleBreakdown {
    let rows = select(trace, compat, filter);
    idle_of(trace, &rows, kernel_wait_ns)
}
