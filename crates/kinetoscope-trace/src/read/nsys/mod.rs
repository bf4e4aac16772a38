//! Nsight Systems exports (`nsys export --type sqlite`) read into the same [`Trace`] as a
//! Kineto trace, so that every view works on them.
//!
//! The file is opened read-only and immutable (`file:…?mode=ro&immutable=1`): SQLite
//! takes no lock, writes no journal and never changes the file or its mtime.
//!
//! What becomes what:
//!
//! | export table | model |
//! |---|---|
//! | `CUPTI_ACTIVITY_KIND_KERNEL` | `kernel` events on the `(device, stream)` track, name from `shortName`, [`KernelArgs`] |
//! | `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` | `kernel` events named `CUDA graph <graphId>` (a graph launch's whole device time) |
//! | `CUPTI_ACTIVITY_KIND_MEMCPY` / `_MEMSET` | `gpu_memcpy` / `gpu_memset` named as Kineto names them (`Memcpy HtoD (Pageable -> Device)`), [`TransferArgs`] |
//! | `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` | `cuda_sync` (`Stream Sync`, …) |
//! | `CUPTI_ACTIVITY_KIND_RUNTIME` / `_DRIVER` | `cuda_runtime` / `cuda_driver` on the `(pid, tid)` thread, the `_v7000` suffix dropped |
//! | `NVTX_EVENTS` push/pop and start/end ranges | `cpu_op` for `emit_nvtx` operator ranges, else `user_annotation`; `step N` renamed `ProfilerStep#N` |
//! | `TARGET_INFO_GPU` (+ `TARGET_INFO_CUDA_DEVICE`) | [`DeviceInfo`] of the CUDA devices |
//! | `PROCESSES`, `ThreadNames` | process and thread names |
//!
//! CUPTI correlation ids are numbered per process, so the model's correlation is the
//! process's number (in order of first sight) above CUPTI's 32-bit id: a kernel links
//! to the runtime call of its own process, and the first process keeps CUPTI's ids.
//!
//! The activity tables are read ahead, each on its own connection and thread
//! (`prefetch.rs`), while the loader builds the model from the rows before.
//! Times are nanoseconds on the capture's clock plus
//! `TARGET_INFO_SESSION_START_TIME.utcEpochNs`.
//!
//! Never read: `META_DATA_CAPTURE`, `TARGET_INFO_SYSTEM_ENV`, and any `StringIds` row
//! that no name column refers to — they hold the traced processes' environment.

mod nvtx;
mod prefetch;
mod report;
mod rows;
mod step_guess;
mod tables;

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::ReadOptions;
use crate::model::Trace;
use crate::{TraceError, TraceResult};

/// The first bytes of every SQLite 3 database.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Whether `head` starts like an SQLite 3 database (its first 16 bytes).
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(SQLITE_MAGIC)
}

/// Whether `path` is an Nsight Systems report that must be exported first
/// (`.nsys-rep`, or `.qdrep` before nsys 2021.4): judged by name, as the format is
/// NVIDIA's own.
pub fn is_nsys_report(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.ends_with(".nsys-rep") || name.ends_with(".qdrep")
}

/// The command that exports an Nsight Systems report to the SQLite file kinetoscope
/// reads: `nsys export --type sqlite --output NAME.sqlite NAME.nsys-rep`.
pub fn export_command(report: &Path) -> String {
    let sqlite = report.with_extension("sqlite");
    format!(
        "nsys export --type sqlite --output {} {}",
        sqlite.display(),
        report.display()
    )
}

/// Read an Nsight Systems report (`.nsys-rep`, `.qdrep`): exported with the `nsys` on
/// `PATH` into kinetoscope's cache folder (`$XDG_CACHE_HOME/kinetoscope/nsys`, else
/// `~/.cache/kinetoscope/nsys`; an export of the same report is reused), never beside
/// the report, then read like any export ([`NsysInfo::exported_to`] says where).
/// Without `nsys`, [`TraceError::NsysReport`] gives the export command.
///
/// [`NsysInfo::exported_to`]: crate::model::NsysInfo::exported_to
pub fn read_nsys_report(path: &Path, opts: &ReadOptions) -> TraceResult<Trace> {
    let sqlite = report::exported(path)?;
    let mut trace = read_nsys(&sqlite, opts)?;
    trace.path = path.to_owned();
    if let Some(info) = trace.meta.nsys.as_mut() {
        info.exported_to = Some(sqlite.display().to_string());
    }
    Ok(trace)
}

/// Read an Nsight Systems SQLite export into a [`Trace`]; given a process path
/// ([`process_path`]), only that process's rows, as one rank.
pub fn read_nsys(path: &Path, opts: &ReadOptions) -> TraceResult<Trace> {
    let (file, only) = match split_process_path(path) {
        Some((file, pid)) => (file, Some(pid)),
        None => (path.to_owned(), None),
    };
    let conn = open(&file)?;
    if !tables::is_nsys(&conn).map_err(|e| sql_error(&file, "sqlite_master", e))? {
        return Err(TraceError::NotA {
            path: file,
            expected: "Nsight Systems export",
            why: "an SQLite database without the nsys tables (StringIds, TARGET_INFO_*)".into(),
        });
    }
    let mut trace = tables::load(&file, &conn, opts, only)?;
    trace.path = path.to_owned();
    Ok(trace)
}

/// The separator between an export's path and a process id in a process path.
const PROCESS_MARK: &str = "#pid";

/// The path that stands for one process of an export (`run.sqlite#pid466`): read by
/// [`read_nsys`] (and [`crate::read::read_trace`]) as that process alone, one rank.
pub fn process_path(export: &Path, pid: i64) -> std::path::PathBuf {
    let mut s = export.as_os_str().to_owned();
    s.push(format!("{PROCESS_MARK}{pid}"));
    s.into()
}

/// The export and the process of a path made by [`process_path`]; `None` for any
/// other path (including a file that exists under that very name).
pub fn split_process_path(path: &Path) -> Option<(std::path::PathBuf, i64)> {
    let s = path.to_str()?;
    let (file, pid) = s.rsplit_once(PROCESS_MARK)?;
    let pid: i64 = pid.parse().ok().filter(|p| *p >= 0)?;
    if path.exists() {
        return None;
    }
    Some((file.into(), pid))
}

/// The processes of an export that ran GPU work (kernels, graphs, copies, sets), by
/// their first device then pid: one rank each, in this order.
pub fn gpu_processes(path: &Path) -> TraceResult<Vec<i64>> {
    let conn = open(path)?;
    tables::gpu_processes(&conn).map_err(|e| sql_error(path, "CUPTI_ACTIVITY_KIND_*", e))
}

/// Open `path` read-only and immutable: no lock, no journal, no write of any kind.
fn open(path: &Path) -> TraceResult<Connection> {
    connect(path).map_err(|e| sql_error(path, "(open)", e))
}

/// [`open`] with SQLite's own error.
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(file_uri(path), flags)
}

/// `file:` URI of a path with `mode=ro&immutable=1`; characters that a URI gives a
/// meaning to are percent-encoded.
fn file_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut uri = String::from("file:");
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' | b'&' | b'=' => uri.push_str(&format!("%{b:02X}")),
            0x20..=0x7e => uri.push(b as char),
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    uri
}

/// An SQLite failure as a read error naming the file and the table.
fn sql_error(path: &Path, table: &str, e: rusqlite::Error) -> TraceError {
    TraceError::NotA {
        path: path.to_owned(),
        expected: "readable Nsight Systems export",
        why: format!("table {table}: {e}"),
    }
}
