//! Shared helpers: where the fixtures and the shared corpus live, gzip helpers, temp
//! files, and the **oracle**: an independent reading of a trace with `serde_json` that the
//! reader's results are compared against.
//!
//! The oracle deliberately shares no code with the reader: it parses the whole file with
//! `serde_json` (numbers `ts`/`dur` kept as their JSON text through `RawValue`, so the
//! µs → ns conversion is done exactly from the text), counts `cat` values with its own
//! normalisation table, and lists the `ProfilerStep#*` spans. Everything is compared on
//! the model itself: this crate's tests use no analysis.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::{Phase, RankSource, Trace, TraceError};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// `crates/kinetoscope-trace/tests/fixtures`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture by file name (relative to the fixtures folder).
pub fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

/// The shared reference folder, for the `#[ignore]`d checks against it: a missing
/// folder is a failure naming where it was looked for, never a silent pass.
pub fn require_shared() -> PathBuf {
    shared_dir().unwrap_or_else(|| {
        panic!(
            "the shared reference folder is missing: looked for $KINETOSCOPE_SHARED, then {}; \
             set KINETOSCOPE_SHARED or run without --ignored",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared")
                .display()
        )
    })
}

/// The shared reference folder: `$KINETOSCOPE_SHARED`, or `shared/` beside the
/// workspace (`CARGO_MANIFEST_DIR/../../../shared`).
fn shared_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KINETOSCOPE_SHARED") {
        let p = PathBuf::from(p);
        return p.is_dir().then_some(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    p.is_dir().then_some(p)
}

/// Gzip-compress bytes.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The file's bytes, decompressed when they are gzip.
pub fn json_text(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out
    } else {
        raw
    }
}

/// Write `bytes` to a fresh temporary file named `name` (gzip-compressed first when
/// `gz`), returning the folder (keep it alive) and the path.
pub fn temp_file(name: &str, bytes: &[u8], gz: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let data = if gz { gzip(bytes) } else { bytes.to_vec() };
    std::fs::write(&path, data).unwrap();
    (dir, path)
}

/// Lenient default options with a fixed thread count.
pub fn lenient(threads: usize) -> ReadOptions {
    ReadOptions {
        strict: false,
        threads,
        ..ReadOptions::default()
    }
}

/// Strict options.
pub fn strict() -> ReadOptions {
    ReadOptions {
        strict: true,
        threads: 2,
        ..ReadOptions::default()
    }
}

// ---------------------------------------------------------------------------------
// The oracle.

#[derive(Deserialize)]
struct TopLevel {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Element>,
    #[serde(rename = "baseTimeNanoseconds", default)]
    base_time_ns: Option<i64>,
    #[serde(rename = "deviceProperties", default)]
    device_properties: Option<Vec<Value>>,
    #[serde(rename = "computeProperties", default)]
    compute_properties: Option<Vec<Value>>,
    #[serde(rename = "distributedInfo", default)]
    distributed_info: Option<Value>,
}

#[derive(Deserialize)]
struct Element {
    #[serde(default)]
    ph: Option<String>,
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    ts: Option<Box<RawValue>>,
    #[serde(default)]
    dur: Option<Box<RawValue>>,
}

/// One `ProfilerStep#` span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpStep {
    pub name: String,
    pub start_ns: i64,
    pub dur_ns: i64,
}

/// What an independent reading says about a trace.
#[derive(Debug)]
pub struct Expected {
    /// Elements of `traceEvents`.
    pub elements: u64,
    /// Elements per normalised category name.
    pub categories: BTreeMap<String, u64>,
    /// Elements that go to the event table (not metadata, not flows).
    pub events: u64,
    /// Flow elements.
    pub flows: u64,
    /// Host `ProfilerStep#` spans (`X` events of category `user_annotation`, `Operator`
    /// or `cpu_op`), in file order.
    pub steps: Vec<ExpStep>,
    /// First start and last end of all `X` events, ns.
    pub span: Option<(i64, i64)>,
    /// `baseTimeNanoseconds`.
    pub base_time_ns: Option<i64>,
    /// `(id, name)` of `deviceProperties` (or `computeProperties`).
    pub devices: Vec<(i64, String)>,
    /// `distributedInfo.rank`.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// Bytes of JSON text.
    pub json_bytes: u64,
}

/// The category name kinetoscope shows for a raw `cat` (the normalisation of
/// `docs/formats.md` §7 item 3), written out here independently of the reader.
fn normalised(cat: &str) -> &str {
    match cat {
        "Operator" => "cpu_op",
        "Runtime" => "cuda_runtime",
        "Kernel" => "kernel",
        "Memcpy" => "gpu_memcpy",
        "Memset" => "gpu_memset",
        "async" | "async_gpu" | "async_cpu_to_gpu" => "ac2g",
        "forward_backward" => "fwdbwd",
        other => other,
    }
}

/// Exact microseconds-as-JSON-text to integer nanoseconds: integer µs × 1000, or µs with
/// up to three decimals. Panics on any other form (the corpus has none).
pub fn micros_text_to_ns(text: &str) -> i64 {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    assert!(
        !int.is_empty()
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.len() <= 3
            && frac.bytes().all(|b| b.is_ascii_digit()),
        "unexpected time text {text:?}"
    );
    let mut ns: i64 = int.parse::<i64>().unwrap() * 1000;
    let mut scale = 100;
    for b in frac.bytes() {
        ns += (b - b'0') as i64 * scale;
        scale /= 10;
    }
    if neg {
        -ns
    } else {
        ns
    }
}

fn time_ns(v: &Option<Box<RawValue>>) -> Option<i64> {
    v.as_ref().map(|r| micros_text_to_ns(r.get().trim()))
}

/// Read `path` independently. `Err` when `serde_json` rejects it (invalid JSON).
pub fn oracle(path: &Path) -> Result<Expected, serde_json::Error> {
    let text = json_text(path);
    let top: TopLevel = serde_json::from_slice(&text)?;
    let base = top.base_time_ns;
    let mut categories = BTreeMap::new();
    let mut events = 0;
    let mut flows = 0;
    let mut steps: Vec<ExpStep> = Vec::new();
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for e in &top.trace_events {
        let ph = e.ph.as_deref().unwrap_or("");
        let name = e.name.as_deref().unwrap_or("");
        let cat = match e.cat.as_deref() {
            Some(c) => normalised(c),
            None if ph == "M" => "(metadata)",
            None if name == "[memory]" || name == "[OutOfMemory]" => "cpu_instant_event",
            None => "(none)",
        };
        *categories.entry(cat.to_owned()).or_insert(0u64) += 1;
        if ph == "M" {
            continue;
        }
        if matches!(ph, "s" | "f" | "t") || matches!(cat, "ac2g" | "fwdbwd") {
            flows += 1;
            continue;
        }
        events += 1;
        if ph != "X" {
            continue;
        }
        let ts = time_ns(&e.ts).expect("an X event without ts") + base.unwrap_or(0);
        let dur = time_ns(&e.dur).unwrap_or(0).max(0);
        lo = lo.min(ts);
        hi = hi.max(ts + dur);
        let step_cat = matches!(
            e.cat.as_deref(),
            Some("user_annotation" | "Operator" | "cpu_op")
        );
        if step_cat && name.starts_with("ProfilerStep#") {
            steps.push(ExpStep {
                name: name.to_owned(),
                start_ns: ts,
                dur_ns: dur,
            });
        }
    }
    let devs = top
        .device_properties
        .filter(|d| !d.is_empty())
        .or(top.compute_properties)
        .unwrap_or_default();
    let devices = devs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            (
                d.get("id").and_then(Value::as_i64).unwrap_or(i as i64),
                d.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    let dist = top.distributed_info.as_ref();
    Ok(Expected {
        elements: top.trace_events.len() as u64,
        categories,
        events,
        flows,
        steps,
        span: (lo <= hi).then_some((lo, hi)),
        base_time_ns: base,
        devices,
        rank: dist.and_then(|d| d.get("rank")).and_then(Value::as_i64),
        world_size: dist
            .and_then(|d| d.get("world_size"))
            .and_then(Value::as_i64),
        json_bytes: text.len() as u64,
    })
}

/// Elements per category as the model counts them, by display name (metadata as
/// `(metadata)`, uncategorised as `(none)`).
pub fn categories(trace: &Trace) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (_, c) in trace.categories.iter().filter(|(_, c)| c.count > 0) {
        *out.entry(c.display_name().to_owned()).or_insert(0u64) += c.count;
    }
    out
}

/// The host `ProfilerStep#` spans in the model, in file order.
pub fn step_spans(trace: &Trace) -> Vec<ExpStep> {
    trace
        .events
        .ids()
        .filter(|&e| {
            let i = e.index();
            trace.events.phase[i] == Phase::Complete
                && trace.name(e).starts_with("ProfilerStep#")
                && matches!(
                    trace.categories.get(trace.events.cat[i]).raw.as_str(),
                    "user_annotation" | "Operator" | "cpu_op"
                )
        })
        .map(|e| ExpStep {
            name: trace.name(e).to_owned(),
            start_ns: trace.events.ts_ns[e.index()],
            dur_ns: trace.events.dur_ns.at(e.index()),
        })
        .collect()
}

/// Compare a trace the reader produced with the oracle; one line per mismatch.
pub fn compare(trace: &Trace, exp: &Expected) -> Vec<String> {
    let mut bad = Vec::new();
    let mut check = |what: &str, got: String, want: String| {
        if got != want {
            bad.push(format!("{what}: reader {got}, expected {want}"));
        }
    };
    check(
        "defects",
        format!("{:?}", trace.report.defects),
        "[]".into(),
    );
    check(
        "elements",
        trace.report.elements.to_string(),
        exp.elements.to_string(),
    );
    let categories = categories(trace);
    check(
        "categories",
        format!("{categories:?}"),
        format!("{:?}", exp.categories),
    );
    check(
        "events",
        trace.events.len().to_string(),
        exp.events.to_string(),
    );
    check(
        "flows",
        trace.flows.len().to_string(),
        exp.flows.to_string(),
    );
    let steps = step_spans(trace);
    check("steps", format!("{steps:?}"), format!("{:?}", exp.steps));
    check(
        "span",
        format!("{:?}", trace.span_ns()),
        format!("{:?}", exp.span),
    );
    check(
        "baseTimeNanoseconds",
        format!("{:?}", trace.meta.base_time_ns),
        format!("{:?}", exp.base_time_ns),
    );
    let devices: Vec<(i64, String)> = trace
        .meta
        .devices
        .iter()
        .map(|d| (d.id, d.name.clone()))
        .collect();
    check(
        "devices",
        format!("{devices:?}"),
        format!("{:?}", exp.devices),
    );
    let dist = trace.meta.distributed.as_ref();
    check(
        "rank",
        format!("{:?}", dist.and_then(|d| d.rank)),
        format!("{:?}", exp.rank),
    );
    check(
        "world_size",
        format!("{:?}", dist.and_then(|d| d.world_size)),
        format!("{:?}", exp.world_size),
    );
    // The rank the reader decided comes from `distributedInfo.rank` exactly when there
    // is one (else from the file name, or none).
    let from_distributed = trace
        .meta
        .rank
        .filter(|r| r.source == RankSource::DistributedInfo)
        .map(|r| r.value);
    check(
        "meta rank",
        format!("{from_distributed:?}"),
        format!("{:?}", exp.rank),
    );
    check(
        "json_bytes",
        trace.report.json_bytes.to_string(),
        exp.json_bytes.to_string(),
    );
    bad
}

/// Read `path` with the reader and with the oracle and compare; panics with every
/// mismatch listed.
pub fn assert_matches_oracle(path: &Path) {
    let trace = match read_trace(path, &ReadOptions::default()) {
        Ok(t) => t,
        Err(e) => panic!("{}: the reader failed: {e}", path.display()),
    };
    let exp = oracle(path).unwrap_or_else(|e| panic!("{}: serde_json: {e}", path.display()));
    let bad = compare(&trace, &exp);
    assert!(
        bad.is_empty(),
        "{}:\n  {}",
        path.display(),
        bad.join("\n  ")
    );
}

/// The `looks_like` text of a `NotATrace` error, or `None` for any other result.
pub fn not_a_trace(r: &Result<Trace, TraceError>) -> Option<&str> {
    match r {
        Err(TraceError::NotATrace { looks_like, .. }) => Some(looks_like),
        _ => None,
    }
}
