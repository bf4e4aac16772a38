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
/// that memory back: measured on this project's 2-core VM, `report` over 1,000 rank
/// files peaked at 174 MiB before and 90 MiB after, and `report` of a 420 MiB trace at
/// 288 MiB before and 211 MiB after, in no more time.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator parameters; it is called before any thread
    // is started.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 << 20);
    }
}
