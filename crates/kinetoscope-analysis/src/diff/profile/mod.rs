//! What a comparison of two runs needs from one trace, small enough to keep in a saved
//! report (a CI baseline): every kept step (duration and breakdown), operators by name
//! and input shapes, kernels by name and launching call path, deterministic counts, and
//! memory growth and categories per device.
//!
//! Operators, kernels and counts cover the window of the kept steps (first step's start
//! to last step's end, as the overview stretches them), so work outside the steps and in
//! dropped tail steps is left out; totals are per trace, and comparisons divide them by
//! the number of kept steps.

mod batch;
mod calls;
mod counts;

use kinetoscope_trace::Trace;
use serde::{Deserialize, Serialize};

pub use batch::{batch_from_shapes, BatchFromShapes};
pub use calls::{KernelTotals, OpTotals};
pub use counts::Counts;

use crate::memory::MemoryView;
use crate::ops::OperatorTree;
use crate::overview::{Parts, TraceOverview};

/// One kept step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSample {
    /// Duration after stretching to its GPU work, ns.
    pub dur_ns: i64,
    /// The step's breakdown, ns (the parts add up to `dur_ns`).
    pub breakdown_ns: Parts<i64>,
}

/// Bytes of one memory category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryBytes {
    /// The category (`activation`, `gradient`, ..., `untracked`).
    pub category: String,
    /// Bytes.
    pub bytes: i64,
}

/// Memory of one device beyond its peak.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemoryProfile {
    /// `CPU`, `GPU0`, ...
    pub device: String,
    /// Least-squares growth of the step troughs, bytes per step (the leak signature);
    /// `None` with fewer than 3 steps.
    pub growth_per_step_bytes: Option<f64>,
    /// The inferred categories at the device's peak.
    pub peak_by_category: Vec<CategoryBytes>,
}

/// The comparison data of one trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceProfile {
    /// The kept steps, in time order.
    pub steps: Vec<StepSample>,
    /// The window the totals cover, `[start, end]` epoch ns; `None` without steps.
    pub window_ns: Option<[i64; 2]>,
    /// Operators in the window by name and input shapes.
    pub ops: Vec<OpTotals>,
    /// Kernels in the window by name and launching call path.
    pub kernels: Vec<KernelTotals>,
    /// Deterministic counts in the window.
    pub counts: Counts,
    /// Memory per device.
    pub memory: Vec<DeviceMemoryProfile>,
    /// The batch read from input shapes, when every step shows the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchFromShapes>,
}

/// The profile of `trace`, reusing its overview and memory view.
pub fn profile(trace: &Trace, overview: &TraceOverview, memory: &MemoryView) -> TraceProfile {
    profile_in(trace, &OperatorTree::build(trace), overview, memory)
}

/// [`profile`] over the trace's operator tree, built once by the caller (the advisor
/// shares it with the perf model).
pub fn profile_in(
    trace: &Trace,
    tree: &OperatorTree,
    overview: &TraceOverview,
    memory: &MemoryView,
) -> TraceProfile {
    let steps: Vec<StepSample> = overview
        .steps
        .iter()
        .map(|s| StepSample {
            dur_ns: s.dur_ns,
            breakdown_ns: s.breakdown_ns,
        })
        .collect();
    let window_ns = match (overview.steps.first(), overview.steps.last()) {
        (Some(a), Some(b)) => Some([a.start_ns, b.start_ns + b.dur_ns]),
        _ => None,
    };
    let (lo, hi) = window_ns.map_or((i64::MIN, i64::MAX), |[a, b]| (a, b));
    let (ops, kernels) = calls::totals(trace, &tree.0, lo, hi);
    let step_windows: Vec<(i64, i64)> = overview
        .steps
        .iter()
        .map(|s| (s.start_ns, s.start_ns + s.dur_ns))
        .collect();
    TraceProfile {
        batch: batch_from_shapes(trace, &step_windows),
        steps,
        window_ns,
        ops,
        kernels,
        counts: counts::count(trace, lo, hi),
        memory: memory
            .devices
            .iter()
            .map(|d| DeviceMemoryProfile {
                device: d.device.clone(),
                growth_per_step_bytes: d.step_pattern.as_ref().map(|p| p.growth_per_step_bytes),
                peak_by_category: d
                    .categories
                    .as_ref()
                    .and_then(|c| {
                        let peak = c.series.peak.as_ref()?;
                        Some(
                            c.series
                                .categories
                                .iter()
                                .zip(&peak.by_category)
                                .map(|(category, &bytes)| CategoryBytes {
                                    category: category.clone(),
                                    bytes,
                                })
                                .collect(),
                        )
                    })
                    .unwrap_or_default(),
            })
            .collect(),
    }
}
