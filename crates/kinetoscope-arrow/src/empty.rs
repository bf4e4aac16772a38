//! The columns of a table without rows.
//!
//! A table's columns come from its rows (`rows.rs`), so a table without rows would have
//! none. Instead it gets the columns that table has on the repository's reference
//! fixtures, recorded in `columns.json` beside this file: `{table: [[column, type]]}`
//! with the types `int64`, `uint64`, `float64`, `bool` and `utf8`. The integration test
//! `empty_tables_have_the_fixture_columns` computes every table on its fixture and fails
//! when the record differs (`KINETOSCOPE_BLESS=1` rewrites it), so the record follows the
//! documents.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

/// The recorded columns of every table, as written in `columns.json`.
pub const COLUMNS_JSON: &str = include_str!("columns.json");

/// Column name and type name, per table.
pub type ColumnRecord = BTreeMap<String, Vec<(String, String)>>;

fn record() -> &'static ColumnRecord {
    static RECORD: OnceLock<ColumnRecord> = OnceLock::new();
    // The file is part of the crate and checked by its tests: it always parses.
    RECORD.get_or_init(|| serde_json::from_str(COLUMNS_JSON).unwrap_or_default())
}

/// The name under which `columns.json` records a type.
pub fn type_name(t: &DataType) -> &'static str {
    match t {
        DataType::Int64 => "int64",
        DataType::UInt64 => "uint64",
        DataType::Float64 => "float64",
        DataType::Boolean => "bool",
        _ => "utf8",
    }
}

fn data_type(name: &str) -> DataType {
    match name {
        "int64" => DataType::Int64,
        "uint64" => DataType::UInt64,
        "float64" => DataType::Float64,
        "bool" => DataType::Boolean,
        _ => DataType::Utf8,
    }
}

/// The recorded schema of `table` (no columns for a table the record lacks).
pub fn schema(table: &str) -> SchemaRef {
    let fields: Vec<Field> = record()
        .get(table)
        .map(|cols| {
            cols.iter()
                .map(|(name, t)| Field::new(name, data_type(t), true))
                .collect()
        })
        .unwrap_or_default();
    Arc::new(Schema::new(fields))
}

/// A batch of no rows with the recorded columns of `table`.
pub fn batch(table: &str) -> Result<RecordBatch, ArrowError> {
    let options = RecordBatchOptions::new().with_row_count(Some(0));
    let schema = schema(table);
    let columns = schema
        .fields()
        .iter()
        .map(|f| arrow_array::new_empty_array(f.data_type()))
        .collect();
    RecordBatch::try_new_with_options(schema, columns, &options)
}
