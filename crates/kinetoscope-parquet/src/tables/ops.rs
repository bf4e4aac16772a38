//! `ops`: the operator view by name, every row (as `kinetoscope ops --top 0` computes
//! it, in its default order).

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy, OpSortKey};
use kinetoscope_trace::Trace;

use super::{bools, i64s, sat, strs};
use crate::schema::Table;

/// The `ops` rows of `trace`.
pub(crate) fn batch(trace: &Trace, rank: Option<i64>) -> Result<RecordBatch, ArrowError> {
    let mut table = analyze_ops(trace, OpGroupBy::Name);
    table.sort_by(OpSortKey::default());
    let r = &table.rows;
    super::batch(
        Table::Ops,
        rank,
        r.len(),
        vec![
            strs(r.iter().map(|x| x.name.as_str())),
            i64s(r.iter().map(|x| sat(x.calls))),
            i64s(r.iter().map(|x| sat(x.launching_calls))),
            i64s(r.iter().map(|x| x.host_self_ns)),
            i64s(r.iter().map(|x| x.host_total_ns)),
            i64s(r.iter().map(|x| x.device_self_ns)),
            i64s(r.iter().map(|x| x.device_total_ns)),
            bools(r.iter().map(|x| x.tc_eligible)),
            i64s(r.iter().map(|x| x.tc_self_ns)),
            i64s(r.iter().map(|x| x.tc_total_ns)),
        ],
    )
}
