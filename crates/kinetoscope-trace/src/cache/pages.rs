//! The pages of a mapped cache entry, brought in and handed back a window at a time, so
//! that reading an entry holds only a few MiB of it in memory instead of all of it next
//! to the model it becomes (`docs/cache.md`). Linux only; elsewhere nothing is done and
//! the kernel pages the entry as it likes.

/// Bytes brought in or handed back at once.
pub(super) const WINDOW: usize = 8 << 20;
const PAGE: usize = 4096;

/// A read-only, private, file-backed mapping being read front to back.
#[derive(Debug)]
pub(super) struct Window {
    /// One past the mapping's last byte.
    end: usize,
    /// Everything below this address has been handed back.
    released: usize,
    /// Everything below this address has been brought in.
    populated: usize,
}

impl Window {
    /// A window over `map`, which must be a read-only private mapping of a file (so that a
    /// page handed back is read again from the file, unchanged, if touched again).
    pub(super) fn over(map: &[u8]) -> Self {
        let start = map.as_ptr() as usize;
        advise(start, map.len(), Advice::WillNeed);
        Self {
            end: start + map.len(),
            released: start & !(PAGE - 1),
            populated: start,
        }
    }

    /// The reader is about to read `[at, at + n)` and is done with everything before
    /// `at`: hand back the whole pages before it, once a window's worth has gathered, and
    /// bring in what it is about to read plus one window ahead.
    pub(super) fn reading(&mut self, at: usize, n: usize) {
        let done = at & !(PAGE - 1);
        if done >= self.released + WINDOW {
            advise(self.released, done - self.released, Advice::DontNeed);
            self.released = done;
        }
        let want = at.saturating_add(n).min(self.end);
        if want > self.populated {
            let to = want.saturating_add(WINDOW).min(self.end);
            advise(self.populated, to - self.populated, Advice::PopulateRead);
            self.populated = to;
        }
    }
}

/// What to tell the kernel about a range of the mapping.
#[derive(Clone, Copy)]
enum Advice {
    /// Read it ahead into the page cache (not into this process).
    WillNeed,
    /// Map it into this process now, in one call rather than a fault per page.
    PopulateRead,
    /// Unmap it from this process (read again from the file if touched).
    DontNeed,
}

/// Pass `advice` for `[addr, addr + len)`, widened to whole pages; errors are ignored (the
/// calls are hints, and an older kernel lacks `MADV_POPULATE_READ`).
#[allow(unused_variables)]
fn advise(addr: usize, len: usize, advice: Advice) {
    #[cfg(target_os = "linux")]
    {
        let start = addr & !(PAGE - 1);
        let len = (addr + len - start).next_multiple_of(PAGE);
        if len == 0 {
            return;
        }
        let flag = match advice {
            Advice::WillNeed => libc::MADV_WILLNEED,
            Advice::PopulateRead => libc::MADV_POPULATE_READ,
            Advice::DontNeed => libc::MADV_DONTNEED,
        };
        // SAFETY: the range lies in a read-only private file mapping (`Window::over`'s
        // contract), widened to the pages that hold it, which belong to the same mapping.
        // None of these calls changes what the pages read: `MADV_DONTNEED` on such a
        // mapping drops the process's copy, and the next read maps the file's page again.
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, flag);
        }
    }
}
