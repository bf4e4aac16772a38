//! A profiler memory timeline (`prof.export_memory_timeline`, PyTorch 2.1+): bytes live
//! in each of PyTorch's 8 memory categories after each distinct timestamp, read by
//! [`crate::read::read_memory_timeline`] from either file form.

/// The 8 categories in the order files index them (`_CATEGORY_TO_COLORS`):
/// index 7 is "unknown" (PyTorch's `None`).
pub const TIMELINE_CATEGORIES: [&str; 8] = [
    "parameter",
    "optimizer_state",
    "input",
    "temporary",
    "activation",
    "gradient",
    "autograd_detail",
    "unknown",
];

/// Which of the two file forms was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineFormat {
    /// `[times_us, sizes]`: one row per timestamp, 9 columns (a 0 baseline, then the 8
    /// categories).
    Coalesced,
    /// `[[t_ns, action, bytes, category], ...]`: one row per event.
    Raw,
}

/// A memory timeline: bytes live per category after each distinct timestamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryTimeline {
    /// Which form the file had.
    pub format: TimelineFormat,
    /// Rows in the file (events for raw, timestamps for coalesced).
    pub rows: usize,
    /// Raw form: rows written for allocations alive before profiling (`t = -1`).
    pub preexisting_rows: usize,
    /// Timestamps, epoch ns, ascending (coalesced files have µs resolution).
    pub times_ns: Vec<i64>,
    /// Bytes live in each category ([`TIMELINE_CATEGORIES`] order) after all events of
    /// the same index in `times_ns`.
    pub sizes: Vec<[i64; 8]>,
}

impl MemoryTimeline {
    /// Total bytes live at index `i`.
    pub fn total_at(&self, i: usize) -> i64 {
        self.sizes[i].iter().sum()
    }
}
