//! The hostile-input suite: one module per class of bad input, every input generated at
//! test time (nothing large is committed). Each test asserts what `docs/security.md`
//! promises:
//! - the exit code is 0, 1 or 2, never a signal, and an error names the file and where;
//! - peak memory, measured on the child process itself (`wait4`), stays under a bound;
//! - inputs are unchanged (hashed before and after);
//! - no raw control byte reaches stdout or stderr.
//!
//! Time bounds are the benchmark's (`bench/`), not these tests'.

mod analysis;
mod arguments;
mod diff;
pub mod harness;
mod output;
mod pstats;
mod reading;
mod rendering;
mod server;
mod special_files;
mod tables;
mod web_page;

use crate::common::fixtures;
use harness::{fingerprint, run_measured};

/// The harness on a good trace: exit 0, output that names the trace, under 256 MiB, and
/// the input unchanged.
#[test]
fn a_good_trace_passes_every_check() {
    let dir = fixtures();
    let input = dir.join("ranks");
    let before = fingerprint(std::slice::from_ref(&input));
    let run = run_measured(&dir, &["summary", "ranks"]);
    run.assert_sane(256 << 20);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert!(run.out().contains("rank"), "{}", run.out());
    assert_eq!(before, fingerprint(&[input]));
}
