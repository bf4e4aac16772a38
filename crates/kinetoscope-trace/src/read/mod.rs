//! Readers: one Kineto trace file ([`read_trace`]) or bytes in memory
//! ([`read_trace_bytes`]), CUDA memory snapshots, memory timelines, and what the files of
//! an input folder are by name.

mod builder;
mod detect;
mod event;
mod header;
mod inputs;
mod kineto;
pub mod lexer;
pub mod pickle;
mod segment;
pub mod timeline;

pub use detect::ContentKind;
pub use inputs::*;
pub use pickle::{is_snapshot_file, read_snapshot, snapshot_from_bytes};
pub use timeline::{
    is_memory_timeline_file, read_memory_timeline, MemoryTimeline, TimelineFormat,
    TIMELINE_CATEGORIES,
};

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use crate::model::Trace;
use crate::{TraceError, TraceResult};

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
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            strict: false,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            progress: None,
        }
    }
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("strict", &self.strict)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// Counts the bytes read from the file for progress reporting.
struct Counting<R> {
    inner: R,
    done: u64,
    progress: Option<ProgressFn>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if let Some(p) = &self.progress {
            p(self.done);
        }
        Ok(n)
    }
}

/// Read one Kineto Chrome trace (`.json`, or gzip-compressed JSON whatever the file is
/// called).
pub fn read_trace(path: &Path, opts: &ReadOptions) -> TraceResult<Trace> {
    let io_err = |e: std::io::Error| TraceError::Io {
        path: path.to_owned(),
        source: e,
    };
    let file = File::open(path).map_err(io_err)?;
    let file_bytes = file.metadata().map_err(io_err)?.len();
    let mut head = [0u8; 64];
    let n = read_head(&mut &file, &mut head).map_err(io_err)?;
    if ContentKind::sniff(&head[..n]) == ContentKind::Json && file_bytes > 0 {
        // Plain JSON: map the file and parse it in place (no copy through read()); the
        // pages already parsed are dropped from the resident set as the reader advances.
        // SAFETY: the mapping is only read. If another process truncates the file while
        // it is mapped, reading past the new end faults, as with any mmap-based reader
        // (ripgrep makes the same trade).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        let _ = map.advise(memmap2::Advice::Sequential);
        let release = |upto: usize| {
            let page = 4096;
            let len = upto / page * page;
            if len > 0 {
                // SAFETY: DONTNEED on a read-only file mapping only drops resident
                // pages; a later read faults them back in from the page cache.
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, len)
                };
            }
        };
        let trace = new_trace(path, file_bytes, false);
        return kineto::read_contiguous(path, &map, &release, trace, opts);
    }
    let open = || -> std::io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(BufReader::with_capacity(
            1 << 20,
            File::open(path)?,
        )))
    };
    read_from(path, file_bytes, &open, opts)
}

fn new_trace(path: &Path, file_bytes: u64, gzip: bool) -> Trace {
    let mut trace = Trace {
        path: path.to_owned(),
        strings: crate::model::StringTable::new(),
        ..Trace::default()
    };
    trace.report.file_bytes = file_bytes;
    trace.report.gzip = gzip;
    trace
}

/// Read a trace held in memory (for example one embedded in the binary); `name` is used
/// in messages and as the trace's path.
pub fn read_trace_bytes(name: &Path, bytes: &[u8], opts: &ReadOptions) -> TraceResult<Trace> {
    let open = || -> std::io::Result<Box<dyn Read + Send + '_>> { Ok(Box::new(bytes)) };
    read_from(name, bytes.len() as u64, &open, opts)
}

type Opener<'a> = &'a dyn Fn() -> std::io::Result<Box<dyn Read + Send + 'a>>;

fn read_from(
    path: &Path,
    file_bytes: u64,
    open: Opener<'_>,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    let io_err = |e: std::io::Error| TraceError::Io {
        path: path.to_owned(),
        source: e,
    };
    let mut head = [0u8; 64];
    let n = read_head(&mut open().map_err(io_err)?, &mut head).map_err(io_err)?;
    let mut kind = ContentKind::sniff(&head[..n]);
    let counting = Counting {
        inner: open().map_err(io_err)?,
        done: 0,
        progress: opts.progress.clone(),
    };
    let gzip = kind == ContentKind::Gzip;
    let input: Box<dyn Read + Send + '_> = if gzip {
        let mut dec = flate2::read::MultiGzDecoder::new(open().map_err(io_err)?);
        let mut inner_head = [0u8; 64];
        let m = read_head(&mut dec, &mut inner_head).map_err(io_err)?;
        kind = ContentKind::sniff(&inner_head[..m]);
        Box::new(flate2::read::MultiGzDecoder::new(counting))
    } else {
        Box::new(counting)
    };
    if kind != ContentKind::Json {
        let what = if gzip {
            format!("gzip-compressed {}", kind.describe())
        } else {
            kind.describe().to_owned()
        };
        return Err(TraceError::NotATrace {
            path: path.to_owned(),
            looks_like: what,
        });
    }
    kineto::read_kineto(path, input, new_trace(path, file_bytes, gzip), opts)
}

fn read_head(r: &mut impl Read, head: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match r.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
