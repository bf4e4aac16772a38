//! Opening an input once: a file, bytes in memory or a stream is opened, its first bytes
//! read (gzip inflated) and classified ([`ContentKind`]), and the reader for that kind
//! continues from there, so nothing is opened, inflated or classified twice.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::detect::{ContentKind, Magic};
use super::{key_averages, kineto, nsys, pickle, pstats, timeline, ProgressFn, ReadOptions};
use crate::cache;
use crate::model::{
    grow, Charge, KeyAveragesTable, MemoryError, MemoryTimeline, PstatsProfile, StringTable, Trace,
};
use crate::snapshot::Snapshot;
use crate::{TraceError, TraceResult};

/// Bytes of (decompressed) text read to classify an input.
const HEAD: usize = 64 << 10;
/// Buffer under a gzip decoder reading a file.
const GZ_BUF: usize = 1 << 20;

/// An input opened and classified by its content, ready to be read by the reader for
/// its kind ([`Sniffed::read`], or [`Sniffed::read_trace`] and its siblings) without
/// being opened or classified again. Made by [`sniff_path`], [`sniff_bytes`] or
/// [`sniff_reader`]; `'a` is the lifetime of borrowed bytes or of a borrowed reader.
pub struct Sniffed<'a> {
    path: PathBuf,
    kind: ContentKind,
    gzip: bool,
    /// Bytes of the input as stored (compressed for gzip), when known before reading.
    stored_bytes: Option<u64>,
    body: Body<'a>,
    meter: Arc<Meter>,
    /// The regular file read (another handle on the one opening), for the cache.
    source: Option<File>,
}

impl std::fmt::Debug for Sniffed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sniffed")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("gzip", &self.gzip)
            .field("stored_bytes", &self.stored_bytes)
            .finish_non_exhaustive()
    }
}

/// Where the content continues after the head.
enum Body<'a> {
    /// A plain file, positioned after `head`, its first bytes.
    File { file: File, head: Vec<u8> },
    /// Plain bytes in memory.
    Bytes(&'a [u8]),
    /// The (decompressed) text as a stream: `head` was read from it and `rest` follows;
    /// `cut` when the stream already ended early (`UnexpectedEof`) inside the head.
    Stream {
        head: Vec<u8>,
        rest: Box<dyn Read + Send + 'a>,
        cut: bool,
    },
}

/// One input read by kinetoscope, by kind.
#[derive(Debug)]
pub enum Loaded {
    /// A Kineto trace.
    Trace(Box<Trace>),
    /// A CUDA memory snapshot.
    Snapshot(Box<Snapshot>),
    /// A profiler memory timeline.
    MemoryTimeline(MemoryTimeline),
}

/// Bytes of the stored input read so far, and the progress callback to tell, set when
/// reading starts (after the head was read).
#[derive(Default)]
struct Meter {
    done: AtomicU64,
    progress: OnceLock<ProgressFn>,
}

/// Counts the bytes read from the stored input for progress reporting.
struct Counting<R> {
    inner: R,
    meter: Arc<Meter>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let done = self.meter.done.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if let Some(p) = self.meter.progress.get() {
            p(done);
        }
        Ok(n)
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> TraceError + '_ {
    move |source| TraceError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Read up to `limit` bytes, fewer only when the input ends; returns them and whether
/// the input ended early with `UnexpectedEof` (a gzip stream cut short: what was
/// inflated is kept, and nothing more is read).
fn fill(r: &mut impl Read, limit: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut buf = vec![0; limit];
    let (n, cut) = super::read_up_to(r, &mut buf)?;
    buf.truncate(n);
    Ok((buf, cut))
}

/// Open the file at `path` once, read its first bytes (inflating gzip) and classify it.
/// Anything but a regular file (a FIFO, a character device, `/dev/stdin`) is read as a
/// stream, from this one opening, with the same caps.
pub fn sniff_path(path: &Path) -> TraceResult<Sniffed<'static>> {
    let io = io_error(path);
    let mut file = File::open(path).map_err(&io)?;
    let meta = file.metadata().map_err(&io)?;
    if !meta.is_file() {
        return sniff_reader(path, file);
    }
    let len = meta.len();
    let source = file.try_clone().ok();
    let (head, _) = fill(&mut file, HEAD).map_err(&io)?;
    if Magic::of(&head) == Magic::Gzip {
        let raw = Cursor::new(head).chain(BufReader::with_capacity(GZ_BUF, file));
        let mut sniffed = sniff_gzip(path, Box::new(raw), Some(len))?;
        sniffed.source = source;
        return Ok(sniffed);
    }
    Ok(Sniffed {
        source,
        path: path.to_owned(),
        kind: ContentKind::of_text(&head),
        gzip: false,
        stored_bytes: Some(len),
        meter: Arc::new(Meter::default()),
        body: Body::File { file, head },
    })
}

/// Classify bytes held in memory (plain or gzip); `name` is used in messages and as the
/// path of what is read.
pub fn sniff_bytes<'a>(name: &Path, bytes: &'a [u8]) -> TraceResult<Sniffed<'a>> {
    let head = &bytes[..bytes.len().min(HEAD)];
    if Magic::of(head) == Magic::Gzip {
        return sniff_gzip(name, Box::new(bytes), Some(bytes.len() as u64));
    }
    Ok(Sniffed {
        path: name.to_owned(),
        kind: ContentKind::of_text(head),
        gzip: false,
        stored_bytes: Some(bytes.len() as u64),
        meter: Arc::new(Meter::default()),
        body: Body::Bytes(bytes),
        source: None,
    })
}

/// Classify a stream (a socket, an upload; plain or gzip) from its first bytes; `name`
/// is used in messages and as the path of what is read.
pub fn sniff_reader<'a>(name: &Path, reader: impl Read + Send + 'a) -> TraceResult<Sniffed<'a>> {
    let mut reader = reader;
    let (head, cut) = fill(&mut reader, HEAD).map_err(io_error(name))?;
    let raw = Cursor::new(head).chain(reader);
    if Magic::of(raw.get_ref().0.get_ref()) == Magic::Gzip {
        return sniff_gzip(name, Box::new(raw), None);
    }
    let (head, rest) = raw.into_inner();
    let head = head.into_inner();
    let meter = Arc::new(Meter::default());
    meter.done.store(head.len() as u64, Ordering::Relaxed);
    Ok(Sniffed {
        path: name.to_owned(),
        kind: ContentKind::of_text(&head),
        gzip: false,
        stored_bytes: None,
        body: Body::Stream {
            head,
            rest: Box::new(Counting {
                inner: rest,
                meter: Arc::clone(&meter),
            }),
            cut,
        },
        meter,
        source: None,
    })
}

/// Inflate the head of gzip data (`raw` from its first byte) and classify it.
fn sniff_gzip<'a>(
    name: &Path,
    raw: Box<dyn Read + Send + 'a>,
    stored_bytes: Option<u64>,
) -> TraceResult<Sniffed<'a>> {
    let meter = Arc::new(Meter::default());
    let mut rest = flate2::read::MultiGzDecoder::new(Counting {
        inner: raw,
        meter: Arc::clone(&meter),
    });
    let (head, cut) = fill(&mut rest, HEAD).map_err(io_error(name))?;
    Ok(Sniffed {
        path: name.to_owned(),
        kind: ContentKind::of_text(&head),
        gzip: true,
        stored_bytes,
        body: Body::Stream {
            head,
            rest: Box::new(rest),
            cut,
        },
        meter,
        source: None,
    })
}

impl<'a> Sniffed<'a> {
    /// The file, or the name given for bytes or a stream.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the content is.
    pub fn kind(&self) -> ContentKind {
        self.kind
    }

    /// Whether the input is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Read the input with the reader for its kind: a snapshot, a memory timeline, or
    /// else a Kineto trace (which refuses what is not one, saying what it looks like).
    pub fn read(self, opts: &ReadOptions) -> TraceResult<Loaded> {
        Ok(match self.kind {
            ContentKind::Snapshot => Loaded::Snapshot(Box::new(self.read_snapshot(opts)?)),
            ContentKind::MemoryTimeline => Loaded::MemoryTimeline(self.read_memory_timeline(opts)?),
            _ => Loaded::Trace(Box::new(self.read_trace(opts)?)),
        })
    }

    /// Read the input as a Kineto trace. Other kinds are refused with
    /// [`TraceError::NotATrace`] saying what they look like; JSON that is not a trace is
    /// refused by the Kineto reader, which names the structure it found.
    pub fn read_trace(mut self, opts: &ReadOptions) -> TraceResult<Trace> {
        let source = self.source.take();
        let path = self.path.clone();
        cache::through(&path, source.as_ref(), opts, || self.parse_trace(opts))
    }

    /// [`Sniffed::read_trace`] without the cache.
    fn parse_trace(self, opts: &ReadOptions) -> TraceResult<Trace> {
        match self.kind {
            ContentKind::KinetoTrace | ContentKind::MemoryTimeline | ContentKind::OtherJson => {}
            ContentKind::NsysExport if !self.gzip => {
                return match self.body {
                    Body::File { .. } => nsys::read_nsys(&self.path, opts),
                    _ => Err(TraceError::NotA {
                        path: self.path,
                        expected: "Kineto Chrome trace",
                        why: "an SQLite database (an Nsight Systems export?) is read from a \
                              file on disk, not from bytes or a stream"
                            .into(),
                    }),
                };
            }
            _ if nsys::is_nsys_report(&self.path) => {
                return Err(TraceError::NsysReport {
                    command: nsys::export_command(&self.path),
                    path: self.path,
                });
            }
            other => {
                let what = other.describe();
                return Err(TraceError::NotATrace {
                    path: self.path,
                    looks_like: if self.gzip {
                        format!("gzip-compressed {what}")
                    } else {
                        what.to_owned()
                    },
                });
            }
        }
        let path = self.path.as_path();
        let mut trace = Trace {
            path: path.to_owned(),
            strings: StringTable::new(),
            ..Trace::default()
        };
        trace.report.file_bytes = self.stored_bytes.unwrap_or(0);
        trace.report.gzip = self.gzip;
        let meter = self.meter;
        if let Some(p) = &opts.progress {
            let _ = meter.progress.set(Arc::clone(p));
        }
        let mut trace = match self.body {
            Body::File { file, head } => match mapped(&file, opts) {
                Some(map) => read_mapped(path, &map, trace, opts)?,
                None => {
                    meter.done.store(head.len() as u64, Ordering::Relaxed);
                    let rest = Counting {
                        inner: file,
                        meter: Arc::clone(&meter),
                    };
                    kineto::read_kineto(path, Box::new(Cursor::new(head).chain(rest)), trace, opts)?
                }
            },
            Body::Bytes(bytes) => kineto::read_contiguous(path, bytes, &|_| {}, trace, opts)?,
            Body::Stream { head, rest, cut } => {
                let rest: Box<dyn Read + Send + 'a> = if cut {
                    Box::new(std::io::empty())
                } else {
                    rest
                };
                kineto::read_kineto(path, Box::new(Cursor::new(head).chain(rest)), trace, opts)?
            }
        };
        if self.stored_bytes.is_none() {
            trace.report.file_bytes = meter.done.load(Ordering::Relaxed);
        }
        Ok(trace)
    }

    /// Read the input as a CUDA caching-allocator snapshot (a `_dump_snapshot` pickle).
    /// The pickle is held whole: its bytes are taken from `opts.budget` first.
    pub fn read_snapshot(self, opts: &ReadOptions) -> TraceResult<Snapshot> {
        if self.kind != ContentKind::Snapshot {
            return Err(TraceError::NotA {
                path: self.path,
                expected: "CUDA memory snapshot",
                why: format!("the content looks like {}", self.kind.describe()),
            });
        }
        let mut charge = Charge::new(&opts.budget);
        let limit = pickle::limits::MAX_INPUT_BYTES;
        let data = whole(&self.path, self.body, limit, &mut charge)?;
        pickle::decode(&self.path, data, self.gzip, &mut charge)
    }

    /// Read the input as a cProfile / profile statistics file (marshal). The file is
    /// held whole: its bytes are taken from `opts.budget` first.
    pub fn read_pstats(self, opts: &ReadOptions) -> TraceResult<PstatsProfile> {
        if self.kind != ContentKind::Pstats {
            return Err(TraceError::NotA {
                path: self.path,
                expected: "cProfile/pstats file",
                why: format!("the content looks like {}", self.kind.describe()),
            });
        }
        let mut charge = Charge::new(&opts.budget);
        let limit = pstats::limits::MAX_INPUT_BYTES;
        let data = whole(&self.path, self.body, limit, &mut charge)?;
        pstats::decode(&self.path, data, &mut charge)
    }

    /// Read the input as a PyTorch key_averages table (text). The file is held whole:
    /// its bytes, and the rows while they are read, are taken from `opts.budget` first.
    pub fn read_key_averages(self, opts: &ReadOptions) -> TraceResult<KeyAveragesTable> {
        if self.kind != ContentKind::KeyAveragesTable {
            return Err(TraceError::NotA {
                path: self.path,
                expected: "key_averages table",
                why: format!("the content looks like {}", self.kind.describe()),
            });
        }
        let mut charge = Charge::new(&opts.budget);
        let limit = key_averages::limits::MAX_INPUT_BYTES;
        let data = whole(&self.path, self.body, limit, &mut charge)?;
        key_averages::parse(&self.path, &data, opts.strict, &mut charge)
    }

    /// Read the input as a profiler memory timeline (either form), streamed: the rows
    /// kept are taken from `opts.budget` first.
    pub fn read_memory_timeline(self, opts: &ReadOptions) -> TraceResult<MemoryTimeline> {
        if self.kind != ContentKind::MemoryTimeline {
            return Err(timeline::not_timeline(
                &self.path,
                format!("the content looks like {}", self.kind.describe()),
            ));
        }
        let mut charge = Charge::new(&opts.budget);
        let reader = body_reader(&self.path, self.body)?;
        timeline::parse_reader(&self.path, reader, &mut charge)
    }
}

/// The file mapped into memory when `opts.mmap` allows it; `None` when it is off or the
/// mapping fails (an address-space limit, a file system without mmap): the file is then
/// read through `read()`.
fn mapped(file: &File, opts: &ReadOptions) -> Option<memmap2::Mmap> {
    if !opts.mmap {
        return None;
    }
    // SAFETY: the mapping is only read. If another process truncates the file while it
    // is mapped, reading past the new end faults (SIGBUS), as with any mmap-based reader
    // (ripgrep makes the same trade); `ReadOptions::mmap` documents it and lets callers
    // that read files they do not own turn mapping off.
    unsafe { memmap2::Mmap::map(file) }.ok()
}

/// Parse a mapped plain file in place (no copy through `read()`); the pages already
/// parsed are dropped from the resident set as the reader advances.
fn read_mapped(
    path: &Path,
    map: &memmap2::Mmap,
    trace: Trace,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    let _ = map.advise(memmap2::Advice::Sequential);
    let release = |upto: usize| {
        let page = 4096;
        let len = upto / page * page;
        if len > 0 {
            // SAFETY: DONTNEED on a read-only file mapping only drops resident pages; a
            // later read faults them back in from the page cache.
            let _ =
                unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, len) };
        }
    };
    kineto::read_contiguous(path, map, &release, trace, opts)
}

/// All of the (decompressed) content, up to `limit` bytes and one more (so that the
/// caller can tell it was larger): borrowed when it is already in memory, else read
/// into memory taken from `charge` first and reserved fallibly.
fn whole<'a>(
    path: &Path,
    body: Body<'a>,
    limit: u64,
    charge: &mut Charge,
) -> TraceResult<Cow<'a, [u8]>> {
    let io = io_error(path);
    let (mut data, mut rest): (Vec<u8>, Box<dyn Read + 'a>) = match body {
        Body::Bytes(bytes) => return Ok(Cow::Borrowed(bytes)),
        Body::File { file, head } => (head, Box::new(file)),
        Body::Stream { cut: true, .. } => {
            return Err(io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Body::Stream { head, rest, .. } => (head, rest),
    };
    const CHUNK: usize = 1 << 20;
    while (data.len() as u64) <= limit {
        grow(&mut data, CHUNK, charge).map_err(|e| out_of_memory(path, data.len() as u64, e))?;
        let at = data.len();
        data.resize(at + CHUNK, 0);
        let n = loop {
            match rest.read(&mut data[at..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                r => break r.map_err(&io)?,
            }
        };
        data.truncate(at + n);
        if n == 0 {
            break;
        }
    }
    Ok(Cow::Owned(data))
}

/// All of the (decompressed) content as one reader, from its first byte.
fn body_reader<'a>(path: &Path, body: Body<'a>) -> TraceResult<Box<dyn Read + 'a>> {
    Ok(match body {
        Body::Bytes(bytes) => Box::new(bytes),
        Body::File { file, head } => Box::new(Cursor::new(head).chain(file)),
        Body::Stream { cut: true, .. } => {
            return Err(io_error(path)(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Body::Stream { head, rest, .. } => Box::new(Cursor::new(head).chain(rest)),
    })
}

fn out_of_memory(path: &Path, offset: u64, e: MemoryError) -> TraceError {
    TraceError::OutOfMemory {
        path: path.to_owned(),
        offset,
        needed: e.needed,
        in_use: e.in_use,
        limit: e.limit,
    }
}
