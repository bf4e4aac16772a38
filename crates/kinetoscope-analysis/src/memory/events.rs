//! The allocation events table: each allocation paired with the free of the same
//! address on the same device, in time order.
//!
//! Records without an address (PyTorch < 1.10) cannot be paired and are counted as
//! skipped. An allocation whose address is allocated again before any free is kept as
//! unreleased (the free was not recorded); a free with no open allocation is kept as an
//! unmatched free (allocated before profiling started). The plugin pairs by address
//! alone across devices, forgets the earlier of two allocations at one address, and keeps
//! only the last unmatched free per address (`docs/tb-plugin-differences.md`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{MemoryRecord, OpForest};

/// One row of the allocation events table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocation {
    /// The operator that allocated (`None` for an unmatched free, or outside operators).
    pub op: Option<String>,
    /// Its parent operator (shown for `aten::empty*`, PyTorch's malloc).
    pub parent_op: Option<String>,
    /// The operator in which the memory was freed.
    pub release_op: Option<String>,
    /// Size, bytes.
    pub bytes: i64,
    /// Address.
    pub addr: u64,
    /// Allocation time, epoch ns (`None`: allocated before profiling started).
    pub alloc_ns: Option<i64>,
    /// Release time, epoch ns (`None`: not freed while profiling).
    pub release_ns: Option<i64>,
    /// Release minus allocation time, ns.
    pub lifetime_ns: Option<i64>,
}

/// The allocation events table of one device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationTable {
    /// Rows (time order unless sorted otherwise; cut to `--top`).
    pub rows: Vec<Allocation>,
    /// Rows before `--top`.
    pub total_rows: usize,
    /// Allocations paired with their free.
    pub paired: usize,
    /// Allocations not freed while profiling.
    pub unreleased: usize,
    /// Frees whose allocation was not recorded.
    pub unmatched_frees: usize,
    /// Records without an address, not paired.
    pub skipped_without_addr: usize,
}

/// Which rows of the table to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// Every allocation and unmatched free.
    All,
    /// Only allocations never freed (what the advisor's leak rule reads); the counts
    /// still cover every row.
    Unreleased,
}

/// A row while pairing (operators as forest nodes): small, and named only once the
/// table is cut.
struct Pending {
    bytes: i64,
    addr: u64,
    alloc_ns: Option<i64>,
    release_ns: Option<i64>,
    op: Option<u32>,
    release_op: Option<u32>,
}

/// Pair one device's time-ordered records into the allocation events table.
pub fn pair(records: &[&MemoryRecord], ops: &OpForest) -> AllocationTable {
    pair_rows(records, ops, Rows::All)
}

/// Pair one device's time-ordered records, keeping `rows`; operator names are built for
/// the rows kept only.
pub fn pair_rows(records: &[&MemoryRecord], ops: &OpForest, rows: Rows) -> AllocationTable {
    let mut t = AllocationTable::default();
    let mut pending: Vec<Pending> = Vec::new();
    // addr → (row index of the open allocation)
    let mut open: HashMap<u64, usize> = HashMap::new();
    for r in records {
        let Some(addr) = r.addr else {
            t.skipped_without_addr += 1;
            continue;
        };
        if r.bytes > 0 {
            if open.remove(&addr).is_some() {
                t.unreleased += 1;
            }
            open.insert(addr, pending.len());
            pending.push(Pending {
                bytes: r.bytes,
                addr,
                alloc_ns: Some(r.ts_ns),
                release_ns: None,
                op: r.op,
                release_op: None,
            });
        } else if r.bytes < 0 {
            if let Some(k) = open.remove(&addr) {
                let p = &mut pending[k];
                p.release_op = r.op;
                p.release_ns = Some(r.ts_ns);
                t.paired += 1;
            } else {
                t.unmatched_frees += 1;
                pending.push(Pending {
                    bytes: -r.bytes,
                    addr,
                    alloc_ns: None,
                    release_ns: Some(r.ts_ns),
                    op: None,
                    release_op: r.op,
                });
            }
        }
    }
    t.unreleased += open.len();
    t.total_rows = pending.len();
    let name = |o: Option<u32>| o.map(|o| ops.name_of(o).to_owned());
    t.rows = pending
        .into_iter()
        .filter(|p| rows == Rows::All || (p.alloc_ns.is_some() && p.release_ns.is_none()))
        .map(|p| Allocation {
            op: name(p.op),
            parent_op: name(p.op.and_then(|o| ops.parent_of(o))),
            release_op: name(p.release_op),
            bytes: p.bytes,
            addr: p.addr,
            alloc_ns: p.alloc_ns,
            release_ns: p.release_ns,
            lifetime_ns: p.alloc_ns.zip(p.release_ns).map(|(a, r)| r - a),
        })
        .collect();
    t
}
