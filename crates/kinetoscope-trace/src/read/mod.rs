//! Readers: Kineto traces ([`read_trace`], [`read_trace_bytes`], [`read_trace_from`]),
//! CUDA memory snapshots ([`read_snapshot`]), memory timelines
//! ([`read_memory_timeline`]), each from a file, bytes in memory or a stream, plain or
//! gzip (detected by content); any input by its content ([`sniff_path`] then
//! [`Sniffed::read`]). Opening folders is the engine's (`kinetoscope-engine::input`).

mod builder;
mod detect;
mod devices;
mod event;
mod header;
mod kineto;
pub mod lexer;
pub mod pickle;
mod segment;
mod sniff;
mod timeline;

pub use detect::ContentKind;
pub use pickle::{read_snapshot, snapshot_from_bytes, snapshot_from_reader};
pub use sniff::{sniff_bytes, sniff_path, sniff_reader, Loaded, Sniffed};
pub use timeline::{read_memory_timeline, timeline_from_bytes, timeline_from_reader};

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::model::Trace;
use crate::TraceResult;

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
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            strict: false,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            progress: None,
            mmap: true,
        }
    }
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("strict", &self.strict)
            .field("threads", &self.threads)
            .field("mmap", &self.mmap)
            .finish_non_exhaustive()
    }
}

/// Read one Kineto Chrome trace file (`.json`, or gzip-compressed JSON whatever the
/// file is called).
pub fn read_trace(path: &Path, opts: &ReadOptions) -> TraceResult<Trace> {
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
