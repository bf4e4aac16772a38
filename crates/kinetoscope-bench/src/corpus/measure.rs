//! The measurements of one grown trace: `summary` on one and two threads, `report`, the
//! serde_json baseline (in a child process, so its memory never shows in another
//! child's peak RSS) and, for gzip, the single-stream inflate floor.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::child::run_child;
use crate::Bench;

/// Wall times of repeated runs, seconds.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Every run, in order.
    pub runs: Vec<f64>,
    /// Their median.
    pub median: f64,
}

impl Timing {
    /// The runs and their median.
    pub fn new(runs: Vec<f64>) -> Timing {
        Timing {
            median: median(&runs),
            runs,
        }
    }
}

/// The median of `v` (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut t = v.to_vec();
    t.sort_by(f64::total_cmp);
    match t.len() {
        0 => 0.0,
        n if n % 2 == 1 => t[n / 2],
        n => (t[n / 2 - 1] + t[n / 2]) / 2.0,
    }
}

/// One kinetoscope command on one grown trace, timed one run at a time so that its runs
/// can alternate with the other measurements' (see [`super::measure_size`]).
pub struct Series<'a> {
    bench: Bench<'a>,
    times: Vec<f64>,
    max_rss_kib: u64,
}

impl<'a> Series<'a> {
    /// `kinetoscope <command> FILE --format json -j <threads>`, not run yet.
    pub fn new(bin: &'a Path, command: &str, threads: usize) -> Self {
        Series {
            bench: Bench {
                kinetoscope: bin,
                command: vec![command.to_string()],
                threads: Some(threads),
                runs: 1,
            },
            times: Vec::new(),
            max_rss_kib: 0,
        }
    }

    /// The untimed first run, which checks the output and warms the page cache.
    pub fn check(&self, file: &Path) -> anyhow::Result<()> {
        self.bench.check(file, self.bench.threads)
    }

    /// One timed run.
    pub fn run(&mut self, file: &Path) -> anyhow::Result<()> {
        let i = self.times.len();
        let (wall, rss_kib) = self.bench.run_once(file, self.bench.threads, i)?;
        self.times.push(wall);
        self.max_rss_kib = self.max_rss_kib.max(rss_kib);
        Ok(())
    }

    /// The runs' times and their largest peak RSS, KiB.
    pub fn done(self) -> (Timing, u64) {
        (Timing::new(self.times), self.max_rss_kib)
    }
}

/// What the serde_json child prints.
#[derive(Serialize, Deserialize)]
struct SerdeOut {
    times: Vec<f64>,
    events: u64,
}

/// The serde_json baseline of `file` (plain JSON), timed in a child process running
/// `exe --serde-child FILE --runs N`.
pub fn serde_in_child(exe: &Path, file: &Path, runs: usize) -> anyhow::Result<Timing> {
    let mut cmd = Command::new(exe);
    cmd.arg("--serde-child")
        .arg(file)
        .arg("--runs")
        .arg(runs.to_string());
    let out = tempfile_in(file, ".serde.json")?;
    let run = run_child(&mut cmd, Stdio::from(File::create(&out)?), None)?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    if run.code != Some(0) {
        bail!(
            "the serde_json baseline failed on {} (exit {:?}): {}",
            file.display(),
            run.code,
            run.stderr.trim()
        );
    }
    let parsed: SerdeOut =
        serde_json::from_str(&text).context("the serde_json child's output is not JSON")?;
    Ok(Timing::new(parsed.times))
}

/// `file` with `suffix` appended to its name.
fn tempfile_in(file: &Path, suffix: &str) -> anyhow::Result<std::path::PathBuf> {
    let mut name = file.file_name().context("no file name")?.to_os_string();
    name.push(suffix);
    Ok(file.with_file_name(name))
}

/// The body of `--serde-child FILE`: reads the file, parses it `runs` times into
/// borrowed structs and prints the parse times (not the read) as JSON.
pub fn serde_child(file: &Path, runs: usize) -> anyhow::Result<()> {
    let buf = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let (times, events, _) = crate::serde_baseline(&buf, runs)?;
    let text = serde_json::to_string(&SerdeOut { times, events })?;
    writeln!(io::stdout().lock(), "{text}")?;
    Ok(())
}

/// The single-stream inflate floor: `runs` times, the `.gz` inflated to nowhere with
/// flate2 (the reader's backend and decoder); returns the times and the inflated size.
pub fn inflate_floor(file: &Path, runs: usize) -> anyhow::Result<(Timing, u64)> {
    let mut times = Vec::new();
    let mut bytes = 0;
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let f = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        let mut dec = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, f));
        let mut n = 0u64;
        loop {
            let got = dec
                .read(&mut buf)
                .with_context(|| format!("cannot inflate {}", file.display()))?;
            if got == 0 {
                break;
            }
            n += got as u64;
        }
        times.push(t.elapsed().as_secs_f64());
        bytes = std::hint::black_box(n);
    }
    Ok((Timing::new(times), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn the_inflate_floor_inflates_every_byte() {
        let dir = std::env::temp_dir().join(format!("ks-bench-inflate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.json.gz");
        let text = "{\"traceEvents\": []}\n".repeat(10_000);
        let mut enc =
            flate2::write::GzEncoder::new(File::create(&path).unwrap(), Default::default());
        enc.write_all(text.as_bytes()).unwrap();
        enc.finish().unwrap();
        let (timing, bytes) = inflate_floor(&path, 2).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(bytes, text.len() as u64);
        assert_eq!(timing.runs.len(), 2);
    }
}
