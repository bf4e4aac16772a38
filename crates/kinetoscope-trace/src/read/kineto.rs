//! The Kineto Chrome-trace reader: streams the (decompressed) JSON in blocks, splits each
//! block's events between worker threads at speculative event starts, verifies the
//! splits, and merges the workers' columns in file order.
//!
//! Memory stays bounded: only a few blocks are held at once, never the whole file.

use std::io::Read;
use std::path::Path;
use std::sync::mpsc;

use memchr::memmem;

use super::builder::TraceBuilder;
use super::event::{parse_event, RawEvent};
use super::header::apply_key;
use super::lexer::{LexError, Lexer};
use super::segment::Segment;
use super::ReadOptions;
use crate::model::*;
use crate::{TraceError, TraceResult};

/// Bytes read per block.
const BLOCK: usize = 8 << 20;
/// Room kept before each block so the previous block's unfinished event can be placed
/// in front of it without copying the block.
const RESERVE: usize = 1 << 20;
/// Below this many bytes a block is parsed by one thread.
const MIN_PARALLEL: usize = 1 << 20;

struct Block {
    buf: Vec<u8>,
    len: usize,
    eof: bool,
}

/// Read a Kineto trace from `input` (already decompressed).
pub(crate) fn read_kineto(
    path: &Path,
    input: Box<dyn Read + Send + '_>,
    mut trace: Trace,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    let io_err = |e: std::io::Error| TraceError::Io {
        path: path.to_owned(),
        source: e,
    };
    let (block_tx, block_rx) = mpsc::sync_channel::<std::io::Result<Block>>(1);
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        scope.spawn(move || produce_blocks(input, block_tx, recycle_rx));
        let next = || -> TraceResult<Block> {
            match block_rx.recv() {
                Ok(b) => b.map_err(io_err),
                Err(_) => Ok(Block {
                    buf: Vec::new(),
                    len: 0,
                    eof: true,
                }),
            }
        };
        // --- Header: everything before the first event.
        let first = next()?;
        let mut work = first.buf;
        let mut start = RESERVE;
        let mut end = RESERVE + first.len;
        let mut eof = first.eof;
        let mut base: u64 = 0; // offset in the JSON text of work[start]
        let mut pos;
        let mut header_keys: Vec<(String, Vec<u8>)> = Vec::new();
        loop {
            match parse_header(&work[start..end], &mut header_keys) {
                Ok(HeaderEnd::Events(p)) => {
                    pos = start + p;
                    break;
                }
                Ok(HeaderEnd::BareArray(p)) => {
                    trace.meta.features.bare_array = true;
                    pos = start + p;
                    break;
                }
                Ok(HeaderEnd::NoEvents) => {
                    return Err(TraceError::NotATrace {
                        path: path.to_owned(),
                        looks_like: "a JSON object without a `traceEvents` array".into(),
                    });
                }
                Err(HeaderError::Eof) if !eof => {}
                Err(e) => return Err(header_error(path, e, end - start)),
            }
            let more = next()?;
            work.truncate(end);
            work.extend_from_slice(&more.buf[RESERVE..RESERVE + more.len]);
            end = work.len();
            eof = more.eof;
            header_keys.clear();
        }
        for (k, v) in &header_keys {
            apply_key(&mut trace.meta, k, v, true);
        }
        let mut builder = TraceBuilder::new(trace);
        let mut segs = new_segments(opts);

        // --- Events, block by block.
        let trailer_at;
        loop {
            let window_base = base as i64 - start as i64;
            let state = parse_and_merge(
                path,
                &work[..end],
                pos,
                window_base,
                &mut segs,
                &mut builder,
                opts,
            )?;
            match state {
                WindowEnd::ArrayEnd(p) => {
                    trailer_at = Some(p);
                    break;
                }
                WindowEnd::NeedMore(p) => {
                    if eof {
                        truncated(
                            path,
                            &work[p..end],
                            (window_base + p as i64) as u64,
                            &mut builder,
                            opts,
                        )?;
                        trailer_at = None;
                        break;
                    }
                    let carry = p..end;
                    let more = next()?;
                    eof = more.eof;
                    let consumed = (p - start) as u64;
                    base += consumed;
                    let carry_len = carry.len();
                    let old = std::mem::replace(&mut work, more.buf);
                    if carry_len <= RESERVE {
                        work[RESERVE - carry_len..RESERVE].copy_from_slice(&old[carry]);
                        start = RESERVE - carry_len;
                        end = RESERVE + more.len;
                    } else {
                        let mut joined = Vec::with_capacity(carry_len + more.len);
                        joined.extend_from_slice(&old[carry]);
                        joined.extend_from_slice(&work[RESERVE..RESERVE + more.len]);
                        let _ = recycle_tx.send(std::mem::replace(&mut work, joined));
                        start = 0;
                        end = work.len();
                    }
                    if old.len() == RESERVE + BLOCK {
                        let _ = recycle_tx.send(old);
                    }
                    pos = start;
                }
            }
        }

        // --- Trailer: keys after the event array (`traceName`, `baseTimeNanoseconds` in
        // 2.4–2.6, `distributedInfo`, log arrays).
        if let Some(p) = trailer_at {
            let mut rest = work[p..end].to_vec();
            while !eof {
                let more = next()?;
                rest.extend_from_slice(&more.buf[RESERVE..RESERVE + more.len]);
                eof = more.eof;
            }
            let mut keys = Vec::new();
            parse_trailer(&rest, &mut keys);
            for (k, v) in &keys {
                apply_key(&mut builder.trace.meta, k, v, false);
            }
            builder.trace.report.json_bytes =
                base + (end - start) as u64 + (rest.len() as u64) - (end - p) as u64;
        } else {
            builder.trace.report.json_bytes = base + (end - start) as u64;
        }
        drop(block_rx);
        Ok(builder.finish())
    })
}

/// Read a Kineto trace that is in memory as one slice (a memory-mapped plain file, or
/// plain bytes in memory), in place. `release(upto)` is told when bytes before `upto` are
/// no longer needed, so a mapping can drop them from the resident set.
pub(crate) fn read_contiguous(
    path: &Path,
    data: &[u8],
    release: &dyn Fn(usize),
    mut trace: Trace,
    opts: &ReadOptions,
) -> TraceResult<Trace> {
    let mut header_keys = Vec::new();
    let mut pos = match parse_header(data, &mut header_keys) {
        Ok(HeaderEnd::Events(p)) => p,
        Ok(HeaderEnd::BareArray(p)) => {
            trace.meta.features.bare_array = true;
            p
        }
        Ok(HeaderEnd::NoEvents) => {
            return Err(TraceError::NotATrace {
                path: path.to_owned(),
                looks_like: "a JSON object without a `traceEvents` array".into(),
            })
        }
        Err(e) => return Err(header_error(path, e, data.len())),
    };
    for (k, v) in &header_keys {
        apply_key(&mut trace.meta, k, v, true);
    }
    let mut builder = TraceBuilder::new(trace);
    let mut segs = new_segments(opts);
    let mut end = (pos + BLOCK).min(data.len());
    let trailer_at = loop {
        match parse_and_merge(path, &data[..end], pos, 0, &mut segs, &mut builder, opts)? {
            WindowEnd::ArrayEnd(p) => break Some(p),
            WindowEnd::NeedMore(p) if end == data.len() => {
                truncated(path, &data[p..end], p as u64, &mut builder, opts)?;
                break None;
            }
            WindowEnd::NeedMore(p) => {
                // No progress means one element is longer than a window: widen it.
                let from = if p == pos { end } else { p };
                pos = p;
                end = (from + BLOCK).min(data.len());
                release(pos);
                if let Some(progress) = &opts.progress {
                    progress(pos as u64);
                }
            }
        }
    };
    if let Some(p) = trailer_at {
        let mut keys = Vec::new();
        parse_trailer(&data[p..], &mut keys);
        for (k, v) in &keys {
            apply_key(&mut builder.trace.meta, k, v, false);
        }
    }
    builder.trace.report.json_bytes = data.len() as u64;
    if let Some(progress) = &opts.progress {
        progress(data.len() as u64);
    }
    Ok(builder.finish())
}

fn new_segments(opts: &ReadOptions) -> Vec<Segment> {
    (0..opts.threads.max(1)).map(|_| Segment::new()).collect()
}

/// Parse one window and merge its segments; in strict mode, stop at the first defect.
fn parse_and_merge(
    path: &Path,
    buf: &[u8],
    pos: usize,
    window_base: i64,
    segs: &mut [Segment],
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
) -> TraceResult<WindowEnd> {
    let (used, state) = parse_window(buf, pos, segs);
    for (k, seg) in segs[..used].iter().enumerate() {
        builder.merge(seg, k, window_base);
    }
    if opts.strict {
        if let Some(e) = builder.strict_error(path) {
            return Err(e);
        }
    }
    Ok(state)
}

/// The input ended inside the event array: count a truncated tail (or fail when strict).
fn truncated(
    path: &Path,
    rest: &[u8],
    offset: u64,
    builder: &mut TraceBuilder,
    opts: &ReadOptions,
) -> TraceResult<()> {
    if opts.strict {
        return Err(TraceError::Malformed {
            path: path.to_owned(),
            offset,
            event_index: Some(builder.elements),
            message: "the file ends inside the `traceEvents` array (truncated?)".into(),
        });
    }
    let partial = rest.iter().any(|b| !b" \t\r\n,".contains(b));
    builder
        .trace
        .report
        .add(DefectKind::TruncatedTail, 1, offset, builder.elements);
    if partial {
        builder.elements += 1;
    }
    Ok(())
}

fn header_error(path: &Path, e: HeaderError, len: usize) -> TraceError {
    match e {
        HeaderError::NotATrace(what) => TraceError::NotATrace {
            path: path.to_owned(),
            looks_like: what.into(),
        },
        HeaderError::Bad(at, msg) => TraceError::Malformed {
            path: path.to_owned(),
            offset: at as u64,
            event_index: None,
            message: msg.into(),
        },
        HeaderError::Eof => TraceError::Malformed {
            path: path.to_owned(),
            offset: len as u64,
            event_index: None,
            message: "the file ends before `traceEvents` begins".into(),
        },
    }
}

fn produce_blocks(
    mut input: Box<dyn Read + Send + '_>,
    tx: mpsc::SyncSender<std::io::Result<Block>>,
    recycle: mpsc::Receiver<Vec<u8>>,
) {
    loop {
        let mut buf = recycle
            .try_recv()
            .unwrap_or_else(|_| vec![0u8; RESERVE + BLOCK]);
        let mut len = 0;
        let mut eof = false;
        while len < BLOCK {
            match input.read(&mut buf[RESERVE + len..RESERVE + BLOCK]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    // A truncated gzip stream: what was inflated is read, and the JSON
                    // reader reports the truncated tail.
                    eof = true;
                    break;
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if tx.send(Ok(Block { buf, len, eof })).is_err() || eof {
            return;
        }
    }
}

enum HeaderEnd {
    Events(usize),
    BareArray(usize),
    NoEvents,
}

enum HeaderError {
    Eof,
    NotATrace(&'static str),
    Bad(usize, &'static str),
}

/// Parse top-level keys up to the `[` of `traceEvents`.
fn parse_header(buf: &[u8], keys: &mut Vec<(String, Vec<u8>)>) -> Result<HeaderEnd, HeaderError> {
    let mut lx = Lexer::new(buf, 0);
    // A UTF-8 byte-order mark.
    if buf.starts_with(&[0xef, 0xbb, 0xbf]) {
        lx.pos = 3;
    }
    let lex = |e: LexError, at: usize| match e {
        LexError::Eof => HeaderError::Eof,
        LexError::Bad(m) => HeaderError::Bad(at, m),
    };
    match lx.peek().map_err(|e| lex(e, 0))? {
        b'[' => {
            let open = lx.pos;
            lx.pos += 1;
            return match lx.peek().map_err(|e| lex(e, open))? {
                b'{' | b']' => Ok(HeaderEnd::BareArray(open + 1)),
                b'[' => Err(HeaderError::NotATrace(
                    "a JSON array of arrays (a memory timeline? those are read by `kinetoscope memory`)",
                )),
                _ => Err(HeaderError::NotATrace("a JSON array that does not hold trace events")),
            };
        }
        b'{' => lx.pos += 1,
        _ => return Err(HeaderError::NotATrace("text that is not a JSON object")),
    }
    loop {
        let at = lx.pos;
        match lx.peek().map_err(|e| lex(e, at))? {
            b'}' => return Ok(HeaderEnd::NoEvents),
            b',' => {
                lx.pos += 1;
                continue;
            }
            _ => {}
        }
        let key = lx.string().map_err(|e| lex(e, at))?;
        lx.expect(b':', "expected `:` after a top-level key")
            .map_err(|e| lex(e, lx.pos))?;
        let name = String::from_utf8_lossy(&buf[key.start..key.end]).into_owned();
        if name == "traceEvents" {
            let open = lx.pos;
            if lx.peek().map_err(|e| lex(e, open))? != b'[' {
                return Err(HeaderError::Bad(
                    lx.pos,
                    "expected `[` after \"traceEvents\":",
                ));
            }
            return Ok(HeaderEnd::Events(lx.pos + 1));
        }
        let mut bare = false;
        let (s, e) = lx.skip_value(&mut bare).map_err(|e| lex(e, lx.pos))?;
        keys.push((name, buf[s..e].to_vec()));
    }
}

/// Parse top-level keys after the event array, leniently (stops at the first problem).
fn parse_trailer(buf: &[u8], keys: &mut Vec<(String, Vec<u8>)>) {
    let mut lx = Lexer::new(buf, 0);
    loop {
        match lx.peek() {
            Ok(b',') => {
                lx.pos += 1;
                continue;
            }
            Ok(b'"') => {}
            _ => return,
        }
        let Ok(key) = lx.string() else { return };
        if lx.expect(b':', "").is_err() {
            return;
        }
        let mut bare = false;
        let Ok((s, e)) = lx.skip_value(&mut bare) else {
            return;
        };
        keys.push((
            String::from_utf8_lossy(&buf[key.start..key.end]).into_owned(),
            buf[s..e].to_vec(),
        ));
    }
}

enum WindowEnd {
    /// The event array closed; the trailer starts here.
    ArrayEnd(usize),
    /// The buffer ends inside the element starting here.
    NeedMore(usize),
}

/// How one worker's range ended.
enum RangeEnd {
    /// At the first element at or past its stop position.
    Stopped(usize),
    /// At the end of the array or of the buffer.
    Window(WindowEnd),
}

/// Parse all complete elements of `buf[pos..]` into `segs` (one per worker, cleared
/// first), in parallel when the window is large. Returns how many segments hold the
/// window's elements, in order, and how the window ended.
fn parse_window(buf: &[u8], pos: usize, segs: &mut [Segment]) -> (usize, WindowEnd) {
    for s in segs.iter_mut() {
        s.clear();
    }
    let n = buf.len() - pos;
    let threads = segs.len();
    let mut starts = vec![pos];
    if threads > 1 && n >= MIN_PARALLEL {
        let finder = memmem::Finder::new(b"\"ph\"");
        for k in 1..threads {
            let target = pos + n * k / threads;
            if let Some(s) = find_event_start(buf, target, &finder) {
                if s > *starts.last().unwrap() {
                    starts.push(s);
                }
            }
        }
    }
    let used = starts.len();
    let ends: Vec<RangeEnd> = if used == 1 {
        vec![parse_range(buf, pos, usize::MAX, &mut segs[0])]
    } else {
        let (first, rest) = segs.split_at_mut(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = rest[..used - 1]
                .iter_mut()
                .enumerate()
                .map(|(i, seg)| {
                    let k = i + 1;
                    let from = starts[k];
                    let stop = starts.get(k + 1).copied().unwrap_or(usize::MAX);
                    scope.spawn(move || parse_range(buf, from, stop, seg))
                })
                .collect();
            let mut out = vec![parse_range(buf, starts[0], starts[1], &mut first[0])];
            out.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("parser thread panicked")),
            );
            out
        })
    };
    // Verify that each worker stopped exactly where the next one started.
    for (k, end) in ends.into_iter().enumerate() {
        match end {
            RangeEnd::Window(w) => return (k + 1, w),
            RangeEnd::Stopped(p) if starts.get(k + 1) == Some(&p) => continue,
            RangeEnd::Stopped(p) => {
                // A wrong guess: this worker parses the rest, later ones are dropped.
                for s in &mut segs[k + 1..] {
                    s.clear();
                }
                match parse_range(buf, p, usize::MAX, &mut segs[k]) {
                    RangeEnd::Window(w) => return (k + 1, w),
                    RangeEnd::Stopped(_) => unreachable!("no stop was set"),
                }
            }
        }
    }
    unreachable!("the last range always ends the window")
}

/// The start of the first element at or after `from` that looks like a Kineto event
/// (`{` then `"ph"`), as a guess to be verified.
fn find_event_start(buf: &[u8], from: usize, finder: &memmem::Finder<'_>) -> Option<usize> {
    let mut i = from;
    while let Some(k) = finder.find(&buf[i..]) {
        let q = i + k;
        let mut b = q;
        while b > from && b" \t\r\n".contains(&buf[b - 1]) {
            b -= 1;
        }
        if b > from && buf[b - 1] == b'{' {
            return Some(b - 1);
        }
        i = q + 4;
    }
    None
}

/// Where to continue after a malformed element that started at `from`: the next
/// element start (a `{"ph"` or a `{` after `},`).
fn resync(buf: &[u8], from: usize) -> Option<usize> {
    let finder = memmem::Finder::new(b"\"ph\"");
    let a = find_event_start(buf, from, &finder);
    let mut b = None;
    let mut i = from;
    while let Some(k) = memchr::memchr(b'}', &buf[i..]) {
        let mut j = i + k + 1;
        while j < buf.len() && b" \t\r\n".contains(&buf[j]) {
            j += 1;
        }
        if buf.get(j) == Some(&b',') {
            j += 1;
            while j < buf.len() && b" \t\r\n".contains(&buf[j]) {
                j += 1;
            }
            if buf.get(j) == Some(&b'{') {
                b = Some(j);
                break;
            }
        }
        i = i + k + 1;
        if a.is_some_and(|a| i > a) {
            break;
        }
    }
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (x, y) => x.or(y),
    }
}

/// Parse elements from `from` until the first element starting at or after `stop`, the
/// end of the array, or the end of the buffer.
fn parse_range(buf: &[u8], from: usize, stop: usize, seg: &mut Segment) -> RangeEnd {
    let mut lx = Lexer::new(buf, from);
    let mut ev = RawEvent::default();
    loop {
        lx.skip_ws();
        while buf.get(lx.pos) == Some(&b',') {
            lx.pos += 1;
            lx.skip_ws();
        }
        let p = lx.pos;
        match buf.get(p) {
            None => return RangeEnd::Window(WindowEnd::NeedMore(p)),
            Some(b']') => return RangeEnd::Window(WindowEnd::ArrayEnd(p + 1)),
            Some(_) if p >= stop => return RangeEnd::Stopped(p),
            Some(_) => {}
        }
        ev.reset();
        match parse_event(&mut lx, &mut ev) {
            Ok(()) => seg.push(&ev, buf, p),
            Err(LexError::Eof) => return RangeEnd::Window(WindowEnd::NeedMore(p)),
            Err(LexError::Bad(msg)) => match resync(buf, p + 1) {
                Some(q) => {
                    let at = lx.pos;
                    seg.defect(DefectKind::MalformedEvent, at, msg);
                    seg.skip_element();
                    lx.pos = q;
                }
                None => return RangeEnd::Window(WindowEnd::NeedMore(p)),
            },
        }
    }
}
