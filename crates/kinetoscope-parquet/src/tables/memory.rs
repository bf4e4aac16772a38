//! `memory_per_step`: per step and device, the `[memory]` records and the highest
//! `Total Allocated` and `Total Reserved` they report (records outside every step in rows
//! without a step), with the GPU's memory. Empty when the trace has no memory records.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use kinetoscope_analysis::memory::{trace_source, Device};
use kinetoscope_analysis::ranks::RankSummary;
use kinetoscope_trace::Trace;

use super::{i64s, opt_i64s, step_at, step_indices};
use crate::schema::Table;

/// Records and peaks of one (step, device).
#[derive(Default)]
struct Peaks {
    records: i64,
    allocated: Option<i64>,
    reserved: Option<i64>,
}

/// The `memory_per_step` rows of `trace`, by step (rows outside every step last), then
/// device.
pub(crate) fn batch(trace: &Trace, summary: &RankSummary) -> Result<RecordBatch, ArrowError> {
    let input = trace_source::from_trace(trace);
    let mut groups: BTreeMap<(bool, Option<usize>, Device), Peaks> = BTreeMap::new();
    for r in &input.records {
        let step = step_at(&summary.steps, r.ts_ns);
        let p = groups.entry((step.is_none(), step, r.device)).or_default();
        p.records += 1;
        p.allocated = p.allocated.max(r.total_allocated);
        p.reserved = p.reserved.max(r.total_reserved);
    }
    let number = |s: Option<usize>| s.and_then(|i| summary.steps[i].number);
    // Capacities are keyed by GPU ordinal, whatever the record's device type.
    let capacity = |d: &Device| {
        d.is_gpu()
            .then(|| input.capacity.get(&Device::cuda(d.device_id)))
            .flatten()
            .map(|&c| c as i64)
    };
    let g: Vec<_> = groups.into_iter().collect();
    super::batch(
        Table::MemoryPerStep,
        summary.rank,
        g.len(),
        vec![
            step_indices(g.iter().map(|((_, s, _), _)| *s)),
            opt_i64s(g.iter().map(|((_, s, _), _)| number(*s))),
            i64s(g.iter().map(|((_, _, d), _)| d.device_type)),
            i64s(g.iter().map(|((_, _, d), _)| d.device_id)),
            i64s(g.iter().map(|(_, p)| p.records)),
            opt_i64s(g.iter().map(|(_, p)| p.allocated)),
            // As the memory view: no reserved peak when nothing was reserved (the CPU).
            opt_i64s(g.iter().map(|(_, p)| p.reserved.filter(|&b| b > 0))),
            opt_i64s(g.iter().map(|((_, _, d), _)| capacity(d))),
        ],
    )
}
