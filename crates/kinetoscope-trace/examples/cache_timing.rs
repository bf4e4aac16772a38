//! Times reading one trace file three ways, in one process: parsed without the cache,
//! parsed and written to the cache (first read), and read back from the cache (a hit);
//! prints each (best of `RUNS`, default 3) and the entry's size beside the file's.
//! The trace cache benchmark of `bench/README.md`:
//!
//! ```sh
//! cargo run --release -p kinetoscope-trace --example cache_timing -- TRACE [RUNS]
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kinetoscope_trace::cache::{entry_file, CacheOptions};
use kinetoscope_trace::read::{read_trace, ReadOptions};

/// The best time of `runs` calls of `f`.
fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("usage: cache_timing TRACE [RUNS]"));
    let runs: usize = args
        .next()
        .map_or(3, |r| r.parse().expect("RUNS is a number"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cache = CacheOptions {
        dir: dir.path().to_owned(),
        min_bytes: 0,
        max_bytes: u64::MAX,
    };
    let plain = ReadOptions::default();
    let cached = ReadOptions {
        cache: Some(cache),
        ..ReadOptions::default()
    };
    let read = |opts: &ReadOptions| drop(read_trace(&path, opts).expect("a trace"));
    let entry = entry_file(&path, &cached).expect("a cacheable file");
    let parse = best(runs, || read(&plain));
    let first = best(runs, || {
        let _ = std::fs::remove_file(&entry);
        read(&cached)
    });
    let hit = best(runs, || read(&cached));
    let size = |p: &PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let (file, stored) = (size(&path), size(&entry));
    let secs = |d: Duration| d.as_secs_f64();
    let report = format!(
        "file {file} bytes, cache entry {stored} bytes ({:.3} x)\n\
         parse (no cache)          {:>8.3} s\n\
         first read (parse+write)  {:>8.3} s ({:.2} x parse)\n\
         cached read (hit)         {:>8.3} s ({:.3} x parse)\n",
        stored as f64 / file as f64,
        secs(parse),
        secs(first),
        secs(first) / secs(parse),
        secs(hit),
        secs(hit) / secs(parse),
    );
    std::io::stdout()
        .write_all(report.as_bytes())
        .expect("write stdout");
}
