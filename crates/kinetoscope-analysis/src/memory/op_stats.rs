//! Per-operator memory statistics of one device, by operator name.
//!
//! A record counts as *self* for the operator call it is attributed to (the innermost
//! one), and *including children* for that call and every enclosing call. Per name the
//! calls' values are summed, so when an operator runs inside another call of the same
//! name a record counts once per such call, as in the plugin. Size increase is the sum of
//! `Bytes` (allocations minus frees); allocation count and size count allocations only.
//! Rows where every value is zero are left out.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{MemoryRecord, OpForest};

/// Memory statistics of one operator name on one device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpMemoryStats {
    /// Operator name.
    pub name: String,
    /// Calls of this operator in the whole trace (all threads).
    pub calls: u64,
    /// Σ Bytes (allocations minus frees) in these calls, including child operators.
    pub size_increase_bytes: i64,
    /// Σ Bytes attributed to these calls themselves.
    pub self_size_increase_bytes: i64,
    /// Allocations, including child operators.
    pub allocation_count: u64,
    /// Allocations of these calls themselves.
    pub self_allocation_count: u64,
    /// Σ bytes allocated (frees ignored), including child operators.
    pub allocation_size_bytes: i64,
    /// Σ bytes allocated by these calls themselves.
    pub self_allocation_size_bytes: i64,
}

#[derive(Clone, Copy, Default)]
struct Delta {
    increase: i64,
    count: u64,
    size: i64,
}

impl Delta {
    fn is_zero(&self) -> bool {
        self.increase == 0 && self.count == 0 && self.size == 0
    }
}

/// Statistics of one device's records, by operator name (in name order). The values
/// including children are summed bottom-up over the forest (a call's parent always has
/// a smaller index), one pass, however deep the nesting.
pub fn op_stats(records: &[&MemoryRecord], ops: &OpForest) -> Vec<OpMemoryStats> {
    // Self values per call, then including children.
    let n = ops.nodes.len();
    let mut own = vec![Delta::default(); n];
    for r in records {
        let Some(d) = r.op.and_then(|op| own.get_mut(op as usize)) else {
            continue;
        };
        d.increase += r.bytes;
        if r.bytes > 0 {
            d.count += 1;
            d.size += r.bytes;
        }
    }
    let mut total = own.clone();
    for k in (0..n).rev() {
        let Some(p) = ops.nodes[k].parent.map(|p| p as usize).filter(|&p| p < k) else {
            continue;
        };
        let d = total[k];
        let t = &mut total[p];
        t.increase += d.increase;
        t.count += d.count;
        t.size += d.size;
    }
    let mut by_name: HashMap<u32, OpMemoryStats> = HashMap::new();
    for (k, (own, total)) in own.iter().zip(&total).enumerate() {
        if own.is_zero() && total.is_zero() {
            continue;
        }
        let name = ops.nodes[k].name;
        let s = by_name.entry(name).or_insert_with(|| OpMemoryStats {
            name: ops.names[name as usize].clone(),
            calls: ops.calls.get(name as usize).copied().unwrap_or(0),
            ..OpMemoryStats::default()
        });
        s.self_size_increase_bytes += own.increase;
        s.self_allocation_count += own.count;
        s.self_allocation_size_bytes += own.size;
        s.size_increase_bytes += total.increase;
        s.allocation_count += total.count;
        s.allocation_size_bytes += total.size;
    }
    let mut rows: Vec<OpMemoryStats> = by_name
        .into_values()
        .filter(|s| {
            s.size_increase_bytes != 0
                || s.self_size_increase_bytes != 0
                || s.allocation_count != 0
                || s.self_allocation_count != 0
                || s.allocation_size_bytes != 0
                || s.self_allocation_size_bytes != 0
        })
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}
