//! One window of the event array: its complete elements parsed into per-worker segments,
//! in parallel at guessed event starts that are verified, never trusted.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

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

/// Parts a large window is cut into per parser thread: the parts are taken by whichever
/// thread is free, and the calling thread merges each finished part in order between
/// parsing its own, so that merging overlaps parsing and no thread waits for an equal
/// half to end. The parts shrink towards the window's end (part `k` of `n` weighs
/// `n - k`), so that a thread left without a part waits only for a short last one.
pub(crate) const PARTS_PER_THREAD: usize = 4;

/// Parse all complete elements of `buf[pos..]`, on `threads` threads when the window is
/// large, and hand each part's segment to `merge` in file order with the index of the
/// segment it is in (`segs` holds one per part, cleared first; a segment's index is the
/// same from window to window). Returns how the window ended, or `merge`'s first error.
/// An element of more than `cap` bytes is counted as [`DefectKind::Oversized`] and not
/// kept.
/// `read_ahead` runs once on this thread while the other threads start on the parts (a
/// streamed input reads its next block there, so that reading and parsing share the
/// cores without a thread of their own).
pub(crate) fn parse_window<E: Send>(
    buf: &[u8],
    pos: usize,
    segs: &mut [Segment],
    (threads, cap): (usize, u64),
    merge: &mut dyn FnMut(&Segment, usize) -> Result<(), E>,
    read_ahead: &mut dyn FnMut(),
) -> Result<WindowEnd, E> {
    for s in segs.iter_mut() {
        s.clear();
    }
    let n = buf.len() - pos;
    let parts = segs.len();
    let mut starts = vec![pos];
    if threads > 1 && parts > 1 && n >= MIN_PARALLEL {
        let finder = memmem::Finder::new(b"\"ph\"");
        // Part j weighs parts - j (see PARTS_PER_THREAD); cut k ends part k - 1.
        let total = parts * (parts + 1) / 2;
        let mut before = 0;
        for k in 1..parts {
            before += parts - (k - 1);
            let target = pos + n * before / total;
            if let Some(s) = find_event_start(buf, target, &finder) {
                if s > *starts.last().unwrap() {
                    starts.push(s);
                }
            }
        }
    }
    if starts.len() == 1 {
        read_ahead();
        let end = parse_range(buf, pos, usize::MAX, &mut segs[0], cap);
        merge(&segs[0], 0)?;
        return Ok(match end {
            RangeEnd::Window(w) => w,
            RangeEnd::Stopped(_) => unreachable!("no stop was set"),
        });
    }
    Parts::new(buf, &starts, segs, cap).run(threads, merge, read_ahead)
}

/// The parts of one window being parsed on several threads.
struct Parts<'a, 's> {
    buf: &'a [u8],
    /// Where each part starts (guessed event starts, verified as the parts are merged).
    starts: &'a [usize],
    /// Each part's segment.
    segs: Vec<Mutex<&'s mut Segment>>,
    cap: u64,
    /// The next part no thread has taken yet (set past the end to stop taking).
    next: AtomicUsize,
    /// How each part ended, once parsed.
    ends: Mutex<Vec<Option<RangeEnd>>>,
    /// Signalled when a part's end is set, or a parser thread panicked.
    parsed: Condvar,
    /// Whether a parser thread panicked (its part never ends: the merge must not wait
    /// for it).
    failed: AtomicBool,
}

impl<'a, 's> Parts<'a, 's> {
    fn new(buf: &'a [u8], starts: &'a [usize], segs: &'s mut [Segment], cap: u64) -> Self {
        let used = starts.len();
        Self {
            buf,
            starts,
            segs: segs[..used].iter_mut().map(Mutex::new).collect(),
            cap,
            next: AtomicUsize::new(0),
            ends: Mutex::new((0..used).map(|_| None).collect()),
            parsed: Condvar::new(),
            failed: AtomicBool::new(false),
        }
    }

    /// Parse parts on `threads - 1` helpers and this thread, after `read_ahead`; merge
    /// them here in order.
    fn run<E: Send>(
        &self,
        threads: usize,
        merge: &mut dyn FnMut(&Segment, usize) -> Result<(), E>,
        read_ahead: &mut dyn FnMut(),
    ) -> Result<WindowEnd, E> {
        std::thread::scope(|scope| {
            for _ in 1..threads.min(self.starts.len()) {
                scope.spawn(|| while self.parse_next() {});
            }
            read_ahead();
            let out = self.merge_in_order(merge);
            // Whatever the outcome, no part is taken after it.
            self.next.store(self.starts.len(), Ordering::SeqCst);
            out
        })
    }

    /// Take the next part no thread has taken, parse it and record how it ended; false
    /// when none is left.
    fn parse_next(&self) -> bool {
        let k = self.next.fetch_add(1, Ordering::SeqCst);
        if k >= self.starts.len() {
            return false;
        }
        let stop = self.starts.get(k + 1).copied().unwrap_or(usize::MAX);
        let _unwinding = Unwinding(self);
        let end = {
            let mut seg = lock(&self.segs[k]);
            parse_range(self.buf, self.starts[k], stop, &mut seg, self.cap)
        };
        lock(&self.ends)[k] = Some(end);
        self.parsed.notify_all();
        true
    }

    /// Merge the parts in order as they are parsed, parsing one while the next to merge
    /// is not ready. A part that did not stop exactly where the next starts (a wrong
    /// guess) ends the parallel parse: the rest of the window is parsed here, into the
    /// next part's segment, once its thread is done with it.
    fn merge_in_order<E>(
        &self,
        merge: &mut dyn FnMut(&Segment, usize) -> Result<(), E>,
    ) -> Result<WindowEnd, E> {
        let used = self.starts.len();
        for k in 0..used {
            let end = loop {
                if let Some(end) = lock(&self.ends)[k].take() {
                    break end;
                }
                if !self.parse_next() {
                    let mut ends = lock(&self.ends);
                    while ends[k].is_none() {
                        assert!(
                            !self.failed.load(Ordering::SeqCst),
                            "a parser thread panicked"
                        );
                        ends = self.parsed.wait(ends).unwrap_or_else(|e| e.into_inner());
                    }
                }
            };
            merge(&lock(&self.segs[k]), k)?;
            match end {
                RangeEnd::Window(w) => return Ok(w),
                RangeEnd::Stopped(p) if self.starts.get(k + 1) == Some(&p) => {}
                RangeEnd::Stopped(p) => {
                    self.next.store(used, Ordering::SeqCst);
                    let mut seg = lock(&self.segs[k + 1]);
                    seg.clear();
                    let end = parse_range(self.buf, p, usize::MAX, &mut seg, self.cap);
                    merge(&seg, k + 1)?;
                    return Ok(match end {
                        RangeEnd::Window(w) => w,
                        RangeEnd::Stopped(_) => unreachable!("no stop was set"),
                    });
                }
            }
        }
        unreachable!("the last part always ends the window")
    }
}

/// Marks its parts as failed and wakes the merging thread when dropped by a panic (a
/// parser that panics never sets its part's end; the panic itself is resumed when the
/// scope ends).
struct Unwinding<'p, 'a, 's>(&'p Parts<'a, 's>);

impl Drop for Unwinding<'_, '_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ends = lock(&self.0.ends);
            self.0.failed.store(true, Ordering::SeqCst);
            self.0.parsed.notify_all();
        }
    }
}

/// A lock taken even when poisoned: a part whose parser panicked is never merged (see
/// [`Unwinding`]; a segment is cleared before it is parsed again), and the panic itself
/// is resumed when the scope ends.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A part whose parser panics never ends: the merging thread must panic too, not
    /// wait for it for ever.
    #[test]
    fn a_panicking_parser_does_not_leave_the_merge_waiting() {
        let buf = br#"[{"ph":"X","name":"a","ts":1,"dur":1},{"ph":"X","name":"b","ts":2,"dur":1}]"#;
        let second = buf.windows(2).rposition(|w| w == b",{").unwrap() + 1;
        let starts = [1, second];
        let mut segs = vec![Segment::new(), Segment::new()];
        let parts = Parts::new(buf, &starts, &mut segs, u64::MAX);
        // Part 0 is taken by a "parser" that panics while holding it.
        let taken = parts.next.fetch_add(1, Ordering::SeqCst);
        assert_eq!(taken, 0);
        let outcome = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _unwinding = Unwinding(&parts);
                    panic!("a parser's bug");
                })
                .join()
                .expect_err("the parser panicked");
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                parts.merge_in_order(&mut |_: &Segment, _| Ok::<(), ()>(()))
            }))
        });
        let Err(message) = outcome else {
            panic!("the merge returned instead of panicking")
        };
        assert_eq!(
            message.downcast_ref::<&str>(),
            Some(&"a parser thread panicked")
        );
    }
}
