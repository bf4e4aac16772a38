//! Adversarial trace shapes for the complexity benchmark and the hostile-input tests:
//! the same kinds of events as a GPU training step ([`kinds`]), laid out to break
//! analyses that are quadratic in overlap, nesting, duplication or number of tracks.
//!
//! A trace of `units` units is split into `steps` `ProfilerStep#N` spans. One unit is a
//! host span with (for most kinds) a runtime call inside it, the GPU activity that call
//! launched and a `[memory]` allocation and free: 3 to 5 events. [`Shape`] decides where
//! the units go.
//!
//! ```no_run
//! use kinetoscope_synth::shapes::{write_shape, Shape, ShapeOptions};
//! let opts = ShapeOptions { shape: Shape::DeepNesting, units: 1_000_000, steps: 1 };
//! write_shape(&opts, "deep.json.gz".as_ref()).unwrap();
//! ```

pub mod kinds;
mod layout;

use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

use anyhow::bail;

use crate::{write_atomically, FileStats, WriteStats};
use kinds::{UnitKind, KINDS};
use layout::{Place, Tracks};

/// Where the units of an adversarial trace go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Every event, steps included, starts at one timestamp with one duration, so each
    /// host span is nested in the one before it.
    SameTimestamp,
    /// Each step's operators nested one inside the next (depth = units per step), each
    /// level with its runtime call, kernel and memory records.
    DeepNesting,
    /// Units one after the other, every event (GPU activities too) on one track.
    OneTrack,
    /// Units one after the other, every event on a track of its own (every GPU
    /// activity on a device and stream of its own).
    TrackPerEvent,
    /// Units one after the other, every event name distinct.
    DistinctNames,
    /// Spans of equal length each starting a little after the previous one: every span
    /// overlaps every other span of its step, none contains another.
    Overlap,
    /// Units one after the other, each in a `ProfilerStep#N` of its own.
    StepPerUnit,
}

impl Shape {
    /// Every shape, in the order the benchmark runs them.
    pub const ALL: [Shape; 7] = [
        Shape::SameTimestamp,
        Shape::DeepNesting,
        Shape::OneTrack,
        Shape::TrackPerEvent,
        Shape::DistinctNames,
        Shape::Overlap,
        Shape::StepPerUnit,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Shape::SameTimestamp => "same-timestamp",
            Shape::DeepNesting => "deep-nesting",
            Shape::OneTrack => "one-track",
            Shape::TrackPerEvent => "track-per-event",
            Shape::DistinctNames => "distinct-names",
            Shape::Overlap => "overlap",
            Shape::StepPerUnit => "step-per-unit",
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Shape {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Shape::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Shape::ALL.iter().map(|k| k.name()).collect();
                format!("unknown shape {s:?} (one of {})", names.join(", "))
            })
    }
}

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct ShapeOptions {
    /// The layout.
    pub shape: Shape,
    /// Number of units (host spans with their calls, activities and memory records).
    pub units: u64,
    /// Number of `ProfilerStep#N` spans the units are split into (ignored by
    /// [`Shape::StepPerUnit`]).
    pub steps: u64,
}

/// Writes an adversarial trace to `out` (gzip when it ends in `.gz`) through a
/// `.partial` file renamed into place.
pub fn write_shape(opts: &ShapeOptions, out: &Path) -> anyhow::Result<FileStats> {
    if opts.units == 0 {
        bail!("the trace needs at least one unit");
    }
    write_atomically(out, |w| write_shape_to(w, opts))
}

/// Writes an adversarial trace as compact JSON, one event per line.
pub fn write_shape_to<W: Write + ?Sized>(w: &mut W, opts: &ShapeOptions) -> io::Result<WriteStats> {
    let steps = match opts.shape {
        Shape::StepPerUnit => opts.units,
        _ => opts.steps.clamp(1, opts.units.max(1)),
    };
    let mut out = Out {
        w,
        stats: WriteStats {
            copies: 1,
            ..WriteStats::default()
        },
        tracks: Tracks::new(opts.shape),
    };
    out.raw(HEADER)?;
    for s in 0..steps {
        let (first, last) = (s * opts.units / steps, (s + 1) * opts.units / steps);
        let m = (last - first) as i64;
        let region = layout::step_region(opts.shape, s as i64, m);
        let track = out.tracks.host();
        out.span(
            "user_annotation",
            &format!("ProfilerStep#{}", s + 1),
            track,
            region,
            &format!(r#""External id": {}"#, s + 1),
        )?;
        for (k, i) in (first..last).enumerate() {
            let place = layout::place(opts.shape, region.0, k as i64, m);
            out.unit(i, &KINDS[i as usize % KINDS.len()], &place, opts.shape)?;
        }
    }
    out.raw(FOOTER)?;
    Ok(out.stats)
}

const HEADER: &str = concat!(
    r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "#,
    r#""totalGlobalMem": 84990623744, "computeMajor": 8, "computeMinor": 0, "#,
    r#""maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "#,
    r#""regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "#,
    r#""sharedMemPerMultiprocessor": 167936, "numSms": 108, "sharedMemPerBlockOptin": 166912}], "#,
    r#""distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2}, "#,
    r#""record_shapes": 1, "profile_memory": 1, "baseTimeNanoseconds": 1700000000000000000, "#,
    r#""traceEvents": ["#,
);

const FOOTER: &str = "\n], \"traceName\": \"adversarial\"}\n";

/// The output and what has been written.
struct Out<'w, W: Write + ?Sized> {
    w: &'w mut W,
    stats: WriteStats,
    tracks: Tracks,
}

impl<W: Write + ?Sized> Out<'_, W> {
    fn raw(&mut self, text: &str) -> io::Result<()> {
        self.stats.json_bytes += text.len() as u64;
        self.w.write_all(text.as_bytes())
    }

    /// One event: `fields` are the JSON members after `"ph"`.
    fn event(&mut self, fields: &str) -> io::Result<()> {
        let sep = if self.stats.events == 0 { "\n" } else { ",\n" };
        self.stats.events += 1;
        self.raw(&format!("{sep}{{\"ph\": {fields}}}"))
    }

    /// A complete event.
    fn span(
        &mut self,
        cat: &str,
        name: &str,
        (pid, tid): (i64, i64),
        (start, end): (i64, i64),
        args: &str,
    ) -> io::Result<()> {
        self.event(&format!(
            r#""X", "cat": "{cat}", "name": {}, "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{{args}}}"#,
            json_string(name),
            micros(start),
            micros(end - start)
        ))
    }

    /// A `[memory]` record of `bytes` (negative: a free) at `addr`.
    fn memory(&mut self, (pid, tid): (i64, i64), at: i64, addr: i64, bytes: i64) -> io::Result<()> {
        self.event(&format!(
            r#""i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": {pid}, "tid": {tid}, "ts": {}, "args": {{"Total Reserved": 67108864, "Total Allocated": {}, "Bytes": {bytes}, "Device Id": 0, "Device Type": 1, "Addr": {addr}}}"#,
            micros(at),
            bytes.max(0)
        ))
    }

    /// Unit `i` of kind `kind` at `place`.
    fn unit(&mut self, i: u64, kind: &UnitKind, place: &Place, shape: Shape) -> io::Result<()> {
        let i = i as i64;
        let named = |name: &str| match shape {
            Shape::DistinctNames => format!("{name} [{i}]"),
            _ => name.to_owned(),
        };
        let ext = 1_000_000 + i;
        let mut args = format!(r#""External id": {ext}"#);
        if let Some((dims, types)) = kind.shapes {
            args.push_str(&format!(r#", "Input Dims": {dims}, "Input type": {types}"#));
        }
        if kind.cat == "python_function" {
            args = format!(r#""Python id": {i}, "Python parent id": null"#);
        }
        let host = self.tracks.host();
        self.span(kind.cat, &named(kind.name), host, place.op, &args)?;
        if let Some(call) = kind.call {
            let track = self.tracks.host_call(host);
            let args = format!(
                r#""External id": {ext}, "cbid": 211, "correlation": {}"#,
                i + 1
            );
            self.span("cuda_runtime", &named(call), track, place.call, &args)?;
        }
        if let Some((cat, name)) = kind.gpu {
            let (pid, stream) = self.tracks.gpu();
            let device = if shape == Shape::OneTrack { 0 } else { pid };
            let args = format!(
                r#""External id": {ext}, "device": {device}, "context": 1, "stream": {stream}, "correlation": {}, "registers per thread": 64, "shared memory": 0, "blocks per SM": 0.5, "warps per SM": 4.0, "grid": [54, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 12, "bytes": 4096"#,
                i + 1
            );
            self.span(cat, &named(name), (pid, stream), place.gpu, &args)?;
        }
        let addr = 0x7f00_0000_0000 + (i % 4096) * (16 << 20);
        let bytes = (1 + i % 4) << 20;
        let track = self.tracks.host_call(host);
        self.memory(track, place.alloc_at, addr, bytes)?;
        let track = self.tracks.host_call(host);
        self.memory(track, place.free_at, addr, -bytes)
    }
}

/// `ns` as JSON microseconds with three decimals (exact).
fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

#[cfg(test)]
mod tests;
