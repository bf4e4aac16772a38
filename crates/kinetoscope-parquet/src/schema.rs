//! The tables of an export and their columns: names, Arrow types and what each holds.
//! `docs/parquet.md` documents the same columns (a test checks that it names each one).

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// The version of the tables' layout written in every file's key-value metadata
/// (`kinetoscope.schema_version`) and in the manifest. A new column or table keeps it; a
/// renamed or removed column, or a changed meaning, raises it.
pub const SCHEMA_VERSION: u32 = 1;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// 64-bit signed integer (every time in ns, every byte count, every count).
    I64,
    /// 32-bit signed integer (indices and ids within a rank).
    I32,
    /// Boolean.
    Bool,
    /// UTF-8 text.
    Str,
    /// UTF-8 text, dictionary encoded (int32 keys).
    Dict,
}

impl Type {
    /// The Arrow type.
    pub fn data_type(self) -> DataType {
        match self {
            Type::I64 => DataType::Int64,
            Type::I32 => DataType::Int32,
            Type::Bool => DataType::Boolean,
            Type::Str => DataType::Utf8,
            Type::Dict => DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        }
    }
}

/// One column of a table.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub ty: Type,
    /// Whether it may hold nulls.
    pub nullable: bool,
}

const fn col(name: &'static str, ty: Type) -> Column {
    Column {
        name,
        ty,
        nullable: false,
    }
}

const fn opt(name: &'static str, ty: Type) -> Column {
    Column {
        name,
        ty,
        nullable: true,
    }
}

/// The `rank` column every table starts with.
const RANK: Column = opt("rank", Type::I64);

/// The tables of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// One row per rank: its trace file, world size, totals and warnings.
    Ranks,
    /// One row per step of a rank, with the overview's breakdown.
    Steps,
    /// Kernels aggregated per (rank, step, kernel name).
    KernelsPerStep,
    /// Operators aggregated per rank (the ops view by name).
    Ops,
    /// One row per collective call of a rank.
    Collectives,
    /// Peak memory per (rank, step, device).
    MemoryPerStep,
    /// Every event of a rank, names as ids into `strings`.
    Events,
    /// The names the `events` table refers to.
    Strings,
}

impl Table {
    /// Every table, in the order an export writes them.
    pub const ALL: [Table; 8] = [
        Table::Ranks,
        Table::Steps,
        Table::KernelsPerStep,
        Table::Ops,
        Table::Collectives,
        Table::MemoryPerStep,
        Table::Events,
        Table::Strings,
    ];

    /// The table's name: its folder in an export and `kinetoscope.table` in its files.
    pub fn name(self) -> &'static str {
        match self {
            Table::Ranks => "ranks",
            Table::Steps => "steps",
            Table::KernelsPerStep => "kernels_per_step",
            Table::Ops => "ops",
            Table::Collectives => "collectives",
            Table::MemoryPerStep => "memory_per_step",
            Table::Events => "events",
            Table::Strings => "strings",
        }
    }

    /// The table named `name`.
    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The table's columns, in order.
    pub fn columns(self) -> &'static [Column] {
        use Type::*;
        match self {
            Table::Ranks => {
                const C: &[Column] = &[
                    RANK,
                    col("path", Str),
                    opt("world_size", I64),
                    col("steps", I64),
                    col("collectives", I64),
                    col("comm_kernel_ns", I64),
                    col("warnings_json", Str),
                ];
                C
            }
            Table::Steps => {
                const C: &[Column] = &[
                    RANK,
                    col("step_index", I32),
                    col("name", Str),
                    opt("number", I64),
                    col("start_ns", I64),
                    col("dur_ns", I64),
                    col("kernel_ns", I64),
                    col("memcpy_ns", I64),
                    col("memset_ns", I64),
                    col("communication_ns", I64),
                    col("runtime_ns", I64),
                    col("dataloader_ns", I64),
                    col("cpu_exec_ns", I64),
                    col("other_ns", I64),
                ];
                C
            }
            Table::KernelsPerStep => {
                const C: &[Column] = &[
                    RANK,
                    opt("step_index", I32),
                    opt("step", I64),
                    col("name", Str),
                    col("count", I64),
                    col("total_ns", I64),
                    col("min_ns", I64),
                    col("max_ns", I64),
                ];
                C
            }
            Table::Ops => {
                const C: &[Column] = &[
                    RANK,
                    col("name", Str),
                    col("calls", I64),
                    col("launching_calls", I64),
                    col("host_self_ns", I64),
                    col("host_total_ns", I64),
                    col("device_self_ns", I64),
                    col("device_total_ns", I64),
                    col("tc_eligible", Bool),
                    col("tc_self_ns", I64),
                    col("tc_total_ns", I64),
                ];
                C
            }
            Table::Collectives => {
                const C: &[Column] = &[
                    RANK,
                    col("process_group", Str),
                    col("process_group_desc", Str),
                    col("collective", Str),
                    col("name", Str),
                    opt("algorithm", Str),
                    col("dtype", Str),
                    opt("group_size", I64),
                    opt("bytes", I64),
                    opt("seq_num", I64),
                    opt("comms_id", I64),
                    opt("step", I64),
                    col("call_ns", I64),
                    col("call_recorded", Bool),
                    col("start_ns", I64),
                    col("end_ns", I64),
                    col("stream", I64),
                    col("on_gpu", Bool),
                ];
                C
            }
            Table::MemoryPerStep => {
                const C: &[Column] = &[
                    RANK,
                    opt("step_index", I32),
                    opt("step", I64),
                    col("device_type", I64),
                    col("device_id", I64),
                    col("records", I64),
                    opt("peak_allocated_bytes", I64),
                    opt("peak_reserved_bytes", I64),
                    opt("capacity_bytes", I64),
                ];
                C
            }
            Table::Events => {
                const C: &[Column] = &[
                    RANK,
                    col("ts_ns", I64),
                    col("dur_ns", I64),
                    col("track", I32),
                    col("category", Dict),
                    col("phase", Dict),
                    col("name_id", I32),
                    opt("correlation", I64),
                    opt("external_id", I64),
                    opt("device", I64),
                    opt("stream", I64),
                ];
                C
            }
            Table::Strings => {
                const C: &[Column] = &[RANK, col("id", I32), col("string", Str)];
                C
            }
        }
    }

    /// The Arrow schema of the table.
    pub fn schema(self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns()
            .iter()
            .map(|c| Field::new(c.name, c.ty.data_type(), c.nullable))
            .collect();
        Arc::new(Schema::new(fields))
    }
}
