//! Replaying a device's trace entries: active and reserved memory after each entry, the
//! peak, what was live at a given entry, and allocations never freed.
//!
//! Rules follow the Active Memory Timeline of PyTorch's memory viewer (`MemoryViz.js`,
//! pytorch.org/memory_viz): an `alloc` adds its block, a `free_completed` removes it (or a
//! `free_requested` when the trace holds no `free_completed` at all, e.g. with
//! `skip_actions`); a free of an address not allocated inside the trace, and every block
//! of the final state that is still active (allocated, or freed but pending on another
//! stream while the trace tracks completions) and not opened inside the trace, were
//! alive from the start.
//!
//! Sizes: the allocator records an `alloc` with the bytes asked for and the frees with
//! the block's requested size, while the final state holds rounded block sizes. An
//! allocation still open at the end of the trace counts with its final block's size from
//! its `alloc` on (the allocator's own accounting); one freed inside the trace with the
//! size the trace gives it. So the replay ends exactly at the snapshot's active bytes
//! (allocated, plus pending-free blocks when completions are tracked). The x axis is the
//! entry index with its `time_us` when recorded.

use std::collections::HashMap;

use kinetoscope_trace::snapshot::{Action, BlockState, Segment, StackId, TraceEntry};

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
    /// Allocations made inside the trace and still open at its end, by address (with
    /// their final block sizes).
    pub never_freed: Vec<(u64, LiveAlloc)>,
    /// The size the replay gives the `alloc` at an entry index, where it is not the
    /// entry's own: allocations open at the end, counted with their final block size.
    pub sizes: HashMap<usize, u64>,
}

fn removes(e: &TraceEntry, has_completed: bool) -> bool {
    match e.action {
        Action::FreeCompleted => true,
        Action::FreeRequested => !has_completed,
        _ => false,
    }
}

/// Replay one device's `entries` against its final `segments` in the snapshot.
pub fn replay(segments: &[&Segment], entries: &[TraceEntry]) -> Replay {
    let has_completed = entries.iter().any(|e| e.action == Action::FreeCompleted);
    // The blocks still active at the snapshot, by address: allocated ones, and those
    // freed but pending when the trace removes blocks only at completion.
    let mut final_active: HashMap<u64, (u64, StackId)> = HashMap::new();
    for seg in segments {
        for b in &seg.blocks {
            let active = match b.state {
                BlockState::ActiveAllocated => true,
                BlockState::ActivePendingFree => has_completed,
                _ => false,
            };
            if active {
                final_active.insert(b.address, (b.size, b.stack));
            }
        }
    }
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
    // Allocations open at the end take their final block's size.
    let mut sizes: HashMap<usize, u64> = HashMap::new();
    for (addr, a) in live.iter_mut() {
        if let (Some((size, _)), Some(i)) = (final_active.get(addr), a.index) {
            a.size = *size;
            sizes.insert(i, *size);
        }
    }
    let mut old: Vec<(u64, LiveAlloc)> = final_active
        .iter()
        .filter(|(addr, _)| !live.contains_key(addr))
        .map(|(addr, &(size, stack))| {
            (
                *addr,
                LiveAlloc {
                    size,
                    stack,
                    index: None,
                },
            )
        })
        .collect();
    old.sort_by_key(|(addr, _)| *addr);
    preexisting.extend(old.into_iter().map(|(_, a)| (a, None)));
    let mut never_freed: Vec<(u64, LiveAlloc)> = live.into_iter().collect();
    never_freed.sort_by_key(|(_, a)| a.index);

    // Reserved before the trace: the final reserved bytes with the trace's segment
    // events undone.
    let end_reserved: u64 = segments.iter().map(|s| s.total_size).sum();
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
    for (i, e) in entries.iter().enumerate() {
        match (&e.action, e.addr) {
            (Action::Alloc, Some(addr)) => {
                let size = sizes.get(&i).copied().unwrap_or(e.size);
                if let Some(old) = open.insert(addr, size) {
                    cur -= old as i128;
                }
                cur += size as i128;
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
        sizes,
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
                    size: replay.sizes.get(&i).copied().unwrap_or(e.size),
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
