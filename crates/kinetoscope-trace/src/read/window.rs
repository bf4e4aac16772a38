//! One window of the event array: its complete elements parsed into per-worker segments,
//! in parallel at guessed event starts that are verified, never trusted.

use memchr::memmem;

use super::event::{parse_event, RawEvent};
use super::lexer::{LexError, Lexer};
use super::segment::Segment;
use crate::model::DefectKind;

/// Below this many bytes a window is parsed by one thread.
const MIN_PARALLEL: usize = 1 << 20;

pub(crate) enum WindowEnd {
    /// The event array closed; the trailer starts here.
    ArrayEnd(usize),
    /// The buffer ends inside the element starting here.
    NeedMore(usize),
}

/// What an element over the cap is called in messages.
pub(crate) fn oversized_message(cap: u64) -> String {
    format!(
        "an element larger than the {} cap (--max-element raises it)",
        super::size_text(cap)
    )
}

/// Count the element at `p`, over the cap, as skipped.
#[cold]
#[inline(never)]
fn skip_oversized(seg: &mut Segment, p: usize, cap: u64) {
    seg.defect(DefectKind::Oversized, p, &oversized_message(cap));
    seg.skip_element();
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
/// window's elements, in order, and how the window ended. An element of more than `cap`
/// bytes is counted as [`DefectKind::Oversized`] and not kept.
pub(crate) fn parse_window(
    buf: &[u8],
    pos: usize,
    segs: &mut [Segment],
    cap: u64,
) -> (usize, WindowEnd) {
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
        vec![parse_range(buf, pos, usize::MAX, &mut segs[0], cap)]
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
                    scope.spawn(move || parse_range(buf, from, stop, seg, cap))
                })
                .collect();
            let mut out = vec![parse_range(buf, starts[0], starts[1], &mut first[0], cap)];
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
                match parse_range(buf, p, usize::MAX, &mut segs[k], cap) {
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
pub(crate) fn resync(buf: &[u8], from: usize) -> Option<usize> {
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
/// end of the array, or the end of the buffer; elements over `cap` bytes are skipped and
/// counted.
fn parse_range(buf: &[u8], from: usize, stop: usize, seg: &mut Segment, cap: u64) -> RangeEnd {
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
            Ok(()) if (lx.pos - p) as u64 > cap => skip_oversized(seg, p, cap),
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
