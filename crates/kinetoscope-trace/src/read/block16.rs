//! Sixteen bytes of text at a time: which of them are whitespace, quotes, backslashes
//! or brackets, as a bit mask with bit `k` for byte `k`. The lexer's hot loops (a run of
//! indentation, a string's end, a nested value it skips) ask these questions of every
//! block.
//!
//! On x86-64 each answer is a few SSE2 instructions: SSE2 is part of every x86-64 CPU, so
//! there is no runtime check. Elsewhere the same masks come from two 8-byte words. Both
//! are tested against a byte-by-byte answer at every position.

/// The sixteen bytes of `buf` from `i`; `None` when fewer remain.
#[inline(always)]
pub(crate) fn block_at(buf: &[u8], i: usize) -> Option<&[u8; 16]> {
    buf.get(i..i.checked_add(16)?)?.try_into().ok()
}

/// The bytes that are not JSON whitespace (space, `\n`, `\r`, `\t`).
#[inline(always)]
pub(crate) fn not_whitespace(block: &[u8; 16]) -> u32 {
    !imp::whitespace(block) & 0xFFFF
}

/// The `"` and `\` bytes.
#[inline(always)]
pub(crate) fn quote_or_backslash(block: &[u8; 16]) -> u32 {
    imp::quote_or_backslash(block)
}

/// The bytes a nested value is skipped by: `"`, then `{` or `[`, then `}` or `]`.
#[inline(always)]
pub(crate) fn structural(block: &[u8; 16]) -> Structural {
    imp::structural(block)
}

/// The masks of [`structural`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Structural {
    /// `"` bytes.
    pub quotes: u32,
    /// `{` and `[` bytes.
    pub opens: u32,
    /// `}` and `]` bytes.
    pub closes: u32,
}

#[cfg(target_arch = "x86_64")]
use sse2 as imp;

#[cfg(not(target_arch = "x86_64"))]
use words as imp;

/// SSE2: one load, a compare per byte value, one `movemask` per answer.
///
/// SAFETY (every `unsafe` block here): the intrinsics need SSE2, which every x86-64
/// CPU has (it is in the target's baseline, enabled for all code built for it).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    use super::Structural;

    #[inline(always)]
    fn load(block: &[u8; 16]) -> __m128i {
        // SAFETY: the pointer is to 16 readable bytes and the load is unaligned; SSE2
        // as above.
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    /// Each byte of `v` equal to `b` as 0xFF, the others as 0.
    #[inline(always)]
    fn eq(v: __m128i, b: u8) -> __m128i {
        // SAFETY: SSE2, as above.
        unsafe { _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)) }
    }

    /// Bytes of either.
    #[inline(always)]
    fn or(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2, as above.
        unsafe { _mm_or_si128(a, b) }
    }

    /// The high bit of each byte of `v`, as 16 bits.
    #[inline(always)]
    fn bits(v: __m128i) -> u32 {
        // SAFETY: SSE2, as above.
        unsafe { _mm_movemask_epi8(v) as u32 }
    }

    #[inline(always)]
    pub(super) fn whitespace(block: &[u8; 16]) -> u32 {
        let v = load(block);
        bits(or(
            or(eq(v, b' '), eq(v, b'\n')),
            or(eq(v, b'\r'), eq(v, b'\t')),
        ))
    }

    #[inline(always)]
    pub(super) fn quote_or_backslash(block: &[u8; 16]) -> u32 {
        let v = load(block);
        bits(or(eq(v, b'"'), eq(v, b'\\')))
    }

    #[inline(always)]
    pub(super) fn structural(block: &[u8; 16]) -> Structural {
        let v = load(block);
        // `| 0x20` maps `[` to `{` and `]` to `}`, and no other byte to either.
        // SAFETY: SSE2, as above.
        let folded = or(v, unsafe { _mm_set1_epi8(0x20) });
        Structural {
            quotes: bits(eq(v, b'"')),
            opens: bits(eq(folded, b'{')),
            closes: bits(eq(folded, b'}')),
        }
    }
}

/// Two little-endian words, exact per byte (no borrow or carry crosses a byte).
#[cfg(any(test, not(target_arch = "x86_64")))]
mod words {
    use super::Structural;

    const LO: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

    /// The high bit of each byte of `w` equal to `b`, and only those.
    #[inline(always)]
    fn eq(w: u64, b: u8) -> u64 {
        let x = w ^ (LO * b as u64);
        !((((x & LOW7) + LOW7) | x) & (LO * 0x80)) & (LO * 0x80)
    }

    /// The high bit of each byte of `m` (0x80 or 0) gathered into the low 8 bits.
    #[inline(always)]
    fn gather(m: u64) -> u32 {
        ((m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
    }

    /// `f` of each word, gathered into one 16-bit mask.
    #[inline(always)]
    fn both(block: &[u8; 16], f: impl Fn(u64) -> u64) -> u32 {
        let (lo, hi) = block.split_at(8);
        let word = |h: &[u8]| u64::from_le_bytes(h.try_into().expect("8 bytes"));
        gather(f(word(lo))) | gather(f(word(hi))) << 8
    }

    #[inline(always)]
    pub(super) fn whitespace(block: &[u8; 16]) -> u32 {
        both(block, |w| {
            eq(w, b' ') | eq(w, b'\n') | eq(w, b'\r') | eq(w, b'\t')
        })
    }

    #[inline(always)]
    pub(super) fn quote_or_backslash(block: &[u8; 16]) -> u32 {
        both(block, |w| eq(w, b'"') | eq(w, b'\\'))
    }

    #[inline(always)]
    pub(super) fn structural(block: &[u8; 16]) -> Structural {
        Structural {
            quotes: both(block, |w| eq(w, b'"')),
            opens: both(block, |w| eq(w | (LO * 0x20), b'{')),
            closes: both(block, |w| eq(w | (LO * 0x20), b'}')),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The masks byte by byte: whitespace, quote or backslash, structural.
    fn by_bytes(block: &[u8; 16]) -> (u32, u32, Structural) {
        let mask = |f: &dyn Fn(u8) -> bool| {
            (0..16).fold(0u32, |m, k| if f(block[k]) { m | 1 << k } else { m })
        };
        (
            mask(&|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t')),
            mask(&|b| matches!(b, b'"' | b'\\')),
            Structural {
                quotes: mask(&|b| b == b'"'),
                opens: mask(&|b| matches!(b, b'{' | b'[')),
                closes: mask(&|b| matches!(b, b'}' | b']')),
            },
        )
    }

    /// Blocks with each interesting byte (and its neighbours in value) at every
    /// position, over backgrounds of every kind, including bytes with the high bit set.
    fn blocks() -> Vec<[u8; 16]> {
        let specials = [
            b' ', b'\n', b'\r', b'\t', b'"', b'\\', b'{', b'}', b'[', b']', 0x00, 0x1F, 0x21, 0xDB,
            0x7F, 0x80, 0xA0, 0xFB, 0xFD, 0xFF, b'a', b'0',
        ];
        let mut out = Vec::new();
        for &bg in &[b'a', b' ', 0x00, 0xFF, b'"', b'{'] {
            for &s in &specials {
                for k in 0..16 {
                    let mut b = [bg; 16];
                    b[k] = s;
                    out.push(b);
                    b[15 - k] = b'\\';
                    out.push(b);
                }
            }
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let mut b = [0u8; 16];
            for x in &mut b {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *x = specials[(seed % specials.len() as u64) as usize];
            }
            out.push(b);
        }
        out
    }

    #[test]
    fn every_mask_matches_byte_by_byte() {
        for b in blocks() {
            let (ws, qb, st) = by_bytes(&b);
            assert_eq!(not_whitespace(&b), !ws & 0xFFFF, "{b:?}");
            assert_eq!(quote_or_backslash(&b), qb, "{b:?}");
            assert_eq!(structural(&b), st, "{b:?}");
            assert_eq!(!words::whitespace(&b) & 0xFFFF, !ws & 0xFFFF, "{b:?}");
            assert_eq!(words::quote_or_backslash(&b), qb, "{b:?}");
            assert_eq!(words::structural(&b), st, "{b:?}");
        }
    }

    #[test]
    fn blocks_stop_short_of_the_end() {
        let buf = [7u8; 20];
        assert!(block_at(&buf, 4).is_some());
        assert!(block_at(&buf, 5).is_none());
        assert!(block_at(&buf, usize::MAX).is_none());
    }
}
