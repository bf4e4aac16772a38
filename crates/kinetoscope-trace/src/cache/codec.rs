//! Little-endian columns in and out of a byte buffer, by hand rather than through
//! `bytemuck` or `zerocopy`: no `unsafe`, no alignment to keep in the file, the same
//! bytes on every host, and `chunks_exact(N).map(from_le_bytes)` compiles to a copy on
//! a little-endian machine, so a column decodes at memory speed. Every length read is
//! checked against the bytes left before anything is allocated, so a hostile file can
//! cost at most its own size.

use std::io::Write;

use super::pages::Window;

/// A fixed-size number stored little-endian.
pub(super) trait Le: Copy {
    /// Bytes per value.
    const SIZE: usize;
    /// Append the value's bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The value of exactly [`Le::SIZE`] bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! le {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
le!(u8, u16, u32, u64, i64);

/// Bytes gathered before they are written out, when writing to a file.
const SPILL: usize = 1 << 20;

/// The file being written: numbers and columns appended to a buffer, which goes to the
/// file (and its CRC-32) every [`SPILL`] bytes, so writing an entry never holds a copy
/// of the trace.
pub(super) struct Out<'w> {
    /// The bytes not written out yet.
    bytes: Vec<u8>,
    /// Where they go.
    to: &'w mut dyn Write,
    /// The CRC-32 of every byte so far.
    crc: crc32fast::Hasher,
    /// The first write that failed.
    failed: Option<std::io::Error>,
}

impl<'w> Out<'w> {
    /// Write to `to`.
    pub fn to(to: &'w mut dyn Write) -> Self {
        Self {
            bytes: Vec::with_capacity(SPILL + 64),
            to,
            crc: crc32fast::Hasher::new(),
            failed: None,
        }
    }

    /// Append one number.
    pub fn num<T: Le>(&mut self, v: T) {
        v.put(&mut self.bytes);
        self.spill(false);
    }

    /// Append a length (as `u64`).
    pub fn len(&mut self, n: usize) {
        self.num(n as u64);
    }

    /// Append a column: its length, then its values.
    pub fn col<T: Le>(&mut self, values: impl ExactSizeIterator<Item = T>) {
        self.len(values.len());
        for v in values {
            v.put(&mut self.bytes);
            if self.bytes.len() >= SPILL {
                self.spill(true);
            }
        }
    }

    /// Append bytes with their length.
    pub fn blob(&mut self, b: &[u8]) {
        self.len(b.len());
        self.bytes_raw(b);
    }

    /// Append bytes as they are.
    pub fn bytes_raw(&mut self, b: &[u8]) {
        for chunk in b.chunks(SPILL) {
            self.bytes.extend_from_slice(chunk);
            self.spill(false);
        }
    }

    /// Write out what is gathered, or only once there is at least [`SPILL`] of it.
    fn spill(&mut self, now: bool) {
        if !now && self.bytes.len() < SPILL {
            return;
        }
        self.crc.update(&self.bytes);
        if self.failed.is_none() {
            if let Err(e) = self.to.write_all(&self.bytes) {
                self.failed = Some(e);
            }
        }
        self.bytes.clear();
    }

    /// Write out the rest; the CRC-32 of everything written, or the first error.
    pub fn finish(mut self) -> std::io::Result<u32> {
        self.spill(true);
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(self.crc.clone().finalize()),
        }
    }
}

/// Back a new column's memory, when it is large, with huge pages where the system allows
/// them (`MADV_HUGEPAGE`) and map it in one call (`MADV_POPULATE_WRITE`, Linux 5.14+)
/// instead of one page fault per 4 KiB as it is filled: on a virtual machine the
/// faults, not the copies, were most of a cached read's time (`docs/cache.md`). Both
/// are hints; a kernel without them ignores them.
fn prefault<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (v.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (v.as_ptr() as usize + v.capacity() * std::mem::size_of::<T>()) & !(PAGE - 1);
        if end >= start + (1 << 20) {
            let (ptr, len) = (start as *mut libc::c_void, end - start);
            // SAFETY: [start, end) lies inside `v`'s own allocation, whole pages, not
            // yet written; both calls only change how those pages are backed, never
            // their contents (they are zero or untouched either way).
            unsafe {
                libc::madvise(ptr, len, libc::MADV_HUGEPAGE);
                libc::madvise(ptr, len, libc::MADV_POPULATE_WRITE);
            }
        }
    }
}

/// Why a stored file was not used: it does not hold what it should.
#[derive(Debug)]
pub(super) struct Bad;

/// The file's body being read: a position in a byte buffer, every read checked.
pub(super) struct In<'a> {
    rest: &'a [u8],
    /// For a mapped entry, its pages brought in and handed back as the reads go.
    window: Option<Window>,
}

impl<'a> In<'a> {
    /// Read from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            rest: bytes,
            window: None,
        }
    }

    /// Read from the start of `map`, a read-only private mapping of an entry file, holding
    /// only a window of it in memory at a time ([`Window`]).
    pub fn mapped(map: &'a [u8]) -> Self {
        Self {
            rest: map,
            window: Some(Window::over(map)),
        }
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Whether every byte was read.
    pub fn is_done(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Bad> {
        if n > self.rest.len() {
            return Err(Bad);
        }
        if let Some(w) = &mut self.window {
            w.reading(self.rest.as_ptr() as usize, n);
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    /// The next number.
    pub fn num<T: Le>(&mut self) -> Result<T, Bad> {
        Ok(T::get(self.take(T::SIZE)?))
    }

    /// A length of things of `size` bytes each, checked against the bytes left.
    pub fn len(&mut self, size: usize) -> Result<usize, Bad> {
        let n = usize::try_from(self.num::<u64>()?).map_err(|_| Bad)?;
        match n.checked_mul(size.max(1)) {
            Some(b) if b <= self.rest.len() => Ok(n),
            _ => Err(Bad),
        }
    }

    /// A column written by [`Out::col`], each value mapped by `f`.
    pub fn col<T: Le, U>(&mut self, f: impl Fn(T) -> U) -> Result<Vec<U>, Bad> {
        let n = self.len(T::SIZE)?;
        let bytes = self.take(n * T::SIZE)?;
        let mut v = Vec::with_capacity(n);
        prefault(&v);
        v.extend(bytes.chunks_exact(T::SIZE).map(|c| f(T::get(c))));
        Ok(v)
    }

    /// A column of exactly `n` values.
    pub fn col_of<T: Le, U>(&mut self, n: usize, f: impl Fn(T) -> U) -> Result<Vec<U>, Bad> {
        let v = self.col(f)?;
        if v.len() != n {
            return Err(Bad);
        }
        Ok(v)
    }

    /// A column of exactly `n` values collected into `C`, with no vector on the way.
    pub fn col_into<T: Le, C: FromIterator<T>>(&mut self, n: usize) -> Result<C, Bad> {
        if self.len(T::SIZE)? != n {
            return Err(Bad);
        }
        let bytes = self.take(n * T::SIZE)?;
        Ok(bytes.chunks_exact(T::SIZE).map(T::get).collect())
    }

    /// Bytes written by [`Out::blob`].
    pub fn blob(&mut self) -> Result<&'a [u8], Bad> {
        let n = self.len(1)?;
        self.take(n)
    }

    /// A UTF-8 text written by [`Out::blob`].
    pub fn text(&mut self) -> Result<String, Bad> {
        std::str::from_utf8(self.blob()?)
            .map(str::to_owned)
            .map_err(|_| Bad)
    }
}
