//! Plain numbers read in one pass: the digits of a timestamp, a duration, an id or a
//! kernel's occupancy figures are found and valued from the same 8-byte loads, where
//! [`Lexer::scalar`] would first find the number's end a byte at a time and
//! [`parse_i64`](super::lexer::parse_i64), [`micros_to_ns`](super::lexer::micros_to_ns)
//! or `str::parse` would then read it again.
//!
//! Only the shapes Kineto writes take this path: up to 16 digits, then an optional `.`
//! and up to 7 fraction digits, ended by a byte that cannot continue a number. Anything
//! else (a sign, an exponent, a bare token, more digits, the last bytes of the buffer)
//! returns `None` with the lexer only past the whitespace, and the caller reads it
//! through the general path, which gives the same value.

use super::lexer::{digits_value, is_scalar_byte, word_at, Lexer, LO};

/// The high bit of each byte.
const HIGH: u64 = LO * 0x80;
/// The most whole microseconds whose nanoseconds (with a rounded fraction) fit an `i64`.
const MAX_MICROS: u64 = (i64::MAX as u64 - 1000) / 1000;

/// How many of `word`'s bytes, from the lowest (the first in the text), are ASCII digits
/// before the first byte that is not (8 when all are), with `word` minus `'0'` in every
/// byte (the digits' values in the bytes that are digits).
#[inline(always)]
fn digit_run(word: u64) -> (usize, u64) {
    let x = word ^ (LO * b'0' as u64);
    // A byte is a digit when it is 0..=9 after the XOR: adding 0x76 to its low seven
    // bits sets the high bit from 10 on, and no carry leaves the byte.
    let not_digit = (((x & (LO * 0x7F)) + LO * 0x76) | x) & HIGH;
    ((not_digit.trailing_zeros() / 8) as usize, x)
}

/// Up to 16 digits from `p`: their value and where they end (the caller checks that no
/// digit follows); `None` when there are none.
#[inline(always)]
fn integer_digits(buf: &[u8], p: usize) -> Option<(u64, usize)> {
    let (n, x) = digit_run(word_at(buf, p)?);
    if n == 0 {
        return None;
    }
    if n < 8 {
        return Some((digits_value(x, n), p + n));
    }
    let high = digits_value(x, 8);
    let (m, y) = digit_run(word_at(buf, p + 8)?);
    if m == 0 {
        return Some((high, p + 8));
    }
    Some((high * 10u64.pow(m as u32) + digits_value(y, m), p + 8 + m))
}

/// A plain number's parts: the value of its integer digits, its fraction digits (how
/// many, and the word holding their values from its lowest byte) and where it ends.
struct Plain {
    int: u64,
    fraction: Option<(usize, u64)>,
    end: usize,
}

/// The plain number at `p`: up to 16 digits, then an optional `.` and 1 to 7 digits,
/// followed by a byte that cannot continue a number.
#[inline(always)]
fn plain_at(buf: &[u8], p: usize) -> Option<Plain> {
    let (int, end) = integer_digits(buf, p)?;
    let next = *buf.get(end)?;
    if next != b'.' {
        return (!is_scalar_byte(next)).then_some(Plain {
            int,
            fraction: None,
            end,
        });
    }
    let (n, x) = digit_run(word_at(buf, end + 1)?);
    if n == 0 || n == 8 {
        return None;
    }
    let after = end + 1 + n;
    if is_scalar_byte(*buf.get(after)?) {
        return None;
    }
    Some(Plain {
        int,
        fraction: Some((n, x)),
        end: after,
    })
}

impl Lexer<'_> {
    /// A plain non-negative integer at the current position (after whitespace): its
    /// value, the lexer moved past it. `None`, the lexer only past the whitespace, for
    /// anything else.
    #[inline(always)]
    pub fn plain_int(&mut self) -> Option<i64> {
        self.skip_ws();
        let p = plain_at(self.buf, self.pos).filter(|p| p.fraction.is_none())?;
        self.pos = p.end;
        Some(p.int as i64)
    }

    /// A plain non-negative number of microseconds at the current position (after
    /// whitespace), as [`micros_to_ns`](super::lexer::micros_to_ns) reads it (the fourth
    /// fraction digit rounds half up), and whether it has a fraction; the lexer moved
    /// past it. `None`, the lexer only past the whitespace, for anything else.
    #[inline(always)]
    pub fn plain_micros(&mut self) -> Option<(i64, bool)> {
        self.skip_ws();
        let p = plain_at(self.buf, self.pos).filter(|p| p.int <= MAX_MICROS)?;
        let frac = match p.fraction {
            None => 0,
            Some((n, x)) => {
                let digit = |k: usize| if k < n { (x >> (8 * k)) & 0xFF } else { 0 };
                digit(0) * 100 + digit(1) * 10 + digit(2) + u64::from(digit(3) >= 5)
            }
        };
        self.pos = p.end;
        Some(((p.int * 1000 + frac) as i64, p.fraction.is_some()))
    }

    /// A plain non-negative decimal at the current position (after whitespace), as
    /// `str::parse::<f64>` reads it, of at most 15 significant digits, so that one
    /// division of exact integers gives the correctly rounded value. The lexer moved
    /// past it; `None`, the lexer only past the whitespace, for anything else.
    #[inline]
    pub fn plain_float(&mut self) -> Option<f64> {
        self.skip_ws();
        let p = plain_at(self.buf, self.pos)?;
        let (mantissa, scale) = match p.fraction {
            None => (p.int, 1),
            Some((n, x)) => {
                let scale = 10u64.pow(n as u32);
                (p.int.checked_mul(scale)? + digits_value(x, n), scale)
            }
        };
        if mantissa > MAX_EXACT {
            return None;
        }
        self.pos = p.end;
        Some(mantissa as f64 / scale as f64)
    }
}

/// The largest integer of 15 digits: every one up to it is exact in an `f64`.
const MAX_EXACT: u64 = 999_999_999_999_999;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::lexer::{micros_to_ns, parse_i64};

    /// The general path: the scalar's span, then its value.
    fn general(text: &[u8], micros: bool) -> Option<(i64, usize)> {
        let mut lx = Lexer::new(text, 0);
        let (s, e) = lx.scalar().ok()?;
        let v = if micros {
            micros_to_ns(&text[s..e])
        } else {
            parse_i64(&text[s..e])
        };
        v.map(|v| (v, e))
    }

    /// Texts of every digit count and fraction length Kineto writes and beyond, with
    /// whitespace before and every kind of byte after.
    fn texts() -> Vec<Vec<u8>> {
        let digits = b"9081726354";
        let mut out = Vec::new();
        for ints in 0..=19 {
            for fracs in (0..=8).map(Some).chain([None]) {
                for end in b",|}| ,|]|e3,|x,|-1,|.5,|".split(|&b| b == b'|') {
                    for lead in [&b""[..], b" ", b"-", b"\n  "] {
                        let mut t = lead.to_vec();
                        t.extend((0..ints).map(|i| digits[(i * 7 + ints) % 10]));
                        if let Some(f) = fracs {
                            t.push(b'.');
                            t.extend((0..f).map(|i| digits[(i * 3 + f) % 10]));
                        }
                        t.extend_from_slice(end);
                        // Padding, so that the end is not at the buffer's last bytes.
                        t.extend_from_slice(b"          ");
                        out.push(t);
                    }
                }
            }
        }
        // A fourth fraction digit of 5 and of 4, and 9s that carry.
        for t in [
            &b"1.0005,"[..],
            b"1.0004,",
            b"999.9995,",
            b"0.000,",
            b"00012,",
            b"9223372036854775,",
            b"9223372036854774.999,",
            b"9223372036854774.9995,",
            b"9999999999999999,",
            b"9999999999999999.9,",
            b"1669783688037339,",
        ] {
            let mut t = t.to_vec();
            t.extend_from_slice(b"        ");
            out.push(t);
        }
        out
    }

    #[test]
    fn plain_numbers_read_as_the_general_path_reads_them() {
        let (mut fast_ints, mut fast_micros) = (0, 0);
        for text in texts() {
            let mut lx = Lexer::new(&text, 0);
            match lx.plain_int() {
                Some(v) => {
                    fast_ints += 1;
                    assert_eq!(Some((v, lx.pos)), general(&text, false), "{text:?}");
                }
                None => assert!(lx.pos <= text.iter().take_while(|b| b" \n".contains(b)).count()),
            }
            let mut lx = Lexer::new(&text, 0);
            match lx.plain_micros() {
                Some((ns, fraction)) => {
                    fast_micros += 1;
                    assert_eq!(Some((ns, lx.pos)), general(&text, true), "{text:?}");
                    assert_eq!(fraction, text[..lx.pos].contains(&b'.'), "{text:?}");
                }
                None => assert!(lx.pos <= text.iter().take_while(|b| b" \n".contains(b)).count()),
            }
        }
        // The fast path is taken for the usual shapes, not only refused.
        assert!(
            fast_ints > 200 && fast_micros > 1000,
            "{fast_ints} {fast_micros}"
        );
    }

    #[test]
    fn plain_decimals_read_as_str_parse_reads_them() {
        let mut fast = 0;
        let mut extra: Vec<Vec<u8>> = [
            &b"542.060608,"[..],
            b"0.054054,",
            b"1490.666626}",
            b"99999999.9999999,",
            b"999999999999999,",
            b"1000000000000000,",
            b"0.1,",
            b"0.3,",
            b"123456789.123456,",
        ]
        .iter()
        .map(|t| [*t, b"        "].concat())
        .collect();
        extra.extend(texts());
        for text in extra {
            let mut lx = Lexer::new(&text, 0);
            let Some(v) = lx.plain_float() else {
                continue;
            };
            fast += 1;
            let mut general = Lexer::new(&text, 0);
            let (s, e) = general.scalar().unwrap();
            let want: f64 = std::str::from_utf8(&text[s..e]).unwrap().parse().unwrap();
            assert_eq!((v.to_bits(), lx.pos), (want.to_bits(), e), "{text:?}");
        }
        assert!(fast > 1000, "{fast}");
    }

    #[test]
    fn the_last_bytes_of_a_buffer_go_to_the_general_path() {
        for text in [&b"123"[..], b"123,", b"1234567", b"12345678,", b"1.5}"] {
            assert_eq!(Lexer::new(text, 0).plain_int(), None);
            assert_eq!(Lexer::new(text, 0).plain_micros(), None);
            assert_eq!(Lexer::new(text, 0).plain_float(), None);
        }
    }
}
