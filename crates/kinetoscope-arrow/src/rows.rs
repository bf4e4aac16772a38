//! JSON rows (the objects of a document's row list) to one [`RecordBatch`].
//!
//! Nested objects are flattened into dotted column names (`breakdown_ns.kernel`,
//! `stats.p50_ns`); arrays stay one column of their JSON text (`grid`: `[1, 1, 1]`).
//! Each column's type comes from its values: all integers → `Int64` (`UInt64` when one
//! is above `i64::MAX`), numbers with a fraction → `Float64`, booleans → `Boolean`,
//! strings → `Utf8`; a column mixing kinds holds each value's JSON text (strings as they
//! are). A key absent from a row, or `null`, is a null. Columns keep the order in which
//! their keys first appear.

use std::collections::HashMap;
use std::sync::Arc;

use crate::value::Value;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, RecordBatchOptions, StringArray,
    UInt64Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};

/// One row: flattened column names and their values, in order.
pub type Row = Vec<(String, Value)>;

/// `obj` flattened: nested objects' keys joined with `.`, after the `prefix`.
pub fn flatten(obj: &[(String, Value)], prefix: &str, out: &mut Row) {
    for (k, v) in obj {
        let name = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Map(inner) => flatten(inner, &name, out),
            v => out.push((name, v.clone())),
        }
    }
}

/// What a column's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    UInt,
    Float,
    Str,
    Text,
}

impl Kind {
    fn of(v: &Value) -> Self {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::UInt(_) => Kind::UInt,
            Value::Float(_) => Kind::Float,
            Value::Str(_) => Kind::Str,
            Value::List(_) | Value::Map(_) => Kind::Text,
        }
    }

    /// The kind of a column holding values of both kinds.
    fn join(self, other: Kind) -> Kind {
        use Kind::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Null, k) | (k, Null) => k,
            (Int | UInt | Float, Int | UInt | Float) => Float,
            _ => Text,
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Kind::Bool => DataType::Boolean,
            Kind::Int => DataType::Int64,
            Kind::UInt => DataType::UInt64,
            Kind::Float => DataType::Float64,
            Kind::Null | Kind::Str | Kind::Text => DataType::Utf8,
        }
    }
}

/// A column's values by row (`None`: absent from that row).
struct Column<'a> {
    name: &'a str,
    kind: Kind,
    values: Vec<Option<&'a Value>>,
}

/// The batch of `rows`: one column per flattened key (see the module's doc).
pub fn batch(rows: &[Row]) -> Result<RecordBatch, ArrowError> {
    let columns = columns(rows);
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| Field::new(c.name, c.kind.data_type(), true))
        .collect();
    let arrays: Vec<ArrayRef> = columns.iter().map(array).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options)
}

/// The columns of `rows` with their kinds; a column that is only ever null is left out
/// where other columns flatten an object under its name (`stats` null in some rows,
/// `stats.count` in others).
fn columns(rows: &[Row]) -> Vec<Column<'_>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut columns: Vec<Column<'_>> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (name, value) in row {
            let i = *index.entry(name.as_str()).or_insert_with(|| {
                columns.push(Column {
                    name,
                    kind: Kind::Null,
                    values: vec![None; rows.len()],
                });
                columns.len() - 1
            });
            let c = &mut columns[i];
            c.kind = c.kind.join(Kind::of(value));
            c.values[r] = Some(value);
        }
    }
    let parents: Vec<bool> = columns
        .iter()
        .map(|c| {
            c.kind == Kind::Null
                && columns.iter().any(|o| {
                    o.name.len() > c.name.len()
                        && o.name.starts_with(c.name)
                        && o.name.as_bytes()[c.name.len()] == b'.'
                })
        })
        .collect();
    columns
        .into_iter()
        .zip(parents)
        .filter_map(|(c, parent)| (!parent).then_some(c))
        .collect()
}

fn array(c: &Column<'_>) -> ArrayRef {
    let vals = c.values.iter();
    match c.kind {
        Kind::Bool => Arc::new(
            vals.map(|v| match v {
                Some(Value::Bool(b)) => Some(*b),
                _ => None,
            })
            .collect::<BooleanArray>(),
        ),
        Kind::Int => Arc::new(
            vals.map(|v| match v {
                Some(Value::Int(i)) => Some(*i),
                _ => None,
            })
            .collect::<Int64Array>(),
        ),
        Kind::UInt => Arc::new(
            vals.map(|v| match v {
                Some(Value::Int(i)) => u64::try_from(*i).ok(),
                Some(Value::UInt(u)) => Some(*u),
                _ => None,
            })
            .collect::<UInt64Array>(),
        ),
        Kind::Float => Arc::new(
            vals.map(|v| match v {
                Some(Value::Int(i)) => Some(*i as f64),
                Some(Value::UInt(u)) => Some(*u as f64),
                Some(Value::Float(f)) => Some(*f),
                _ => None,
            })
            .collect::<Float64Array>(),
        ),
        Kind::Null | Kind::Str | Kind::Text => Arc::new(
            vals.map(|v| match v {
                None | Some(Value::Null) => None,
                Some(Value::Str(s)) => Some(s.clone()),
                Some(other) => Some(other.to_json()),
            })
            .collect::<StringArray>(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn row(text: &str) -> Row {
        let Value::Map(fields) = serde_json::from_str(text).unwrap() else {
            panic!("not an object")
        };
        let mut out = Row::new();
        flatten(&fields, "", &mut out);
        out
    }

    #[test]
    fn kinds_nesting_and_absent_keys() {
        let rows = [
            row(r#"{"n": 1, "x": 1, "s": {"a": 2}, "g": [1, 2], "m": "a"}"#),
            row(r#"{"n": 2, "x": 1.5, "s": null, "m": 3, "late": true}"#),
        ];
        let b = batch(&rows).unwrap();
        let schema = b.schema();
        let types: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), f.data_type().clone()))
            .collect();
        assert_eq!(
            types,
            [
                ("n", DataType::Int64),
                ("x", DataType::Float64),
                ("s.a", DataType::Int64),
                ("g", DataType::Utf8),
                ("m", DataType::Utf8),
                ("late", DataType::Boolean),
            ]
        );
        let g = b.column(3).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(g.value(0), "[1,2]");
        assert!(g.is_null(1));
        let m = b.column(4).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((m.value(0), m.value(1)), ("a", "3"));
        assert!(b.column(2).is_null(1));
    }
}
