//! Which row list of which view's document makes each table, and the rows it yields.
//!
//! A table walks the document down [`TableSpec::levels`]: each level names a field that
//! holds a list (one element after another) or an object (one element); the last
//! level's elements are the rows, flattened ([`crate::rows`]). Each level may carry some
//! of its elements' fields into the rows below it (the trace's `path` and `rank`; the
//! stream of an idle category), under the column name given; a row's own field of the
//! same name wins.

use crate::rows::{self, Row};
use crate::value::Value;
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;

/// One step down a document.
#[derive(Debug)]
pub struct Level {
    /// The field holding a list (or one object).
    pub field: &'static str,
    /// Fields of each element copied into the rows below: (field, column).
    pub carry: &'static [(&'static str, &'static str)],
}

/// A table: the view whose document it comes from and where its rows are.
#[derive(Debug)]
pub struct TableSpec {
    /// The table's name (`table(name)` in the Python package).
    pub name: &'static str,
    /// The view (CLI command) whose document holds the rows.
    pub view: &'static str,
    /// The way down to the rows.
    pub levels: &'static [Level],
    /// What one row is.
    pub row: &'static str,
}

const TRACE: &[(&str, &str)] = &[("path", "path"), ("rank", "rank")];

const fn traces(carry: &'static [(&'static str, &'static str)]) -> Level {
    Level {
        field: "traces",
        carry,
    }
}

const fn list(field: &'static str) -> Level {
    Level { field, carry: &[] }
}

/// Every table, by name.
pub const TABLES: &[TableSpec] = &[
    TableSpec {
        name: "summary",
        view: "summary",
        levels: &[traces(&[])],
        row: "a trace's summary",
    },
    TableSpec {
        name: "steps",
        view: "summary",
        levels: &[traces(TRACE), list("steps")],
        row: "a step of a trace (`ProfilerStep#N` or the whole trace)",
    },
    TableSpec {
        name: "overview",
        view: "overview",
        levels: &[traces(TRACE), list("steps")],
        row: "a kept step with its time breakdown (`breakdown_ns.*`)",
    },
    TableSpec {
        name: "gpus",
        view: "overview",
        levels: &[traces(TRACE), list("gpus")],
        row: "a GPU's metrics over the overview's window",
    },
    TableSpec {
        name: "ops",
        view: "ops",
        levels: &[traces(TRACE), list("rows")],
        row: "an operator row",
    },
    TableSpec {
        name: "kernels",
        view: "kernels",
        levels: &[traces(TRACE), list("rows")],
        row: "a kernel row",
    },
    TableSpec {
        name: "perf",
        view: "perf",
        levels: &[traces(TRACE), list("rows")],
        row: "an operator and shape on the roofline",
    },
    TableSpec {
        name: "perf_families",
        view: "perf",
        levels: &[traces(TRACE), list("families")],
        row: "an operator family's totals",
    },
    TableSpec {
        name: "temporal",
        view: "temporal",
        levels: &[traces(&[])],
        row: "a trace's idle, compute and non-compute GPU time",
    },
    TableSpec {
        name: "idle",
        view: "idle",
        levels: &[
            traces(TRACE),
            Level {
                field: "streams",
                carry: &[
                    ("stream", "stream"),
                    ("rows", "stream_rows"),
                    ("idle_ns", "stream_idle_ns"),
                ],
            },
            list("categories"),
        ],
        row: "an idle category of a GPU stream",
    },
    TableSpec {
        name: "launches",
        view: "launches",
        levels: &[traces(TRACE), list("steps")],
        row: "a step's launch statistics",
    },
    TableSpec {
        name: "kernel_classes",
        view: "kernel_classes",
        levels: &[traces(TRACE), list("classes")],
        row: "a kernel class",
    },
    TableSpec {
        name: "comm",
        view: "comm",
        levels: &[traces(TRACE), list("collectives")],
        row: "a collective",
    },
    TableSpec {
        name: "comm_steps",
        view: "comm",
        levels: &[traces(TRACE), list("steps")],
        row: "a step's exposed communication",
    },
    TableSpec {
        name: "ranks",
        view: "ranks",
        levels: &[list("report"), list("ranks")],
        row: "a rank",
    },
    TableSpec {
        name: "rank_steps",
        view: "ranks",
        levels: &[list("report"), list("steps")],
        row: "a step number across ranks",
    },
    TableSpec {
        name: "stragglers",
        view: "ranks",
        levels: &[list("report"), list("stragglers")],
        row: "a straggler rank",
    },
    TableSpec {
        name: "nvtx",
        view: "nvtx",
        levels: &[traces(TRACE), list("ranges")],
        row: "an NVTX range name",
    },
    TableSpec {
        name: "sequences",
        view: "sequences",
        levels: &[traces(TRACE), list("sequences")],
        row: "a kernel sequence",
    },
    TableSpec {
        name: "check",
        view: "check",
        levels: &[traces(TRACE), list("defects")],
        row: "a kind of defect found in a trace",
    },
    TableSpec {
        name: "findings",
        view: "report",
        levels: &[list("findings")],
        row: "a finding, ranked by impact",
    },
];

/// The table named `name`.
pub fn spec(name: &str) -> Option<&'static TableSpec> {
    TABLES.iter().find(|t| t.name == name)
}

/// The rows of `spec` in the view's document `doc` (as JSON values).
pub fn rows(doc: &Value, spec: &TableSpec) -> Vec<Row> {
    let mut out = Vec::new();
    walk(doc, spec.levels, &Row::new(), &mut out);
    out
}

/// The rows of `spec` in `doc`, as one batch; without rows, a batch with the table's
/// recorded columns ([`crate::empty`]).
pub fn batch(doc: &Value, spec: &TableSpec) -> Result<RecordBatch, ArrowError> {
    let rows = rows(doc, spec);
    if rows.is_empty() {
        return crate::empty::batch(spec.name);
    }
    rows::batch(&rows)
}

fn walk(value: &Value, levels: &[Level], carried: &Row, out: &mut Vec<Row>) {
    let Some((level, below)) = levels.split_first() else {
        let mut own = Row::new();
        if let Value::Map(fields) = value {
            rows::flatten(fields, "", &mut own);
        }
        let mut row: Row = carried
            .iter()
            .filter(|(k, _)| !own.iter().any(|(o, _)| o == k))
            .cloned()
            .collect();
        row.extend(own);
        out.push(row);
        return;
    };
    let elements: &[Value] = match value.get(level.field) {
        Some(Value::List(items)) => items,
        Some(one @ Value::Map(_)) => std::slice::from_ref(one),
        _ => &[],
    };
    for element in elements {
        let mut carry = carried.clone();
        for (field, column) in level.carry {
            if let Some(v) = element.get(field) {
                carry.retain(|(k, _)| k != column);
                carry.push(((*column).to_owned(), v.clone()));
            }
        }
        walk(element, below, &carry, out);
    }
}
