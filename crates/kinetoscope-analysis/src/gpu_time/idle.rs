//! Idle-time breakdown (HTA's `get_idle_time_breakdown`): per stream, the gap before each
//! kernel, memcpy or memset (after the previous one on the same stream ended), classified
//! as **host wait** (the launch call came after the stream had drained), **kernel wait** (a
//! short gap between back-to-back work, below a threshold, 30 µs by default) or **other**.
//! The same classification over all streams as one queue gives the host wait of the GPU
//! as a whole ([`device_host_wait`]), which the advisor uses.
//!
//! Rows that overlap on one stream (CUPTI timestamps of back-to-back work, graph
//! replays) make HTA's gap negative: HTA measures from the end of the previous row in
//! start order and sums negative gaps into the totals and statistics. kinetoscope's
//! default measures from the latest end so far on the stream and clips at zero (a row that
//! starts while the stream is busy had no idle time before it); `--hta-compat` does what
//! HTA does.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::Trace;

use super::{select, Compat, GpuRows, LaunchIndex, RowKind, Window};
use crate::stats::percentile;

/// HTA's default `consecutive_kernel_delay`: 30 µs.
pub const DEFAULT_KERNEL_WAIT_NS: i64 = 30_000;

/// An idle category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Host wait of the GPU as a whole ([`device_host_wait`]: all streams as one queue),
    /// ns; what `kinetoscope report` counts as the GPU waiting for the host.
    pub device_host_wait_ns: i64,
}

/// One gap on a stream: from the end of a GPU row (kinetoscope: the latest end so far on
/// the stream) to the start of the next row on the same stream, classified as HTA does.
/// Times ns on the rows' clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// CUDA stream.
    pub stream: i64,
    /// The previous row's end (kinetoscope: the latest end of the earlier rows).
    pub start_ns: i64,
    /// The next row's start (before `start_ns` when the rows overlap).
    pub end_ns: i64,
    /// The category.
    pub category: IdleCategory,
    /// The next row (event index).
    pub row: u32,
    /// Its launch call (event index), when known.
    pub launch: Option<u32>,
}

impl Gap {
    /// The idle time the gap counts for in a mode: HTA sums overlaps as negative gaps,
    /// kinetoscope clips them at zero.
    pub fn idle_ns(&self, compat: Compat) -> i64 {
        let d = self.end_ns - self.start_ns;
        match compat {
            Compat::Hta => d,
            Compat::Kinetoscope => d.max(0),
        }
    }
}

/// Which queue a gap is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    /// Each stream on its own (HTA): a gap runs from the previous row's end on the stream.
    Stream,
    /// All streams as one queue: a gap runs from the latest end of all earlier rows.
    Device,
}

/// Walk the non-sync rows in start order: `on_row(stream, row, gap before it)`, the gap
/// being `None` for the first row of its queue.
fn walk(
    trace: &Trace,
    rows: &GpuRows,
    launches: &LaunchIndex,
    kernel_wait_ns: i64,
    queue: Queue,
    mut on_row: impl FnMut(i64, u32, Option<Gap>),
) {
    let e = &trace.events;
    // End of its previous row, per queue.
    let mut prev: rustc_hash::FxHashMap<i64, i64> = Default::default();
    for (k, &id) in rows.rows.iter().enumerate() {
        if rows.kind[k] == RowKind::Sync {
            continue;
        }
        let i = id as usize;
        let stream = rows.stream[k];
        let key = match queue {
            Queue::Stream => stream,
            Queue::Device => 0,
        };
        let (ts, end) = rows.clock.span(trace, i);
        let Some(slot) = prev.get_mut(&key) else {
            prev.insert(key, end);
            on_row(stream, id, None);
            continue;
        };
        let prev_end = *slot;
        *slot = match (queue, rows.window.compat) {
            (Queue::Stream, Compat::Hta) => end,
            _ => prev_end.max(end),
        };
        let launch = launches
            .get(e.correlation.at(i))
            .filter(|_| e.correlation.at(i) != 0);
        let launch_ts = launch.map(|l| rows.clock.start(e.ts_ns[l as usize]));
        let gap = ts - prev_end;
        let category = if launch_ts.is_some_and(|t| t > prev_end) {
            IdleCategory::HostWait
        } else if gap < kernel_wait_ns {
            IdleCategory::KernelWait
        } else {
            IdleCategory::Other
        };
        on_row(
            stream,
            id,
            Some(Gap {
                stream,
                start_ns: prev_end,
                end_ns: ts,
                category,
                row: id,
                launch,
            }),
        );
    }
}

/// Every gap on every stream (see [`Gap`]), in the order of the rows after them (start
/// order); the first row of each stream has none. [`idle_of`] sums these per stream and
/// category, each counting [`Gap::idle_ns`].
pub fn stream_gaps(trace: &Trace, rows: &GpuRows, kernel_wait_ns: i64) -> Vec<Gap> {
    let mut out = Vec::new();
    let launches = LaunchIndex::build(trace);
    walk(
        trace,
        rows,
        &launches,
        kernel_wait_ns,
        Queue::Stream,
        |_, _, g| out.extend(g),
    );
    out
}

/// The time the whole GPU waits for the host: HTA's classification applied to all
/// streams as one queue. A gap runs from the moment every stream had drained (the
/// latest end of all earlier rows) to the next row's start, on any stream; it is host
/// wait when that row's launch call came after the GPU had drained. Only gaps of
/// positive length, in start order. On a single stream these are the stream's
/// `host_wait` gaps of [`idle_of`].
pub fn device_host_wait(trace: &Trace, rows: &GpuRows) -> Vec<Gap> {
    device_host_wait_with(trace, rows, &LaunchIndex::build(trace))
}

/// [`device_host_wait`] with the trace's launch index built once by the caller (the
/// advisor shares it with the launch statistics).
pub fn device_host_wait_with(trace: &Trace, rows: &GpuRows, launches: &LaunchIndex) -> Vec<Gap> {
    let mut out = Vec::new();
    walk(
        trace,
        rows,
        launches,
        DEFAULT_KERNEL_WAIT_NS,
        Queue::Device,
        |_, _, g| {
            out.extend(g.filter(|g| g.category == IdleCategory::HostWait && g.end_ns > g.start_ns))
        },
    );
    out
}

struct StreamAcc {
    stream: i64,
    first_event: u32,
    rows: u64,
    gaps: [Vec<i64>; 3],
    first_other: bool,
}

/// The breakdown from already selected rows (sync rows are skipped, as in HTA).
pub fn idle_of(trace: &Trace, rows: &GpuRows, kernel_wait_ns: i64) -> IdleBreakdown {
    let mut streams: Vec<StreamAcc> = Vec::new();
    let mut slot_of: rustc_hash::FxHashMap<i64, usize> = Default::default();
    let launches = LaunchIndex::build(trace);
    walk(
        trace,
        rows,
        &launches,
        kernel_wait_ns,
        Queue::Stream,
        |stream, id, gap| {
            let s = match slot_of.get(&stream) {
                Some(&p) => p,
                None => {
                    slot_of.insert(stream, streams.len());
                    streams.push(StreamAcc {
                        stream,
                        first_event: id,
                        rows: 0,
                        gaps: Default::default(),
                        first_other: false,
                    });
                    streams.len() - 1
                }
            };
            let acc = &mut streams[s];
            acc.rows += 1;
            acc.first_event = acc.first_event.min(id);
            match gap {
                None => acc.first_other = true,
                Some(g) => acc.gaps[g.category as usize].push(g.idle_ns(rows.window.compat)),
            }
        },
    );
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
        device_host_wait_ns: device_host_wait_with(trace, rows, &launches)
            .iter()
            .map(|g| g.end_ns - g.start_ns)
            .sum(),
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
