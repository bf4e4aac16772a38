//! The byte span of every element of a Kineto trace's event array, with the few fields
//! a writer of a smaller trace decides on (`ph`, `cat`, `name`, `ts`, `dur`, `pid`,
//! `tid`, flow `id`, `correlation`). This is the reader's lexer walking a trace that is
//! whole in memory, one element after another; it builds no model, so the normal read
//! ([`super::read_trace`]) is untouched by it.
//!
//! [`TraceText`] holds a trace's text (a plain file mapped, a gzip file inflated);
//! [`EventSpans`] walks it. Everything outside the event array is left to the caller as
//! bytes: [`EventSpans::prefix`] (up to and including the array's `[`) and
//! [`EventSpans::suffix`] (from the array's `]` to the end), so keys such as
//! `deviceProperties` or `baseTimeNanoseconds` can be copied byte for byte.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::event::{parse_event, RawEvent};
pub use super::event::{ElementDefects, IdValue};
use super::lexer::{LexError, Lexer, StrSpan};
use super::toplevel::{Step, TopError, TopLevel};
use super::window::resync;
use crate::{TraceError, TraceResult};

/// A trace's whole text in memory: a plain file mapped, a gzip file (or gzip bytes)
/// inflated.
pub struct TraceText {
    path: PathBuf,
    text: Text,
}

enum Text {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl TraceText {
    /// Open `path`: mapped when it is plain, inflated when it is gzip.
    pub fn open(path: &Path) -> TraceResult<Self> {
        let io = |source| TraceError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut head = [0u8; 2];
        let n = (&file).read(&mut head).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if n == 2 && head == [0x1f, 0x8b] || !meta.is_file() {
            let mut data = Vec::new();
            std::fs::File::open(path)
                .and_then(|mut f| f.read_to_end(&mut data))
                .map_err(io)?;
            return Self::from_bytes(path, data);
        }
        // SAFETY: the mapping is only read; a file truncated under it faults, as
        // `ReadOptions::mmap` documents for the normal read.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(Self {
            path: path.to_owned(),
            text: Text::Mapped(map),
        })
    }

    /// Bytes of a trace (plain, or gzip inflated here); `name` is used in messages.
    pub fn from_bytes(name: &Path, data: Vec<u8>) -> TraceResult<Self> {
        let data = if data.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&data[..])
                .read_to_end(&mut out)
                .map_err(|source| TraceError::Io {
                    path: name.to_owned(),
                    source,
                })?;
            out
        } else {
            data
        };
        Ok(Self {
            path: name.to_owned(),
            text: Text::Owned(data),
        })
    }

    /// The text.
    pub fn bytes(&self) -> &[u8] {
        match &self.text {
            Text::Mapped(m) => m,
            Text::Owned(v) => v,
        }
    }

    /// Drop the pages before `upto` from the resident set when the text is a mapped
    /// file (a walk calls it as it advances; a later read of those bytes faults them
    /// back in from the page cache). Nothing for text held in memory.
    pub fn release(&self, upto: usize) {
        if let Text::Mapped(map) = &self.text {
            let len = upto.min(map.len()) / 4096 * 4096;
            if len > 0 {
                // SAFETY: DONTNEED on a read-only file mapping only drops resident
                // pages; a later read faults them back in from the page cache.
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, len)
                };
            }
        }
    }

    /// The path it came from (or the name it was given).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Walk its event array.
    pub fn spans(&self) -> TraceResult<EventSpans<'_>> {
        EventSpans::new(&self.path, self.bytes())
    }
}

/// One element of the event array.
#[derive(Clone, Debug)]
pub enum SpanItem {
    /// An element the lexer read: its span and fields.
    Event(EventSpan),
    /// An element that is not a readable event (skipped by the normal read too): the
    /// bytes from its start to where the next element starts.
    Malformed {
        /// First byte.
        start: usize,
        /// One past its last byte.
        end: usize,
    },
}

/// An event's bytes (`start..end`, from `{` to `}` inclusive) and the fields a trimmer
/// decides on. Strings are spans into the text (their raw, escaped bytes).
#[derive(Clone, Debug)]
pub struct EventSpan {
    /// First byte (`{`).
    pub start: usize,
    /// One past the closing `}`.
    pub end: usize,
    /// The first byte of `ph` (0 when absent).
    pub ph: u8,
    /// `cat`.
    pub cat: Option<StrSpan>,
    /// `name` (a name with an unescaped quote spans to its real end).
    pub name: Option<StrSpan>,
    /// `ts` in ns as written (relative to `baseTimeNanoseconds` in 2.4+ files).
    pub ts_ns: Option<i64>,
    /// `dur` in ns (0 when absent or negative).
    pub dur_ns: i64,
    /// `pid`.
    pub pid: IdValue,
    /// `tid`.
    pub tid: IdValue,
    /// A flow's `id`.
    pub id: Option<u64>,
    /// `args.correlation` (CUPTI's launch ↔ activity link).
    pub correlation: Option<i64>,
    /// `args.name` of a metadata event (a thread's or process's name).
    pub meta_text: Option<StrSpan>,
    /// What the lexer had to tolerate in it (it is then not valid JSON).
    pub defects: ElementDefects,
}

impl EventSpan {
    /// The bytes of this event in `text`.
    pub fn bytes<'a>(&self, text: &'a [u8]) -> &'a [u8] {
        &text[self.start..self.end]
    }
}

/// Where the value of the top-level `key` of one event object (`event`, from `{` to
/// `}`) lies, relative to `event`: the number, the string with its quotes, or the
/// object. `None` when the key is absent or the object cannot be walked.
pub fn value_range(event: &[u8], key: &str) -> Option<(usize, usize)> {
    let mut lx = Lexer::new(event, 0);
    lx.expect(b'{', "").ok()?;
    loop {
        if lx.peek().ok()? == b'}' {
            return None;
        }
        let k = lx.string().ok()?;
        lx.expect(b':', "").ok()?;
        let mut bare = false;
        let (s, e) = lx.skip_value(&mut bare).ok()?;
        if &event[k.start..k.end] == key.as_bytes() {
            return Some((s, e));
        }
        match lx.peek().ok()? {
            b',' => lx.pos += 1,
            _ => return None,
        }
    }
}

/// A walk over the elements of a trace's event array, in file order.
pub struct EventSpans<'a> {
    text: &'a [u8],
    events_start: usize,
    /// Where the array's `]` is, once reached.
    close: Option<usize>,
    bare: bool,
    pos: usize,
    done: bool,
    raw: RawEvent,
}

impl<'a> EventSpans<'a> {
    /// Start walking `text` (whole, inflated); `path` names it in errors.
    pub fn new(path: &Path, text: &'a [u8]) -> TraceResult<Self> {
        let mut top = TopLevel::new(u64::MAX, false);
        let (pos, bare) = match top.feed(text, 0) {
            Ok(Step::Events(p)) => (p, false),
            Ok(Step::BareArray(p)) => (p, true),
            Ok(Step::End(_)) | Ok(Step::More) => {
                return Err(TraceError::NotATrace {
                    path: path.to_owned(),
                    looks_like: "JSON without a `traceEvents` array".into(),
                })
            }
            Err(TopError::NotATrace(what)) => {
                return Err(TraceError::NotATrace {
                    path: path.to_owned(),
                    looks_like: what.into(),
                })
            }
            Err(TopError::Bad(offset, message)) => {
                return Err(TraceError::Malformed {
                    path: path.to_owned(),
                    offset,
                    event_index: None,
                    message: message.to_owned(),
                })
            }
            Err(TopError::Oversized(offset)) => unreachable!("no cap at {offset}"),
        };
        Ok(Self {
            text,
            events_start: pos,
            close: None,
            bare,
            pos,
            done: false,
            raw: RawEvent::default(),
        })
    }

    /// The text before the first element: the top-level keys before `traceEvents` and
    /// the array's `[` (for a bare array, its `[`).
    pub fn prefix(&self) -> &'a [u8] {
        &self.text[..self.events_start]
    }

    /// The text from the array's `]` to the end, once the walk has reached it; `None`
    /// before, or when the text ends inside the array (a truncated trace).
    pub fn suffix(&self) -> Option<&'a [u8]> {
        self.close.map(|c| &self.text[c..])
    }

    /// Whether the trace is a bare array of events rather than an object.
    pub fn is_bare_array(&self) -> bool {
        self.bare
    }

    /// Whether the walk ended inside the array (the text is truncated).
    pub fn truncated(&self) -> bool {
        self.done && self.close.is_none()
    }
}

impl Iterator for EventSpans<'_> {
    type Item = SpanItem;

    fn next(&mut self) -> Option<SpanItem> {
        if self.done {
            return None;
        }
        let text = self.text;
        let mut lx = Lexer::new(text, self.pos);
        lx.skip_ws();
        while text.get(lx.pos) == Some(&b',') {
            lx.pos += 1;
            lx.skip_ws();
        }
        let p = lx.pos;
        match text.get(p) {
            None => {
                self.done = true;
                return None;
            }
            Some(b']') => {
                self.done = true;
                self.close = Some(p);
                return None;
            }
            Some(_) => {}
        }
        self.raw.reset();
        match parse_event(&mut lx, &mut self.raw) {
            Ok(()) => {
                self.pos = lx.pos;
                let r = &self.raw;
                Some(SpanItem::Event(EventSpan {
                    start: p,
                    end: lx.pos,
                    ph: r.ph,
                    cat: r.cat,
                    name: r.name,
                    ts_ns: r.ts_ns,
                    dur_ns: r.dur_ns,
                    pid: r.pid,
                    tid: r.tid,
                    id: r.id,
                    correlation: r.args.correlation,
                    meta_text: r.args.meta_text,
                    defects: r.defects,
                }))
            }
            Err(LexError::Eof) => {
                self.done = true;
                None
            }
            Err(LexError::Bad(_)) => match resync(text, p + 1) {
                Some(q) => {
                    self.pos = q;
                    Some(SpanItem::Malformed { start: p, end: q })
                }
                None => {
                    self.done = true;
                    None
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(text: &[u8]) -> (Vec<SpanItem>, Option<Vec<u8>>, Vec<u8>) {
        let mut s = EventSpans::new(Path::new("t.json"), text).unwrap();
        let items: Vec<_> = s.by_ref().collect();
        (items, s.suffix().map(<[u8]>::to_vec), s.prefix().to_vec())
    }

    #[test]
    fn spans_are_the_events_bytes_and_the_rest_is_kept() {
        let text = br#"{"a": 1, "traceEvents": [ {"ph": "X", "name": "x", "ts": 1.5, "dur": 2, "pid": 1, "tid": "s", "args": {"correlation": 7}},
  {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}} ], "b": [2]}"#;
        let (items, suffix, prefix) = walk(text);
        assert_eq!(prefix, br#"{"a": 1, "traceEvents": ["#);
        assert_eq!(suffix.unwrap(), br#"], "b": [2]}"#);
        assert_eq!(items.len(), 2);
        let SpanItem::Event(e) = &items[0] else {
            panic!()
        };
        assert_eq!(e.ph, b'X');
        assert_eq!(e.ts_ns, Some(1500));
        assert_eq!(e.dur_ns, 2000);
        assert_eq!(e.correlation, Some(7));
        assert!(e.bytes(text).starts_with(b"{\"ph\": \"X\""));
        assert!(e.bytes(text).ends_with(b"7}}"));
        let SpanItem::Event(m) = &items[1] else {
            panic!()
        };
        let t = m.meta_text.unwrap();
        assert_eq!(&text[t.start..t.end], b"main");
        let (s, e2) = value_range(e.bytes(text), "tid").unwrap();
        assert_eq!(&e.bytes(text)[s..e2], b"\"s\"");
        assert_eq!(value_range(e.bytes(text), "nope"), None);
    }

    #[test]
    fn malformed_and_truncated_elements() {
        let text = br#"[{"ph": "X", "name": 1 2}, {"ph": "i", "ts": 3}, {"ph": "X", "na"#;
        let mut s = EventSpans::new(Path::new("t.json"), text).unwrap();
        assert!(s.is_bare_array());
        let items: Vec<_> = s.by_ref().collect();
        assert!(matches!(items[0], SpanItem::Malformed { start: 1, .. }));
        assert!(matches!(items[1], SpanItem::Event(_)));
        assert_eq!(items.len(), 2);
        assert!(s.truncated());
        assert_eq!(s.suffix(), None);
    }
}
