//! A trace's event table ([`kinetoscope_trace::model`]'s `EventTable`: every duration,
//! instant and counter event, in file order) as one [`RecordBatch`].
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `path` | dictionary (int32 → utf8) | The trace's file (one value per batch). |
//! | `name` | dictionary (int32 → utf8) | The event's name. |
//! | `category` | dictionary (int32 → utf8) | Its category, normalised (`cpu_op`, `kernel`, `cuda_runtime`, …; an unknown one as written). |
//! | `phase` | dictionary (int8 → utf8) | `X` (span), `i` (instant), `C` (counter), `other`. |
//! | `ts_ns` | int64 | Start, epoch nanoseconds. |
//! | `dur_ns` | int64 | Duration, nanoseconds (0 for instants). |
//! | `track` | int32 | The (pid, tid) row's index in the trace. |
//! | `device`, `stream` | int64, null off GPU streams | The GPU and CUDA stream of a GPU track. |
//! | `correlation` | int64, null when absent | CUPTI correlation (runtime call ↔ GPU activity). |
//! | `external_id` | int64, null when absent | `External id` (operator ↔ runtime calls and GPU activities). |

use std::sync::Arc;

use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{
    ArrayRef, DictionaryArray, Int32Array, Int64Array, Int8Array, RecordBatch, StringArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use kinetoscope_trace::{NarrowColumn, Phase, Trace, TrackKind};

/// The schema of [`batch`].
pub fn schema() -> SchemaRef {
    let dict = |k: DataType| DataType::Dictionary(Box::new(k), Box::new(DataType::Utf8));
    Arc::new(Schema::new(vec![
        Field::new("path", dict(DataType::Int32), false),
        Field::new("name", dict(DataType::Int32), false),
        Field::new("category", dict(DataType::Int32), false),
        Field::new("phase", dict(DataType::Int8), false),
        Field::new("ts_ns", DataType::Int64, false),
        Field::new("dur_ns", DataType::Int64, false),
        Field::new("track", DataType::Int32, false),
        Field::new("device", DataType::Int64, true),
        Field::new("stream", DataType::Int64, true),
        Field::new("correlation", DataType::Int64, true),
        Field::new("external_id", DataType::Int64, true),
    ]))
}

/// The events of `trace`, one row each, in file order.
pub fn batch(trace: &Trace) -> Result<RecordBatch, ArrowError> {
    let ev = &trace.events;
    let nonzero = |v: &NarrowColumn| {
        v.iter()
            .map(|x| (x != 0).then_some(x))
            .collect::<Int64Array>()
    };
    let gpu = |pick: fn(i64, i64) -> i64| {
        ev.track
            .iter()
            .map(|&t| match trace.tracks.get(t).kind {
                TrackKind::GpuStream { device, stream } => Some(pick(device, stream)),
                _ => None,
            })
            .collect::<Int64Array>()
    };
    let path = trace.path.to_string_lossy();
    let path = DictionaryArray::<Int32Type>::try_new(
        Int32Array::from(vec![0; ev.len()]),
        Arc::new(StringArray::from(vec![path.as_ref()])),
    )?;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(path),
        Arc::new(names(trace)?),
        Arc::new(categories(trace)?),
        Arc::new(phases(&ev.phase)?),
        Arc::new(Int64Array::from(ev.ts_ns.clone())),
        Arc::new(Int64Array::from_iter_values(ev.dur_ns.iter())),
        Arc::new(ev.track.iter().map(|t| t.0 as i32).collect::<Int32Array>()),
        Arc::new(gpu(|d, _| d)),
        Arc::new(gpu(|_, s| s)),
        Arc::new(nonzero(&ev.correlation)),
        Arc::new(nonzero(&ev.external_id)),
    ];
    RecordBatch::try_new(schema(), columns)
}

/// Names as a dictionary of the names used (not the whole string table).
fn names(trace: &Trace) -> Result<DictionaryArray<Int32Type>, ArrowError> {
    let mut slot = vec![u32::MAX; trace.strings.len()];
    let mut values: Vec<&str> = Vec::new();
    let mut keys = Vec::with_capacity(trace.events.len());
    for &id in &trace.events.name {
        let s = &mut slot[id.0 as usize];
        if *s == u32::MAX {
            *s = values.len() as u32;
            values.push(trace.strings.get(id));
        }
        keys.push(*s as i32);
    }
    DictionaryArray::try_new(Int32Array::from(keys), Arc::new(StringArray::from(values)))
}

/// Categories as a dictionary of their normalised names, each once (two raw spellings
/// of one category share an entry).
fn categories(trace: &Trace) -> Result<DictionaryArray<Int32Type>, ArrowError> {
    let mut values: Vec<&str> = Vec::new();
    let mut slot: Vec<i32> = Vec::new();
    for (id, c) in trace.categories.iter() {
        let name = c.display_name();
        let i = match values.iter().position(|v| *v == name) {
            Some(i) => i,
            None => {
                values.push(name);
                values.len() - 1
            }
        };
        let at = usize::from(id.0);
        if slot.len() <= at {
            slot.resize(at + 1, 0);
        }
        slot[at] = i as i32;
    }
    let keys: Int32Array = trace
        .events
        .cat
        .iter()
        .map(|c| slot[usize::from(c.0)])
        .collect();
    DictionaryArray::try_new(keys, Arc::new(StringArray::from(values)))
}

fn phases(phase: &[Phase]) -> Result<DictionaryArray<Int8Type>, ArrowError> {
    let keys: Int8Array = phase
        .iter()
        .map(|p| match p {
            Phase::Complete => 0,
            Phase::Instant => 1,
            Phase::Counter => 2,
            Phase::Other => 3,
        })
        .collect();
    DictionaryArray::try_new(
        keys,
        Arc::new(StringArray::from(vec!["X", "i", "C", "other"])),
    )
}
