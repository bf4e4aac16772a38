//! Memory rules, over `[memory]` events (`profile_memory=True`).
pub mod allocator_churn;
pub mod memory_leak;
pub mod memory_pressure;
pub mod memory_spike;
pub mod memory_underused;
pub mod reserved_overhang;

use kinetoscope_analysis::memory::{CurveKind, DeviceMemory};

use crate::facts::Facts;

/// The peaks of one GPU with known device memory, from the memory view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct GpuPeak {
    /// CUDA ordinal.
    pub id: i64,
    /// Peak allocated bytes.
    pub allocated: i64,
    /// Peak reserved bytes (0 when not recorded).
    pub reserved: i64,
    /// Device memory, bytes.
    pub capacity: u64,
    /// The larger peak as % of `capacity`.
    pub pct: f64,
    /// Peak reserved as % of `capacity` (0 when not recorded).
    pub reserved_pct: f64,
}

/// Whole-trace peaks of each CUDA device whose records carry `Total Allocated` and whose
/// capacity `deviceProperties` records, as `kinetoscope memory` reports them.
pub(crate) fn gpu_peaks(facts: &Facts) -> Vec<GpuPeak> {
    facts
        .memory()
        .devices
        .iter()
        .filter(|d| d.device_type == 1 && d.curve.kind == CurveKind::Recorded)
        .filter_map(|d| {
            let capacity = d.capacity_bytes.filter(|c| *c > 0)?;
            let allocated = d.peak_allocated.as_ref()?.bytes;
            let pct = |share: Option<f64>| share.map_or(0.0, |s| 100.0 * s);
            let reserved_pct = pct(d.peak_reserved_share_of_capacity);
            Some(GpuPeak {
                id: d.device_id,
                allocated,
                reserved: d.peak_reserved.as_ref().map_or(0, |p| p.bytes),
                capacity,
                pct: pct(d.peak_allocated_share_of_capacity).max(reserved_pct),
                reserved_pct,
            })
        })
        .collect()
}

/// Whether a device of the memory view has recorded totals (not net bytes since start).
pub(crate) fn has_totals(d: &DeviceMemory) -> bool {
    d.curve.kind == CurveKind::Recorded
}

/// MiB from bytes.
pub(crate) fn mib(b: f64) -> f64 {
    b / (1024.0 * 1024.0)
}
