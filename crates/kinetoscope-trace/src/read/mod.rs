//! Readers: Kineto traces ([`read_trace`], [`read_trace_bytes`], [`read_trace_from`]),
//! CUDA memory snapshots ([`read_snapshot`]), memory timelines
//! ([`read_memory_timeline`]), cProfile / pstats files ([`read_pstats`]), key_averages tables
//! ([`read_key_averages`]), each from a file, bytes in memory or a stream, plain or
//! gzip (detected by content); any input by its content ([`sniff_path`] then
//! [`Sniffed::read`]). Opening folders is the engine's (`kinetoscope-engine::input`).

mod block16;
mod builder;
mod detect;
mod devices;
mod event;
mod header;
pub mod key_averages;
mod kineto;
pub mod lexer;
pub mod nsys;
pub mod pickle;
mod plain_number;
pub mod pstats;
mod segment;
mod sniff;
pub mod spans;
mod timeline;
mod timeline_rows;
mod toplevel;
mod window;

pub use detect::ContentKind;
pub use key_averages::{key_averages_from_bytes, read_key_averages};
pub use nsys::{
    export_command, gpu_processes, is_nsys_report, is_sqlite, process_path, read_nsys,
    read_nsys_report, split_process_path,
};
pub use pickle::{read_snapshot, snapshot_from_bytes, snapshot_from_reader};
pub use pstats::{pstats_from_bytes, pstats_from_reader, read_pstats};
pub use sniff::{sniff_bytes, sniff_path, sniff_reader, Loaded, Sniffed};
pub use timeline::{read_memory_timeline, timeline_from_bytes, timeline_from_reader};

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::model::{MemoryBudget, Trace};
use crate::TraceResult;

/// The default element cap ([`ReadOptions::max_element_bytes`]): 64 MiB.
pub const DEFAULT_MAX_ELEMENT_BYTES: u64 = 64 << 20;

/// A callback told how many bytes of the file have been read so far.
pub type ProgressFn = Arc<dyn Fn(u64) + Send + Sync>;

/// How to read.
#[derive(Clone)]
pub struct ReadOptions {
    /// Turn the first defect into an error instead of skipping and counting it.
    pub strict: bool,
    /// Worker threads for parsing one file.
    pub threads: usize,
    /// Progress callback (bytes of the file read).
    pub progress: Option<ProgressFn>,
    /// Memory-map plain (not gzip) JSON files and parse them in place, instead of
    /// reading them through `read()` into blocks. On by default: it saves a copy of
    /// every byte. The risk: if another process truncates the file while it is mapped,
    /// touching the pages past the new end raises SIGBUS, which kills the whole process
    /// (Rust cannot turn it into an error). With `mmap` off, a file truncated or
    /// rewritten while it is read gives what `read()` returns: a truncated tail (a
    /// [`crate::DefectKind::TruncatedTail`] defect, or an error with `strict`), a
    /// malformed event, or an I/O error — never a signal. Turn it off where files may
    /// change under the reader (a server reading files it does not own).
    pub mmap: bool,
    /// The largest single element of the event array, or value of a top-level key, that
    /// is read (default [`DEFAULT_MAX_ELEMENT_BYTES`]). A larger one is streamed past
    /// without being kept and counted as [`crate::DefectKind::Oversized`]; with
    /// `strict`, it is an error naming the file and its byte offset. Whitespace and the
    /// values of top-level keys the reader does not use are never kept, whatever
    /// their size.
    pub max_element_bytes: u64,
    /// What the models read may hold in memory, shared by every read given a clone of
    /// these options (the default is [`crate::default_limit`]). Growth is reserved
    /// fallibly and taken from the budget first: running out is
    /// [`crate::TraceError::OutOfMemory`], never an abort.
    pub budget: MemoryBudget,
    /// Nsight Systems exports: the NVTX range name that marks a step. Its instances
    /// become `ProfilerStep#0`, `#1`, … in start order, as `step N` ranges do by
    /// themselves. Kineto traces ignore it.
    pub nvtx_step: Option<String>,
    /// Keep the traces read from files in a cache folder and read them back from there
    /// while the file is unchanged (`crate::cache`, `docs/cache.md`). Off by default;
    /// front ends set it from [`crate::cache::CacheOptions::from_env`].
    pub cache: Option<crate::cache::CacheOptions>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            strict: false,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            progress: None,
            mmap: true,
            max_element_bytes: DEFAULT_MAX_ELEMENT_BYTES,
            budget: MemoryBudget::default(),
            nvtx_step: None,
            cache: None,
        }
    }
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("strict", &self.strict)
            .field("threads", &self.threads)
            .field("mmap", &self.mmap)
            .field("max_element_bytes", &self.max_element_bytes)
            .field("budget", &self.budget)
            .field("nvtx_step", &self.nvtx_step)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// Read one Kineto Chrome trace file (`.json`, or gzip-compressed JSON whatever the
/// file is called).
pub fn read_trace(path: &Path, opts: &ReadOptions) -> TraceResult<Trace> {
    if split_process_path(path).is_some() {
        let source = crate::cache::source_file(path);
        return crate::cache::through(path, source.as_ref(), opts, || read_nsys(path, opts));
    }
    if is_nsys_report(path) && path.is_file() {
        return read_nsys_report(path, opts);
    }
    sniff_path(path)?.read_trace(opts)
}

/// Read a Kineto trace held in memory (plain or gzip), parsing plain JSON in place;
/// `name` is used in messages and as the trace's path.
pub fn read_trace_bytes(name: &Path, bytes: &[u8], opts: &ReadOptions) -> TraceResult<Trace> {
    sniff_bytes(name, bytes)?.read_trace(opts)
}

/// Read a Kineto trace from a stream (a socket, an upload; plain or gzip), in bounded
/// memory; `name` is used in messages and as the trace's path. The progress callback
/// is told the bytes read from `reader`.
pub fn read_trace_from(
    name: &Path,
    reader: impl Read + Send,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    sniff_reader(name, reader)?.read_trace(opts)
}

/// Read into `buf` until it is full or the input ends; returns how many bytes were read
/// and whether the input ended with `UnexpectedEof` (a gzip stream cut short: what was
/// inflated is kept, and the JSON reader reports the truncated tail).
pub(crate) fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<(usize, bool)> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok((n, true)),
            Err(e) => return Err(e),
        }
    }
    Ok((n, false))
}

/// A byte count for messages: `512 B`, `64 MiB`, `1.5 GiB`.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}
