//! The typed model of a CUDA caching-allocator memory snapshot
//! (`torch.cuda.memory._dump_snapshot("x.pickle")`), read by
//! [`crate::read::read_snapshot`].
//!
//! Every layout from PyTorch 1.13 to 2.15 reads into this one shape (as written by
//! `torch.cuda.memory._snapshot()` in each release): the 1.13 bare list of segments,
//! `history`-style blocks, blocks without addresses (computed from the segment base),
//! trace entries without `time_us`.
//! Every top-level key except `segments` is optional. Stacks are stored once in
//! [`Snapshot::stacks`] and referred to by [`StackId`].

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Index into [`Snapshot::stacks`]; stack 0 is always the empty stack.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct StackId(pub u32);

impl StackId {
    /// The empty stack (nothing recorded).
    pub const EMPTY: StackId = StackId(0);

    /// Position in [`Snapshot::stacks`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One frame of a recorded stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    /// Source file (Python path, or `??` for unknown C++ frames).
    pub filename: String,
    /// Line number (0 when unknown).
    pub line: i64,
    /// Function name.
    pub name: String,
}

/// `allocator_settings` as JSON: keys as written, values converted (ints, floats, bools,
/// strings, nested dicts such as `roundup_power2_divisions`).
pub type AllocatorSettings = serde_json::Map<String, serde_json::Value>;

/// Which top-level layout the file used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotLayout {
    /// A dict with `segments` and optional other keys (PyTorch 2.0+).
    Dict,
    /// A bare list of segments (PyTorch 1.13).
    BareList,
}

/// A caching-allocator snapshot.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The file it was read from.
    pub path: PathBuf,
    /// Bytes of the (decompressed) pickle.
    pub file_bytes: u64,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
    /// Pickle protocol (2–5).
    pub protocol: u8,
    /// Top-level layout.
    pub layout: SnapshotLayout,
    /// The allocator state when the snapshot was taken.
    pub segments: Vec<Segment>,
    /// Recorded history per device ordinal (oldest first); `None` when the key is absent.
    pub device_traces: Option<Vec<Vec<TraceEntry>>>,
    /// `allocator_settings` (PyTorch 2.3+), values as JSON.
    pub allocator_settings: Option<AllocatorSettings>,
    /// `external_annotations` (PyTorch 2.5+): `record_function` begin/end markers.
    pub external_annotations: Vec<ExternalAnnotation>,
    /// Every distinct stack; index 0 is the empty stack.
    pub stacks: Vec<Vec<Frame>>,
    /// Top-level keys this reader does not interpret (`host_segments`, ...).
    pub other_keys: Vec<String>,
}

impl Snapshot {
    /// The frames of a stack, innermost first.
    pub fn frames(&self, id: StackId) -> &[Frame] {
        self.stacks.get(id.index()).map_or(&[], Vec::as_slice)
    }

    /// Devices present in segments or traces, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self.segments.iter().map(|s| s.device).collect();
        if let Some(t) = &self.device_traces {
            d.extend(
                t.iter()
                    .enumerate()
                    .filter(|(_, e)| !e.is_empty())
                    .map(|(i, _)| i as i64),
            );
        }
        d.sort_unstable();
        d.dedup();
        d
    }
}

/// One cudaMalloc'd segment (or expandable segment) and its blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// CUDA device ordinal.
    pub device: i64,
    /// Base address.
    pub address: u64,
    /// Bytes reserved.
    pub total_size: u64,
    /// Σ size of `active_allocated` blocks, as written (computed from blocks if absent).
    pub allocated_size: u64,
    /// Allocated + pending-free bytes, as written (computed from blocks if absent).
    pub active_size: u64,
    /// Σ requested size of active blocks (2.0+).
    pub requested_size: Option<u64>,
    /// `cudaStream_t` as an integer (0 = default stream).
    pub stream: u64,
    /// `small` or `large` pool, when written.
    pub segment_type: Option<String>,
    /// Memory pool id (2.1+); `(0, 0)` is the default pool.
    pub segment_pool_id: Option<(i64, i64)>,
    /// Expandable-segments mode (2.1+).
    pub is_expandable: Option<bool>,
    /// Stack of the cudaMalloc, when recorded.
    pub stack: StackId,
    /// Contiguous, address-ordered blocks.
    pub blocks: Vec<Block>,
}

/// The state of a block.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    /// Owned by a tensor.
    ActiveAllocated,
    /// Freed by the user, still in use by another stream (`record_stream`).
    ActivePendingFree,
    /// Cached and free.
    Inactive,
    /// A state this reader does not know, as written.
    Other(String),
}

impl BlockState {
    /// Parse a state as written.
    pub fn parse(s: &str) -> Self {
        match s {
            "active_allocated" => Self::ActiveAllocated,
            "active_pending_free" | "active_awaiting_free" => Self::ActivePendingFree,
            "inactive" => Self::Inactive,
            o => Self::Other(o.to_owned()),
        }
    }

    /// Whether the block is in use (allocated or pending free).
    pub fn is_active(&self) -> bool {
        matches!(self, Self::ActiveAllocated | Self::ActivePendingFree)
    }
}

/// One block of a segment.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Start address (written, or segment base + Σ previous sizes).
    pub address: u64,
    /// Whether the address was computed rather than written.
    pub address_computed: bool,
    /// Bytes of the block (rounded allocation size).
    pub size: u64,
    /// Bytes the caller asked for (`real_size` of 1.13 history blocks); `size` if absent.
    pub requested_size: u64,
    /// State.
    pub state: BlockState,
    /// Allocation stack (empty when allocated before recording started).
    pub stack: StackId,
}

/// What a trace entry records.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A block was handed to the user.
    Alloc,
    /// The user freed it (it may still await other streams).
    FreeRequested,
    /// The block really became reusable.
    FreeCompleted,
    /// cudaMalloc of a new segment.
    SegmentAlloc,
    /// cudaFree of a segment.
    SegmentFree,
    /// Pages mapped into an expandable segment.
    SegmentMap,
    /// Pages unmapped from an expandable segment.
    SegmentUnmap,
    /// A snapshot was taken here.
    Snapshot,
    /// An allocation failed.
    Oom,
    /// Metadata attached to a live allocation (2.15).
    Annotate,
    /// An action this reader does not know, as written.
    Other(String),
}

impl Action {
    /// Parse an action as written.
    pub fn parse(s: &str) -> Self {
        match s {
            "alloc" => Self::Alloc,
            "free_requested" => Self::FreeRequested,
            "free_completed" => Self::FreeCompleted,
            "segment_alloc" => Self::SegmentAlloc,
            "segment_free" => Self::SegmentFree,
            "segment_map" => Self::SegmentMap,
            "segment_unmap" => Self::SegmentUnmap,
            "snapshot" => Self::Snapshot,
            "oom" => Self::Oom,
            "annotate" => Self::Annotate,
            o => Self::Other(o.to_owned()),
        }
    }
}

impl fmt::Display for Action {
    /// The name as written in snapshots.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Alloc => "alloc",
            Self::FreeRequested => "free_requested",
            Self::FreeCompleted => "free_completed",
            Self::SegmentAlloc => "segment_alloc",
            Self::SegmentFree => "segment_free",
            Self::SegmentMap => "segment_map",
            Self::SegmentUnmap => "segment_unmap",
            Self::Snapshot => "snapshot",
            Self::Oom => "oom",
            Self::Annotate => "annotate",
            Self::Other(o) => o,
        })
    }
}

/// One recorded allocator event.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEntry {
    /// What happened.
    pub action: Action,
    /// Block or segment address (absent for `oom`).
    pub addr: Option<u64>,
    /// Bytes: block size, segment size, or requested bytes for `oom`.
    pub size: u64,
    /// Stream as an integer.
    pub stream: u64,
    /// Wall-clock Unix-epoch µs (2.2+).
    pub time_us: Option<i64>,
    /// `oom` only: bytes CUDA reported free.
    pub device_free: Option<u64>,
    /// Stack of the event.
    pub stack: StackId,
    /// torch.compile region, when written (`N/A` is kept as written).
    pub compile_context: Option<String>,
    /// `_set_memory_metadata` text, when written and not empty.
    pub user_metadata: Option<String>,
}

/// A `record_function` begin or end captured by the allocator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExternalAnnotation {
    /// The range name.
    pub name: String,
    /// `START` or `END`.
    pub stage: String,
    /// Device ordinal.
    pub device: Option<i64>,
    /// Wall-clock Unix-epoch µs.
    pub time_us: Option<i64>,
}
