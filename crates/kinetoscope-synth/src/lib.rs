//! Makes a large Kineto (PyTorch profiler) Chrome trace from a real one, for
//! benchmarks and multi-rank tests.
//!
//! The source is repeated `k = 0, 1, 2, …` times. Copy `k` has its timestamps shifted
//! by `k × period` (the span of the source events plus a small gap), the ids that
//! link events (`External id`, `correlation`, flow `id`, `Python id`, …) moved up by
//! `k ×` the span of their family's ids in the source (each family is a counter of its
//! own in Kineto, so copy `k`'s ids continue where copy `k − 1`'s end, as in one long
//! run) and `ProfilerStep#N` renamed to `N + k × steps`. Metadata
//! (`ph: "M"`) events are kept once, `Record Window End` once at the very end, and the
//! top-level keys around `traceEvents` are kept as they are.
//!
//! Everything the generator does not rewrite is copied byte for byte from the source
//! (so the output has the source's layout: Kineto's pretty printing, or one compact
//! event per line with [`LoadOptions::compact`]). `ts` / `dur` are converted to integer
//! nanoseconds exactly from their decimal text and written back in the source's style
//! (integer µs, or µs with a 3-digit fraction), never through `f64`.
//!
//! A planted straggler (rank mode) moves times through a [`warp::Warp`]: the slow rank
//! computes longer before each NCCL collective and the other ranks wait inside it.
//!
//! ```no_run
//! use kinetoscope_synth::{load_source, write_file, LoadOptions, Target, WriteOptions};
//! # fn main() -> anyhow::Result<()> {
//! let src = load_source("rank0.json.gz".as_ref(), &LoadOptions::default())?;
//! let opts = WriteOptions { target: Target::Bytes(1 << 30), ..WriteOptions::default() };
//! let stats = write_file(&src, Some("rank0.json.gz".as_ref()), "big.json".as_ref(), &opts)?;
//! # let _ = stats; Ok(()) }
//! ```

pub mod decimal;
pub mod shapes;
pub mod warp;

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use decimal::{parse_int, parse_micros, push_int, push_time, Factor, TimeStyle};
use warp::{merge_intervals, Role, Warp};

/// `args` keys whose (positive integer) values link events to each other, with their
/// [`IdFamily`]; they are moved up by `k ×` their family's span in copy `k`.
pub const LINK_ARGS: &[(&str, IdFamily)] = &[
    ("External id", IdFamily::External),
    ("external id", IdFamily::External),
    ("correlation", IdFamily::Correlation),
    ("Python id", IdFamily::Python),
    ("Python parent id", IdFamily::Python),
    ("Sequence number", IdFamily::Sequence),
];

/// A set of linking ids drawn from one counter: ids link only within their family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdFamily {
    /// Operators' `External id`s (and the runtime calls and kernels that name them).
    External,
    /// CUPTI correlation ids, and the flow-event `id`s that carry them (`ac2g`).
    Correlation,
    /// Python frames' ids and parent ids.
    Python,
    /// Autograd sequence numbers.
    Sequence,
}

impl IdFamily {
    /// Number of families.
    const COUNT: usize = 4;

    fn index(self) -> usize {
        self as usize
    }
}

/// The default gap between two copies: 1 ms.
pub const DEFAULT_GAP_NS: i64 = 1_000_000;

/// How to read the source.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Drop the whitespace outside strings and write one event per line, instead of
    /// keeping the source's layout.
    pub compact: bool,
    /// Write the whole trace on one line (minified: no whitespace outside strings, no
    /// line break until the final one); implies `compact`.
    pub one_line: bool,
    /// Gap between the end of one copy and the start of the next, in ns (rounded up so
    /// that the period is a whole number of µs).
    pub gap_ns: i64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            compact: false,
            one_line: false,
            gap_ns: DEFAULT_GAP_NS,
        }
    }
}

/// How much to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Whole copies until at least this many bytes of (uncompressed) JSON are written.
    Bytes(u64),
    /// Exactly this many copies (at least one).
    Copies(u64),
}

/// The rank an output file is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankInfo {
    /// `distributedInfo.rank`.
    pub rank: u64,
    /// `distributedInfo.world_size`.
    pub world_size: u64,
}

/// Options for one output.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// How much to write.
    pub target: Target,
    /// Set `distributedInfo` (added if the source has none).
    pub rank: Option<RankInfo>,
    /// A planted straggler: this rank is the slow one, or waits for it (module
    /// [`warp`]).
    pub straggler: Option<Role>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            target: Target::Copies(1),
            rank: None,
            straggler: None,
        }
    }
}

/// What one output holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Copies of the source written.
    pub copies: u64,
    /// Events written (metadata included).
    pub events: u64,
    /// Bytes of JSON written (before compression).
    pub json_bytes: u64,
}

/// What one output file holds.
#[derive(Clone, Debug)]
pub struct FileStats {
    /// The file written.
    pub path: PathBuf,
    /// Its content.
    pub stats: WriteStats,
    /// Its size on disk (compressed size for `.gz`).
    pub file_bytes: u64,
}

/// One piece of an event's template.
#[derive(Clone, Copy, Debug)]
enum Seg {
    /// Bytes `lit[start..end]`, copied as they are.
    Lit { start: usize, end: usize },
    /// A `ts` value.
    Ts { ns: i64, style: TimeStyle },
    /// A `dur` value (with the event's `ts`, to stretch the end and the start alike).
    Dur {
        ts: Option<i64>,
        ns: i64,
        style: TimeStyle,
    },
    /// A linking id (positive) of a family.
    Id(i64, IdFamily),
    /// The name `ProfilerStep#N` (the whole JSON string).
    Step(i64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Written in every copy.
    Repeat,
    /// Written in copy 0 only (metadata).
    Once,
    /// Written once after the last copy, shifted like it (`Record Window End`).
    Last,
}

#[derive(Clone, Copy, Debug)]
struct EventTemplate {
    segs: (usize, usize),
    kind: Kind,
}

/// Where the source's `distributedInfo` is, and its entries.
#[derive(Clone, Debug)]
struct DistInfo {
    in_trailer: bool,
    range: (usize, usize),
    /// `(key, raw value text)`; `None` when the value is not an object.
    entries: Option<Vec<(String, String)>>,
}

/// A parsed source trace, ready to be written any number of times.
pub struct Source {
    lit: Vec<u8>,
    segs: Vec<Seg>,
    events: Vec<EventTemplate>,
    /// Text before the `traceEvents` array (ends with `"traceEvents": `).
    header: String,
    /// Text after the `traceEvents` array.
    trailer: String,
    /// The source is a bare array (legacy autograd profiler).
    bare: bool,
    /// Where `"traceEvents"` starts in `header` (to insert `distributedInfo`).
    events_key_at: Option<usize>,
    dist: Option<DistInfo>,
    compact: bool,
    one_line: bool,
    t0_ns: i64,
    period_ns: i64,
    /// What each [`IdFamily`]'s ids move up by between two copies.
    id_offsets: [i64; IdFamily::COUNT],
    step_span: i64,
    /// The NCCL kernels' intervals, merged, in ns from `t0_ns`: where a planted
    /// straggler's ranks synchronise.
    sync: Vec<(i64, i64)>,
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Source")
            .field("events", &self.events.len())
            .field("repeated_events", &self.repeated_events())
            .field("period_ns", &self.period_ns)
            .field("id_offsets", &self.id_offsets)
            .field("step_span", &self.step_span)
            .finish()
    }
}

/// A JSON object as its entries in source order, values left as raw text.
struct RawObject<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some((k, val)) = map.next_entry::<String, &'de RawValue>()? {
                    v.push((k, val));
                }
                Ok(RawObject(v))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> RawObject<'a> {
    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Byte offset of `part` (a sub-slice of `base`) in `base`.
fn offset_in(base: &str, part: &str) -> usize {
    let off = (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize);
    assert!(
        off + part.len() <= base.len(),
        "raw value outside its buffer"
    );
    off
}

/// Appends `s` without the whitespace outside strings (`s` must start outside one).
fn push_minified(out: &mut Vec<u8>, s: &[u8]) {
    let mut in_str = false;
    let mut esc = false;
    for &c in s {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
        } else {
            match c {
                b' ' | b'\n' | b'\r' | b'\t' => {}
                b'"' => {
                    in_str = true;
                    out.push(c);
                }
                _ => out.push(c),
            }
        }
    }
}

fn json_str(raw: &RawValue) -> Option<String> {
    serde_json::from_str::<String>(raw.get()).ok()
}

/// The `N` of a `ProfilerStep#N` name.
fn step_number(name: &str) -> Option<i64> {
    let digits = name.strip_prefix("ProfilerStep#")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 15 {
        return None;
    }
    digits.parse().ok()
}

/// A hole in an event's text: the byte range of a value the copies rewrite, and what
/// they write there.
type Hole = (usize, usize, Seg);

/// The hole of the value `raw` (a sub-slice of `text`), filled with `seg`.
#[inline]
fn hole(text: &str, raw: &RawValue, seg: Seg) -> Hole {
    let at = offset_in(text, raw.get());
    (at, at + raw.get().len(), seg)
}

/// The source's top level: the `traceEvents` array and the text around it.
struct TopLevel<'a> {
    /// The `traceEvents` array (or the whole source, a bare array).
    events: &'a RawValue,
    /// Text before the array.
    header: String,
    /// Text after the array.
    trailer: String,
    /// The source is a bare array.
    bare: bool,
    /// Where `distributedInfo` is, and its entries.
    dist: Option<DistInfo>,
}

impl<'a> TopLevel<'a> {
    /// Splits the source's text (its BOM stripped) around its `traceEvents` array.
    fn split(text: &'a str) -> anyhow::Result<Self> {
        let first = text.trim_start().as_bytes().first().copied();
        match first {
            Some(b'[') => {
                let arr: &RawValue =
                    serde_json::from_str(text).context("the source is not valid JSON")?;
                Ok(TopLevel {
                    events: arr,
                    header: String::new(),
                    trailer: String::new(),
                    bare: true,
                    dist: None,
                })
            }
            Some(b'{') => {
                let top: RawObject =
                    serde_json::from_str(text).context("the source is not valid JSON")?;
                let events = top
                    .get("traceEvents")
                    .context("the source has no `traceEvents` array")?;
                let start = offset_in(text, events.get());
                let end = start + events.get().len();
                let header = text[..start].to_string();
                let trailer = text[end..].to_string();
                let dist = top
                    .get("distributedInfo")
                    .map(|raw| dist_info(text, raw, end));
                Ok(TopLevel {
                    events,
                    header,
                    trailer,
                    bare: false,
                    dist,
                })
            }
            _ => bail!("the source is neither a JSON object nor a JSON array"),
        }
    }
}

/// Where the `distributedInfo` value `raw` is (in the header, or in the trailer when it
/// comes after the events' end `end`), and its entries.
fn dist_info(text: &str, raw: &RawValue, end: usize) -> DistInfo {
    let s = offset_in(text, raw.get());
    let (in_trailer, base) = if s >= end { (true, end) } else { (false, 0) };
    let entries = serde_json::from_str::<RawObject>(raw.get()).ok().map(|o| {
        o.0.into_iter()
            .map(|(k, v)| (k, v.get().to_string()))
            .collect()
    });
    DistInfo {
        in_trailer,
        range: (s - base, s - base + raw.get().len()),
        entries,
    }
}

/// What the scan of the events gathers besides their templates.
struct Extents {
    /// The earliest `ts`, ns.
    min_ts: i64,
    /// The latest `ts` or `ts + dur`, ns.
    max_end: i64,
    /// Per family: the smallest and the largest id.
    id_range: [(i64, i64); IdFamily::COUNT],
    /// The smallest and the largest `N` of `ProfilerStep#N`.
    steps: (i64, i64),
    /// The NCCL kernels' intervals, ns.
    comm_kernels: Vec<(i64, i64)>,
}

impl Extents {
    /// Nothing seen yet.
    fn new() -> Self {
        Extents {
            min_ts: i64::MAX,
            max_end: i64::MIN,
            id_range: [(i64::MAX, i64::MIN); IdFamily::COUNT],
            steps: (i64::MAX, i64::MIN),
            comm_kernels: Vec::new(),
        }
    }

    /// Takes in a linking id of `family`; the segment that rewrites it.
    #[inline]
    fn seen_id(&mut self, id: i64, family: IdFamily) -> Seg {
        let r = &mut self.id_range[family.index()];
        *r = (r.0.min(id), r.1.max(id));
        Seg::Id(id, family)
    }

    /// The kind of the event `s` (a sub-slice of `text`), its holes pushed on `holes`.
    #[inline]
    fn scan_event(&mut self, text: &str, s: &str, holes: &mut Vec<Hole>) -> anyhow::Result<Kind> {
        if !s.starts_with('{') {
            return Ok(Kind::Repeat);
        }
        let obj: RawObject = serde_json::from_str(s).context("bad event")?;
        let ph = obj.get("ph").and_then(json_str);
        let name_raw = obj.get("name");
        let name = name_raw.and_then(json_str);
        if ph.as_deref() == Some("M") {
            return Ok(Kind::Once);
        }
        let kind = if name.as_deref() == Some("Record Window End") {
            Kind::Last
        } else {
            Kind::Repeat
        };
        self.time_holes(text, &obj, name.as_deref(), holes);
        if matches!(ph.as_deref(), Some("s" | "f" | "t")) {
            if let Some(raw) = obj.get("id") {
                if let Some(id) = parse_int(raw.get()).filter(|&i| i > 0) {
                    holes.push(hole(text, raw, self.seen_id(id, IdFamily::Correlation)));
                }
            }
        }
        if let (Some(raw), Some(n)) = (name_raw, name.as_deref().and_then(step_number)) {
            self.steps = (self.steps.0.min(n), self.steps.1.max(n));
            holes.push(hole(text, raw, Seg::Step(n)));
        }
        self.arg_holes(text, &obj, holes)?;
        Ok(kind)
    }

    /// The holes of the event's `ts` and `dur`, which widen the time extent (and an NCCL
    /// kernel's interval is kept).
    #[inline]
    fn time_holes(
        &mut self,
        text: &str,
        obj: &RawObject<'_>,
        name: Option<&str>,
        holes: &mut Vec<Hole>,
    ) {
        let mut ts_ns = None;
        if let Some(raw) = obj.get("ts") {
            if let Some((ns, style)) = parse_micros(raw.get()) {
                ts_ns = Some(ns);
                self.min_ts = self.min_ts.min(ns);
                self.max_end = self.max_end.max(ns);
                holes.push(hole(text, raw, Seg::Ts { ns, style }));
            }
        }
        if let Some(raw) = obj.get("dur") {
            if let Some((ns, style)) = parse_micros(raw.get()) {
                if let Some(t) = ts_ns {
                    self.max_end = self.max_end.max(t.saturating_add(ns));
                    if is_comm_kernel(obj, name) {
                        self.comm_kernels.push((t, t.saturating_add(ns)));
                    }
                }
                holes.push(hole(
                    text,
                    raw,
                    Seg::Dur {
                        ts: ts_ns,
                        ns,
                        style,
                    },
                ));
            }
        }
    }

    /// The holes of the linking ids ([`LINK_ARGS`]) in the event's `args`.
    #[inline]
    fn arg_holes(
        &mut self,
        text: &str,
        obj: &RawObject<'_>,
        holes: &mut Vec<Hole>,
    ) -> anyhow::Result<()> {
        if let Some(args) = obj.get("args").filter(|a| a.get().starts_with('{')) {
            let args: RawObject = serde_json::from_str(args.get()).context("bad event args")?;
            for (k, raw) in &args.0 {
                let Some(&(_, family)) = LINK_ARGS.iter().find(|(key, _)| key == k) else {
                    continue;
                };
                if let Some(id) = parse_int(raw.get()).filter(|&i| i > 0) {
                    holes.push(hole(text, raw, self.seen_id(id, family)));
                }
            }
        }
        Ok(())
    }
}

impl Source {
    /// Parses a source trace (the whole decompressed text).
    pub fn parse(text: &str, opts: &LoadOptions) -> anyhow::Result<Source> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let top = TopLevel::split(text)?;
        if !top.events.get().starts_with('[') {
            bail!("`traceEvents` is not an array");
        }
        let events: Vec<&RawValue> = serde_json::from_str(top.events.get())
            .context("`traceEvents` is not an array of JSON values")?;

        let events_key_at = top.header.rfind("\"traceEvents\"");
        let mut src = Source {
            lit: Vec::with_capacity(text.len()),
            segs: Vec::with_capacity(events.len() * 4),
            events: Vec::with_capacity(events.len()),
            header: top.header,
            trailer: top.trailer,
            bare: top.bare,
            events_key_at,
            dist: top.dist,
            compact: opts.compact || opts.one_line,
            one_line: opts.one_line,
            t0_ns: 0,
            period_ns: 0,
            id_offsets: [0; IdFamily::COUNT],
            step_span: 0,
            sync: Vec::new(),
        };
        let mut extents = Extents::new();
        let mut holes: Vec<Hole> = Vec::new();
        for ev in events {
            let s = ev.get();
            let base = offset_in(text, s);
            holes.clear();
            let kind = extents.scan_event(text, s, &mut holes)?;
            src.push_template(text, base, s, &mut holes, kind);
        }
        src.set_extents(extents, opts.gap_ns);
        Ok(src)
    }

    /// Appends the template of the event `s` at `base` in `text`: its bytes between the
    /// holes as literals, each hole as its segment.
    #[inline]
    fn push_template(&mut self, text: &str, base: usize, s: &str, holes: &mut [Hole], kind: Kind) {
        holes.sort_by_key(|h| h.0);
        let seg_start = self.segs.len();
        let mut cursor = base;
        for &(start, end, seg) in holes.iter() {
            self.push_lit(&text.as_bytes()[cursor..start]);
            self.segs.push(seg);
            cursor = end;
        }
        self.push_lit(&text.as_bytes()[cursor..base + s.len()]);
        self.events.push(EventTemplate {
            segs: (seg_start, self.segs.len()),
            kind,
        });
    }

    /// From what the scan gathered: the time origin, the period between copies, where
    /// ranks synchronise, and what ids and step numbers move up by.
    fn set_extents(&mut self, extents: Extents, gap_ns: i64) {
        let Extents {
            min_ts,
            max_end,
            id_range,
            steps,
            comm_kernels,
        } = extents;
        if min_ts <= max_end {
            self.t0_ns = min_ts.div_euclid(1000) * 1000;
            let span = max_end - min_ts + gap_ns.max(0);
            self.period_ns = (span.max(1) + 999) / 1000 * 1000;
            let t0 = self.t0_ns;
            self.sync = merge_intervals(
                comm_kernels
                    .into_iter()
                    .map(|(s, e)| (s - t0, e - t0))
                    .collect(),
            );
        }
        for (offset, &(lo, hi)) in self.id_offsets.iter_mut().zip(&id_range) {
            *offset = if lo <= hi { hi - lo + 1 } else { 0 };
        }
        if steps.0 <= steps.1 {
            self.step_span = steps.1 - steps.0 + 1;
        }
    }

    fn push_lit(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let start = self.lit.len();
        if self.compact {
            push_minified(&mut self.lit, bytes);
        } else {
            self.lit.extend_from_slice(bytes);
        }
        self.segs.push(Seg::Lit {
            start,
            end: self.lit.len(),
        });
    }

    /// Events written in every copy.
    pub fn repeated_events(&self) -> usize {
        self.events
            .iter()
            .filter(|e| e.kind == Kind::Repeat)
            .count()
    }

    /// All events of the source (metadata included).
    pub fn events(&self) -> usize {
        self.events.len()
    }

    /// The time shift between two copies, in ns.
    pub fn period_ns(&self) -> i64 {
        self.period_ns
    }

    /// What a family's linking ids move up by between two copies: the span of its ids
    /// in the source (largest − smallest + 1), 0 when the source has none.
    pub fn id_offset(&self, family: IdFamily) -> i64 {
        self.id_offsets[family.index()]
    }

    /// What `ProfilerStep#N` numbers move up by between two copies.
    pub fn step_span(&self) -> i64 {
        self.step_span
    }

    /// The `distributedInfo` object to write for `rank`.
    fn dist_text(&self, rank: RankInfo) -> String {
        let mut entries: Vec<(String, String)> = self
            .dist
            .as_ref()
            .and_then(|d| d.entries.clone())
            .unwrap_or_else(|| vec![("backend".into(), "\"nccl\"".into())]);
        for (key, value) in [("rank", rank.rank), ("world_size", rank.world_size)] {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(e) => e.1 = value.to_string(),
                None => entries.push((key.into(), value.to_string())),
            }
        }
        let mut s = String::from("{");
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&serde_json::to_string(k).expect("string"));
            s.push_str(": ");
            s.push_str(v);
        }
        s.push('}');
        s
    }

    /// The text before and after the event array for one output.
    fn frame(&self, rank: Option<RankInfo>) -> (Vec<u8>, Vec<u8>) {
        let mut header = self.header.clone();
        let mut trailer = self.trailer.clone();
        if let Some(rank) = rank {
            let dist = self.dist_text(rank);
            if self.bare {
                header = format!("{{\n  \"distributedInfo\": {dist},\n  \"traceEvents\": ");
                trailer = "\n}\n".into();
            } else if let Some(d) = &self.dist {
                let t = if d.in_trailer {
                    &mut trailer
                } else {
                    &mut header
                };
                t.replace_range(d.range.0..d.range.1, &dist);
            } else if let Some(at) = self.events_key_at {
                header.insert_str(at, &format!("\"distributedInfo\": {dist},\n  "));
            }
        }
        if self.compact {
            let (mut h, mut t) = (Vec::new(), Vec::new());
            push_minified(&mut h, header.as_bytes());
            push_minified(&mut t, trailer.as_bytes());
            t.push(b'\n');
            (h, t)
        } else {
            (header.into_bytes(), trailer.into_bytes())
        }
    }

    /// Writes one output to `w` (not flushed).
    pub fn write_to<W: Write + ?Sized>(
        &self,
        w: &mut W,
        opts: &WriteOptions,
    ) -> io::Result<WriteStats> {
        let (header, trailer) = self.frame(opts.rank);
        let (first_sep, sep, close): (&[u8], &[u8], &[u8]) = if self.one_line {
            (b"", b",", b"]")
        } else if self.compact {
            (b"\n", b",\n", b"\n]")
        } else {
            (b"\n  ", b",\n  ", b"\n  ]")
        };
        let mut stats = WriteStats::default();
        w.write_all(&header)?;
        w.write_all(b"[")?;
        stats.json_bytes += header.len() as u64 + 1;
        let mut scratch: Vec<u8> = Vec::with_capacity(1 << 16);
        let repeats = self.repeated_events() > 0;
        let mut k: i64 = 0;
        let warp = opts
            .straggler
            .and_then(|role| Warp::new(role, &self.sync, self.period_ns));
        let warp = warp.as_ref();
        let mut emit = |w: &mut W, ev: &EventTemplate, ctx: &Ctx, stats: &mut WriteStats| {
            scratch.clear();
            scratch.extend_from_slice(if stats.events == 0 { first_sep } else { sep });
            self.render(ev, ctx, &mut scratch);
            stats.events += 1;
            stats.json_bytes += scratch.len() as u64;
            w.write_all(&scratch)
        };
        loop {
            let ctx = self.ctx(k, warp);
            for ev in &self.events {
                if ev.kind == Kind::Last || (ev.kind == Kind::Once && k > 0) {
                    continue;
                }
                emit(w, ev, &ctx, &mut stats)?;
            }
            k += 1;
            let done = match opts.target {
                Target::Copies(n) => k as u64 >= n.max(1),
                Target::Bytes(b) => stats.json_bytes >= b,
            };
            if done || !repeats {
                break;
            }
        }
        stats.copies = k as u64;
        let ctx = self.ctx(k - 1, warp);
        for ev in self.events.iter().filter(|e| e.kind == Kind::Last) {
            emit(w, ev, &ctx, &mut stats)?;
        }
        w.write_all(close)?;
        w.write_all(&trailer)?;
        stats.json_bytes += (close.len() + trailer.len()) as u64;
        Ok(stats)
    }

    fn ctx<'w>(&self, k: i64, warp: Option<&'w Warp>) -> Ctx<'w> {
        Ctx {
            k,
            shift: k * self.period_ns,
            id_add: self.id_offsets.map(|o| k * o),
            step_add: k * self.step_span,
            t0: self.t0_ns,
            warp,
        }
    }

    fn render(&self, ev: &EventTemplate, ctx: &Ctx, out: &mut Vec<u8>) {
        for seg in &self.segs[ev.segs.0..ev.segs.1] {
            match *seg {
                Seg::Lit { start, end } => out.extend_from_slice(&self.lit[start..end]),
                Seg::Ts { ns, style } => push_time(out, ctx.time(ns, style.unit_ns()), style),
                Seg::Dur { ts, ns, style } => {
                    let unit = style.unit_ns();
                    let d = match ts {
                        Some(t) if ctx.warp.is_some() => {
                            ctx.time(t.saturating_add(ns), unit) - ctx.time(t, unit)
                        }
                        _ => ns,
                    };
                    push_time(out, d, style);
                }
                Seg::Id(id, family) => push_int(out, id + ctx.id_add[family.index()]),
                Seg::Step(n) => {
                    out.extend_from_slice(b"\"ProfilerStep#");
                    push_int(out, n + ctx.step_add);
                    out.push(b'"');
                }
            }
        }
    }
}

/// The shifts of one copy.
struct Ctx<'w> {
    k: i64,
    shift: i64,
    id_add: [i64; IdFamily::COUNT],
    step_add: i64,
    t0: i64,
    warp: Option<&'w Warp>,
}

impl Ctx<'_> {
    /// Where source time `t` lands in this copy (rounded to `unit` when warped).
    fn time(&self, t: i64, unit: i64) -> i64 {
        match self.warp {
            None => t + self.shift,
            Some(w) => {
                let v = self.t0 + self.k * w.period_ns + w.at(t - self.t0);
                let unit = unit.max(1);
                (v + unit / 2).div_euclid(unit) * unit
            }
        }
    }
}

/// Whether an event is a communication kernel (`cat` `kernel`, an NCCL name).
fn is_comm_kernel(obj: &RawObject<'_>, name: Option<&str>) -> bool {
    let cat = obj.get("cat").and_then(json_str);
    cat.is_some_and(|c| c.eq_ignore_ascii_case("kernel"))
        && name.is_some_and(|n| n.to_ascii_lowercase().contains("nccl"))
}

/// Whether `bytes` start with the gzip magic (`1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Whether an output path asks for gzip (ends in `.gz`).
pub fn wants_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Reads a source trace (plain or gzip, detected by content) and parses it.
pub fn load_source(path: &Path, opts: &LoadOptions) -> anyhow::Result<Source> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let bytes = if is_gzip(&bytes) {
        let mut out = Vec::with_capacity(bytes.len() * 8);
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .with_context(|| format!("cannot decompress {}", path.display()))?;
        out
    } else {
        bytes
    };
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Source::parse(&text, opts).with_context(|| format!("cannot use {}", path.display()))
}

/// Fails if `out` is (or resolves to) the file `src`.
pub fn ensure_not_source(src: &Path, out: &Path) -> anyhow::Result<()> {
    let same = match (fs::canonicalize(src), fs::canonicalize(out)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    #[cfg(unix)]
    let same = same || {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(src), fs::metadata(out)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    };
    if same {
        bail!(
            "refusing to overwrite the source {} (output {})",
            src.display(),
            out.display()
        );
    }
    Ok(())
}

/// Writes one output file (gzip when `out` ends in `.gz`, fastest level) through a
/// `.partial` file renamed into place. `src_path`, when given, is never overwritten.
pub fn write_file(
    src: &Source,
    src_path: Option<&Path>,
    out: &Path,
    opts: &WriteOptions,
) -> anyhow::Result<FileStats> {
    if let Some(s) = src_path {
        ensure_not_source(s, out)?;
    }
    write_atomically(out, |w| src.write_to(w, opts))
}

/// Writes `out` (gzip when it ends in `.gz`, fastest level) with `write`, through a
/// `.partial` file beside it that is renamed into place once complete (and removed on
/// failure). An `out` that exists and is neither a file nor a folder (`/dev/null`, a
/// FIFO) is written in place, never replaced.
pub fn write_atomically(
    out: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<WriteStats>,
) -> anyhow::Result<FileStats> {
    if fs::metadata(out).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let stats = write_file_at(out, wants_gzip(out), write)?;
        return Ok(FileStats {
            path: out.to_path_buf(),
            stats,
            file_bytes: 0,
        });
    }
    let name = out
        .file_name()
        .with_context(|| format!("{} is not a file name", out.display()))?;
    let mut partial_name = name.to_os_string();
    partial_name.push(".partial");
    let partial = out.with_file_name(partial_name);
    let result = write_file_at(&partial, wants_gzip(out), write).and_then(|stats| {
        fs::rename(&partial, out)
            .with_context(|| format!("cannot rename {} to {}", partial.display(), out.display()))?;
        Ok(stats)
    });
    match result {
        Ok(stats) => Ok(FileStats {
            path: out.to_path_buf(),
            stats,
            file_bytes: fs::metadata(out)?.len(),
        }),
        Err(e) => {
            let _ = fs::remove_file(&partial);
            Err(e)
        }
    }
}

fn write_file_at(
    path: &Path,
    gzip: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<WriteStats>,
) -> anyhow::Result<WriteStats> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let ctx = || format!("cannot write {}", path.display());
    let stats = if gzip {
        let enc = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        let mut w = BufWriter::with_capacity(1 << 20, enc);
        let stats = write(&mut w).with_context(ctx)?;
        let enc = w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(ctx)?;
        enc.finish().with_context(ctx)?.flush().with_context(ctx)?;
        stats
    } else {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let stats = write(&mut w).with_context(ctx)?;
        w.flush().with_context(ctx)?;
        stats
    };
    Ok(stats)
}

/// The file name of rank `r` in rank mode.
pub fn rank_file_name(rank: u64, gzip: bool) -> String {
    format!("rank-{rank}.pt.trace.json{}", if gzip { ".gz" } else { "" })
}

/// Options of rank mode.
#[derive(Clone, Copy, Debug)]
pub struct RankOptions {
    /// Number of rank files (the world size).
    pub ranks: u64,
    /// Write `.json.gz` files.
    pub gzip: bool,
    /// The planted straggler and its slowdown factor.
    pub slow: Option<(u64, Factor)>,
    /// How much to write per file.
    pub target: Target,
    /// Files written at the same time (at least 1).
    pub jobs: usize,
}

/// Writes `rank-<r>.pt.trace.json[.gz]` for every rank into `dir` (created if needed).
pub fn write_ranks(
    src: &Source,
    src_path: Option<&Path>,
    dir: &Path,
    opts: &RankOptions,
) -> anyhow::Result<Vec<FileStats>> {
    if opts.ranks == 0 {
        bail!("--ranks must be at least 1");
    }
    if let Some((r, _)) = opts.slow {
        if r >= opts.ranks {
            bail!(
                "slow rank {r} is not below the number of ranks {}",
                opts.ranks
            );
        }
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let paths: Vec<PathBuf> = (0..opts.ranks)
        .map(|r| dir.join(rank_file_name(r, opts.gzip)))
        .collect();
    if let Some(s) = src_path {
        for p in &paths {
            ensure_not_source(s, p)?;
        }
    }
    let next = AtomicU64::new(0);
    let results: Mutex<Vec<Option<anyhow::Result<FileStats>>>> =
        Mutex::new((0..opts.ranks).map(|_| None).collect());
    let jobs = opts.jobs.clamp(1, opts.ranks as usize);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let r = next.fetch_add(1, Ordering::Relaxed);
                if r >= opts.ranks {
                    break;
                }
                let straggler = opts.slow.map(|(s, f)| {
                    if s == r {
                        Role::Slow(f)
                    } else {
                        Role::Waits(f)
                    }
                });
                let wopts = WriteOptions {
                    target: opts.target,
                    rank: Some(RankInfo {
                        rank: r,
                        world_size: opts.ranks,
                    }),
                    straggler,
                };
                let res = write_file(src, src_path, &paths[r as usize], &wopts);
                results.lock().expect("results lock")[r as usize] = Some(res);
            });
        }
    });
    results
        .into_inner()
        .expect("results lock")
        .into_iter()
        .map(|r| r.expect("every rank was written"))
        .collect()
}

/// Parses a size such as `1GiB`, `512MiB`, `100K`, `2.5G` or `1000000` into bytes.
/// `K`/`M`/`G`/`T` (also `KB`…) are powers of 1000, `KiB`/`MiB`/`GiB`/`TiB` powers of 1024.
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "ki" | "kib" => 1 << 10,
        "mi" | "mib" => 1 << 20,
        "gi" | "gib" => 1 << 30,
        "ti" | "tib" => 1 << 40,
        u => bail!("unknown size unit {u:?} in {text:?} (use K, M, G, KiB, MiB, GiB)"),
    };
    let f = Factor::parse(num).with_context(|| format!("bad size {text:?}"))?;
    let bytes = f.scale(i64::try_from(mult).unwrap_or(i64::MAX), 1);
    if bytes <= 0 {
        bail!("bad size {text:?}");
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests;
