//! Sort keys of the kernel table. Numbers sort descending, names ascending; ties fall back
//! to total time, calls, name and the launch properties, so the order is deterministic
//! (the plugin leaves tied rows in an unspecified order).

use std::cmp::Ordering;

use crate::sort_key::sort_rows_by;

use serde::{Deserialize, Serialize};

use super::KernelRow;

/// A column the kernel table can be sorted by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelSortKey {
    /// Total time (the plugin's default).
    #[default]
    Total,
    /// Number of launches.
    Calls,
    /// Mean duration.
    Mean,
    /// Longest launch.
    Max,
    /// Shortest launch.
    Min,
    /// Mean blocks per SM.
    BlocksPerSm,
    /// Mean estimated achieved occupancy.
    Occupancy,
    /// Kernel name (ascending).
    Name,
}

impl KernelSortKey {
    /// Every key with its command-line spelling.
    pub const ALL: [(&'static str, KernelSortKey); 8] = [
        ("total", KernelSortKey::Total),
        ("calls", KernelSortKey::Calls),
        ("mean", KernelSortKey::Mean),
        ("max", KernelSortKey::Max),
        ("min", KernelSortKey::Min),
        ("blocks_per_sm", KernelSortKey::BlocksPerSm),
        ("occupancy", KernelSortKey::Occupancy),
        ("name", KernelSortKey::Name),
    ];

    /// Parse a command-line spelling (`total`, `blocks-per-sm`, ...).
    pub fn parse(text: &str) -> Option<Self> {
        crate::sort_key::parse(&Self::ALL, text)
    }

    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        crate::sort_key::spelling(&Self::ALL, self, "total")
    }
}

fn value(row: &KernelRow, key: KernelSortKey) -> f64 {
    match key {
        KernelSortKey::Total => row.total_ns as f64,
        KernelSortKey::Calls => row.calls as f64,
        KernelSortKey::Mean => row.mean_ns,
        KernelSortKey::Max => row.max_ns as f64,
        KernelSortKey::Min => row.min_ns as f64,
        KernelSortKey::BlocksPerSm => row.mean_blocks_per_sm.unwrap_or(f64::NEG_INFINITY),
        KernelSortKey::Occupancy => row.mean_est_achieved_occupancy.unwrap_or(f64::NEG_INFINITY),
        KernelSortKey::Name => 0.0,
    }
}

fn tie_break(a: &KernelRow, b: &KernelRow) -> Ordering {
    b.total_ns
        .cmp(&a.total_ns)
        .then_with(|| b.calls.cmp(&a.calls))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| match (&a.properties, &b.properties) {
            (Some(x), Some(y)) => (
                &x.operator,
                x.grid,
                x.block,
                x.registers_per_thread,
                x.shared_memory_bytes,
            )
                .cmp(&(
                    &y.operator,
                    y.grid,
                    y.block,
                    y.registers_per_thread,
                    y.shared_memory_bytes,
                )),
            _ => Ordering::Equal,
        })
}

/// Sort rows in place.
pub(crate) fn sort_rows(rows: &mut [KernelRow], key: KernelSortKey) {
    if key == KernelSortKey::Name {
        sort_rows_by(rows, |a, b| {
            a.name.cmp(&b.name).then_with(|| tie_break(a, b))
        });
    } else {
        sort_rows_by(rows, |a, b| {
            value(b, key)
                .total_cmp(&value(a, key))
                .then_with(|| tie_break(a, b))
        });
    }
}
