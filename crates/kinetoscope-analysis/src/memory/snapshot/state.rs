//! The allocator state a snapshot's `segments` describe: reserved, allocated, active,
//! inactive and free bytes, fragmentation, and a per-segment table.

use kinetoscope_trace::snapshot::{BlockState, Segment};
use serde::{Deserialize, Serialize};

/// Totals over a device's segments when the snapshot was taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocatorState {
    /// Segments.
    pub segments: u64,
    /// Of those, `large`-pool segments.
    pub large_segments: u64,
    /// Of those, `small`-pool segments (2 MiB, allocations ≤ 1 MiB).
    pub small_segments: u64,
    /// Of those, expandable segments.
    pub expandable_segments: u64,
    /// Σ segment `total_size`: memory reserved by the caching allocator.
    pub reserved_bytes: u64,
    /// Σ block `size` of `active_allocated` blocks (rounded sizes).
    pub allocated_bytes: u64,
    /// Σ `requested_size` of `active_allocated` blocks (what callers asked for).
    pub requested_bytes: u64,
    /// Allocated minus requested: rounding waste inside allocated blocks.
    pub rounding_waste_bytes: u64,
    /// Σ size of `active_pending_free` blocks (freed, awaiting other streams).
    pub pending_free_bytes: u64,
    /// Allocated + pending-free bytes.
    pub active_bytes: u64,
    /// Σ size of `inactive` blocks: cached, free for reuse.
    pub inactive_bytes: u64,
    /// Reserved minus active (equals inactive when blocks cover their segments).
    pub free_bytes: u64,
    /// Reserved minus allocated: "reserved by PyTorch but unallocated" in OOM messages.
    pub reserved_unallocated_bytes: u64,
    /// The largest inactive block.
    pub largest_free_block_bytes: u64,
    /// 1 − largest free block / inactive bytes; `None` with no inactive bytes. 0 means
    /// all cached free memory is one block; near 1 means it is scattered in small pieces.
    pub fragmentation: Option<f64>,
    /// Blocks per state.
    pub blocks_active_allocated: u64,
    /// Blocks pending free.
    pub blocks_active_pending_free: u64,
    /// Inactive blocks.
    pub blocks_inactive: u64,
}

/// One row of the per-segment table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentRow {
    /// Base address, hex.
    pub address: String,
    /// `small` / `large` (empty when not written).
    pub segment_type: String,
    /// Stream as an integer.
    pub stream: u64,
    /// Expandable segment.
    pub is_expandable: bool,
    /// Reserved bytes (the segment's `total_size`).
    pub total_size_bytes: u64,
    /// Σ size of `active_allocated` blocks.
    pub allocated_bytes: u64,
    /// Σ size of inactive blocks.
    pub inactive_bytes: u64,
    /// The largest inactive block.
    pub largest_free_block_bytes: u64,
    /// Blocks.
    pub blocks: u64,
}

/// The allocator state of some segments.
pub fn allocator_state<'a>(segments: impl IntoIterator<Item = &'a Segment>) -> AllocatorState {
    let mut s = AllocatorState::default();
    for seg in segments {
        s.segments += 1;
        match seg.segment_type.as_deref() {
            Some("large") => s.large_segments += 1,
            Some("small") => s.small_segments += 1,
            _ => {}
        }
        if seg.is_expandable == Some(true) {
            s.expandable_segments += 1;
        }
        s.reserved_bytes += seg.total_size;
        for b in &seg.blocks {
            match b.state {
                BlockState::ActiveAllocated => {
                    s.blocks_active_allocated += 1;
                    s.allocated_bytes += b.size;
                    s.requested_bytes += b.requested_size.min(b.size);
                }
                BlockState::ActivePendingFree => {
                    s.blocks_active_pending_free += 1;
                    s.pending_free_bytes += b.size;
                }
                BlockState::Inactive => {
                    s.blocks_inactive += 1;
                    s.inactive_bytes += b.size;
                    s.largest_free_block_bytes = s.largest_free_block_bytes.max(b.size);
                }
                BlockState::Other(_) => {}
            }
        }
    }
    s.rounding_waste_bytes = s.allocated_bytes - s.requested_bytes;
    s.active_bytes = s.allocated_bytes + s.pending_free_bytes;
    s.free_bytes = s.reserved_bytes.saturating_sub(s.active_bytes);
    s.reserved_unallocated_bytes = s.reserved_bytes.saturating_sub(s.allocated_bytes);
    s.fragmentation = fragmentation(s.largest_free_block_bytes, s.inactive_bytes);
    s
}

/// 1 − largest / total, `None` when nothing is free.
pub fn fragmentation(largest_free: u64, free: u64) -> Option<f64> {
    (free > 0).then(|| 1.0 - largest_free as f64 / free as f64)
}

/// The per-segment row.
pub fn segment_row(seg: &Segment) -> SegmentRow {
    let one = allocator_state([seg]);
    SegmentRow {
        address: format!("0x{:x}", seg.address),
        segment_type: seg.segment_type.clone().unwrap_or_default(),
        stream: seg.stream,
        is_expandable: seg.is_expandable == Some(true),
        total_size_bytes: seg.total_size,
        allocated_bytes: one.allocated_bytes,
        inactive_bytes: one.inactive_bytes,
        largest_free_block_bytes: one.largest_free_block_bytes,
        blocks: seg.blocks.len() as u64,
    }
}
