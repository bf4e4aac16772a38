//! The Kineto Chrome-trace reader: walks the top-level object as a stream
//! ([`TopLevel`]), then the event array in windows cut into parts at speculative event
//! starts (`window.rs`), parsed by whichever worker thread is free, verified, and merged
//! in file order by the calling thread between the parts it parses itself.
//!
//! Memory stays bounded: a few blocks are held at once, never the whole file. What lies
//! outside the event array is streamed past, keeping only the values of known keys; an
//! element longer than a block is gathered in a buffer that at least doubles each time
//! (linear work), up to the element cap, past which it is streamed past too.

use std::cell::RefCell;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc;

use super::builder::TraceBuilder;
use super::header::apply_key;
use super::segment::Segment;
use super::toplevel::{Skip, Skipper, Step, TopError, TopLevel};
use super::window::{oversized_message, parse_window, WindowEnd, PARTS_PER_THREAD};
use super::ReadOptions;
use crate::model::*;
use crate::{TraceError, TraceResult};

/// Bytes read per block.
const BLOCK: usize = 8 << 20;
/// Room kept before each block so the previous block's unfinished event can be placed
/// in front of it without copying the block.
const RESERVE: usize = 1 << 20;

struct Block {
    buf: Vec<u8>,
    len: usize,
    eof: bool,
}

/// The bytes being parsed: `work[start..end]` holds the text from absolute offset `base`.
struct Window {
    work: Vec<u8>,
    start: usize,
    end: usize,
    base: u64,
    eof: bool,
}

impl Window {
    /// The absolute offset of `work[i]`.
    fn abs(&self, i: usize) -> u64 {
        self.base + (i - self.start) as u64
    }
}

/// The blocks of a stream, read into recycled buffers ahead of the parse.
struct Blocks<'p, 'r> {
    path: &'p Path,
    feed: Feed<'r>,
}

/// Where the blocks come from.
enum Feed<'r> {
    /// A producer thread reads ahead (one parser thread: reading, which for gzip is
    /// inflating, runs beside it on another core).
    Thread {
        rx: mpsc::Receiver<std::io::Result<Block>>,
        recycle: mpsc::Sender<Vec<u8>>,
    },
    /// The parsing thread reads the next block while the other parser threads start on
    /// the current window ([`Blocks::read_ahead`]): with as many parser threads as
    /// cores, a reader thread of its own would make one thread more than cores.
    Inline(RefCell<Inline<'r>>),
}

/// The state of [`Feed::Inline`].
struct Inline<'r> {
    input: Box<dyn Read + Send + 'r>,
    /// The next block, read ahead.
    ready: Option<std::io::Result<Block>>,
    /// A buffer handed back, for the next block.
    spare: Option<Vec<u8>>,
    /// Whether the input ended or failed: nothing more is read.
    done: bool,
}

impl Inline<'_> {
    /// Read the next block now, unless one is ready or the input is done.
    fn fill(&mut self) {
        if self.ready.is_some() || self.done {
            return;
        }
        let buf = self
            .spare
            .take()
            .unwrap_or_else(|| vec![0u8; RESERVE + BLOCK]);
        let block = read_block(&mut *self.input, buf);
        self.done = block.as_ref().map_or(true, |b| b.eof);
        self.ready = Some(block);
    }
}

impl Blocks<'_, '_> {
    fn next(&self) -> TraceResult<Block> {
        let got = match &self.feed {
            Feed::Thread { rx, .. } => rx.recv().ok(),
            Feed::Inline(inline) => {
                let mut inline = inline.borrow_mut();
                inline.fill();
                inline.ready.take()
            }
        };
        match got {
            Some(b) => b.map_err(|e| TraceError::Io {
                path: self.path.to_owned(),
                source: e,
            }),
            None => Ok(Block {
                buf: vec![0; RESERVE],
                len: 0,
                eof: true,
            }),
        }
    }

    /// Read the next block now if it is read on this thread ([`Feed::Inline`]).
    fn read_ahead(&self) {
        if let Feed::Inline(inline) = &self.feed {
            inline.borrow_mut().fill();
        }
    }

    /// Hand a block buffer back for reuse (other buffers are dropped).
    fn give_back(&self, buf: Vec<u8>) {
        if buf.len() != RESERVE + BLOCK {
            return;
        }
        match &self.feed {
            Feed::Thread { recycle, .. } => {
                let _ = recycle.send(buf);
            }
            Feed::Inline(inline) => inline.borrow_mut().spare = Some(buf),
        }
    }

    /// Move `w` on to the next block, its text starting at `w`'s end.
    fn advance(&self, w: &mut Window) -> TraceResult<()> {
        let b = self.next()?;
        w.base = w.abs(w.end);
        self.give_back(std::mem::replace(&mut w.work, b.buf));
        w.start = RESERVE;
        w.end = RESERVE + b.len;
        w.eof = b.eof;
        Ok(())
    }
}

/// Read a Kineto trace from `input` (already decompressed).
pub(crate) fn read_kineto(
    path: &Path,
    input: Box<dyn Read + Send + '_>,
    trace: Trace,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    std::thread::scope(|scope| {
        let feed = if opts.threads > 1 {
            Feed::Inline(RefCell::new(Inline {
                input,
                ready: None,
                spare: None,
                done: false,
            }))
        } else {
            let (block_tx, block_rx) = mpsc::sync_channel::<std::io::Result<Block>>(1);
            let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
            scope.spawn(move || produce_blocks(input, block_tx, recycle_rx));
            Feed::Thread {
                rx: block_rx,
                recycle: recycle_tx,
            }
        };
        let blocks = Blocks { path, feed };
        let first = blocks.next()?;
        let mut w = Window {
            work: first.buf,
            start: RESERVE,
            end: RESERVE + first.len,
            base: 0,
            eof: first.eof,
        };
        let mut top = TopLevel::new(opts.max_element_bytes, opts.strict);
        let (pos, bare) = stream_header(path, &blocks, &mut w, &mut top)?;
        let mut builder = start_events(trace, &mut top, bare, opts);
        let trailer_at = stream_events(path, &blocks, &mut w, pos, &mut builder, opts)?;
        if let Some(p) = trailer_at {
            stream_trailer(path, &blocks, &mut w, p, &mut top)?;
            apply_trailer(&mut builder, &mut top);
        }
        let json_bytes = w.abs(w.end);
        builder.trace.report.json_bytes = json_bytes;
        // The blocks are not needed to finish the model, which is when memory peaks.
        drop((blocks, w));
        finish(path, builder, json_bytes, opts)
    })
}

/// Walk the header block by block; returns where the first element starts in `w.work`
/// and whether the text is a bare array.
fn stream_header(
    path: &Path,
    blocks: &Blocks<'_, '_>,
    w: &mut Window,
    top: &mut TopLevel,
) -> TraceResult<(usize, bool)> {
    loop {
        match top.feed(&w.work[w.start..w.end], w.base) {
            Ok(Step::Events(p)) => return Ok((w.start + p, false)),
            Ok(Step::BareArray(p)) => return Ok((w.start + p, true)),
            Ok(Step::End(_)) => return Err(no_events(path)),
            Ok(Step::More) if w.eof => return Err(ends_before_events(path, w.abs(w.end))),
            Ok(Step::More) => blocks.advance(w)?,
            Err(e) => return Err(top_error(path, e)),
        }
    }
}

/// Parse the event array window by window; returns where the trailer starts in
/// `w.work`, or `None` when the input ended inside the array.
fn stream_events(
    path: &Path,
    blocks: &Blocks<'_, '_>,
    w: &mut Window,
    mut pos: usize,
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
) -> TraceResult<Option<usize>> {
    let mut segs = new_segments(opts);
    let cap = opts.max_element_bytes;
    loop {
        let window_base = w.base as i64 - w.start as i64;
        let window = (&w.work[..w.end], pos, window_base);
        let read_ahead = &mut || blocks.read_ahead();
        let state = parse_and_merge(path, window, &mut segs, builder, opts, read_ahead)?;
        let p = match state {
            WindowEnd::ArrayEnd(p) => return Ok(Some(p)),
            WindowEnd::NeedMore(p) => p,
        };
        if w.eof {
            truncated(path, &w.work[p..w.end], w.abs(p), builder, opts)?;
            return Ok(None);
        }
        let carry = w.end - p;
        if carry as u64 > cap {
            oversized(path, w.abs(p), builder, opts)?;
            match skip_streamed(blocks, w, p)? {
                Some(q) => pos = q,
                None => {
                    truncated(path, &[], w.abs(w.end), builder, opts)?;
                    return Ok(None);
                }
            }
        } else if carry <= RESERVE {
            let b = blocks.next()?;
            w.base = w.abs(p);
            let old = std::mem::replace(&mut w.work, b.buf);
            w.work[RESERVE - carry..RESERVE].copy_from_slice(&old[p..w.end]);
            blocks.give_back(old);
            w.start = RESERVE - carry;
            w.end = RESERVE + b.len;
            w.eof = b.eof;
            pos = w.start;
        } else {
            gather(path, blocks, w, p, cap)?;
            pos = w.start;
        }
    }
}

/// An unfinished element of more than a block starts at `w.work[p]`: gather it and what
/// follows into one buffer of at least twice its size (or the cap and one byte more),
/// so that each element is re-parsed a bounded number of times.
fn gather(
    path: &Path,
    blocks: &Blocks<'_, '_>,
    w: &mut Window,
    p: usize,
    cap: u64,
) -> TraceResult<()> {
    let carry = w.end - p;
    let want = (carry * 2)
        .min((cap as usize).saturating_add(1))
        .max(carry + 1);
    let mut joined: Vec<u8> = Vec::new();
    joined.try_reserve_exact(want + BLOCK).map_err(|_| {
        let e = MemoryError::refused((want + BLOCK) as u64);
        out_of_memory(path, w.abs(p), e)
    })?;
    joined.extend_from_slice(&w.work[p..w.end]);
    let base = w.abs(p);
    let mut eof = w.eof;
    while joined.len() < want && !eof {
        let b = blocks.next()?;
        joined.extend_from_slice(&b.buf[RESERVE..RESERVE + b.len]);
        eof = b.eof;
        blocks.give_back(b.buf);
    }
    let old = std::mem::replace(&mut w.work, joined);
    blocks.give_back(old);
    w.start = 0;
    w.end = w.work.len();
    w.base = base;
    w.eof = eof;
    Ok(())
}

/// Stream past the element starting at `w.work[p]` without keeping it; returns where
/// the next one may start in `w.work`, or `None` when the input ended first.
fn skip_streamed(blocks: &Blocks<'_, '_>, w: &mut Window, p: usize) -> TraceResult<Option<usize>> {
    let mut skip = Skipper::default();
    let mut from = p;
    loop {
        match skip.feed(&w.work[from..w.end]) {
            Skip::Done(n) | Skip::Bad(n) => return Ok(Some(from + n)),
            Skip::More if w.eof => return Ok(None),
            Skip::More => {
                blocks.advance(w)?;
                from = w.start;
            }
        }
    }
}

/// Walk the keys after the event array (from `w.work[p]`) to the end of the input.
/// A malformed trailer ends the walk (leniently: what was read is kept); the rest of
/// the input is still read, to count its bytes.
fn stream_trailer(
    path: &Path,
    blocks: &Blocks<'_, '_>,
    w: &mut Window,
    p: usize,
    top: &mut TopLevel,
) -> TraceResult<()> {
    top.after_events();
    let mut from = p;
    let mut walking = true;
    loop {
        if walking {
            match top.feed(&w.work[from..w.end], w.abs(from)) {
                Ok(Step::More) => {}
                Ok(_) => walking = false,
                Err(e @ TopError::Oversized(_)) => return Err(top_error(path, e)),
                Err(_) => walking = false,
            }
        }
        if w.eof {
            return Ok(());
        }
        blocks.advance(w)?;
        from = w.start;
    }
}

/// Read a Kineto trace that is in memory as one slice (a memory-mapped plain file, or
/// plain bytes in memory), in place. `release(upto)` is told when bytes before `upto` are
/// no longer needed, so a mapping can drop them from the resident set.
pub(crate) fn read_contiguous(
    path: &Path,
    data: &[u8],
    release: &dyn Fn(usize),
    trace: Trace,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    let cap = opts.max_element_bytes;
    let mut top = TopLevel::new(cap, opts.strict);
    let (mut pos, bare) = match feed_mapped(&mut top, data, 0, release) {
        Ok(Step::Events(p)) => (p, false),
        Ok(Step::BareArray(p)) => (p, true),
        Ok(Step::End(_)) => return Err(no_events(path)),
        Ok(Step::More) => return Err(ends_before_events(path, data.len() as u64)),
        Err(e) => return Err(top_error(path, e)),
    };
    let mut builder = start_events(trace, &mut top, bare, opts);
    let mut segs = new_segments(opts);
    let mut end = (pos + BLOCK).min(data.len());
    let trailer_at = loop {
        let window = (&data[..end], pos, 0);
        match parse_and_merge(path, window, &mut segs, &mut builder, opts, &mut || {})? {
            WindowEnd::ArrayEnd(p) => break Some(p),
            WindowEnd::NeedMore(p) if end == data.len() => {
                truncated(path, &data[p..end], p as u64, &mut builder, opts)?;
                break None;
            }
            WindowEnd::NeedMore(p) if p == pos && (end - p) as u64 > cap => {
                // One element runs past the cap: stream past it.
                oversized(path, p as u64, &mut builder, opts)?;
                match skip_mapped(data, p, release) {
                    Some(q) => pos = q,
                    None => {
                        truncated(path, &[], data.len() as u64, &mut builder, opts)?;
                        break None;
                    }
                }
                end = (pos + BLOCK).min(data.len());
            }
            WindowEnd::NeedMore(p) if p == pos => {
                // One element is longer than the window: double it (up to the cap).
                let len = ((end - p) * 2)
                    .min((cap as usize).saturating_add(1))
                    .max(end - p + 1);
                end = (p + len).min(data.len());
            }
            WindowEnd::NeedMore(p) => {
                pos = p;
                end = (pos + BLOCK).min(data.len());
            }
        }
        release(pos);
        if let Some(progress) = &opts.progress {
            progress(pos as u64);
        }
    };
    if let Some(p) = trailer_at {
        top.after_events();
        if let Err(e @ TopError::Oversized(_)) = feed_mapped(&mut top, data, p, release) {
            return Err(top_error(path, e));
        }
        apply_trailer(&mut builder, &mut top);
    }
    builder.trace.report.json_bytes = data.len() as u64;
    if let Some(progress) = &opts.progress {
        progress(data.len() as u64);
    }
    finish(path, builder, data.len() as u64, opts)
}

/// Feed `data[from..]` to `top` a block at a time, releasing what was walked; the step
/// is reported with its absolute index.
fn feed_mapped(
    top: &mut TopLevel,
    data: &[u8],
    from: usize,
    release: &dyn Fn(usize),
) -> Result<Step, TopError> {
    let mut at = from;
    while at < data.len() {
        let end = (at + BLOCK).min(data.len());
        match top.feed(&data[at..end], at as u64)? {
            Step::More => {}
            Step::Events(i) => return Ok(Step::Events(at + i)),
            Step::BareArray(i) => return Ok(Step::BareArray(at + i)),
            Step::End(i) => return Ok(Step::End(at + i)),
        }
        at = end;
        release(at);
    }
    Ok(Step::More)
}

/// Stream past the element at `data[p]` a block at a time; where the next may start.
fn skip_mapped(data: &[u8], p: usize, release: &dyn Fn(usize)) -> Option<usize> {
    let mut skip = Skipper::default();
    let mut at = p;
    while at < data.len() {
        let end = (at + BLOCK).min(data.len());
        if let Skip::Done(n) | Skip::Bad(n) = skip.feed(&data[at..end]) {
            return Some(at + n);
        }
        at = end;
        release(at);
    }
    None
}

/// The builder for the events, with the header's keys applied and its oversized values
/// counted.
fn start_events(
    mut trace: Trace,
    top: &mut TopLevel,
    bare: bool,
    opts: &ReadOptions,
) -> TraceBuilder {
    trace.meta.features.bare_array = bare;
    trace.charge = Charge::new(&opts.budget);
    for (k, v) in top.keys.drain(..) {
        apply_key(&mut trace.meta, &k, &v, true);
    }
    if let Some((count, offset)) = top.oversized.take() {
        trace.report.add(DefectKind::Oversized, count, offset, 0);
    }
    TraceBuilder::new(trace)
}

/// Apply the trailer's keys and count its oversized values.
fn apply_trailer(builder: &mut TraceBuilder, top: &mut TopLevel) {
    for (k, v) in top.keys.drain(..) {
        apply_key(&mut builder.trace.meta, &k, &v, false);
    }
    if let Some((count, offset)) = top.oversized.take() {
        let elements = builder.elements;
        builder
            .trace
            .report
            .add(DefectKind::Oversized, count, offset, elements);
    }
}

/// Finish the trace (its launch links on two threads when the read has two or more);
/// running out of memory there is an error at the end of the input.
fn finish(
    path: &Path,
    builder: TraceBuilder,
    offset: u64,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    builder
        .finish(opts.threads > 1)
        .map_err(|e| out_of_memory(path, offset, e))
}

/// One segment per part of a window: [`PARTS_PER_THREAD`] per parser thread, one when
/// there is one thread.
fn new_segments(opts: &ReadOptions) -> Vec<Segment> {
    let parts = match opts.threads.max(1) {
        1 => 1,
        t => t * PARTS_PER_THREAD,
    };
    (0..parts).map(|_| Segment::new()).collect()
}

/// Parse one window and merge its segments (`read_ahead` runs on this thread meanwhile:
/// [`parse_window`]); in strict mode, stop at the first defect.
fn parse_and_merge(
    path: &Path,
    (buf, pos, window_base): (&[u8], usize, i64),
    segs: &mut [Segment],
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
    read_ahead: &mut dyn FnMut(),
) -> TraceResult<WindowEnd> {
    let state = parse_window(
        buf,
        pos,
        segs,
        (opts.threads.max(1), opts.max_element_bytes),
        &mut |seg, k| builder.merge(seg, k, window_base),
        read_ahead,
    )
    .map_err(|e| out_of_memory(path, (window_base + pos as i64) as u64, e))?;
    for (k, seg) in segs.iter_mut().enumerate() {
        if seg.forget_if_large() {
            builder.forget_worker(k);
        }
    }
    if opts.strict {
        if let Some(e) = builder.strict_error(path) {
            return Err(e);
        }
    }
    Ok(state)
}

/// An element longer than the cap starts at absolute `offset` and did not end within
/// it: an error when strict, else counted (it is then streamed past).
fn oversized(
    path: &Path,
    offset: u64,
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
) -> TraceResult<()> {
    strict_or_count(path, offset, builder, opts, DefectKind::Oversized, || {
        oversized_message(opts.max_element_bytes)
    })?;
    builder.elements += 1;
    Ok(())
}

/// The input ended inside the event array: count a truncated tail (or fail when strict).
fn truncated(
    path: &Path,
    rest: &[u8],
    offset: u64,
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
) -> TraceResult<()> {
    strict_or_count(
        path,
        offset,
        builder,
        opts,
        DefectKind::TruncatedTail,
        || "the file ends inside the `traceEvents` array (truncated?)".into(),
    )?;
    if rest.iter().any(|b| !b" \t\r\n,".contains(b)) {
        builder.elements += 1;
    }
    Ok(())
}

/// A defect at absolute `offset` in the current element: under `strict`, the error with
/// `message`; otherwise counted once in the read report.
fn strict_or_count(
    path: &Path,
    offset: u64,
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
    kind: DefectKind,
    message: impl FnOnce() -> String,
) -> TraceResult<()> {
    if opts.strict {
        return Err(TraceError::Malformed {
            path: path.to_owned(),
            offset,
            event_index: Some(builder.elements),
            message: message(),
        });
    }
    let elements = builder.elements;
    builder.trace.report.add(kind, 1, offset, elements);
    Ok(())
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

fn no_events(path: &Path) -> TraceError {
    TraceError::NotATrace {
        path: path.to_owned(),
        looks_like: "a JSON object without a `traceEvents` array".into(),
    }
}

fn ends_before_events(path: &Path, len: u64) -> TraceError {
    TraceError::Malformed {
        path: path.to_owned(),
        offset: len,
        event_index: None,
        message: "the file ends before `traceEvents` begins".into(),
    }
}

fn top_error(path: &Path, e: TopError) -> TraceError {
    match e {
        TopError::NotATrace(what) => TraceError::NotATrace {
            path: path.to_owned(),
            looks_like: what.into(),
        },
        TopError::Bad(at, msg) => TraceError::Malformed {
            path: path.to_owned(),
            offset: at,
            event_index: None,
            message: msg.into(),
        },
        TopError::Oversized(at) => TraceError::Malformed {
            path: path.to_owned(),
            offset: at,
            event_index: None,
            message: "a top-level value larger than the element cap (--max-element raises it)"
                .into(),
        },
    }
}

fn produce_blocks(
    mut input: Box<dyn Read + Send + '_>,
    tx: mpsc::SyncSender<std::io::Result<Block>>,
    recycle: mpsc::Receiver<Vec<u8>>,
) {
    loop {
        let buf = recycle
            .try_recv()
            .unwrap_or_else(|_| vec![0u8; RESERVE + BLOCK]);
        let block = read_block(&mut *input, buf);
        let last = block.as_ref().map_or(true, |b| b.eof);
        if tx.send(block).is_err() || last {
            return;
        }
    }
}

/// Read up to a block of `input` into `buf` (after its reserved room): the block, with
/// whether the input ended (a gzip stream cut short ends it too); or the input's error.
fn read_block(input: &mut dyn Read, mut buf: Vec<u8>) -> std::io::Result<Block> {
    let (len, _) = super::read_up_to(input, &mut buf[RESERVE..RESERVE + BLOCK])?;
    Ok(Block {
        buf,
        len,
        eof: len < BLOCK,
    })
}
