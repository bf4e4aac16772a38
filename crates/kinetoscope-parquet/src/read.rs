//! Reading an export back: each rank's [`RankSummary`] from its `ranks`, `steps` and
//! `collectives` files, one rank at a time, equal to the summary the trace gives.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use kinetoscope_analysis::memory::Device;
use kinetoscope_analysis::overview::Parts;
use kinetoscope_analysis::ranks::{Interner, RankCollective, RankStep, RankSummary};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{ExportError, ExportResult};
use crate::manifest::{Manifest, RankEntry};
use crate::schema::Table;

/// The file of `table` for the rank `entry` of the export in `dir`.
pub fn table_file(dir: &Path, table: Table, entry: &RankEntry) -> PathBuf {
    dir.join(table.name())
        .join(format!("{}.parquet", entry.file))
}

/// Every row of a Parquet file, as one batch.
pub fn read_table(path: &Path) -> ExportResult<RecordBatch> {
    let err = |e: &dyn std::fmt::Display| ExportError::new(path, e);
    let file = File::open(path).map_err(|e| err(&e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| err(&e))?;
    let schema = builder.schema().clone();
    let reader = builder.build().map_err(|e| err(&e))?;
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| err(&e))?;
    arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| err(&e))
}

/// One file's columns by name, with the file for errors.
struct Columns {
    table: Table,
    path: PathBuf,
    batch: RecordBatch,
}

impl Columns {
    fn read(dir: &Path, table: Table, entry: &RankEntry) -> ExportResult<Self> {
        let path = table_file(dir, table, entry);
        let batch = read_table(&path)?;
        Ok(Self { table, path, batch })
    }

    fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    fn column(&self, name: &str, ty: &DataType) -> ExportResult<&ArrayRef> {
        let c = self
            .batch
            .column_by_name(name)
            .ok_or_else(|| ExportError::new(&self.path, format!("no column `{name}`")))?;
        if c.data_type() != ty {
            return Err(ExportError::new(
                &self.path,
                format!("column `{name}` is {}, expected {ty}", c.data_type()),
            ));
        }
        let nullable = self
            .table
            .columns()
            .iter()
            .any(|col| col.name == name && col.nullable);
        if !nullable && c.null_count() > 0 {
            return Err(ExportError::new(
                &self.path,
                format!("column `{name}` holds nulls"),
            ));
        }
        Ok(c)
    }

    fn i64(&self, name: &str) -> ExportResult<&Int64Array> {
        Ok(self
            .column(name, &DataType::Int64)?
            .as_primitive::<Int64Type>())
    }

    fn i32(&self, name: &str) -> ExportResult<&arrow_array::Int32Array> {
        Ok(self
            .column(name, &DataType::Int32)?
            .as_primitive::<Int32Type>())
    }

    /// An int64 column that exports written before it was added lack: `None` then.
    fn i64_if_present(&self, name: &str) -> ExportResult<Option<&Int64Array>> {
        match self.batch.column_by_name(name) {
            Some(_) => self.i64(name).map(Some),
            None => Ok(None),
        }
    }

    fn str(&self, name: &str) -> ExportResult<&StringArray> {
        Ok(self.column(name, &DataType::Utf8)?.as_string::<i32>())
    }
}

/// The value at `i` of a nullable column.
fn opt(a: &Int64Array, i: usize) -> Option<i64> {
    a.is_valid(i).then(|| a.value(i))
}

/// The [`RankSummary`] of the rank `entry` of the export in `dir`.
pub fn rank_summary(dir: &Path, entry: &RankEntry) -> ExportResult<RankSummary> {
    let ranks = Columns::read(dir, Table::Ranks, entry)?;
    if ranks.rows() != 1 {
        return Err(ExportError::new(
            &ranks.path,
            format!("{} rows, expected 1", ranks.rows()),
        ));
    }
    let warnings_json = ranks.str("warnings_json")?;
    let warnings = serde_json::from_str(warnings_json.value(0))
        .map_err(|e| ExportError::new(&ranks.path, format!("`warnings_json`: {e}")))?;
    let steps = steps(&Columns::read(dir, Table::Steps, entry)?)?;
    let mut summary = RankSummary {
        path: ranks.str("path")?.value(0).to_owned(),
        rank: opt(ranks.i64("rank")?, 0),
        world_size: opt(ranks.i64("world_size")?, 0),
        steps,
        groups: Vec::new(),
        names: Vec::new(),
        collectives: Vec::new(),
        comm_kernel_ns: ranks.i64("comm_kernel_ns")?.value(0),
        warnings,
    };
    collectives(
        &Columns::read(dir, Table::Collectives, entry)?,
        &mut summary,
    )?;
    Ok(summary)
}

/// The highest memory one device of a rank reached over the whole trace, from its
/// `memory_per_step` rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePeak {
    /// The device.
    pub device: Device,
    /// Highest `Total Allocated`, bytes; `None` when the records carry no totals.
    pub peak_allocated_bytes: Option<i64>,
    /// Highest `Total Reserved`, bytes; `None` when nothing was reserved.
    pub peak_reserved_bytes: Option<i64>,
    /// The GPU's memory, bytes, when the trace says.
    pub capacity_bytes: Option<i64>,
}

/// The peaks of each device of the rank `entry` of the export in `dir`, in device
/// order.
pub fn device_peaks(dir: &Path, entry: &RankEntry) -> ExportResult<Vec<DevicePeak>> {
    let c = Columns::read(dir, Table::MemoryPerStep, entry)?;
    let (device_type, device_id) = (c.i64("device_type")?, c.i64("device_id")?);
    let (allocated, reserved) = (
        c.i64("peak_allocated_bytes")?,
        c.i64("peak_reserved_bytes")?,
    );
    let capacity = c.i64_if_present("capacity_bytes")?;
    let mut peaks: BTreeMap<(i64, i64), DevicePeak> = BTreeMap::new();
    for i in 0..c.rows() {
        let device = Device {
            device_type: device_type.value(i),
            device_id: device_id.value(i),
        };
        let p = peaks
            .entry((device.device_type, device.device_id))
            .or_insert(DevicePeak {
                device,
                peak_allocated_bytes: None,
                peak_reserved_bytes: None,
                capacity_bytes: None,
            });
        p.peak_allocated_bytes = p.peak_allocated_bytes.max(opt(allocated, i));
        p.peak_reserved_bytes = p.peak_reserved_bytes.max(opt(reserved, i));
        if let Some(cap) = capacity.and_then(|a| opt(a, i)) {
            p.capacity_bytes = Some(cap);
        }
    }
    Ok(peaks.into_values().collect())
}

/// The summaries of every rank of the export in `dir`, in order, read one at a time;
/// with the manifest.
pub fn rank_summaries(dir: &Path) -> ExportResult<(Manifest, Vec<ExportResult<RankSummary>>)> {
    let manifest = Manifest::read(dir)?;
    let summaries = manifest
        .ranks
        .iter()
        .map(|e| rank_summary(dir, e))
        .collect();
    Ok((manifest, summaries))
}

fn steps(c: &Columns) -> ExportResult<Vec<RankStep>> {
    let index = c.i32("step_index")?;
    let name = c.str("name")?;
    let number = c.i64("number")?;
    let [start, dur, kernel, memcpy, memset, comm, runtime, dataloader, cpu_exec, other] = [
        "start_ns",
        "dur_ns",
        "kernel_ns",
        "memcpy_ns",
        "memset_ns",
        "communication_ns",
        "runtime_ns",
        "dataloader_ns",
        "cpu_exec_ns",
        "other_ns",
    ]
    .map(|n| c.i64(n));
    let (start, dur) = (start?, dur?);
    let parts = [
        kernel?,
        memcpy?,
        memset?,
        comm?,
        runtime?,
        dataloader?,
        cpu_exec?,
        other?,
    ];
    let mut out = Vec::with_capacity(c.rows());
    for i in 0..c.rows() {
        if index.value(i) as usize != i {
            return Err(ExportError::new(
                &c.path,
                format!("row {i}: `step_index` is {}", index.value(i)),
            ));
        }
        let v = |a: &Int64Array| a.value(i);
        out.push(RankStep {
            name: name.value(i).to_owned(),
            number: opt(number, i),
            start_ns: v(start),
            dur_ns: v(dur),
            parts_ns: Parts {
                kernel: v(parts[0]),
                memcpy: v(parts[1]),
                memset: v(parts[2]),
                communication: v(parts[3]),
                runtime: v(parts[4]),
                dataloader: v(parts[5]),
                cpu_exec: v(parts[6]),
                other: v(parts[7]),
            },
        });
    }
    Ok(out)
}

/// The collectives of the `collectives` file into `s`: groups and names interned in row
/// order, then sorted by call and start, as [`RankSummary::from_parts`] does.
fn collectives(c: &Columns, s: &mut RankSummary) -> ExportResult<()> {
    let group = c.str("process_group")?;
    let name = c.str("name")?;
    let seq = c.i64("seq_num")?;
    let comms_id = c.i64("comms_id")?;
    let step = c.i64("step")?;
    let call = c.i64("call_ns")?;
    let start = c.i64("start_ns")?;
    let end = c.i64("end_ns")?;
    let mut groups = Interner::default();
    let mut names = Interner::default();
    for i in 0..c.rows() {
        s.collectives.push(RankCollective {
            group: groups.intern(group.value(i)),
            name: names.intern(name.value(i)),
            seq: opt(seq, i),
            comms_id: opt(comms_id, i).map(|v| v as u64),
            step: opt(step, i),
            call_ns: call.value(i),
            start_ns: start.value(i),
            end_ns: end.value(i),
        });
    }
    s.groups = groups.table;
    s.names = names.table;
    s.collectives.sort_by_key(|c| (c.call_ns, c.start_ns));
    Ok(())
}
