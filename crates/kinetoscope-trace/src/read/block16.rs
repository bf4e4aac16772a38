//! Sixteen bytes of text at a time: which of them are quotes, backslashes or brackets,
//! as a [`Mask`] with one bit for each byte that answers yes ([`first`] turns the lowest
//! into a position), and where a run of whitespace ends. The lexer's hot loops (a run of
//! indentation, a string's end, a nested value it skips) ask these questions of every
//! block.
//!
//! On x86-64 each answer is a few SSE2 instructions: SSE2 is part of every x86-64 CPU, so
//! there is no runtime check, and a mask is 16 bits. On aarch64 it is a few NEON
//! instructions (NEON is part of every aarch64 CPU), and a mask is 64 bits, four for each
//! byte, of which the highest answers. Both are one piece of code (`vector`) over each
//! instruction set's few operations. Elsewhere the masks come from two 8-byte words, each
//! byte's answer in its high bit (a 128-bit mask, not gathered into 16 bits: that would
//! cost more than it saves), and a whitespace run is skipped by words of spaces, any
//! other whitespace byte one at a time: testing every word for all four whitespace bytes
//! cost 6–10 % more instructions on pretty-printed traces, whose runs are a newline and
//! then spaces. Each path is tested against a byte-by-byte answer at every position.

/// The sixteen bytes of `buf` from `i`; `None` when fewer remain.
#[inline(always)]
pub(crate) fn block_at(buf: &[u8], i: usize) -> Option<&[u8; 16]> {
    buf.get(i..i.checked_add(16)?)?.try_into().ok()
}

/// One bit for each byte of a block that answers yes: bit `k` for byte `k` from SSE2,
/// bit `4k + 3` from NEON, bit `8k + 7` (the byte's high bit) from the words; no other
/// bits.
pub(crate) type Mask = imp::Mask;

/// The position of the lowest byte in `mask` (which is not empty).
#[inline(always)]
pub(crate) fn first(mask: Mask) -> usize {
    (mask.trailing_zeros() / imp::STEP) as usize
}

/// Whether `b` is JSON whitespace (space, `\n`, `\r`, `\t`).
#[inline(always)]
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// The end of the run of JSON whitespace in `buf` from `i`: the position of the first
/// byte from `i` that is not whitespace, or the end of `buf`.
#[inline(always)]
pub(crate) fn whitespace_end(buf: &[u8], i: usize) -> usize {
    imp::whitespace_end(buf, i)
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

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use vector as imp;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use words as imp;

#[cfg(target_arch = "x86_64")]
use sse2 as lanes;

#[cfg(target_arch = "aarch64")]
use neon as lanes;

/// The answers from one 16-byte vector: a load, then a compare per byte value, written
/// once over the instruction set's [`lanes`] (each inlined, so the machine code is
/// what hand-written intrinsics would be).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod vector {
    use super::lanes::{bits, eq, load, or, splat, ALL};
    pub(super) use super::lanes::{Mask, STEP};
    use super::{block_at, is_whitespace, Structural};

    /// Sixteen bytes at a time, then byte by byte.
    #[inline(always)]
    pub(super) fn whitespace_end(buf: &[u8], mut i: usize) -> usize {
        while let Some(block) = block_at(buf, i) {
            let v = load(block);
            let ws = bits(or(
                or(eq(v, b' '), eq(v, b'\n')),
                or(eq(v, b'\r'), eq(v, b'\t')),
            ));
            let other = !ws & ALL;
            if other != 0 {
                return i + (other.trailing_zeros() / STEP) as usize;
            }
            i += 16;
        }
        while buf.get(i).is_some_and(|&b| is_whitespace(b)) {
            i += 1;
        }
        i
    }

    #[inline(always)]
    pub(super) fn quote_or_backslash(block: &[u8; 16]) -> Mask {
        let v = load(block);
        bits(or(eq(v, b'"'), eq(v, b'\\')))
    }

    #[inline(always)]
    pub(super) fn structural(block: &[u8; 16]) -> Structural<Mask> {
        let v = load(block);
        // `| 0x20` maps `[` to `{` and `]` to `}`, and no other byte to either.
        let folded = or(v, splat(0x20));
        Structural {
            quotes: bits(eq(v, b'"')),
            opens: bits(eq(folded, b'{')),
            closes: bits(eq(folded, b'}')),
        }
    }
}

/// SSE2: one load, a compare per byte value, one `movemask` per answer.
///
/// SAFETY (every `unsafe` block here): the intrinsics need SSE2, which every x86-64
/// CPU has (it is in the target's baseline, enabled for all code built for it).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// Bit `k` for byte `k`.
    pub(super) type Mask = u32;
    /// Bits per byte.
    pub(super) const STEP: u32 = 1;
    /// Every byte.
    pub(super) const ALL: Mask = 0xFFFF;

    /// A block's bytes.
    #[inline(always)]
    pub(super) fn load(block: &[u8; 16]) -> __m128i {
        // SAFETY: the pointer is to 16 readable bytes and the load is unaligned; SSE2
        // as above.
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    /// `b` in every byte.
    #[inline(always)]
    pub(super) fn splat(b: u8) -> __m128i {
        // SAFETY: SSE2, as above.
        unsafe { _mm_set1_epi8(b as i8) }
    }

    /// Each byte of `v` equal to `b` as 0xFF, the others as 0.
    #[inline(always)]
    pub(super) fn eq(v: __m128i, b: u8) -> __m128i {
        // SAFETY: SSE2, as above.
        unsafe { _mm_cmpeq_epi8(v, splat(b)) }
    }

    /// Bytes of either.
    #[inline(always)]
    pub(super) fn or(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2, as above.
        unsafe { _mm_or_si128(a, b) }
    }

    /// The high bit of each byte of `v`, as 16 bits.
    #[inline(always)]
    pub(super) fn bits(v: __m128i) -> Mask {
        // SAFETY: SSE2, as above.
        unsafe { _mm_movemask_epi8(v) as u32 }
    }
}

/// NEON: one load, a compare per byte value, and each answer narrowed to four bits a
/// byte (a shift right by four of each 16-bit lane, keeping its low byte: the `shrn`
/// instruction), of which the highest is kept.
///
/// SAFETY (every `unsafe` block here): the intrinsics need NEON, which every aarch64 CPU
/// has (it is in the target's baseline, enabled for all code built for it).
#[cfg(target_arch = "aarch64")]
mod neon {
    use std::arch::aarch64::{
        uint8x16_t, vceqq_u8, vdupq_n_u8, vget_lane_u64, vld1q_u8, vorrq_u8, vreinterpret_u64_u8,
        vreinterpretq_u16_u8, vshrn_n_u16,
    };

    /// Bit `4k + 3` for byte `k`.
    pub(super) type Mask = u64;
    /// Bits per byte.
    pub(super) const STEP: u32 = 4;
    /// The bit of every byte.
    pub(super) const ALL: Mask = 0x8888_8888_8888_8888;

    /// A block's bytes.
    #[inline(always)]
    pub(super) fn load(block: &[u8; 16]) -> uint8x16_t {
        // SAFETY: the pointer is to 16 readable bytes (the load needs no alignment);
        // NEON as above.
        unsafe { vld1q_u8(block.as_ptr()) }
    }

    /// `b` in every byte.
    #[inline(always)]
    pub(super) fn splat(b: u8) -> uint8x16_t {
        // SAFETY: NEON, as above.
        unsafe { vdupq_n_u8(b) }
    }

    /// Each byte of `v` equal to `b` as 0xFF, the others as 0.
    #[inline(always)]
    pub(super) fn eq(v: uint8x16_t, b: u8) -> uint8x16_t {
        // SAFETY: NEON, as above.
        unsafe { vceqq_u8(v, splat(b)) }
    }

    /// Bytes of either.
    #[inline(always)]
    pub(super) fn or(a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON, as above.
        unsafe { vorrq_u8(a, b) }
    }

    /// Bytes of 0xFF or 0 as a mask: four bits a byte, then the highest of each four.
    #[inline(always)]
    pub(super) fn bits(v: uint8x16_t) -> Mask {
        // SAFETY: NEON, as above.
        let nibbles = unsafe {
            vget_lane_u64::<0>(vreinterpret_u64_u8(vshrn_n_u16::<4>(vreinterpretq_u16_u8(
                v,
            ))))
        };
        nibbles & ALL
    }
}

/// Two little-endian words, exact per byte (no borrow or carry crosses a byte): each
/// byte's answer in its high bit, the two words side by side in 128 bits.
#[cfg(any(test, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod words {
    use super::{is_whitespace, Structural};

    /// Bit `8k + 7` for byte `k`.
    pub(super) type Mask = u128;
    /// Bits per byte.
    pub(super) const STEP: u32 = 8;

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

    /// A whitespace byte, then the spaces after it a word at a time; again while the
    /// byte those end at is whitespace (a pretty-printed file's `\n` and indentation
    /// are one byte and one or two words).
    #[inline(always)]
    pub(super) fn whitespace_end(buf: &[u8], mut i: usize) -> usize {
        while buf.get(i).is_some_and(|&b| is_whitespace(b)) {
            i += 1;
            while let Some(w) = buf.get(i..i + 8) {
                let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                let other = !eq(w, b' ') & HIGH;
                if other != 0 {
                    i += (other.trailing_zeros() / 8) as usize;
                    break;
                }
                i += 8;
            }
        }
        i
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

    /// The masks byte by byte: quote or backslash, structural.
    fn by_bytes(block: &[u8; 16]) -> (u32, Structural<u32>) {
        let mask = |f: &dyn Fn(u8) -> bool| {
            (0..16).fold(0u32, |m, k| if f(block[k]) { m | 1 << k } else { m })
        };
        (
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
            let (qb, st) = by_bytes(&b);
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
            assert_eq!(words::quote_or_backslash(&b), spread(qb), "{b:?}");
            let w = words::structural(&b);
            assert_eq!(
                (w.quotes, w.opens, w.closes),
                (spread(st.quotes), spread(st.opens), spread(st.closes)),
                "{b:?}"
            );
        }
    }

    /// Where a whitespace run ends, byte by byte.
    fn whitespace_end_by_bytes(buf: &[u8], mut i: usize) -> usize {
        while buf.get(i).is_some_and(|&b| is_whitespace(b)) {
            i += 1;
        }
        i
    }

    #[test]
    fn whitespace_runs_end_where_byte_by_byte() {
        // Runs of every kind and length up to 40, each followed by every special byte
        // (or by nothing), from every start up to the run's end.
        let kinds: [&[u8]; 5] = [b" ", b"\n", b"\r\n", b"\t", b" \n\t\r"];
        let specials = [
            b'"', b'}', b'a', 0x00, 0x1F, 0x21, 0x0B, 0x0C, 0x80, 0xFF, b'[',
        ];
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for kind in kinds {
            for len in 0..40 {
                let run: Vec<u8> = kind.iter().copied().cycle().take(len).collect();
                cases.push(run.clone());
                for &s in &specials {
                    let mut buf = run.clone();
                    buf.push(s);
                    buf.extend_from_slice(b"  \n");
                    cases.push(buf);
                }
                // A newline, then indentation, then a key: as a pretty file has it.
                let mut pretty = b"\n".to_vec();
                pretty.extend(std::iter::repeat_n(b' ', len));
                pretty.extend_from_slice(b"\"ts\"");
                cases.push(pretty);
            }
        }
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..5_000 {
            let mut buf = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for k in 0..(seed % 48) {
                let pick = (seed >> (k % 60)) as usize;
                buf.push(if pick.is_multiple_of(9) {
                    specials[pick % specials.len()]
                } else {
                    b" \n\r\t"[pick % 4]
                });
            }
            cases.push(buf);
        }
        for buf in &cases {
            for i in 0..=buf.len() {
                let want = whitespace_end_by_bytes(buf, i);
                assert_eq!(whitespace_end(buf, i), want, "{buf:?} from {i}");
                assert_eq!(words::whitespace_end(buf, i), want, "{buf:?} from {i}");
            }
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
