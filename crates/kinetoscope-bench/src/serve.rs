//! `--serve`: the web UI's timeline on a large trace, through the real server over
//! loopback HTTP: the load (first timeline request: read and index), the first paint
//! (the whole trace, every track, 1600 px) and 20 zoom and pan queries, each with its
//! time as the client sees it (an upper bound of the server's) and its payload.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Pixels of the window queried (a laptop screen's timeline).
const WIDTH_PX: u32 = 1600;

/// A running `kinetoscope serve`, ended when dropped.
struct Served {
    child: Child,
    host: String,
    token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start(kinetoscope: &Path, trace: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(kinetoscope)
            .env("KINETOSCOPE_NO_CACHE", "1")
            .args(["serve", "--port", "0"])
            .arg(trace)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot run {}", kinetoscope.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().context("no stdout")?;
        BufReader::new(stdout).read_line(&mut line)?;
        let url = line.trim();
        let Some((base, token)) = url.split_once("/?token=") else {
            bail!("unexpected first line from serve: {url:?}");
        };
        Ok(Self {
            host: base.trim_start_matches("http://").to_owned(),
            token: token.to_owned(),
            child,
        })
    }

    /// `GET target`: (seconds, body).
    fn get(&self, target: &str) -> anyhow::Result<(f64, Vec<u8>)> {
        let start = Instant::now();
        let mut s = TcpStream::connect(&self.host)?;
        s.set_read_timeout(Some(Duration::from_secs(600)))?;
        write!(
            s,
            "GET {target} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
            self.host, self.token
        )?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let secs = start.elapsed().as_secs_f64();
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .context("no response head")?;
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let body = raw[split + 4..].to_vec();
        if !head.starts_with("HTTP/1.1 200") {
            bail!("{target}: {head} {}", String::from_utf8_lossy(&body));
        }
        Ok((secs, body))
    }
}

/// Run the timeline benchmark on `trace` with the `kinetoscope` binary.
pub fn run(kinetoscope: &Path, trace: &Path) -> anyhow::Result<()> {
    let size = std::fs::metadata(trace)?.len();
    let mut out = std::io::stdout().lock();
    let served = Served::start(kinetoscope, trace)?;
    let runs: serde_json::Value = serde_json::from_slice(&served.get("/api/v1/runs")?.1)?;
    let run = runs["runs"][0]["id"].as_str().context("no run")?.to_owned();
    let base = format!("/api/v1/runs/{run}");
    let (load, body) = served.get(&format!("{base}/timeline/tracks"))?;
    let tracks: serde_json::Value = serde_json::from_slice(&body)?;
    let t1 = tracks["t1_ns"].as_i64().context("t1_ns")?;
    let n_tracks = tracks["tracks"].as_array().map_or(0, Vec::len);
    writeln!(
        out,
        "kinetoscope-bench --serve: {} ({:.0} MB), {n_tracks} tracks, {:.3} s of trace",
        trace.display(),
        size as f64 / 1e6,
        t1 as f64 / 1e9
    )?;
    writeln!(
        out,
        "load (read + timeline index, first request): {load:.2} s"
    )?;
    let window =
        |s: i64, e: i64| format!("{base}/timeline?start_ns={s}&end_ns={e}&width_px={WIDTH_PX}");
    let (paint, body) = served.get(&window(0, t1 + 1))?;
    writeln!(
        out,
        "first paint (whole trace, all tracks, {WIDTH_PX} px): {:.1} ms, {:.0} KB",
        paint * 1e3,
        body.len() as f64 / 1e3
    )?;
    writeln!(
        out,
        "{:>4}  {:>14}  {:>14}  {:>9}  {:>9}",
        "#", "start_ns", "span_ns", "ms", "KB"
    )?;
    let (mut worst_ms, mut worst_kb) = (0f64, 0f64);
    for (i, (s, e)) in zoom_and_pan(t1).into_iter().enumerate() {
        let (secs, body) = served.get(&window(s, e))?;
        let (ms, kb) = (secs * 1e3, body.len() as f64 / 1e3);
        worst_ms = worst_ms.max(ms);
        worst_kb = worst_kb.max(kb);
        writeln!(
            out,
            "{:>4}  {s:>14}  {:>14}  {ms:>9.1}  {kb:>9.0}",
            i + 1,
            e - s
        )?;
    }
    writeln!(
        out,
        "worst zoom/pan query: {worst_ms:.1} ms, {worst_kb:.0} KB"
    )?;
    if let Some(kb) = peak_rss_kb(served.child.id()) {
        writeln!(out, "server peak RSS: {:.0} MB", kb as f64 / 1e3)?;
    }
    Ok(())
}

/// A process's peak resident set (`VmHWM`, kB), where `/proc` tells it.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Ten zooms by 2× towards a point a third into the trace, then ten pans by half a
/// window, as someone exploring a step would.
fn zoom_and_pan(t1: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let focus = t1 / 3;
    let mut span = t1;
    for _ in 0..10 {
        span = (span / 2).max(1_000);
        let s = (focus - span / 2).max(0);
        out.push((s, s + span));
    }
    let (mut s, _) = *out.last().unwrap_or(&(0, t1));
    for _ in 0..10 {
        s += span / 2;
        out.push((s, s + span));
    }
    out
}
