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

/// Statistics of one device's records, by operator name (in name order).
pub fn op_stats(records: &[&MemoryRecord], ops: &OpForest) -> Vec<OpMemoryStats> {
    // Self values per call.
    let mut per_call: HashMap<u32, Delta> = HashMap::new();
    for r in records {
        let Some(op) = r.op else { continue };
        let d = per_call.entry(op).or_default();
        d.increase += r.bytes;
        if r.bytes > 0 {
            d.count += 1;
            d.size += r.bytes;
        }
    }
    let mut by_name: HashMap<u32, OpMemoryStats> = HashMap::new();
    fn row<'a>(
        by_name: &'a mut HashMap<u32, OpMemoryStats>,
        ops: &OpForest,
        name: u32,
    ) -> &'a mut OpMemoryStats {
        by_name.entry(name).or_insert_with(|| OpMemoryStats {
            name: ops.names[name as usize].clone(),
            calls: ops.calls.get(name as usize).copied().unwrap_or(0),
            ..OpMemoryStats::default()
        })
    }
    for (&call, d) in &per_call {
        let s = row(&mut by_name, ops, ops.nodes[call as usize].name);
        s.self_size_increase_bytes += d.increase;
        s.self_allocation_count += d.count;
        s.self_allocation_size_bytes += d.size;
        let mut node = Some(call);
        while let Some(n) = node {
            let s = row(&mut by_name, ops, ops.nodes[n as usize].name);
            s.size_increase_bytes += d.increase;
            s.allocation_count += d.count;
            s.allocation_size_bytes += d.size;
            node = ops.parent_of(n);
        }
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
