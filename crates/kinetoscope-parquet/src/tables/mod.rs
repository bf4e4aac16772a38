//! One rank's tables, built on the thread that read its trace.

mod collectives;
mod events;
mod kernels;
mod memory;
mod ops;
mod steps;

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions};
use arrow_schema::ArrowError;
use kinetoscope_analysis::comm::collective_instances;
use kinetoscope_analysis::overview::overview;
use kinetoscope_analysis::ranks::RankSummary;
use kinetoscope_trace::Trace;

use crate::schema::Table;

/// Every table of one rank, in [`Table::ALL`] order, and the summary they were made
/// from.
pub struct RankTables {
    /// The rank's compact summary (what `ranks` reads back).
    pub summary: RankSummary,
    /// One batch per table.
    pub batches: Vec<(Table, RecordBatch)>,
}

impl RankTables {
    /// Build every table of `trace`.
    pub fn from_trace(trace: &Trace) -> Result<Self, ArrowError> {
        let ov = overview(trace);
        let instances = collective_instances(trace);
        let summary = RankSummary::from_parts(trace, &ov, &instances);
        let rank = summary.rank;
        let (events, strings) = events::batches(trace, rank)?;
        let batches = vec![
            (Table::Ranks, steps::ranks(&summary)?),
            (Table::Steps, steps::steps(&summary)?),
            (Table::KernelsPerStep, kernels::batch(trace, &summary)?),
            (Table::Ops, ops::batch(trace, rank)?),
            (
                Table::Collectives,
                collectives::batch(&instances, &summary)?,
            ),
            (Table::MemoryPerStep, memory::batch(trace, &summary)?),
            (Table::Events, events),
            (Table::Strings, strings),
        ];
        Ok(Self { summary, batches })
    }
}

/// A batch of `table` with `rows` rows: the `rank` column, then `columns`.
pub(crate) fn batch(
    table: Table,
    rank: Option<i64>,
    rows: usize,
    columns: Vec<ArrayRef>,
) -> Result<RecordBatch, ArrowError> {
    let mut all: Vec<ArrayRef> = Vec::with_capacity(columns.len() + 1);
    all.push(Arc::new(Int64Array::from(vec![rank; rows])));
    all.extend(columns);
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(table.schema(), all, &options)
}

/// An `Int64` column of `values`.
pub(crate) fn i64s(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<Int64Array>())
}

/// A nullable `Int64` column of `values`.
pub(crate) fn opt_i64s(values: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<Int64Array>())
}

/// A `Utf8` column of `values`.
pub(crate) fn strs<'a>(values: impl IntoIterator<Item = &'a str>) -> ArrayRef {
    Arc::new(
        values
            .into_iter()
            .map(Some)
            .collect::<arrow_array::StringArray>(),
    )
}

/// A nullable `Utf8` column of `values`.
pub(crate) fn opt_strs<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<arrow_array::StringArray>())
}

/// A `Boolean` column of `values`.
pub(crate) fn bools(values: impl IntoIterator<Item = bool>) -> ArrayRef {
    Arc::new(
        values
            .into_iter()
            .map(Some)
            .collect::<arrow_array::BooleanArray>(),
    )
}

/// An `Int32` column of `values`.
pub(crate) fn i32s(values: impl IntoIterator<Item = i32>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<arrow_array::Int32Array>())
}

/// `v` as an `i64` (saturating: byte counts and ids above `i64::MAX` do not occur in
/// practice, and a saturated value is still ordered).
pub(crate) fn sat(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The index of the step of `steps` a time falls in: the last one started at or before
/// `t`, if it has not ended (the rule [`RankSummary`] assigns collectives by).
pub(crate) fn step_at(steps: &[kinetoscope_analysis::ranks::RankStep], t: i64) -> Option<usize> {
    let i = steps.partition_point(|s| s.start_ns <= t).checked_sub(1)?;
    (t < steps[i].start_ns + steps[i].dur_ns).then_some(i)
}

/// A nullable `Int32` column of step indices.
pub(crate) fn step_indices(values: impl IntoIterator<Item = Option<usize>>) -> ArrayRef {
    Arc::new(
        values
            .into_iter()
            .map(|i| i.map(|i| i as i32))
            .collect::<arrow_array::Int32Array>(),
    )
}
