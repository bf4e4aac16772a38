//! The top level of a trace outside its event array — the keys before `traceEvents` and
//! after it — walked as a stream: bytes are fed in pieces of any size, whitespace and
//! values of unknown keys are streamed past ([`Skipper`]) and never buffered, and only
//! the values of the keys the reader uses ([`super::header::KNOWN_KEYS`]) are kept, each
//! up to the element cap ([`super::ReadOptions::max_element_bytes`]).

use super::header::KNOWN_KEYS;

/// Longest key kept to compare with the known keys; a longer one is unknown.
const MAX_KEY: usize = 64;

/// Where a value being skipped stands: it holds only a nesting depth and two flags, so
/// a value of any size costs no memory.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Skipper {
    depth: u64,
    in_string: bool,
    escape: bool,
    started: bool,
    scalar: bool,
}

/// How feeding a [`Skipper`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// The value goes on past this piece.
    More,
    /// The value ended just before this index of the piece.
    Done(usize),
    /// A byte at this index cannot start a value (`,`, `:`, `}`, `]`).
    Bad(usize),
}

impl Skipper {
    /// Feed the next piece of the value (leading whitespace is skipped).
    pub fn feed(&mut self, buf: &[u8]) -> Skip {
        let mut i = 0;
        while i < buf.len() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    i += 1;
                    continue;
                }
                let Some(k) = memchr::memchr2(b'"', b'\\', &buf[i..]) else {
                    return Skip::More;
                };
                i += k + 1;
                if buf[i - 1] == b'\\' {
                    self.escape = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Skip::Done(i);
                    }
                }
                continue;
            }
            let b = buf[i];
            if b == b' ' && !self.scalar {
                i = skip_spaces(buf, i);
                continue;
            }
            if !self.started {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth = 1,
                    b',' | b':' | b'}' | b']' => return Skip::Bad(i),
                    _ => self.scalar = true,
                }
                self.started = b != b' ' && b != b'\t' && b != b'\r' && b != b'\n';
                i += 1;
                continue;
            }
            if self.scalar {
                if is_scalar_byte(b) {
                    i += 1;
                    continue;
                }
                return Skip::Done(i);
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Skip::Done(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Skip::More
    }
}

/// The index after the run of spaces at `buf[i]` (padding, or a bomb of them), read a
/// word at a time.
fn skip_spaces(buf: &[u8], mut i: usize) -> usize {
    while buf.len() - i >= 8 && buf[i..i + 8] == [b' '; 8] {
        i += 8;
    }
    while buf.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// A byte that continues a number or a bare word (`true`, `N/A`, `nan`).
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'/' | b'_')
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Where the walk of the top-level object stands between pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the first byte that is not whitespace.
    Start,
    /// After a top-level `[`: the next byte says whether it holds events.
    BareOpen,
    /// Expecting a key, `,` or `}`.
    Member,
    /// Inside a key string.
    Key { escape: bool },
    /// Expecting `:` after a key.
    Colon,
    /// Expecting the value of a key.
    Value,
    /// Expecting the `[` of `traceEvents`.
    Events,
    /// Inside a value being skipped (and kept, for a known key).
    InValue,
    /// Expecting `,` or `}` after a value.
    AfterValue,
    /// The object closed.
    Done,
}

/// What a piece fed to [`TopLevel`] ended on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Everything was consumed; feed the next piece.
    More,
    /// The event array of `traceEvents` opens; its first element is at this index.
    Events(usize),
    /// The text is a bare array of events; its first element is at this index.
    BareArray(usize),
    /// The top-level object closed just before this index.
    End(usize),
}

/// Why the top level is not a trace's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TopError {
    /// It is some other kind of text.
    NotATrace(&'static str),
    /// Malformed at this absolute offset.
    Bad(u64, &'static str),
    /// In strict mode, a value larger than the cap starts at this absolute offset.
    Oversized(u64),
}

/// A streaming walker over a trace's top-level object (outside the event array).
pub(crate) struct TopLevel {
    state: State,
    cap: u64,
    strict: bool,
    key: Vec<u8>,
    key_too_long: bool,
    skip: Skipper,
    /// The value of a known key, while it is under the cap.
    value: Option<Vec<u8>>,
    value_start: u64,
    /// Known keys and their values, in order, as they complete.
    pub keys: Vec<(String, Vec<u8>)>,
    /// Values over the cap that were skipped: count and first absolute offset.
    pub oversized: Option<(u64, u64)>,
}

impl TopLevel {
    /// A walker at the start of the text; values over `cap` bytes are an error when
    /// `strict`, else skipped and counted.
    pub fn new(cap: u64, strict: bool) -> Self {
        Self {
            state: State::Start,
            cap,
            strict,
            key: Vec::new(),
            key_too_long: false,
            skip: Skipper::default(),
            value: None,
            value_start: 0,
            keys: Vec::new(),
            oversized: None,
        }
    }

    /// Continue after the event array, which closed: next come `,` or `}`.
    pub fn after_events(&mut self) {
        self.state = State::AfterValue;
    }

    /// Feed the next piece; `base` is the absolute offset of `buf[0]` in the text.
    pub fn feed(&mut self, buf: &[u8], base: u64) -> Result<Step, TopError> {
        let mut i = 0;
        if base == 0 && self.state == State::Start && buf.starts_with(&[0xef, 0xbb, 0xbf]) {
            i = 3;
        }
        while i < buf.len() {
            let b = buf[i];
            let at = base + i as u64;
            match self.state {
                State::InValue => {
                    i += self.value_piece(&buf[i..], base + i as u64)?;
                    continue;
                }
                State::Key { escape } => {
                    i += self.key_piece(&buf[i..], escape);
                    continue;
                }
                State::Done => return Ok(Step::End(i)),
                _ if b == b' ' => {
                    i = skip_spaces(buf, i);
                    continue;
                }
                _ if is_ws(b) => {}
                State::Start => match b {
                    b'{' => self.state = State::Member,
                    b'[' => self.state = State::BareOpen,
                    _ => return Err(TopError::NotATrace("text that is not a JSON object")),
                },
                State::BareOpen => {
                    return match b {
                        b'{' | b']' => Ok(Step::BareArray(i)),
                        b'[' => Err(TopError::NotATrace(
                            "a JSON array of arrays (a memory timeline? those are read by `kinetoscope memory`)",
                        )),
                        _ => Err(TopError::NotATrace(
                            "a JSON array that does not hold trace events",
                        )),
                    }
                }
                State::Member => match b {
                    b'}' => {
                        self.state = State::Done;
                        return Ok(Step::End(i + 1));
                    }
                    b',' => {}
                    b'"' => {
                        self.key.clear();
                        self.key_too_long = false;
                        self.state = State::Key { escape: false };
                    }
                    _ => return Err(TopError::Bad(at, "expected a string")),
                },
                State::Colon if b == b':' => {
                    self.state = if self.key == b"traceEvents" {
                        State::Events
                    } else {
                        State::Value
                    };
                }
                State::Colon => return Err(TopError::Bad(at, "expected `:` after a top-level key")),
                State::Events if b == b'[' => {
                    self.state = State::AfterValue;
                    return Ok(Step::Events(i + 1));
                }
                State::Events => {
                    return Err(TopError::Bad(at, "expected `[` after \"traceEvents\":"))
                }
                State::Value => {
                    self.skip = Skipper::default();
                    self.value_start = at;
                    let known = !self.key_too_long
                        && std::str::from_utf8(&self.key).is_ok_and(|k| KNOWN_KEYS.contains(&k));
                    self.value = known.then(Vec::new);
                    self.state = State::InValue;
                    continue;
                }
                State::AfterValue => match b {
                    b',' => self.state = State::Member,
                    b'}' => {
                        self.state = State::Done;
                        return Ok(Step::End(i + 1));
                    }
                    _ => return Err(TopError::Bad(at, "expected `,` or `}` after a value")),
                },
            }
            i += 1;
        }
        Ok(Step::More)
    }

    /// Consume key bytes up to and including the closing quote; returns how many.
    fn key_piece(&mut self, buf: &[u8], mut escape: bool) -> usize {
        for (k, &b) in buf.iter().enumerate() {
            if escape {
                escape = false;
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                self.state = State::Colon;
                return k + 1;
            }
            if self.key.len() < MAX_KEY {
                self.key.push(b);
            } else {
                self.key_too_long = true;
            }
        }
        self.state = State::Key { escape };
        buf.len()
    }

    /// Consume value bytes up to the end of the value; returns how many.
    fn value_piece(&mut self, buf: &[u8], at: u64) -> Result<usize, TopError> {
        let (used, done) = match self.skip.feed(buf) {
            Skip::More => (buf.len(), false),
            Skip::Done(n) => (n, true),
            Skip::Bad(_) => return Err(TopError::Bad(at, "expected a value")),
        };
        let size = at + used as u64 - self.value_start;
        if size > self.cap {
            if self.strict {
                return Err(TopError::Oversized(self.value_start));
            }
            self.value = None;
        }
        if let Some(v) = &mut self.value {
            v.extend_from_slice(&buf[..used]);
        }
        if done {
            if size > self.cap {
                let o = self.oversized.get_or_insert((0, self.value_start));
                o.0 += 1;
            }
            if let Some(v) = self.value.take() {
                let key = String::from_utf8_lossy(&self.key).into_owned();
                self.keys.push((key, v));
            }
            self.state = State::AfterValue;
        }
        Ok(used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `text` cut at every position into two pieces, and into single bytes; the
    /// outcome must not depend on where the pieces end.
    /// How a walk ended, and the known keys it kept.
    type Outcome = (Result<Step, TopError>, Vec<(String, Vec<u8>)>);

    fn walk(text: &[u8], cap: u64) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for cut in 0..=text.len() {
            outcomes.push(walk_pieces(text, &[cut], cap));
        }
        let ones: Vec<usize> = (1..text.len()).collect();
        outcomes.push(walk_pieces(text, &ones, cap));
        outcomes
    }

    /// Walk `text` in pieces cut at `cuts`; the step is reported with its absolute index.
    fn walk_pieces(text: &[u8], cuts: &[usize], cap: u64) -> Outcome {
        let mut top = TopLevel::new(cap, false);
        let mut from = 0;
        let mut bounds: Vec<usize> = cuts.to_vec();
        bounds.push(text.len());
        for to in bounds {
            match top.feed(&text[from..to], from as u64) {
                Ok(Step::More) => from = to,
                Ok(Step::Events(i)) => return (Ok(Step::Events(from + i)), top.keys),
                Ok(Step::BareArray(i)) => return (Ok(Step::BareArray(from + i)), top.keys),
                Ok(Step::End(i)) => return (Ok(Step::End(from + i)), top.keys),
                Err(e) => return (Err(e), top.keys),
            }
        }
        (Ok(Step::More), top.keys)
    }

    #[test]
    fn known_keys_are_kept_and_unknown_ones_skipped_wherever_pieces_end() {
        let text = br#"{"junk": [1, {"a": "x]}\"["}, [[]]], "schemaVersion": 1,
            "deviceProperties": [{"name": "A\"100"}], "x": "y", "traceEvents": [{"ph": "X"}]}"#;
        let open = br#""traceEvents": ["#;
        let at = text.windows(open.len()).position(|w| w == open).unwrap() + open.len();
        for (step, keys) in walk(text, 1 << 20) {
            assert_eq!(step, Ok(Step::Events(at)));
            let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(names, ["schemaVersion", "deviceProperties"]);
            assert_eq!(keys[0].1, b"1");
            assert_eq!(keys[1].1, br#"[{"name": "A\"100"}]"#);
        }
    }

    #[test]
    fn the_trailer_is_walked_to_the_closing_brace() {
        let text = br#"], "traceName": "t", "junk": 12, "baseTimeNanoseconds": 5 }  "#;
        for cut in 1..text.len() {
            let mut top = TopLevel::new(1 << 20, false);
            top.after_events();
            let a = top.feed(&text[1..cut], 1).unwrap();
            let b = if a == Step::More {
                top.feed(&text[cut..], cut as u64).unwrap()
            } else {
                a
            };
            assert!(matches!(b, Step::End(_)), "cut {cut}: {b:?}");
            let names: Vec<&str> = top.keys.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(names, ["traceName", "baseTimeNanoseconds"], "cut {cut}");
        }
    }

    #[test]
    fn values_over_the_cap_are_skipped_and_counted_or_refused() {
        let text =
            br#"{"distributedInfo": [11111111111], "junk": "0123456789abc", "traceEvents": []}"#;
        for (step, keys) in walk(text, 12) {
            assert!(matches!(step, Ok(Step::Events(_))), "{step:?}");
            assert!(keys.is_empty());
        }
        let mut top = TopLevel::new(12, false);
        top.feed(text, 0).unwrap();
        assert_eq!(top.oversized, Some((2, 20)));
        let mut strict = TopLevel::new(12, true);
        assert_eq!(strict.feed(text, 0), Err(TopError::Oversized(20)));
    }

    #[test]
    fn bare_arrays_timelines_and_garbage_are_told_apart() {
        assert_eq!(walk_pieces(b" [ {", &[2], 9).0, Ok(Step::BareArray(3)));
        assert!(matches!(
            walk_pieces(b"[[1]]", &[1], 9).0,
            Err(TopError::NotATrace(_))
        ));
        assert!(matches!(
            walk_pieces(b"hello", &[], 9).0,
            Err(TopError::NotATrace(_))
        ));
        assert_eq!(
            walk_pieces(br#"{"a" 1}"#, &[], 9).0,
            Err(TopError::Bad(5, "expected `:` after a top-level key"))
        );
        assert_eq!(
            walk_pieces(br#"{"traceEvents": 1}"#, &[], 9).0,
            Err(TopError::Bad(16, "expected `[` after \"traceEvents\":"))
        );
        assert_eq!(walk_pieces(br#"{"a": 1}"#, &[3], 9).0, Ok(Step::End(8)));
    }

    #[test]
    fn the_skipper_ends_values_of_every_kind_at_every_cut() {
        let cases: [(&[u8], usize); 5] = [
            (b"  123 ,", 5),
            (br#""a\"b\\" x"#, 8),
            (br#"{"a": [1, "]"], "b": {}} ,"#, 24),
            (b"[[[[]]]]]", 8),
            (b"N/A}", 3),
        ];
        for (text, end) in cases {
            for cut in 0..=text.len() {
                let mut s = Skipper::default();
                let got = match s.feed(&text[..cut]) {
                    Skip::More => match s.feed(&text[cut..]) {
                        Skip::Done(n) => Skip::Done(cut + n),
                        other => other,
                    },
                    done => done,
                };
                assert_eq!(got, Skip::Done(end), "{:?} cut {cut}", text.escape_ascii());
            }
        }
        assert_eq!(Skipper::default().feed(b" ]"), Skip::Bad(1));
    }
}
