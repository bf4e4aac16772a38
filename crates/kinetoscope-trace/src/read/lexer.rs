//! A small JSON lexer over a byte buffer, specialised for Kineto traces: it finds value
//! spans without building a tree, reads exact decimal timestamps, and reports "ran out
//! of input" apart from "malformed" so a streaming caller can wait for more bytes.
//!
//! Hand-written because it is measurably faster than a general parser for this job
//! (see `docs/architecture.md`, "Why a hand-written lexer").

/// Why lexing stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexError {
    /// The buffer ended inside a value: more input is needed.
    Eof,
    /// Malformed input at the lexer's position; the text says what was expected.
    Bad(&'static str),
}

/// The result type of lexing steps.
pub type Lex<T> = Result<T, LexError>;

/// A string value's bytes between its quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrSpan {
    /// First byte after the opening quote.
    pub start: usize,
    /// The closing quote.
    pub end: usize,
    /// Whether it holds a backslash escape.
    pub escaped: bool,
}

/// A cursor over a byte buffer.
pub struct Lexer<'a> {
    /// The buffer.
    pub buf: &'a [u8],
    /// The next byte to read.
    pub pos: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at `pos` in `buf`.
    pub fn new(buf: &'a [u8], pos: usize) -> Self {
        Self { buf, pos }
    }

    /// Skip JSON whitespace.
    #[inline]
    pub fn skip_ws(&mut self) {
        while let Some(&b) = self.buf.get(self.pos) {
            if b == b' ' || b == b'\n' || b == b'\r' || b == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// The next non-whitespace byte, without consuming it.
    #[inline]
    pub fn peek(&mut self) -> Lex<u8> {
        self.skip_ws();
        self.buf.get(self.pos).copied().ok_or(LexError::Eof)
    }

    /// Consume `b` (after whitespace) or fail with `what`.
    #[inline]
    pub fn expect(&mut self, b: u8, what: &'static str) -> Lex<()> {
        if self.peek()? == b {
            self.pos += 1;
            Ok(())
        } else {
            Err(LexError::Bad(what))
        }
    }

    /// Read a string starting at the current (non-whitespace) byte, which must be `"`.
    #[inline]
    pub fn string(&mut self) -> Lex<StrSpan> {
        if self.peek()? != b'"' {
            return Err(LexError::Bad("expected a string"));
        }
        let buf = self.buf;
        let start = self.pos + 1;
        // Most strings in a trace are short keys and names: scanning eight bytes at a
        // time beats setting up a SIMD search there.
        let limit = (start + 64).min(buf.len());
        let mut i = start;
        while i + 8 <= limit {
            let word = u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
            match first_quote_or_backslash(word) {
                Some(k) => {
                    i += k;
                    break;
                }
                None => i += 8,
            }
        }
        while i < limit && buf[i] != b'"' && buf[i] != b'\\' {
            i += 1;
        }
        if i < buf.len() && buf[i] == b'"' {
            self.pos = i + 1;
            return Ok(StrSpan {
                start,
                end: i,
                escaped: false,
            });
        }
        let mut escaped = false;
        loop {
            match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                None => return Err(LexError::Eof),
                Some(k) => {
                    let at = i + k;
                    if buf[at] == b'"' {
                        self.pos = at + 1;
                        return Ok(StrSpan {
                            start,
                            end: at,
                            escaped,
                        });
                    }
                    escaped = true;
                    if at + 1 >= buf.len() {
                        return Err(LexError::Eof);
                    }
                    i = at + 2;
                }
            }
        }
    }

    /// The raw bytes of a number (or of a bare token such as `N/A`, `nan`, `inf`) at the
    /// current position.
    #[inline]
    pub fn scalar(&mut self) -> Lex<(usize, usize)> {
        self.skip_ws();
        let start = self.pos;
        let mut i = start;
        while let Some(&b) = self.buf.get(i) {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'/' | b'_') {
                i += 1;
            } else {
                break;
            }
        }
        if i == self.buf.len() {
            return Err(LexError::Eof);
        }
        if i == start {
            return Err(LexError::Bad("expected a value"));
        }
        self.pos = i;
        Ok((start, i))
    }

    /// Skip one value of any type and return its span. A bare token that is not valid
    /// JSON (`N/A`, `nan`) is skipped too; `bare` is set when that happens.
    pub fn skip_value(&mut self, bare: &mut bool) -> Lex<(usize, usize)> {
        let c = self.peek()?;
        let start = self.pos;
        match c {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => self.skip_nested()?,
            _ => {
                let (s, e) = self.scalar()?;
                if !is_json_scalar(&self.buf[s..e]) {
                    *bare = true;
                }
            }
        }
        Ok((start, self.pos))
    }

    fn skip_nested(&mut self) -> Lex<()> {
        let mut depth = 0usize;
        let buf = self.buf;
        let mut i = self.pos;
        while i < buf.len() {
            match buf[i] {
                b'"' => {
                    self.pos = i;
                    self.string()?;
                    i = self.pos;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err(LexError::Eof)
    }
}

/// Index (0–7) of the first `"` or `\\` byte in a little-endian word, if any. Uses the
/// classic "has zero byte" bit trick on the word XOR each target byte; the lowest flagged
/// byte is always a true match.
#[inline]
fn first_quote_or_backslash(word: u64) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let q = word ^ (LO * b'"' as u64);
    let b = word ^ (LO * b'\\' as u64);
    let hits = (q.wrapping_sub(LO) & !q | b.wrapping_sub(LO) & !b) & HI;
    (hits != 0).then(|| (hits.trailing_zeros() / 8) as usize)
}

/// Whether `s` is a valid JSON number or literal.
pub fn is_json_scalar(s: &[u8]) -> bool {
    match s {
        b"true" | b"false" | b"null" => true,
        _ => {
            let body = s.strip_prefix(b"-").unwrap_or(s);
            !body.is_empty()
                && body[0].is_ascii_digit()
                && body
                    .iter()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        }
    }
}

/// Parse a JSON number of microseconds into exact integer nanoseconds: the integer part
/// times 1000 plus the first three fraction digits (a fourth digit rounds half up).
/// Exponent forms go through `f64` (never written by Kineto). Returns `None` for text
/// that is not a number.
pub fn micros_to_ns(s: &[u8]) -> Option<i64> {
    let (neg, body) = match s.first()? {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let mut int: i64 = 0;
    let mut i = 0;
    while i < body.len() && body[i].is_ascii_digit() {
        int = int.checked_mul(10)?.checked_add((body[i] - b'0') as i64)?;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut frac: i64 = 0;
    if i < body.len() && body[i] == b'.' {
        i += 1;
        let mut digits = 0;
        let mut round = false;
        while i < body.len() && body[i].is_ascii_digit() {
            if digits < 3 {
                frac = frac * 10 + (body[i] - b'0') as i64;
            } else if digits == 3 {
                round = body[i] >= b'5';
            }
            digits += 1;
            i += 1;
        }
        for _ in digits.min(3)..3 {
            frac *= 10;
        }
        if round {
            frac += 1;
        }
    }
    if i < body.len() {
        let f: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
        return Some((f * 1000.0).round() as i64);
    }
    let ns = int.checked_mul(1000)?.checked_add(frac)?;
    Some(if neg { -ns } else { ns })
}

/// Parse an integer; a float is truncated toward zero. `None` when not a number.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, body) = match s.first()? {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    let mut i = 0;
    while i < body.len() && body[i].is_ascii_digit() {
        v = v.checked_mul(10)?.checked_add((body[i] - b'0') as i64)?;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    if i < body.len() {
        let f: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
        if !f.is_finite() {
            return None;
        }
        return Some(f as i64);
    }
    Some(if neg { -v } else { v })
}

/// Parse a floating-point number; `None` when not a number.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Decode a JSON string's bytes (between quotes) into text: escapes are resolved, invalid
/// UTF-8 is replaced.
pub fn decode_str(raw: &[u8], escaped: bool) -> std::borrow::Cow<'_, str> {
    if !escaped {
        return String::from_utf8_lossy(raw);
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    match serde_json::from_slice::<String>(&quoted) {
        Ok(s) => std::borrow::Cow::Owned(s),
        Err(_) => std::borrow::Cow::Owned(String::from_utf8_lossy(raw).replace('\\', "/")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact_nanoseconds() {
        assert_eq!(
            micros_to_ns(b"4380983323465.801"),
            Some(4_380_983_323_465_801)
        );
        assert_eq!(
            micros_to_ns(b"1623142623460111"),
            Some(1_623_142_623_460_111_000)
        );
        assert_eq!(
            micros_to_ns(b"1712195495519689.047"),
            Some(1_712_195_495_519_689_047)
        );
        assert_eq!(micros_to_ns(b"1.5"), Some(1500));
        assert_eq!(micros_to_ns(b"0.0005"), Some(1));
        assert_eq!(micros_to_ns(b"-2.25"), Some(-2250));
        assert_eq!(micros_to_ns(b"1e3"), Some(1_000_000));
        assert_eq!(micros_to_ns(b"N/A"), None);
    }

    #[test]
    fn skip_value_handles_nesting_and_bare_tokens() {
        let text = br#"{"a": [1, {"b": "x}"}], "c": N/A}"#;
        let mut lx = Lexer::new(text, 0);
        let mut bare = false;
        assert_eq!(lx.skip_value(&mut bare), Ok((0, text.len())));
        assert!(!bare);
        let mut lx = Lexer::new(b"N/A,", 0);
        lx.skip_value(&mut bare).unwrap();
        assert!(bare);
    }

    #[test]
    fn strings_of_every_length_and_escape_position() {
        for len in 0..80 {
            let body: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let text = format!("\"{body}\",");
            let mut lx = Lexer::new(text.as_bytes(), 0);
            let s = lx.string().unwrap();
            assert_eq!(
                (s.start, s.end, s.escaped),
                (1, 1 + len, false),
                "len {len}"
            );
            for at in 0..len {
                let mut esc = body.clone();
                esc.insert_str(at, "\\\"");
                let text = format!("\"{esc}\"");
                let mut lx = Lexer::new(text.as_bytes(), 0);
                let s = lx.string().unwrap();
                assert_eq!(
                    (s.end, s.escaped),
                    (text.len() - 1, true),
                    "len {len} at {at}"
                );
            }
        }
        assert_eq!(
            first_quote_or_backslash(u64::from_le_bytes(*b"ab\"cd\\ef")),
            Some(2)
        );
        assert_eq!(
            first_quote_or_backslash(u64::from_le_bytes(*b"abcdefgh")),
            None
        );
    }

    #[test]
    fn running_out_is_not_malformed() {
        let mut lx = Lexer::new(br#""abc"#, 0);
        assert_eq!(lx.string(), Err(LexError::Eof));
        let mut lx = Lexer::new(br#"[1, 2"#, 0);
        assert_eq!(lx.skip_value(&mut false), Err(LexError::Eof));
    }
}
