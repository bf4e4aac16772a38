//! Replaying a device's trace entries: active and reserved memory after each entry, the
//! peak, what was live at a given entry, and allocations never freed.
//!
//! Rules follow the Active Memory Timeline of PyTorch's memory viewer (`MemoryViz.js`,
//! pytorch.org/memory_viz): an `alloc` adds its block, a `free_completed` removes it (or a `free_requested` when the trace
//! holds no `free_completed` at all, e.g. with `skip_actions`); a free of an address not
//! allocated inside the trace, and every `active_allocated` block of the final state not
//! still open at the end of the trace, were alive from the start. Unlike the viewer,
//! sizes are always block sizes (the allocator's own accounting), and the x axis is the
//! entry index with its `time_us` when recorded.

use std::collections::HashMap;

use kinetoscope_trace::snapshot::{Action, BlockState, Snapshot, StackId, TraceEntry};

/// One live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveAlloc {
    /// Bytes.
    pub size: u64,
    /// Allocation stack.
    pub stack: StackId,
    /// Entry index of the `alloc`; `None` when alive from the start.
    pub index: Option<usize>,
}

/// The replay of one device's trace.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// Active bytes after each entry (same index as the entries).
    pub active: Vec<u64>,
    /// Reserved bytes after each entry.
    pub reserved: Vec<u64>,
    /// Active bytes before the first entry.
    pub start_active: u64,
    /// Reserved bytes before the first entry.
    pub start_reserved: u64,
    /// Allocations alive from the start (pre-existing blocks and frees of addresses
    /// never allocated in the trace), with the entry index that frees each, if any.
    pub preexisting: Vec<(LiveAlloc, Option<usize>)>,
    /// Allocations made inside the trace and still open at its end, by address.
    pub never_freed: Vec<(u64, LiveAlloc)>,
}

fn removes(e: &TraceEntry, has_completed: bool) -> bool {
    match e.action {
        Action::FreeCompleted => true,
        Action::FreeRequested => !has_completed,
        _ => false,
    }
}

/// Replay `entries` of `device` against the final state in `snap`.
pub fn replay(snap: &Snapshot, device: i64, entries: &[TraceEntry]) -> Replay {
    let has_completed = entries.iter().any(|e| e.action == Action::FreeCompleted);
    // Pass 1: what is open at the end, and frees of unknown addresses.
    let mut live: HashMap<u64, LiveAlloc> = HashMap::new();
    let mut preexisting: Vec<(LiveAlloc, Option<usize>)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(addr) = e.addr else { continue };
        if e.action == Action::Alloc {
            live.insert(
                addr,
                LiveAlloc {
                    size: e.size,
                    stack: e.stack,
                    index: Some(i),
                },
            );
        } else if removes(e, has_completed) && live.remove(&addr).is_none() {
            preexisting.push((
                LiveAlloc {
                    size: e.size,
                    stack: StackId::EMPTY,
                    index: None,
                },
                Some(i),
            ));
        }
    }
    for seg in snap.segments.iter().filter(|s| s.device == device) {
        for b in &seg.blocks {
            if b.state == BlockState::ActiveAllocated && !live.contains_key(&b.address) {
                preexisting.push((
                    LiveAlloc {
                        size: b.size,
                        stack: b.stack,
                        index: None,
                    },
                    None,
                ));
            }
        }
    }
    let mut never_freed: Vec<(u64, LiveAlloc)> = live.into_iter().collect();
    never_freed.sort_by_key(|(_, a)| a.index);

    // Reserved before the trace: the final reserved bytes with the trace's segment
    // events undone.
    let end_reserved: u64 = snap
        .segments
        .iter()
        .filter(|s| s.device == device)
        .map(|s| s.total_size)
        .sum();
    let mut start_reserved = end_reserved as i128;
    for e in entries {
        match e.action {
            Action::SegmentAlloc | Action::SegmentMap => start_reserved -= e.size as i128,
            Action::SegmentFree | Action::SegmentUnmap => start_reserved += e.size as i128,
            _ => {}
        }
    }
    let start_reserved = start_reserved.max(0) as u64;
    let start_active: u64 = preexisting.iter().map(|(a, _)| a.size).sum();

    // Pass 2: the curves.
    let mut active = Vec::with_capacity(entries.len());
    let mut reserved = Vec::with_capacity(entries.len());
    let mut cur = start_active as i128;
    let mut res = start_reserved as i128;
    let mut open: HashMap<u64, u64> = HashMap::new();
    for e in entries {
        match (&e.action, e.addr) {
            (Action::Alloc, Some(addr)) => {
                if let Some(old) = open.insert(addr, e.size) {
                    cur -= old as i128;
                }
                cur += e.size as i128;
            }
            (_, Some(addr)) if removes(e, has_completed) => {
                cur -= open.remove(&addr).unwrap_or(e.size) as i128;
            }
            (Action::SegmentAlloc | Action::SegmentMap, _) => res += e.size as i128,
            (Action::SegmentFree | Action::SegmentUnmap, _) => res -= e.size as i128,
            _ => {}
        }
        active.push(cur.max(0) as u64);
        reserved.push(res.max(0) as u64);
    }
    Replay {
        active,
        reserved,
        start_active,
        start_reserved,
        preexisting,
        never_freed,
    }
}

impl Replay {
    /// Index of the first entry after which active memory is highest.
    pub fn peak(&self) -> Option<usize> {
        let max = *self.active.iter().max()?;
        self.active.iter().position(|a| *a == max)
    }

    /// Active bytes before entry `i` (after entry `i − 1`).
    pub fn active_before(&self, i: usize) -> u64 {
        if i == 0 {
            self.start_active
        } else {
            self.active[i - 1]
        }
    }

    /// Reserved bytes before entry `i`.
    pub fn reserved_before(&self, i: usize) -> u64 {
        if i == 0 {
            self.start_reserved
        } else {
            self.reserved[i - 1]
        }
    }
}

/// The allocations live after entry `upto` (inclusive); `None`: before the first entry.
pub fn live_after(replay: &Replay, entries: &[TraceEntry], upto: Option<usize>) -> Vec<LiveAlloc> {
    let has_completed = entries.iter().any(|e| e.action == Action::FreeCompleted);
    let end = upto.map_or(0, |u| (u + 1).min(entries.len()));
    let mut out: Vec<LiveAlloc> = replay
        .preexisting
        .iter()
        .filter(|(_, freed)| !matches!(freed, Some(f) if *f < end))
        .map(|(a, _)| *a)
        .collect();
    let mut open: HashMap<u64, LiveAlloc> = HashMap::new();
    for (i, e) in entries[..end].iter().enumerate() {
        let Some(addr) = e.addr else { continue };
        if e.action == Action::Alloc {
            open.insert(
                addr,
                LiveAlloc {
                    size: e.size,
                    stack: e.stack,
                    index: Some(i),
                },
            );
        } else if removes(e, has_completed) {
            open.remove(&addr);
        }
    }
    let mut traced: Vec<LiveAlloc> = open.into_values().collect();
    traced.sort_by_key(|a| a.index);
    out.extend(traced);
    out
}
