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

fn names(ops: &OpForest, op: Option<u32>) -> (Option<String>, Option<String>) {
    (
        op.map(|o| ops.name_of(o).to_owned()),
        op.and_then(|o| ops.parent_of(o))
            .map(|p| ops.name_of(p).to_owned()),
    )
}

/// Pair one device's time-ordered records into the allocation events table.
pub fn pair(records: &[&MemoryRecord], ops: &OpForest) -> AllocationTable {
    let mut t = AllocationTable::default();
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
            let (op, parent_op) = names(ops, r.op);
            open.insert(addr, t.rows.len());
            t.rows.push(Allocation {
                op,
                parent_op,
                release_op: None,
                bytes: r.bytes,
                addr,
                alloc_ns: Some(r.ts_ns),
                release_ns: None,
                lifetime_ns: None,
            });
        } else if r.bytes < 0 {
            let release_op = r.op.map(|o| ops.name_of(o).to_owned());
            if let Some(k) = open.remove(&addr) {
                let row = &mut t.rows[k];
                row.release_op = release_op;
                row.release_ns = Some(r.ts_ns);
                row.lifetime_ns = row.alloc_ns.map(|a| r.ts_ns - a);
                t.paired += 1;
            } else {
                t.unmatched_frees += 1;
                t.rows.push(Allocation {
                    op: None,
                    parent_op: None,
                    release_op,
                    bytes: -r.bytes,
                    addr,
                    alloc_ns: None,
                    release_ns: Some(r.ts_ns),
                    lifetime_ns: None,
                });
            }
        }
    }
    t.unreleased += open.len();
    t.total_rows = t.rows.len();
    t
}
