//! `events` and `strings`: the event table that `kinetoscope-arrow` builds for the
//! Python package ([`kinetoscope_arrow::events::batch`]), with each name as an id into
//! the rank's `strings` table (the names its events use) and the trace's path moved to
//! the `ranks` table.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{Array, ArrayRef, DictionaryArray, Int32Array, RecordBatch};
use arrow_schema::ArrowError;
use kinetoscope_trace::Trace;

use super::{i32s, strs};
use crate::schema::Table;

/// The `events` and `strings` batches of `trace`.
pub(crate) fn batches(
    trace: &Trace,
    rank: Option<i64>,
) -> Result<(RecordBatch, RecordBatch), ArrowError> {
    let all = kinetoscope_arrow::events::batch(trace)?;
    let column = |name: &str| -> Result<ArrayRef, ArrowError> {
        all.column_by_name(name)
            .cloned()
            .ok_or_else(|| ArrowError::SchemaError(format!("no column `{name}` in events")))
    };
    let names = column("name")?;
    let names = names.as_dictionary::<Int32Type>();
    let phase = column("phase")?;
    let phase = phase.as_dictionary::<Int8Type>();
    let phase_keys: Int32Array = phase.keys().iter().map(|k| k.map(i32::from)).collect();
    let phase = DictionaryArray::<Int32Type>::try_new(phase_keys, phase.values().clone())?;
    let rows = all.num_rows();
    let events = super::batch(
        Table::Events,
        rank,
        rows,
        vec![
            column("ts_ns")?,
            column("dur_ns")?,
            column("track")?,
            column("category")?,
            Arc::new(phase),
            Arc::new(names.keys().clone()),
            column("correlation")?,
            column("external_id")?,
            column("device")?,
            column("stream")?,
        ],
    )?;
    let values = names.values().as_string::<i32>();
    let strings = super::batch(
        Table::Strings,
        rank,
        values.len(),
        vec![
            i32s(0..values.len() as i32),
            strs((0..values.len()).map(|i| values.value(i))),
        ],
    )?;
    Ok((events, strings))
}
