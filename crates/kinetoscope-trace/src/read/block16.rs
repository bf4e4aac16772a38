//! Sixteen bytes of text at a time: which of them are whitespace, quotes, backslashes
//! or brackets, as a [`Mask`] with one bit for each byte that answers yes ([`first`]
//! turns the lowest into a position). The lexer's hot loops (a run of indentation, a
//! string's end, a nested value it skips) ask these questions of every block.
//!
//! On x86-64 each answer is a few SSE2 instructions: SSE2 is part of every x86-64 CPU, so
//! there is no runtime check, and a mask is 16 bits. Elsewhere the masks come from two
//! 8-byte words, each byte's answer in its high bit (a 128-bit mask, not gathered into
//! 16 bits: that would cost more than it saves). Both are tested against a
//! byte-by-byte answer at every position.

/// The sixteen bytes of `buf` from `i`; `None` when fewer remain.
#[inline(always)]
pub(crate) fn block_at(buf: &[u8], i: usize) -> Option<&[u8; 16]> {
    buf.get(i..i.checked_add(16)?)?.try_into().ok()
}

/// One bit for each byte of a block that answers yes: bit `k` for byte `k` from SSE2,
/// bit `8k + 7` (the byte's high bit) from the words; no other bits.
pub(crate) type Mask = imp::Mask;

/// The position of the lowest byte in `mask` (which is not empty).
#[inline(always)]
pub(crate) fn first(mask: Mask) -> usize {
    (mask.trailing_zeros() / imp::STEP) as usize
}

/// The bytes that are not JSON whitespace (space, `\n`, `\r`, `\t`).
#[inline(always)]
pub(crate) fn not_whitespace(block: &[u8; 16]) -> Mask {
    !imp::whitespace(block) & imp::ALL
}

/// The `"` and `\` bytes.
#[inline(always)]
pub(crate) fn quote_or_backslash(block: &[u8; 16]) -> Mask {
    imp::quote_or_backslash(block)
}

/// The bytes a nested value is skipped by: `"`, then `{` or `[`, then `}` or `]`.
#[inline(always)]
pub(crate) fn structural(block: &[u8; 16]) -> Structural {
    imp::structural(block)
}

/// The masks of [`structural`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Structural<M = Mask> {
    /// `"` bytes.
    pub quotes: M,
    /// `{` and `[` bytes.
    pub opens: M,
    /// `}` and `]` bytes.
    pub closes: M,
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

    /// Bit `k` for byte `k`.
    pub(super) type Mask = u32;
    /// Bits per byte.
    pub(super) const STEP: u32 = 1;
    /// Every byte.
    pub(super) const ALL: Mask = 0xFFFF;

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
    pub(super) fn structural(block: &[u8; 16]) -> Structural<Mask> {
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

/// Two little-endian words, exact per byte (no borrow or carry crosses a byte): each
/// byte's answer in its high bit, the two words side by side in 128 bits.
#[cfg(any(test, not(target_arch = "x86_64")))]
mod words {
    use super::Structural;

    /// Bit `8k + 7` for byte `k`.
    pub(super) type Mask = u128;
    /// Bits per byte.
    pub(super) const STEP: u32 = 8;
    /// Every byte.
    pub(super) const ALL: Mask = HIGH as u128 | (HIGH as u128) << 64;

    const LO: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = LO * 0x80;

    /// The high bit of each byte of `w` equal to `b`, and only those.
    #[inline(always)]
    fn eq(w: u64, b: u8) -> u64 {
        let x = w ^ (LO * b as u64);
        !((((x & LOW7) + LOW7) | x) & HIGH) & HIGH
    }

    /// `f` of each word, side by side.
    #[inline(always)]
    fn both(block: &[u8; 16], f: impl Fn(u64) -> u64) -> Mask {
        let (lo, hi) = block.split_at(8);
        let word = |h: &[u8]| u64::from_le_bytes(h.try_into().expect("8 bytes"));
        f(word(lo)) as u128 | (f(word(hi)) as u128) << 64
    }

    #[inline(always)]
    pub(super) fn whitespace(block: &[u8; 16]) -> Mask {
        both(block, |w| {
            eq(w, b' ') | eq(w, b'\n') | eq(w, b'\r') | eq(w, b'\t')
        })
    }

    #[inline(always)]
    pub(super) fn quote_or_backslash(block: &[u8; 16]) -> Mask {
        both(block, |w| eq(w, b'"') | eq(w, b'\\'))
    }

    #[inline(always)]
    pub(super) fn structural(block: &[u8; 16]) -> Structural<Mask> {
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
    fn by_bytes(block: &[u8; 16]) -> (u32, u32, Structural<u32>) {
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

    /// A 16-bit mask (bit `k` for byte `k`) as [`Mask`] writes it.
    fn as_mask(bits: u32) -> Mask {
        let step = imp::STEP;
        (0..16)
            .filter(|k| bits >> k & 1 == 1)
            .fold(0, |m, k| m | 1 << (k * step + step - 1))
    }

    /// A 16-bit mask as the words write it: byte `k`'s bit at `8k + 7`.
    fn spread(bits: u32) -> u128 {
        (0..16)
            .filter(|k| bits >> k & 1 == 1)
            .fold(0, |m, k| m | 1u128 << (k * words::STEP + words::STEP - 1))
    }

    #[test]
    fn every_mask_matches_byte_by_byte() {
        for b in blocks() {
            let (ws, qb, st) = by_bytes(&b);
            assert_eq!(not_whitespace(&b), as_mask(!ws & 0xFFFF), "{b:?}");
            assert_eq!(quote_or_backslash(&b), as_mask(qb), "{b:?}");
            let got = structural(&b);
            assert_eq!(
                (got.quotes, got.opens, got.closes),
                (as_mask(st.quotes), as_mask(st.opens), as_mask(st.closes)),
                "{b:?}"
            );
            if qb != 0 {
                assert_eq!(first(as_mask(qb)), qb.trailing_zeros() as usize, "{b:?}");
            }
            assert_eq!(words::whitespace(&b), spread(ws), "{b:?}");
            assert_eq!(words::quote_or_backslash(&b), spread(qb), "{b:?}");
            let w = words::structural(&b);
            assert_eq!(
                (w.quotes, w.opens, w.closes),
                (spread(st.quotes), spread(st.opens), spread(st.closes)),
                "{b:?}"
            );
            assert_eq!(!words::whitespace(&b) & words::ALL, spread(!ws & 0xFFFF));
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
