//! The `kinetoscope` command line (the body is the library's [`kinetoscope::run`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    return_freed_memory();
    kinetoscope::run(std::env::args_os())
}

/// glibc's allocator, left to itself, raises its mmap threshold each time a large block
/// is freed, so that later large blocks (a trace's columns, read buffers) come from
/// per-thread arenas, whose freed memory it keeps up to twice that size per arena. Fixed
/// thresholds (the defaults' mmap threshold of 128 KiB, 4 MiB kept free at most) hand
/// that memory back, for some system time: measured on this project's 2-core VM,
/// `report` over 1,000 rank files peaked at 174 MiB before and 90 MiB after; `report`
/// of a 300 MiB `profile_memory` trace at 225 MiB before and 155 MiB after, in 1.10x the
/// wall time (`farm-bench`, 7 runs A/B; system time 0.24 -> 0.37 s; bench/README.md).
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator parameters; it is called before any thread
    // is started.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 << 20);
    }
}
