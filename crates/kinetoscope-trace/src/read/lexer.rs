//! A small JSON lexer over a byte buffer, specialised for Kineto traces: it finds value
//! spans without building a tree, reads exact decimal timestamps, and reports "ran out
//! of input" apart from "malformed" so a streaming caller can wait for more bytes.
//!
//! Hand-written because it is measurably faster than a general parser for this job
//! (see `docs/architecture.md`, "Why a hand-written lexer").

use super::block16::{block_at, first, quote_or_backslash, structural, whitespace_end, Structural};

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
        // One comparison for the usual case, a byte that is not whitespace, and two more
        // for the next most usual, one space after a comma or a colon.
        if let Some(&b) = self.buf.get(self.pos) {
            if b <= b' ' {
                if b == b' ' && self.buf.get(self.pos + 1).is_some_and(|&n| n > b' ') {
                    self.pos += 1;
                } else {
                    self.skip_ws_run();
                }
            }
        }
    }

    /// [`Lexer::skip_ws`] at a byte that may be whitespace, when it is not one space: a
    /// newline and a pretty-printed file's indentation are skipped by blocks
    /// ([`whitespace_end`]). Kept out of line: minified text never comes here.
    #[inline(never)]
    fn skip_ws_run(&mut self) {
        self.pos = whitespace_end(self.buf, self.pos);
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
    ///
    /// Most strings in a trace are keys and short values that end within 16 bytes: those
    /// are found here, inline, from one block; longer or escaped strings go to
    /// [`Lexer::string_rest`].
    #[inline(always)]
    pub fn string(&mut self) -> Lex<StrSpan> {
        self.skip_ws();
        let buf = self.buf;
        match buf.get(self.pos) {
            Some(b'"') => {}
            Some(_) => return Err(LexError::Bad("expected a string")),
            None => return Err(LexError::Eof),
        }
        let start = self.pos + 1;
        if let Some(block) = block_at(buf, start) {
            let hits = quote_or_backslash(block);
            let at = first(hits);
            if hits != 0 && block[at] == b'"' {
                self.pos = start + at + 1;
                return Ok(StrSpan {
                    start,
                    end: start + at,
                    escaped: false,
                });
            }
        }
        self.string_rest(start)
    }

    /// The rest of [`Lexer::string`]: a string whose text starts at `start` and that
    /// did not end plainly within 16 bytes.
    #[inline(never)]
    fn string_rest(&mut self, start: usize) -> Lex<StrSpan> {
        let buf = self.buf;
        // Scanning by blocks beats setting up a general search for the next 64 bytes.
        let limit = (start + 64).min(buf.len());
        let mut i = start;
        while i + 16 <= limit {
            let Some(block) = block_at(buf, i) else { break };
            let hits = quote_or_backslash(block);
            if hits != 0 {
                i += first(hits);
                break;
            }
            i += 16;
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
            if SCALAR_BYTE[b as usize] {
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

    /// Skip the array or object at the current position (its first byte is `[` or `{`).
    /// Sixteen bytes at a time: every bracket of a block is counted from its exact masks
    /// (shapes such as `[[16, 559, 64], []]` have one every few bytes), a string is
    /// skipped by [`Lexer::string`]; the last bytes of the buffer one at a time.
    fn skip_nested(&mut self) -> Lex<()> {
        let buf = self.buf;
        let mut depth = 0usize;
        let mut i = self.pos;
        'blocks: while let Some(block) = block_at(buf, i) {
            let Structural {
                quotes,
                opens,
                closes,
            } = structural(block);
            let mut hits = quotes | opens | closes;
            while hits != 0 {
                let bit = hits & hits.wrapping_neg();
                let at = i + first(bit);
                if quotes & bit != 0 {
                    self.pos = at;
                    self.string()?;
                    i = self.pos;
                    continue 'blocks;
                }
                if opens & bit != 0 {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = at + 1;
                        return Ok(());
                    }
                }
                hits &= hits - 1;
            }
            i += 16;
        }
        self.skip_nested_tail(i, depth)
    }

    /// [`Lexer::skip_nested`] from `i` at `depth`, one structural byte at a time.
    fn skip_nested_tail(&mut self, mut i: usize, mut depth: usize) -> Lex<()> {
        let buf = self.buf;
        loop {
            let at = next_structural(buf, i).ok_or(LexError::Eof)?;
            match buf[at] {
                b'"' => {
                    self.pos = at;
                    self.string()?;
                    i = self.pos;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                _ => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = at + 1;
                        return Ok(());
                    }
                }
            }
            i = at + 1;
        }
    }
}

/// The first `"`, `{`, `}`, `[` or `]` in `buf` from `i`, one byte at a time: the walk
/// of [`Lexer::skip_nested_tail`], which sees the last few bytes of a buffer only.
fn next_structural(buf: &[u8], i: usize) -> Option<usize> {
    buf.get(i..)?
        .iter()
        .position(|b| matches!(b, b'"' | b'{' | b'}' | b'[' | b']'))
        .map(|k| i + k)
}

/// Each byte's lowest bit, repeated.
pub(crate) const LO: u64 = 0x0101_0101_0101_0101;

/// The little-endian word of the eight bytes of `buf` from `i`; `None` past its end.
#[inline(always)]
pub(crate) fn word_at(buf: &[u8], i: usize) -> Option<u64> {
    let bytes = buf.get(i..i.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
}

/// The high bit of each byte of `word` below `n` (1 ..= 0x80) is set (the "has zero
/// byte" bit trick, generalised). Bytes above a flagged byte may be flagged too; the
/// lowest flagged byte is always below `n`.
#[inline]
fn bytes_below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(LO * n as u64) & !word & (LO * 0x80)
}

/// Whether `bytes` holds a byte below 0x20 (a raw control character), eight at a time.
pub fn has_control_byte(bytes: &[u8]) -> bool {
    let mut i = 0;
    while let Some(word) = word_at(bytes, i) {
        if bytes_below(word, 0x20) != 0 {
            return true;
        }
        i += 8;
    }
    bytes[i..].iter().any(|&b| b < 0x20)
}

/// Whether `b` can be part of a number or a bare token ([`SCALAR_BYTE`]).
#[inline(always)]
pub(crate) fn is_scalar_byte(b: u8) -> bool {
    SCALAR_BYTE[b as usize]
}

/// The bytes a number or a bare token (`N/A`, `nan`, `-inf`) is made of: ASCII letters
/// and digits and `.`, `-`, `+`, `/`, `_`.
static SCALAR_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'/' | b'_');
        b += 1;
    }
    t
};

/// Whether `s` is a valid JSON number or literal: exactly RFC 8259's grammar, so that
/// `1.2.3`, `5-`, `01` or `1.` are bare tokens, not numbers.
pub fn is_json_scalar(s: &[u8]) -> bool {
    matches!(s, b"true" | b"false" | b"null") || is_json_number(s)
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, the whole of `s`.
fn is_json_number(s: &[u8]) -> bool {
    let digits = |i: &mut usize| {
        let from = *i;
        while s.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    let mut i = usize::from(s.first() == Some(&b'-'));
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == s.len()
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
    let (int, mut i) = leading_digits(body)?;
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

/// The value of the decimal digits `body` starts with, and how many there are; `None`
/// when they overflow `i64`. Eighteen digits cannot overflow, so only the digits after
/// them are checked.
#[inline]
fn leading_digits(body: &[u8]) -> Option<(i64, usize)> {
    let mut v: i64 = 0;
    let mut i = 0;
    while i <= 10 {
        let Some(word) = word_at(body, i) else {
            break;
        };
        match eight_digits(word) {
            Some(d) => {
                v = v * 100_000_000 + d as i64;
                i += 8;
            }
            None => break,
        }
    }
    while i < body.len() && body[i].is_ascii_digit() {
        let d = (body[i] - b'0') as i64;
        v = if i < 18 {
            v * 10 + d
        } else {
            v.checked_mul(10)?.checked_add(d)?
        };
        i += 1;
    }
    Some((v, i))
}

/// The value of eight ASCII digits read as a little-endian word (the first digit in the
/// lowest byte), or `None` when a byte is not a digit. The digits are combined in pairs,
/// then fours, then the eight, with three multiplications in all.
#[inline]
fn eight_digits(word: u64) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    // Every byte is 0x30..=0x3F, and adding 6 to its low nibble does not carry.
    if word & HIGH_NIBBLES != ZEROS {
        return None;
    }
    let d = word - ZEROS;
    if d.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES != 0 {
        return None;
    }
    Some(digits_value(d, 8))
}

/// The value of the first `n` (1..=8) digits of `x` (digit values, the first in the
/// lowest byte): moved to the top of the word, so that the bytes below read as leading
/// zeros, then combined in pairs, fours and the eight.
#[inline(always)]
pub(crate) fn digits_value(x: u64, n: usize) -> u64 {
    debug_assert!((1..=8).contains(&n));
    let d = x << (8 * (8 - n));
    let pairs = (d * 10 + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
    let fours = (pairs * 100 + (pairs >> 16)) & 0x0000_FFFF_0000_FFFF;
    (fours & 0xFFFF) * 10_000 + (fours >> 32)
}

/// Parse an integer; a float is truncated toward zero. `None` when not a number.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, body) = match s.first()? {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let (v, i) = leading_digits(body)?;
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
    fn json_scalars_are_exactly_the_grammars() {
        for ok in [
            "0", "-0", "12", "-12.5", "1e3", "1E+3", "2.5e-07", "0.0", "true", "null",
        ] {
            assert!(is_json_scalar(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "",
            "-",
            "01",
            "1.",
            ".5",
            "1.2.3",
            "5-",
            "1e",
            "1e+",
            "+1",
            "2413669095762.43-",
            "nan",
            "N/A",
            "inf",
            "-inf",
            "True",
            "1_000",
        ] {
            assert!(!is_json_scalar(bad.as_bytes()), "{bad}");
        }
    }

    proptest::proptest! {
        /// Any token of number-like bytes is a scalar exactly when `serde_json` reads it
        /// as a value.
        #[test]
        fn json_scalars_agree_with_serde_json(s in "[-+.eE0-9]{1,8}|true|false|null|nan") {
            let read = serde_json::from_str::<serde_json::Value>(&s);
            // `1e999` is valid JSON that serde_json cannot hold as an f64.
            let too_large = read
                .as_ref()
                .is_err_and(|e| e.to_string().contains("out of range"));
            proptest::prop_assume!(!too_large);
            let serde = read.is_ok();
            proptest::prop_assert_eq!(is_json_scalar(s.as_bytes()), serde, "{}", s);
        }
    }

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
    }

    #[test]
    fn digits_eight_at_a_time_match_one_at_a_time() {
        // Every digit count from 1 to 20 (past i64 at 19 digits), with and without a
        // fraction or sign, against the standard library's reading.
        for len in 1..=20usize {
            let int: String = (0..len)
                .map(|i| (b'1' + (i * 7 % 9) as u8) as char)
                .collect();
            let std = int.parse::<i64>().ok();
            for neg in [false, true] {
                let sign = if neg { "-" } else { "" };
                let signed = std.map(|v| if neg { -v } else { v });
                assert_eq!(
                    parse_i64(format!("{sign}{int}").as_bytes()),
                    signed,
                    "{int}"
                );
                let ns = std.and_then(|v| v.checked_mul(1000));
                for (frac, add) in [("", 0), (".5", 500), (".0015", 2)] {
                    let text = format!("{sign}{int}{frac}");
                    let want = ns.map(|ns| if neg { -(ns + add) } else { ns + add });
                    assert_eq!(micros_to_ns(text.as_bytes()), want, "{text}");
                }
            }
        }
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(
            parse_i64(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(
            eight_digits(u64::from_le_bytes(*b"12345678")),
            Some(12_345_678)
        );
        assert_eq!(eight_digits(u64::from_le_bytes(*b"00000000")), Some(0));
        assert_eq!(
            eight_digits(u64::from_le_bytes(*b"99999999")),
            Some(99_999_999)
        );
        for bad in [
            *b"1234567.",
            *b"1234567:",
            *b"/2345678",
            *b"12345 78",
            *b"1234567\xb9",
        ] {
            assert_eq!(eight_digits(u64::from_le_bytes(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn structural_bytes_and_control_bytes_at_every_position() {
        for len in 0..40 {
            for at in 0..len {
                for b in [b'"', b'{', b'}', b'[', b']'] {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    assert_eq!(next_structural(&text, 0), Some(at), "len {len} at {at}");
                }
                let mut text = vec![0xC3u8; len];
                text[at] = 0x1F;
                assert!(has_control_byte(&text), "len {len} at {at}");
                text[at] = b' ';
                assert!(!has_control_byte(&text), "len {len} at {at}");
            }
            // Bytes one away from a structural byte, and UTF-8, are not structural.
            let near: Vec<u8> = (0..len)
                .map(|i| [b'#', b'Z', b'\\', b'^', b'|', 0xFB][i % 6])
                .collect();
            assert_eq!(next_structural(&near, 0), None, "len {len}");
        }
    }

    /// The next number below `n` from `seed` (a linear congruential generator).
    fn below(seed: &mut u64, n: u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) % n
    }

    /// A nested JSON-like value from `seed`: arrays, objects, numbers, and strings with
    /// brackets and escaped quotes inside; sometimes with a mismatched bracket.
    fn nested_value(seed: &mut u64, depth: u32, out: &mut Vec<u8>) {
        let (open, close) = if below(seed, 2) == 0 {
            (b'[', b']')
        } else {
            (b'{', b'}')
        };
        out.push(open);
        for k in 0..below(seed, 5) {
            if k > 0 {
                out.extend_from_slice([&b","[..], b", ", b",\n  "][below(seed, 3) as usize]);
            }
            match below(seed, if depth < 4 { 5 } else { 3 }) {
                0 => out.extend_from_slice(b"559"),
                1 => out.extend_from_slice(br#""c10::BFloat16""#),
                2 => out.extend_from_slice(br#""a [\"q\"] {x} \\""#),
                _ => nested_value(seed, depth + 1, out),
            }
        }
        out.push(if below(seed, 50) == 0 {
            b']' ^ b'}' ^ close
        } else {
            close
        });
    }

    #[test]
    fn skip_nested_by_words_agrees_with_byte_by_byte() {
        let mut seed = 7u64;
        for case in 0..3000 {
            let mut value = Vec::new();
            nested_value(&mut seed, 0, &mut value);
            // At every alignment, whole, cut short, and with text after it.
            let pad = case % 9;
            let mut text = vec![b' '; pad];
            text.extend_from_slice(&value);
            let cut = pad + (seed as usize % (value.len() + 1));
            for buf in [&text[..], &text[..cut], &[&text[..], b", 1]"].concat()[..]] {
                let mut words = Lexer::new(buf, pad);
                let mut bytes = Lexer::new(buf, pad);
                let got = words.skip_nested().map(|()| words.pos);
                let want = bytes.skip_nested_tail(pad, 0).map(|()| bytes.pos);
                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(buf));
            }
        }
    }

    #[test]
    fn bytes_below_flags_the_first_byte_below_the_threshold() {
        for n in [1u8, 0x20, 0x21, 0x80] {
            // `b` at `at`, among bytes that are not below `n` (at the edge, in the middle,
            // with and without the high bit).
            let fillers = [n, 0x7F, 0x80, 0xFF].into_iter().filter(|&f| f >= n);
            for (at, filler) in (0..8).flat_map(|at| fillers.clone().map(move |f| (at, f))) {
                for b in 0..=255u8 {
                    let mut bytes = [filler; 8];
                    bytes[at] = b;
                    let flags = bytes_below(u64::from_le_bytes(bytes), n);
                    let first = (flags != 0).then(|| flags.trailing_zeros() as usize / 8);
                    let want = (b < n).then_some(at);
                    assert_eq!(first, want, "n {n:#x} byte {b:#x} at {at} in {filler:#x}");
                }
            }
        }
        let buf: Vec<u8> = (1..=12).collect();
        assert_eq!(
            word_at(&buf, 4),
            Some(u64::from_le_bytes(*b"\x05\x06\x07\x08\x09\x0a\x0b\x0c"))
        );
        assert_eq!(word_at(&buf, 5), None);
        assert_eq!(word_at(&buf, usize::MAX - 3), None);
    }

    #[test]
    fn whitespace_runs_of_every_length_and_kind() {
        for len in 0..40 {
            for ws in [b' ', b'\n', b'\t', b'\r'] {
                for end in [b'"', b'\x01', 0xC3, b'!'] {
                    // A mixed run: the kind under test, then spaces, then `end`.
                    let mut text: Vec<u8> = (0..len)
                        .map(|i| if i % 5 == 0 { ws } else { b' ' })
                        .collect();
                    text.push(end);
                    text.extend_from_slice(b"        ");
                    let mut lx = Lexer::new(&text, 0);
                    lx.skip_ws();
                    assert_eq!(lx.pos, len, "len {len} ws {ws} end {end}");
                }
            }
        }
    }

    #[test]
    fn running_out_is_not_malformed() {
        let mut lx = Lexer::new(br#""abc"#, 0);
        assert_eq!(lx.string(), Err(LexError::Eof));
        let mut lx = Lexer::new(br#"[1, 2"#, 0);
        assert_eq!(lx.skip_value(&mut false), Err(LexError::Eof));
    }
}
