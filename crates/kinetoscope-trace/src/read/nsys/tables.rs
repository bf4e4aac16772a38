//! Reading the tables of an Nsight Systems export into the model: one pass per table,
//! one prepared statement each, names resolved through `StringIds` only for the ids a
//! name column refers to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::{Connection, Row};
use rustc_hash::{FxHashMap, FxHashSet};

use super::nvtx::{emit_nvtx, step_number};
use super::prefetch::Prefetch;
use super::rows::*;
use super::sql_error;
use super::step_guess::{outermost_repeating, StepGuess};
use crate::model::*;
use crate::read::builder::TraceBuilder;
use crate::read::ReadOptions;
use crate::{TraceError, TraceResult};

/// Events beyond this are refused (the model indexes events with `u32`).
const MAX_EVENTS: usize = u32::MAX as usize - 1;

/// The tables of the file, by name.
struct Schema {
    tables: Vec<String>,
}

impl Schema {
    fn read(conn: &Connection) -> rusqlite::Result<Self> {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let tables = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Self { tables })
    }

    /// The table `base`, or its highest versioned name (`base_V3` over `base_V2`).
    fn resolve(&self, base: &str) -> Option<&str> {
        let mut best: Option<(u32, &str)> = None;
        for t in &self.tables {
            let version = if t == base {
                Some(1)
            } else {
                t.strip_prefix(base)
                    .and_then(|r| r.strip_prefix("_V"))
                    .and_then(|v| v.parse::<u32>().ok())
            };
            if let Some(v) = version {
                if best.is_none_or(|(b, _)| v > b) {
                    best = Some((v, t.as_str()));
                }
            }
        }
        best.map(|(_, t)| t)
    }

    fn has(&self, name: &str) -> bool {
        self.tables.iter().any(|t| t == name)
    }
}

/// Whether the database is an nsys export: it has `StringIds` and a `TARGET_INFO_*` or
/// export-metadata table.
pub(super) fn is_nsys(conn: &Connection) -> rusqlite::Result<bool> {
    let s = Schema::read(conn)?;
    Ok(s.has("StringIds")
        && s.tables.iter().any(|t| {
            t.starts_with("TARGET_INFO_") || t == "META_DATA_EXPORT" || t == "EXPORT_META_DATA"
        }))
}

/// The tables of GPU work, each with a `globalPid` and a `deviceId`.
const GPU_TABLES: [&str; 4] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
];

/// The pids that ran GPU work, ordered by their lowest device then pid.
pub(super) fn gpu_processes(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    let schema = Schema::read(conn)?;
    let mut first: BTreeMap<i64, i64> = BTreeMap::new();
    for base in GPU_TABLES {
        let Some(table) = schema.resolve(base) else {
            continue;
        };
        let sql =
            format!("SELECT (globalPid >> 24) & 16777215, min(deviceId) FROM {table} GROUP BY 1");
        let mut stmt = conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (pid, dev) = (int(r, 0), int(r, 1));
            let e = first.entry(pid).or_insert(dev);
            *e = (*e).min(dev);
        }
    }
    let mut v: Vec<(i64, i64)> = first.into_iter().map(|(p, d)| (d, p)).collect();
    v.sort_unstable();
    Ok(v.into_iter().map(|(_, p)| p).collect())
}

/// The columns of a table.
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Columns> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let cols = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<rusqlite::Result<FxHashSet<_>>>()?;
    Ok(Columns(cols))
}

/// The process of a serialized global id (`globalPid` or `globalTid`): every bit above
/// the thread id (the process id and the host/VM bits).
fn process_key(global: i64) -> i64 {
    global >> 24
}

/// The operating-system pid and tid of a serialized global id.
fn pid_tid(global: i64) -> (i64, i64) {
    ((global >> 24) & 0xFF_FFFF, global & 0xFF_FFFF)
}

/// Times are clamped so that a base plus a start plus a duration cannot overflow.
const TIME_LIMIT: i64 = 1 << 61;

/// The rows of one table, read ahead, and the table's name.
struct Ahead<T> {
    table: String,
    rows: Prefetch<T>,
}

/// The activity tables read ahead (`None` where the export lacks one).
struct ReadAhead {
    runtime: Option<Ahead<CallRow>>,
    driver: Option<Ahead<CallRow>>,
    kernels: Option<Ahead<KernelRow>>,
    graphs: Option<Ahead<GraphRow>>,
    memcpy: Option<Ahead<MemcpyRow>>,
    memset: Option<Ahead<MemsetRow>>,
    sync: Option<Ahead<SyncRow>>,
    nvtx: Option<Ahead<NvtxRow>>,
}

struct Loader<'c> {
    path: &'c Path,
    conn: &'c Connection,
    schema: Schema,
    trace: Trace,
    meta: Vec<(RawId, RawId, StrId, StrId)>,
    /// `StringIds` id → interned name.
    names: FxHashMap<i64, StrId>,
    /// `StringIds` id of a runtime or driver function → its name without the version.
    call_names: FxHashMap<i64, StrId>,
    /// Process (`globalPid >> 24`) → its number in order of first sight, and the last
    /// one looked up.
    processes: FxHashMap<i64, i64>,
    last_process: Option<(i64, i64)>,
    /// `(process, correlationId)` → correlation, for the ids [`Loader::correlation`]
    /// cannot compose.
    odd_correlations: FxHashMap<(i64, i64), i64>,
    /// Correlations of the runtime and driver calls read, and of the GPU rows.
    call_correlations: Vec<i64>,
    gpu_correlations: Vec<i64>,
    tracks: FxHashMap<(i64, i64), TrackId>,
    last_track: Option<((i64, i64), TrackId)>,
    base_ns: i64,
    last_ns: i64,
    open_ranges: Vec<EventId>,
    /// The category of user NVTX ranges, once the NVTX table is read.
    range_cat: Option<CatId>,
    /// pid → devices it ran GPU work on, and the last pair added.
    gpu_processes: BTreeMap<i64, BTreeSet<i64>>,
    last_gpu_process: Option<(i64, i64)>,
    /// Read only this process's rows.
    only: Option<i64>,
    /// The NVTX range name that marks a step (`ReadOptions::nvtx_step`), and the
    /// number of its instances seen so far.
    step_range: Option<(String, i64)>,
    info: NsysInfo,
}

/// Read every table kinetoscope uses into a trace.
pub(super) fn load(
    path: &Path,
    conn: &Connection,
    opts: &ReadOptions,
    only: Option<i64>,
) -> TraceResult<Trace> {
    let schema = Schema::read(conn).map_err(|e| sql_error(path, "sqlite_master", e))?;
    let mut trace = Trace {
        path: path.to_owned(),
        strings: StringTable::new(),
        ..Trace::default()
    };
    trace.charge = Charge::new(&opts.budget);
    trace.report.file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut l = Loader {
        path,
        conn,
        schema,
        trace,
        meta: Vec::new(),
        names: FxHashMap::default(),
        call_names: FxHashMap::default(),
        processes: FxHashMap::default(),
        last_process: None,
        odd_correlations: FxHashMap::default(),
        call_correlations: Vec::new(),
        gpu_correlations: Vec::new(),
        tracks: FxHashMap::default(),
        last_track: None,
        base_ns: 0,
        last_ns: i64::MIN,
        open_ranges: Vec::new(),
        range_cat: None,
        gpu_processes: BTreeMap::new(),
        last_gpu_process: None,
        only,
        step_range: opts.nvtx_step.clone().map(|n| (n, 0)),
        info: NsysInfo::default(),
    };
    if let Some(pid) = only {
        let ranks = gpu_processes(conn).map_err(|e| sql_error(path, "CUPTI_ACTIVITY_KIND_*", e))?;
        l.trace.meta.rank = ranks.iter().position(|&p| p == pid).map(|i| Rank {
            value: i as i64,
            source: RankSource::NsysProcess,
        });
    }
    let ahead = l.read_ahead()?;
    l.export_metadata()?;
    l.session_start()?;
    l.devices()?;
    let runtime = l.calls(ahead.runtime, "cuda_runtime")?;
    let driver = l.calls(ahead.driver, "cuda_driver")?;
    let kernels = l.kernels(ahead.kernels)?;
    let graphs = l.graphs(ahead.graphs)?;
    let copies = l.memcpy(ahead.memcpy)?;
    let sets = l.memset(ahead.memset)?;
    l.sync(ahead.sync)?;
    let nvtx = l.nvtx(ahead.nvtx)?;
    l.count_gpu_rows_without_call();
    l.names_of_rows()?;
    if !(runtime || driver || kernels || graphs || copies || sets) {
        l.info.missing.push(NsysFeature::CudaTrace);
    }
    if !nvtx {
        l.info.missing.push(NsysFeature::Nvtx);
    }
    if l.trace.meta.devices.is_empty() {
        l.info.missing.push(NsysFeature::GpuInfo);
    }
    l.finish()
}

impl<'c> Loader<'c> {
    fn err(&self, table: &str) -> impl Fn(rusqlite::Error) -> TraceError + '_ {
        let table = table.to_owned();
        move |e| sql_error(self.path, &table, e)
    }

    fn oom(&self, e: MemoryError) -> TraceError {
        TraceError::OutOfMemory {
            path: self.path.to_owned(),
            offset: 0,
            needed: e.needed,
            in_use: e.in_use,
            limit: e.limit,
        }
    }

    fn intern(&mut self, text: &str) -> TraceResult<StrId> {
        let t = &mut self.trace;
        t.strings
            .try_intern(text, &mut t.charge)
            .map_err(|e| self.oom(e))
    }

    /// The name behind a `StringIds` id (read once per id); the empty name for an id
    /// the table lacks.
    fn string_id(&mut self, id: i64) -> TraceResult<StrId> {
        if let Some(&s) = self.names.get(&id) {
            return Ok(s);
        }
        let value: Option<String> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT substr(value, 1, 65540) FROM StringIds WHERE id = ?1")
                .map_err(self.err("StringIds"))?;
            let mut rows = stmt.query([id]).map_err(self.err("StringIds"))?;
            match rows.next().map_err(self.err("StringIds"))? {
                Some(r) => text(r, 0),
                None => None,
            }
        };
        let s = self.intern(value.as_deref().unwrap_or(""))?;
        self.names.insert(id, s);
        Ok(s)
    }

    /// The correlation, unique in the trace, of a process's CUPTI correlation id (0
    /// stays 0: no link). CUPTI ids are 32-bit: the number of the process (in order of
    /// first sight) goes above them, so the first process keeps CUPTI's own ids and no
    /// map is needed; an id outside `1..=u32::MAX` is numbered in a map instead, above
    /// every composed one.
    fn correlation(&mut self, process: i64, id: i64) -> i64 {
        if id == 0 {
            return 0;
        }
        let number = self.process_number(process);
        if (1..=u32::MAX as i64).contains(&id) && number < (1 << 22) {
            return (number << 32) | id;
        }
        let next = (1i64 << 60) + self.odd_correlations.len() as i64;
        *self.odd_correlations.entry((process, id)).or_insert(next)
    }

    /// A process's number, in order of first sight.
    fn process_number(&mut self, process: i64) -> i64 {
        if let Some((p, n)) = self.last_process {
            if p == process {
                return n;
            }
        }
        let next = self.processes.len() as i64;
        let n = *self.processes.entry(process).or_insert(next);
        self.last_process = Some((process, n));
        n
    }

    fn track(&mut self, pid: i64, tid: i64) -> TraceResult<TrackId> {
        if let Some((key, t)) = self.last_track {
            if key == (pid, tid) {
                return Ok(t);
            }
        }
        if let Some(&t) = self.tracks.get(&(pid, tid)) {
            self.last_track = Some(((pid, tid), t));
            return Ok(t);
        }
        let t = &mut self.trace;
        grow(&mut t.tracks.list, 1, &mut t.charge).map_err(|e| self.oom(e))?;
        let id = TrackId(self.trace.tracks.list.len() as u32);
        self.trace.tracks.list.push(Track {
            pid: RawId::Int(pid),
            tid: RawId::Int(tid),
            kind: TrackKind::CpuThread,
            thread_name: StrId(0),
            process_name: StrId(0),
            process_label: StrId(0),
        });
        self.tracks.insert((pid, tid), id);
        self.last_track = Some(((pid, tid), id));
        Ok(id)
    }

    /// Append one span; `start` and `end` are on the capture's clock.
    fn push(
        &mut self,
        start: i64,
        end: i64,
        name: StrId,
        cat: CatId,
        track: TrackId,
        correlation: i64,
    ) -> TraceResult<EventId> {
        let t = &mut self.trace;
        let n = t.events.len();
        if n >= MAX_EVENTS {
            return Err(self.oom(MemoryError::refused(u64::MAX)));
        }
        let start = start.clamp(-TIME_LIMIT, TIME_LIMIT);
        let end = end.clamp(start, TIME_LIMIT);
        self.last_ns = self.last_ns.max(end);
        let c = &mut t.charge;
        let e = &mut t.events;
        let grown = grow(&mut e.ts_ns, 1, c)
            .and_then(|()| e.dur_ns.grow_by(1, c))
            .and_then(|()| grow(&mut e.name, 1, c))
            .and_then(|()| grow(&mut e.cat, 1, c))
            .and_then(|()| grow(&mut e.phase, 1, c))
            .and_then(|()| grow(&mut e.track, 1, c))
            .and_then(|()| e.correlation.grow_by(1, c));
        if let Err(err) = grown {
            return Err(self.oom(err));
        }
        let e = &mut self.trace.events;
        e.ts_ns.push(start + self.base_ns);
        e.dur_ns.push(end - start);
        e.name.push(name);
        e.cat.push(cat);
        e.phase.push(Phase::Complete);
        e.track.push(track);
        e.correlation.push(correlation);
        self.trace.categories.add_count(cat, 1);
        Ok(EventId(n as u32))
    }

    fn grow_args<T>(
        &mut self,
        pick: impl FnOnce(&mut ArgTables) -> &mut Vec<T>,
    ) -> TraceResult<()> {
        let t = &mut self.trace;
        grow(pick(&mut t.args), 1, &mut t.charge).map_err(|e| self.oom(e))
    }

    /// The export's name of table `base` (a versioned `_V2`, `_V3` one resolved), if any.
    fn table(&self, base: &str) -> Option<String> {
        self.schema.resolve(base).map(str::to_owned)
    }

    /// Run `sql` over `table` and hand each row to `each`.
    fn each_row(
        &mut self,
        table: &str,
        sql: &str,
        mut each: impl FnMut(&mut Self, &Row<'_>) -> TraceResult<()>,
    ) -> TraceResult<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(sql).map_err(self.err(table))?;
        let mut rows = stmt.query([]).map_err(self.err(table))?;
        while let Some(row) = rows.next().map_err(self.err(table))? {
            each(self, row)?;
        }
        Ok(())
    }

    /// Start reading every activity table the export has, each on its own connection
    /// and thread (the loader takes their rows in a fixed order, so the model is the
    /// same whatever the timing).
    fn read_ahead(&self) -> TraceResult<ReadAhead> {
        Ok(ReadAhead {
            runtime: self.ahead("CUPTI_ACTIVITY_KIND_RUNTIME", |t, _| call_sql(t), call_row)?,
            driver: self.ahead("CUPTI_ACTIVITY_KIND_DRIVER", |t, _| call_sql(t), call_row)?,
            kernels: self.ahead("CUPTI_ACTIVITY_KIND_KERNEL", kernel_sql, kernel_row)?,
            graphs: self.ahead(
                "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                |t, _| graph_sql(t),
                graph_row,
            )?,
            memcpy: self.ahead("CUPTI_ACTIVITY_KIND_MEMCPY", memcpy_sql, memcpy_row)?,
            memset: self.ahead("CUPTI_ACTIVITY_KIND_MEMSET", memset_sql, memset_row)?,
            sync: self.ahead(
                "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                |t, _| sync_sql(t),
                sync_row,
            )?,
            nvtx: self.ahead("NVTX_EVENTS", nvtx_sql, nvtx_row)?,
        })
    }

    /// Start reading table `base` (its versioned name resolved) with the query `sql`
    /// makes from its name and columns; `None` when the export lacks it.
    fn ahead<T: Send + 'static>(
        &self,
        base: &str,
        sql: impl FnOnce(&str, &Columns) -> String,
        decode: fn(&Row<'_>) -> T,
    ) -> TraceResult<Option<Ahead<T>>> {
        let Some(table) = self.table(base) else {
            return Ok(None);
        };
        let cols = columns(self.conn, &table).map_err(self.err(&table))?;
        let rows = Prefetch::start(self.path.to_owned(), sql(&table, &cols), decode).map_err(
            |source| TraceError::Io {
                path: self.path.to_owned(),
                source,
            },
        )?;
        Ok(Some(Ahead { table, rows }))
    }

    /// Hand each row read ahead to `each`, in the table's order.
    fn drain<T: Send + 'static>(
        &mut self,
        ahead: Ahead<T>,
        mut each: impl FnMut(&mut Self, T) -> TraceResult<()>,
    ) -> TraceResult<()> {
        while let Some(chunk) = ahead.rows.next_chunk() {
            for row in chunk.map_err(self.err(&ahead.table))? {
                each(self, row)?;
            }
        }
        Ok(())
    }

    /// `EXPORT_PRODUCT_VERSION` and `EXPORT_SCHEMA_VERSION` from `META_DATA_EXPORT` (or
    /// the 2022 name `EXPORT_META_DATA`); nothing else of it.
    fn export_metadata(&mut self) -> TraceResult<()> {
        let Some(table) = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
            .into_iter()
            .find(|t| self.schema.has(t))
        else {
            return Ok(());
        };
        self.info.metadata_table = table.to_owned();
        let sql = format!(
            "SELECT name, value FROM {table} WHERE name IN \
             ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')"
        );
        self.each_row(table, &sql, |l, r| {
            let value = text(r, 1).unwrap_or_default();
            match text(r, 0).as_deref() {
                Some("EXPORT_PRODUCT_VERSION") => l.info.nsys_version = value,
                Some("EXPORT_SCHEMA_VERSION") => l.info.schema_version = value,
                _ => {}
            }
            Ok(())
        })
    }

    /// The epoch time of the capture's zero, added to every time.
    fn session_start(&mut self) -> TraceResult<()> {
        let table = "TARGET_INFO_SESSION_START_TIME";
        if !self.schema.has(table) {
            return Ok(());
        }
        let sql = format!("SELECT utcEpochNs FROM {table} LIMIT 1");
        self.each_row(table, &sql, |l, r| {
            l.base_ns = int(r, 0).clamp(0, TIME_LIMIT);
            Ok(())
        })
    }

    /// The CUDA devices of `TARGET_INFO_GPU` (rows with a compute capability: other
    /// adapters are left out), numbered as the kernels number them (`cuDevice`, or the
    /// CUDA id `TARGET_INFO_CUDA_DEVICE` gives the GPU).
    fn devices(&mut self) -> TraceResult<()> {
        let Some(table) = self.table("TARGET_INFO_GPU") else {
            return Ok(());
        };
        let mut cuda_ids: FxHashMap<i64, i64> = FxHashMap::default();
        if let Some(map) = self.table("TARGET_INFO_CUDA_DEVICE") {
            let sql = format!("SELECT gpuId, cudaId FROM {map}");
            self.each_row(&map, &sql, |_, r| {
                cuda_ids.entry(int(r, 0)).or_insert(int(r, 1));
                Ok(())
            })?;
        }
        let cols = columns(self.conn, &table).map_err(self.err(&table))?;
        let c = |n: &str| cols.or_null(n);
        let sql = format!(
            "SELECT {}, {}, {}, {}, {}, {}, {}, {}, {} FROM {table}",
            c("id"),
            c("name"),
            c("totalMemory"),
            c("smCount"),
            c("computeMajor"),
            c("computeMinor"),
            c("maxWarpsPerSm"),
            c("threadsPerWarp"),
            c("cuDevice"),
        );
        self.each_row(&table, &sql, |l, r| {
            let major = int(r, 4);
            if major <= 0 {
                return Ok(());
            }
            let gpu = int(r, 0);
            let id = cuda_ids
                .get(&gpu)
                .copied()
                .or_else(|| opt_int(r, 8))
                .unwrap_or(gpu);
            if l.trace.meta.devices.iter().any(|d| d.id == id) {
                return Ok(());
            }
            l.trace.meta.devices.push(DeviceInfo {
                id,
                name: text(r, 1).unwrap_or_default(),
                total_memory_bytes: int(r, 2).max(0) as u64,
                num_sms: int(r, 3).max(0) as u64,
                compute_major: major,
                compute_minor: int(r, 5),
                max_threads_per_sm: (int(r, 6).max(0) as u64)
                    .saturating_mul(int(r, 7).max(0) as u64),
                ..DeviceInfo::default()
            });
            Ok(())
        })?;
        self.trace.meta.devices.sort_by_key(|d| d.id);
        Ok(())
    }

    /// Runtime or driver calls; whether the table exists.
    fn calls(&mut self, rows: Option<Ahead<CallRow>>, cat: &str) -> TraceResult<bool> {
        let Some(rows) = rows else {
            return Ok(false);
        };
        let cat = self.trace.categories.intern(cat);
        self.drain(rows, |l, r| {
            let (pid, tid) = pid_tid(r.global_tid);
            if l.skip(pid) {
                return Ok(());
            }
            let track = l.track(pid, tid)?;
            let corr = l.correlation(process_key(r.global_tid), r.correlation);
            let name = match l.call_names.get(&r.name_id) {
                Some(&s) => s,
                None => {
                    let s = l.string_id(r.name_id)?;
                    let short = strip_version(l.trace.strings.get(s)).to_owned();
                    let s = l.intern(&short)?;
                    l.call_names.insert(r.name_id, s);
                    s
                }
            };
            l.push(r.start, r.end, name, cat, track, corr)?;
            if corr != 0 {
                l.call_correlations.push(corr);
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// Whether rows of process `pid` are left out (another process was asked for).
    fn skip(&self, pid: i64) -> bool {
        self.only.is_some_and(|o| o != pid)
    }

    /// The track and correlation of a GPU row (kernel, graph, copy, set), kept to count
    /// later whether a call was read for it.
    fn gpu_place(&mut self, g: &GpuRow) -> TraceResult<(TrackId, i64)> {
        let track = self.track(g.device, g.stream)?;
        let corr = self.correlation(process_key(g.global_pid), g.correlation);
        self.gpu_correlations.push(corr);
        let pid = pid_tid(g.global_pid).0;
        if self.last_gpu_process != Some((pid, g.device)) {
            self.gpu_processes.entry(pid).or_default().insert(g.device);
            self.last_gpu_process = Some((pid, g.device));
        }
        Ok((track, corr))
    }

    /// Count the GPU rows whose correlation no runtime or driver call has (their launch
    /// fell before the capture's window, or the API was not traced).
    fn count_gpu_rows_without_call(&mut self) {
        let mut calls = std::mem::take(&mut self.call_correlations);
        calls.sort_unstable();
        calls.dedup();
        let mut gpu = std::mem::take(&mut self.gpu_correlations);
        gpu.sort_unstable();
        let mut i = 0;
        let mut without = 0;
        for c in gpu {
            while i < calls.len() && calls[i] < c {
                i += 1;
            }
            if c == 0 || calls.get(i) != Some(&c) {
                without += 1;
            }
        }
        self.info.gpu_without_runtime_call = without;
    }

    fn kernels(&mut self, rows: Option<Ahead<KernelRow>>) -> TraceResult<bool> {
        let Some(rows) = rows else {
            return Ok(false);
        };
        let cat = self.trace.categories.intern("kernel");
        self.drain(rows, |l, r| {
            let name = |l: &mut Self| l.string_id(r.name_id);
            if let Some(event) = l.gpu_event(&r.gpu, name, cat)? {
                let geometry = (r.grid, r.block, r.registers, r.shared_memory);
                l.kernel_args(event, &r.gpu, geometry)?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// CUDA graph executions: each a GPU activity named `CUDA graph <graphId>`.
    fn graphs(&mut self, rows: Option<Ahead<GraphRow>>) -> TraceResult<bool> {
        let Some(rows) = rows else {
            return Ok(false);
        };
        let cat = self.trace.categories.intern("kernel");
        self.drain(rows, |l, r| {
            let name = |l: &mut Self| l.intern(&format!("CUDA graph {}", r.graph_id));
            if let Some(event) = l.gpu_event(&r.gpu, name, cat)? {
                l.kernel_args(event, &r.gpu, ([0; 3], [0; 3], 0, 0))?;
                l.info.graph_executions += 1;
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// The event of a GPU row (kernel, graph, copy, set) on its `(device, stream)`
    /// track, named by `name`; `None` (and no name made) when its process is left out.
    fn gpu_event(
        &mut self,
        g: &GpuRow,
        name: impl FnOnce(&mut Self) -> TraceResult<StrId>,
        cat: CatId,
    ) -> TraceResult<Option<EventId>> {
        if self.skip(pid_tid(g.global_pid).0) {
            return Ok(None);
        }
        let name = name(self)?;
        let (track, corr) = self.gpu_place(g)?;
        self.push(g.start, g.end, name, cat, track, corr).map(Some)
    }

    /// The launch arguments of a kernel or graph event: grid, block, registers per
    /// thread and shared memory (no occupancy: nsys does not export it).
    fn kernel_args(
        &mut self,
        event: EventId,
        g: &GpuRow,
        (grid, block, registers, shared): ([u32; 3], [u32; 3], u32, u64),
    ) -> TraceResult<()> {
        let launch = KernelLaunch {
            device: g.device,
            stream: g.stream,
            grid,
            block,
            registers_per_thread: registers,
            shared_memory: shared,
            blocks_per_sm: None,
            warps_per_sm: None,
            est_achieved_occupancy_pct: None,
        };
        let t = &mut self.trace;
        let pushed = t
            .args
            .kernel
            .push_charged(KernelArgs { event, launch }, &mut t.charge);
        pushed.map_err(|e| self.oom(e))
    }

    /// An `ENUM_*` table as id → (name, label).
    fn enum_table(&mut self, table: &str) -> TraceResult<FxHashMap<i64, (String, String)>> {
        let mut out = FxHashMap::default();
        if !self.schema.has(table) {
            return Ok(out);
        }
        let sql = format!("SELECT id, substr(name, 1, 256), substr(label, 1, 256) FROM {table}");
        self.each_row(table, &sql, |_, r| {
            out.insert(
                int(r, 0),
                (
                    text(r, 1).unwrap_or_default(),
                    text(r, 2).unwrap_or_default(),
                ),
            );
            Ok(())
        })?;
        Ok(out)
    }

    fn transfer(&mut self, event: EventId, g: &GpuRow, bytes: i64) -> TraceResult<()> {
        self.grow_args(|a| &mut a.transfer)?;
        self.trace.args.transfer.push(TransferArgs {
            event,
            device: g.device,
            stream: g.stream,
            bytes: bytes.max(0) as u64,
        });
        Ok(())
    }

    fn memcpy(&mut self, rows: Option<Ahead<MemcpyRow>>) -> TraceResult<bool> {
        let Some(rows) = rows else {
            return Ok(false);
        };
        let opers = self.enum_table("ENUM_CUDA_MEMCPY_OPER")?;
        let kinds = self.enum_table("ENUM_CUDA_MEM_KIND")?;
        let cat = self.trace.categories.intern("gpu_memcpy");
        let mut names: FxHashMap<(i64, i64, i64), StrId> = FxHashMap::default();
        self.drain(rows, |l, r| {
            let name = |l: &mut Self| match names.get(&r.kind) {
                Some(&n) => Ok(n),
                None => {
                    let n = l.intern(&memcpy_name(&opers, &kinds, r.kind))?;
                    names.insert(r.kind, n);
                    Ok(n)
                }
            };
            match l.gpu_event(&r.gpu, name, cat)? {
                Some(event) => l.transfer(event, &r.gpu, r.bytes),
                None => Ok(()),
            }
        })?;
        Ok(true)
    }

    fn memset(&mut self, rows: Option<Ahead<MemsetRow>>) -> TraceResult<bool> {
        let Some(rows) = rows else {
            return Ok(false);
        };
        let kinds = self.enum_table("ENUM_CUDA_MEM_KIND")?;
        let cat = self.trace.categories.intern("gpu_memset");
        let mut names: FxHashMap<i64, StrId> = FxHashMap::default();
        self.drain(rows, |l, r| {
            let name = |l: &mut Self| match names.get(&r.mem_kind) {
                Some(&n) => Ok(n),
                None => {
                    let n = l.intern(&match kinds.get(&r.mem_kind) {
                        Some((_, label)) => format!("Memset ({label})"),
                        None => "Memset".to_owned(),
                    })?;
                    names.insert(r.mem_kind, n);
                    Ok(n)
                }
            };
            match l.gpu_event(&r.gpu, name, cat)? {
                Some(event) => l.transfer(event, &r.gpu, r.bytes),
                None => Ok(()),
            }
        })?;
        Ok(true)
    }

    fn sync(&mut self, rows: Option<Ahead<SyncRow>>) -> TraceResult<()> {
        let Some(rows) = rows else {
            return Ok(());
        };
        let types = self.enum_table("ENUM_CUPTI_SYNC_TYPE")?;
        let cat = self.trace.categories.intern("cuda_sync");
        let mut names: FxHashMap<i64, StrId> = FxHashMap::default();
        self.drain(rows, |l, r| {
            let g = &r.gpu;
            if l.skip(pid_tid(g.global_pid).0) {
                return Ok(());
            }
            let track = l.track(g.device, g.stream)?;
            let corr = l.correlation(process_key(g.global_pid), g.correlation);
            let name = match names.get(&r.sync_type) {
                Some(&n) => n,
                None => {
                    let kind = types.get(&r.sync_type).map(|(n, _)| n.as_str());
                    let n = l.intern(&sync_name(kind))?;
                    names.insert(r.sync_type, n);
                    n
                }
            };
            let event = l.push(g.start, g.end, name, cat, track, corr)?;
            l.grow_args(|a| &mut a.sync)?;
            l.trace.args.sync.push(SyncArgs {
                event,
                stream: g.stream,
            });
            Ok(())
        })
    }

    /// NVTX domain names (`NvtxDomainCreate` rows: domainId → text).
    fn nvtx_domains(&mut self, table: &str) -> TraceResult<FxHashMap<i64, String>> {
        let cols = columns(self.conn, table).map_err(self.err(table))?;
        let mut domains: FxHashMap<i64, String> = FxHashMap::default();
        let sql = format!(
            "SELECT {}, {}, {} FROM {table} WHERE eventType = {NVTX_DOMAIN_CREATE}",
            cols.or_null("domainId"),
            cols.text(),
            cols.or_null("textId"),
        );
        self.each_row(table, &sql, |l, r| {
            let name = match (text(r, 1), opt_int(r, 2)) {
                (Some(t), _) => t,
                (None, Some(id)) => {
                    let s = l.string_id(id)?;
                    l.trace.strings.get(s).to_owned()
                }
                (None, None) => String::new(),
            };
            domains.insert(int(r, 0), name);
            Ok(())
        })?;
        Ok(domains)
    }

    /// NVTX ranges; whether the table exists.
    fn nvtx(&mut self, rows: Option<Ahead<NvtxRow>>) -> TraceResult<bool> {
        let Some(rows) = rows else {
            return Ok(false);
        };
        let domains = self.nvtx_domains(&rows.table)?;
        let op_cat = self.trace.categories.intern("cpu_op");
        let range_cat = self.trace.categories.intern("user_annotation");
        self.range_cat = Some(range_cat);
        let mut by_text: FxHashMap<(i64, i64), (StrId, bool)> = FxHashMap::default();
        self.drain(rows, |l, r| {
            if r.event_type == NVTX_MARK {
                l.info.marks += 1;
                return Ok(());
            }
            let (name, is_op, seq, sizes) = match (r.text, r.text_id) {
                (Some(t), _) => l.range_name(&t, r.domain, &domains)?,
                (None, id) => {
                    let id = id.unwrap_or(-1);
                    match by_text.get(&(r.domain, id)) {
                        Some(&(n, op)) => (n, op, None, None),
                        None => {
                            let s = l.string_id(id)?;
                            let t = l.trace.strings.get(s).to_owned();
                            let steps = l.info.step_ranges_renamed;
                            let named = l.range_name(&t, r.domain, &domains)?;
                            // A step range gets a new number each time: never kept.
                            let step = l.info.step_ranges_renamed != steps;
                            if named.2.is_none() && named.3.is_none() && !step {
                                by_text.insert((r.domain, id), (named.0, named.1));
                            }
                            named
                        }
                    }
                }
            };
            let (pid, tid) = pid_tid(r.global_tid);
            if l.skip(pid) {
                return Ok(());
            }
            let track = l.track(pid, tid)?;
            let cat = if is_op { op_cat } else { range_cat };
            let event = l.push(r.start, r.end.unwrap_or(r.start), name, cat, track, 0)?;
            if r.end.is_none() {
                l.open_ranges.push(event);
            }
            if is_op && (seq.is_some() || sizes.is_some()) {
                l.op_args(event, seq, sizes)?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// The arguments of an `emit_nvtx` operator range: its sequence number and sizes.
    fn op_args(
        &mut self,
        event: EventId,
        seq: Option<i64>,
        sizes: Option<String>,
    ) -> TraceResult<()> {
        let input_dims = match sizes {
            Some(s) => self.intern(&s)?,
            None => StrId(0),
        };
        self.grow_args(|a| &mut a.op)?;
        self.trace.args.op.push(OpArgs {
            event,
            input_dims,
            input_types: StrId(0),
            input_strides: StrId(0),
            concrete_inputs: StrId(0),
            call_stack: StrId(0),
            module_hierarchy: StrId(0),
        });
        let t = &mut self.trace;
        let grown = t
            .args
            .op_sequence_number
            .grow_by(1, &mut t.charge)
            .and_then(|()| t.args.op_fwd_thread_id.grow_by(1, &mut t.charge));
        grown.map_err(|e| self.oom(e))?;
        self.trace.args.op_sequence_number.push(seq.unwrap_or(-1));
        self.trace.args.op_fwd_thread_id.push(-1);
        Ok(())
    }

    /// The event name of an NVTX range text: the operator of an `emit_nvtx` range
    /// (with its sequence number and sizes), `ProfilerStep#N` for `step N`, else the
    /// text, prefixed `domain:` outside the default domain.
    fn range_name(
        &mut self,
        text: &str,
        domain: i64,
        domains: &FxHashMap<i64, String>,
    ) -> TraceResult<(StrId, bool, Option<i64>, Option<String>)> {
        if let Some(op) = emit_nvtx(text) {
            let name = self.intern(op.op)?;
            return Ok((name, true, op.seq, op.sizes.map(str::to_owned)));
        }
        if let Some((_, next)) = self.step_range.as_mut().filter(|(n, _)| n == text) {
            let n = *next;
            *next += 1;
            self.info.step_ranges_renamed += 1;
            let name = self.intern(&format!("ProfilerStep#{n}"))?;
            return Ok((name, false, None, None));
        }
        if let Some(n) = step_number(text) {
            self.info.step_ranges_renamed += 1;
            let name = self.intern(&format!("ProfilerStep#{n}"))?;
            return Ok((name, false, None, None));
        }
        let name = match domains.get(&domain) {
            Some(d) if domain != 0 && !d.is_empty() => self.intern(&format!("{d}:{text}"))?,
            _ => self.intern(text)?,
        };
        Ok((name, false, None, None))
    }

    /// Process and thread names of the rows read.
    fn names_of_rows(&mut self) -> TraceResult<()> {
        let pids: FxHashSet<i64> = self.tracks.keys().map(|&(p, _)| p).collect();
        let key_process = self.intern("process_name")?;
        let key_thread = self.intern("thread_name")?;
        let mut process_names: FxHashMap<i64, String> = FxHashMap::default();
        if self.schema.has("PROCESSES") {
            self.each_row(
                "PROCESSES",
                "SELECT globalPid, substr(name, 1, 4096) FROM PROCESSES",
                |l, r| {
                    let pid = pid_tid(int(r, 0)).0;
                    let name = text(r, 1).unwrap_or_default();
                    if pids.contains(&pid) {
                        let v = l.intern(&name)?;
                        l.meta
                            .push((RawId::Int(pid), RawId::Int(0), key_process, v));
                    }
                    process_names.entry(pid).or_insert(name);
                    Ok(())
                },
            )?;
        }
        if self.schema.has("ThreadNames") {
            let threads: FxHashSet<(i64, i64)> = self.tracks.keys().copied().collect();
            self.each_row(
                "ThreadNames",
                "SELECT globalTid, nameId FROM ThreadNames",
                |l, r| {
                    let (pid, tid) = pid_tid(int(r, 0));
                    if threads.contains(&(pid, tid)) {
                        let v = l.string_id(int(r, 1))?;
                        l.meta
                            .push((RawId::Int(pid), RawId::Int(tid), key_thread, v));
                    }
                    Ok(())
                },
            )?;
        }
        self.info.gpu_processes = std::mem::take(&mut self.gpu_processes)
            .into_iter()
            .map(|(pid, devices)| NsysProcess {
                pid,
                name: process_names.get(&pid).cloned().unwrap_or_default(),
                devices: devices.into_iter().collect(),
            })
            .collect();
        Ok(())
    }

    fn finish(mut self) -> TraceResult<Trace> {
        let last = self.last_ns.max(0) + self.base_ns;
        for &e in &self.open_ranges {
            let i = e.index();
            let ts = self.trace.events.ts_ns[i];
            self.trace.events.dur_ns.set(i, (last - ts).max(0));
        }
        self.info.ranges_open_at_end = self.open_ranges.len() as u64;
        if self.step_range.is_none() && self.info.step_ranges_renamed == 0 {
            self.guess_steps();
        }
        // nsys traces CUDA only: NVIDIA whenever there is a device or CUDA activity.
        let cuda = !self.info.missing.contains(&NsysFeature::CudaTrace);
        self.trace.meta.gpu_vendor =
            (cuda || !self.trace.meta.devices.is_empty()).then_some(GpuVendor::Nvidia);
        // nsys has no operator ids: the column is all zeros, allocated zeroed at the end
        // so that its pages are never written (and never resident).
        let n = self.trace.events.len();
        let zeros = (n as u64).saturating_mul(4);
        if let Err(e) = self.trace.charge.take(zeros) {
            return Err(self.oom(e));
        }
        self.trace.events.external_id = NarrowColumn::zeros(n);
        self.trace.meta.nsys = Some(self.info);
        let path = self.path;
        let elements = n as u64;
        let mut b = TraceBuilder::new(self.trace);
        b.meta = self.meta;
        b.elements = elements;
        // No `External id`s: every call is linked by id (to none), so no repair.
        b.finish(false).map_err(|e| TraceError::OutOfMemory {
            path: path.to_owned(),
            offset: 0,
            needed: e.needed,
            in_use: e.in_use,
            limit: e.limit,
        })
    }
}

impl Loader<'_> {
    /// Without a range named as a step, offer the outermost repeating NVTX range (or
    /// the names that repeat side by side there) for `--nvtx-step`. Nothing is renamed:
    /// a guess taken as the step would judge every per-step number and rule on windows
    /// that may be one layer's call, not a training step.
    fn guess_steps(&mut self) {
        let Some(cat) = self.range_cat else {
            return;
        };
        let names = match outermost_repeating(&self.trace, cat) {
            StepGuess::None => return,
            StepGuess::One(name) => vec![name],
            StepGuess::Several(names) => names,
        };
        self.info.step_range_candidates = names
            .into_iter()
            .map(|n| self.trace.strings.get(n).to_owned())
            .collect();
    }
}

/// A runtime function name without its API version suffix (`cudaLaunchKernel_v7000` →
/// `cudaLaunchKernel`), as Kineto and `nsys stats` name it.
fn strip_version(name: &str) -> &str {
    match name.rfind("_v") {
        Some(i)
            if i > 0 && name.len() > i + 2 && name[i + 2..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            &name[..i]
        }
        _ => name,
    }
}

/// A memcpy's name as Kineto writes it: `Memcpy HtoD (Pageable -> Device)`.
fn memcpy_name(
    opers: &FxHashMap<i64, (String, String)>,
    kinds: &FxHashMap<i64, (String, String)>,
    (oper, src, dst): (i64, i64, i64),
) -> String {
    let dir = match opers.get(&oper) {
        Some((name, _)) => name
            .strip_prefix("CUDA_MEMCPY_KIND_")
            .unwrap_or(name)
            .replace("TO", "to"),
        None => oper.to_string(),
    };
    match (kinds.get(&src), kinds.get(&dst)) {
        (Some((_, s)), Some((_, d))) => format!("Memcpy {dir} ({s} -> {d})"),
        _ => format!("Memcpy {dir}"),
    }
}

/// A synchronisation's name as Kineto writes it (`Stream Sync`, `Event Sync`, `Context
/// Sync`, `Stream Wait Event`).
fn sync_name(kind: Option<&str>) -> String {
    match kind.and_then(|k| k.strip_prefix("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_")) {
        Some("EVENT_SYNCHRONIZE") => "Event Sync".into(),
        Some("STREAM_WAIT_EVENT") => "Stream Wait Event".into(),
        Some("STREAM_SYNCHRONIZE") => "Stream Sync".into(),
        Some("CONTEXT_SYNCHRONIZE") => "Context Sync".into(),
        _ => "Unknown Sync".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(strip_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(strip_version("cudaMalloc"), "cudaMalloc");
        assert_eq!(strip_version("my_var_v"), "my_var_v");
        assert_eq!(
            sync_name(Some(
                "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE"
            )),
            "Stream Sync"
        );
        let mut opers = FxHashMap::default();
        opers.insert(
            1,
            (
                "CUDA_MEMCPY_KIND_HTOD".to_owned(),
                "Host-to-Device".to_owned(),
            ),
        );
        let mut kinds = FxHashMap::default();
        kinds.insert(0, (String::new(), "Pageable".to_owned()));
        kinds.insert(2, (String::new(), "Device".to_owned()));
        assert_eq!(
            memcpy_name(&opers, &kinds, (1, 0, 2)),
            "Memcpy HtoD (Pageable -> Device)"
        );
        assert_eq!(memcpy_name(&opers, &kinds, (9, -1, -1)), "Memcpy 9");
    }

    #[test]
    fn global_ids() {
        assert_eq!(pid_tid(322884501241856 + 5), (2468200, 5));
    }
}
