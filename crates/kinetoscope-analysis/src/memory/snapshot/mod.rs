//! The memory view of a CUDA caching-allocator snapshot (`kinetoscope memory
//! SNAPSHOT.pickle`), per device:
//!
//! - the allocator state at snapshot time ([`state`]): reserved, allocated, active,
//!   inactive and free bytes, fragmentation (1 − largest free block / free bytes), and
//!   the largest segments;
//! - the active-memory timeline replayed from `device_traces` ([`replay`]) with its peak;
//! - the top allocation sites by stack ([`stacks`]): bytes and count live at the peak (or
//!   at snapshot time when no history was recorded), each with its full stack and its
//!   first user-level Python frame;
//! - each OOM in the trace with the state just before it and what was live;
//! - leak suspects: allocations made inside the trace and never freed, grouped by stack,
//!   that keep accumulating across the trace.

pub mod replay;
pub mod stacks;
pub mod state;

use std::collections::BTreeMap;
use std::collections::HashMap;

use kinetoscope_trace::snapshot::{
    Action, AllocatorSettings, Segment, Snapshot, SnapshotLayout, TraceEntry,
};
use serde::{Deserialize, Serialize};

pub use replay::{LiveAlloc, Replay};
pub use stacks::Sites;
pub use state::{AllocatorState, SegmentRow};

use super::{Device, DeviceFilter};
use crate::note::Note;

/// OOM entries reported in detail per device (each costs a replay of the trace up to it).
pub const MAX_OOM_REPORTS: usize = 16;

/// Options of the snapshot view.
#[derive(Clone, Debug)]
pub struct SnapshotOptions {
    /// Rows kept per table (0 = all).
    pub top: usize,
    /// Most timeline points per device (at least 10).
    pub points: usize,
    /// Keep only matching devices.
    pub device: Option<DeviceFilter>,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        Self {
            top: 20,
            points: super::DEFAULT_POINTS,
            device: None,
        }
    }
}

/// What a [`SnapshotView`] was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotSource {
    /// A CUDA caching-allocator snapshot (`torch.cuda.memory._dump_snapshot`).
    CudaSnapshot,
}

/// The moment a set of [`TopSites`] describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SitesAt {
    /// The peak of the replayed allocator trace.
    Peak,
    /// The allocator state at snapshot time (no history to replay).
    Snapshot,
    /// Just before an out-of-memory entry.
    Oom,
}

/// The memory view of one snapshot.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapshotView {
    /// The file.
    pub path: String,
    /// Always [`SnapshotSource::CudaSnapshot`] (tells snapshot documents from trace
    /// documents).
    pub source: SnapshotSource,
    /// Bytes of the (decompressed) pickle.
    pub file_bytes: u64,
    /// Whether it was gzip-compressed.
    pub gzip: bool,
    /// Pickle protocol.
    pub protocol: u8,
    /// `dict` (2.0+) or `bare_list` (1.13).
    pub layout: SnapshotLayout,
    /// PyTorch versions whose snapshots have this file's keys (a guess from features).
    pub pytorch_versions: String,
    /// `allocator_settings` as written (PyTorch 2.3+).
    pub allocator_settings: Option<AllocatorSettings>,
    /// `external_annotations` entries.
    pub external_annotations: u64,
    /// Top-level keys not interpreted.
    pub other_keys: Vec<String>,
    /// Per device, by ordinal (after `--device`).
    pub devices: Vec<SnapshotDevice>,
    /// Notes on what could not be computed and why.
    pub notes: Vec<Note>,
}

/// Everything the view shows for one device.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapshotDevice {
    /// `GPU0`, ...
    pub device: String,
    /// CUDA ordinal.
    pub device_id: i64,
    /// The allocator state when the snapshot was taken.
    pub state: AllocatorState,
    /// Largest segments first (after `--top`).
    pub segments: Vec<SegmentRow>,
    /// Segment rows before `--top`.
    pub segments_total: usize,
    /// What the recorded history shows; `None` when none was recorded.
    pub history: Option<HistorySummary>,
    /// Allocation sites live at the peak (or at snapshot time).
    pub top_sites: TopSites,
    /// Active and reserved bytes over the trace, down-sampled (each bucket keeps its
    /// minimum and maximum, so the peak is never lost).
    pub timeline: Vec<TimelinePoint>,
    /// The first [`MAX_OOM_REPORTS`] `oom` entries of the trace.
    pub ooms: Vec<OomReport>,
    /// `oom` entries in the trace.
    pub ooms_total: u64,
    /// Allocations never freed, grouped by stack, growing ones first (after `--top`).
    pub leak_suspects: Vec<LeakSuspect>,
    /// Never-freed groups before `--top`.
    pub leak_groups_total: usize,
}

/// Summary of a device's recorded trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HistorySummary {
    /// Trace entries.
    pub entries: u64,
    /// Entries per action.
    pub actions: BTreeMap<String, u64>,
    /// Time of the first entry, epoch ns (the snapshot's `time_us` × 1000), when
    /// recorded (2.2+).
    pub first_time_ns: Option<i64>,
    /// Time of the last entry, epoch ns.
    pub last_time_ns: Option<i64>,
    /// Active bytes before the first entry (allocations older than the history).
    pub start_active_bytes: u64,
    /// Active bytes after the last entry.
    pub end_active_bytes: u64,
    /// Highest active bytes.
    pub peak_active_bytes: u64,
    /// Entry index where the peak is first reached.
    pub peak_index: u64,
    /// Its time, epoch ns.
    pub peak_time_ns: Option<i64>,
    /// Reserved bytes before the first entry (final reserved with segment events undone).
    pub start_reserved_bytes: u64,
    /// Highest reserved bytes.
    pub peak_reserved_bytes: u64,
    /// cudaMalloc / cudaFree calls (`segment_alloc`/`segment_map`,
    /// `segment_free`/`segment_unmap`) after the first quarter of the trace: the cache
    /// still growing or being released in steady state. A segment free (cudaFree)
    /// synchronises the device; a segment allocation does not by itself, but when
    /// cudaMalloc fails the allocator first frees its cached blocks (synchronising) and
    /// retries (see advisor rule ME005 in `docs/rules.md`).
    pub late_segment_events: u64,
}

/// One allocation site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// The full stack (Python and C++ frames; the stack capture's own hidden), innermost
    /// first, `file:line:name`.
    pub frames: Vec<String>,
    /// The first user-level Python frame (not torch's, not Python's library), if any.
    pub user_frame: Option<String>,
    /// Without a user frame (the autograd engine's threads record C++ frames only): the
    /// ATen operator that allocated and the autograd node that ran it.
    pub op_site: Option<String>,
    /// Live bytes.
    pub bytes: u64,
    /// Live allocations.
    pub count: u64,
}

/// Allocation sites at one moment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopSites {
    /// `peak` (of the replayed trace) or `snapshot` (the final state).
    pub at: SitesAt,
    /// Entry index (for `peak`).
    pub index: Option<u64>,
    /// Live bytes in total.
    pub bytes: u64,
    /// Sites by bytes (after `--top`).
    pub sites: Vec<Site>,
    /// Sites before `--top`.
    pub sites_total: usize,
}

/// One timeline point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Entry index.
    pub index: u64,
    /// Its time, epoch ns, when recorded.
    pub time_ns: Option<i64>,
    /// Active bytes after the entry.
    pub active_bytes: u64,
    /// Reserved bytes after the entry.
    pub reserved_bytes: u64,
}

/// Why an allocation failed, from the allocator state just before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OomCause {
    /// The allocator held at least the requested bytes reserved but unused, in no block
    /// large enough: fragmentation.
    Fragmentation,
    /// The request exceeded what the allocator had cached by `shortfall_bytes`.
    ExceedsCache,
}

/// An allocation that failed, and the allocator state just before it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OomReport {
    /// Entry index.
    pub index: u64,
    /// Its time, epoch ns, when recorded.
    pub time_ns: Option<i64>,
    /// Bytes asked for.
    pub requested_bytes: u64,
    /// Bytes CUDA reported free on the device.
    pub device_free_bytes: Option<u64>,
    /// Stream.
    pub stream: u64,
    /// The failing allocation's stack (full, innermost first).
    pub frames: Vec<String>,
    /// Its first user-level Python frame, if any.
    pub user_frame: Option<String>,
    /// Without a user frame: the ATen operator and the autograd node, as in [`Site`].
    pub op_site: Option<String>,
    /// Active bytes just before.
    pub active_bytes: u64,
    /// Reserved bytes just before.
    pub reserved_bytes: u64,
    /// Reserved − active: cached but not usable for this request.
    pub reserved_unused_bytes: u64,
    /// What was live, by site (after `--top`).
    pub top_sites: Vec<Site>,
    /// Whether nothing but `oom`/`snapshot` entries follow it, so the snapshot's
    /// `segments` (the `state` above) are the allocator state at this OOM, as when the
    /// snapshot is dumped by an OOM observer.
    pub state_is_at_oom: bool,
    /// The reading of the numbers above.
    pub cause: OomCause,
    /// Requested minus reserved-but-unused bytes (0 for fragmentation).
    pub shortfall_bytes: u64,
    /// Whether CUDA reported at least the requested bytes free on the device: a
    /// per-process memory-fraction cap, or device memory held by other allocators.
    pub device_free_covers_request: bool,
}

/// Allocations of one stack made inside the trace and never freed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LeakSuspect {
    /// Frames (the full stack), innermost first.
    pub frames: Vec<String>,
    /// The first user-level Python frame, if any.
    pub user_frame: Option<String>,
    /// Without a user frame: the ATen operator and the autograd node, as in [`Site`].
    pub op_site: Option<String>,
    /// Allocations never freed.
    pub count: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Allocations never freed per quarter of the trace (by entry index).
    pub per_quarter: [u64; 4],
    /// First and last entry index.
    pub first_index: u64,
    /// Last entry index.
    pub last_index: u64,
    /// Bytes per second between the first and last, when times are recorded.
    pub growth_bytes_per_s: Option<f64>,
    /// Accumulating across the trace: ≥ 3 allocations, in ≥ 2 quarters, spread over
    /// ≥ 25 % of it. Others are long-lived (parameters, optimizer state, caches).
    pub growing: bool,
}

/// The snapshot view.
pub fn analyze_snapshot(snap: &Snapshot, opts: &SnapshotOptions) -> SnapshotView {
    let mut view = SnapshotView {
        path: snap.path.display().to_string(),
        source: SnapshotSource::CudaSnapshot,
        file_bytes: snap.file_bytes,
        gzip: snap.gzip,
        protocol: snap.protocol,
        layout: snap.layout,
        pytorch_versions: pytorch_versions(snap),
        allocator_settings: snap.allocator_settings.clone(),
        external_annotations: snap.external_annotations.len() as u64,
        other_keys: snap.other_keys.clone(),
        devices: Vec::new(),
        notes: Vec::new(),
    };
    let traced = snap
        .device_traces
        .as_ref()
        .is_some_and(|t| t.iter().any(|d| !d.is_empty()));
    if !traced {
        view.notes.push(Note::NoAllocationHistory);
    }
    let mut sites = Sites::default();
    // Segments per device, grouped once (a filter per device is quadratic in devices).
    let mut segments: BTreeMap<i64, Vec<&Segment>> = BTreeMap::new();
    for seg in &snap.segments {
        segments.entry(seg.device).or_default().push(seg);
    }
    for d in snap.devices() {
        if opts.device.is_some_and(|f| !f.matches(Device::cuda(d))) {
            continue;
        }
        let segs = segments.get(&d).map_or(&[][..], Vec::as_slice);
        view.devices
            .push(device_view(snap, (d, segs), opts, &mut sites));
    }
    if view.devices.is_empty() {
        view.notes.push(if snap.segments.is_empty() && !traced {
            Note::EmptySnapshot
        } else {
            Note::NoDeviceMatches
        });
    }
    view
}

/// Everything the view shows for device `d`: its state and segments, then what its
/// recorded history gives (or, without one, the sites live at snapshot time).
fn device_view(
    snap: &Snapshot,
    (d, segs): (i64, &[&Segment]),
    opts: &SnapshotOptions,
    sites: &mut Sites,
) -> SnapshotDevice {
    let state = state::allocator_state(segs.iter().copied());
    let (segments, segments_total) = segment_rows(segs, opts.top);
    let entries: &[TraceEntry] = snap
        .device_traces
        .as_ref()
        .and_then(|t| t.get(d as usize))
        .map_or(&[][..], Vec::as_slice);
    let mut dev = SnapshotDevice {
        device: Device::cuda(d).to_string(),
        device_id: d,
        state,
        segments,
        segments_total,
        history: None,
        top_sites: TopSites {
            at: SitesAt::Snapshot,
            index: None,
            bytes: 0,
            sites: Vec::new(),
            sites_total: 0,
        },
        timeline: Vec::new(),
        ooms: Vec::new(),
        ooms_total: 0,
        leak_suspects: Vec::new(),
        leak_groups_total: 0,
    };
    if entries.is_empty() {
        dev.top_sites = snapshot_sites(snap, sites, segs, opts.top);
        return dev;
    }
    let r = replay::replay(segs, entries);
    let peak = r.peak().unwrap_or(0);
    dev.history = Some(history_summary(&r, entries, peak));
    let live = replay::live_after(&r, entries, Some(peak));
    dev.top_sites = top_sites(
        snap,
        sites,
        &live,
        SitesAt::Peak,
        Some(peak as u64),
        opts.top,
    );
    dev.timeline = timeline(&r, entries, opts.points.max(10));
    for (i, e) in entries.iter().enumerate() {
        if e.action != Action::Oom {
            continue;
        }
        dev.ooms_total += 1;
        if dev.ooms.len() >= MAX_OOM_REPORTS {
            continue;
        }
        dev.ooms
            .push(oom_report(snap, sites, &r, entries, i, opts.top));
    }
    let mut leaks = leak_suspects(snap, sites, &r, entries);
    dev.leak_groups_total = leaks.len();
    cut(&mut leaks, opts.top);
    dev.leak_suspects = leaks;
    dev
}

/// The device's segment rows, largest first (after `--top`), and how many there were.
fn segment_rows(segs: &[&Segment], top: usize) -> (Vec<SegmentRow>, usize) {
    let mut rows: Vec<SegmentRow> = segs.iter().map(|s| state::segment_row(s)).collect();
    rows.sort_by(|a, b| {
        b.total_size_bytes
            .cmp(&a.total_size_bytes)
            .then(b.allocated_bytes.cmp(&a.allocated_bytes))
    });
    let total = rows.len();
    cut(&mut rows, top);
    (rows, total)
}

/// Without a history: the sites of the blocks allocated at snapshot time.
fn snapshot_sites(snap: &Snapshot, sites: &mut Sites, segs: &[&Segment], top: usize) -> TopSites {
    let live = segs
        .iter()
        .flat_map(|s| &s.blocks)
        .filter(|b| b.state == kinetoscope_trace::snapshot::BlockState::ActiveAllocated);
    let live: Vec<LiveAlloc> = live
        .map(|b| LiveAlloc {
            size: b.size,
            stack: b.stack,
            index: None,
        })
        .collect();
    top_sites(snap, sites, &live, SitesAt::Snapshot, None, top)
}

/// The summary of a device's replayed history, whose active memory peaks at entry `peak`.
fn history_summary(r: &Replay, entries: &[TraceEntry], peak: usize) -> HistorySummary {
    let time = |i: usize| entries.get(i).and_then(time_ns);
    let mut actions: BTreeMap<String, u64> = BTreeMap::new();
    for e in entries {
        *actions.entry(e.action.to_string()).or_default() += 1;
    }
    let quarter = entries.len() / 4;
    HistorySummary {
        entries: entries.len() as u64,
        actions,
        first_time_ns: entries.iter().find_map(time_ns),
        last_time_ns: entries.iter().rev().find_map(time_ns),
        start_active_bytes: r.start_active,
        end_active_bytes: r.active.last().copied().unwrap_or(r.start_active),
        peak_active_bytes: r.active[peak],
        peak_index: peak as u64,
        peak_time_ns: time(peak),
        start_reserved_bytes: r.start_reserved,
        peak_reserved_bytes: r
            .reserved
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(r.start_reserved),
        late_segment_events: entries
            .iter()
            .skip(quarter.max(1))
            .filter(|e| {
                matches!(
                    e.action,
                    Action::SegmentAlloc
                        | Action::SegmentFree
                        | Action::SegmentMap
                        | Action::SegmentUnmap
                )
            })
            .count() as u64,
    }
}

/// The OOM at entry `i` of the replayed history: the allocator state just before it,
/// the reading of its numbers, and what was live.
fn oom_report(
    snap: &Snapshot,
    sites: &mut Sites,
    r: &Replay,
    entries: &[TraceEntry],
    i: usize,
    top: usize,
) -> OomReport {
    let e = &entries[i];
    let before = i.checked_sub(1);
    let live = replay::live_after(r, entries, before);
    let active = r.active_before(i);
    let reserved = r.reserved_before(i);
    let unused = reserved.saturating_sub(active);
    let cause = if unused >= e.size {
        OomCause::Fragmentation
    } else {
        OomCause::ExceedsCache
    };
    let state_is_at_oom = entries[i + 1..]
        .iter()
        .all(|x| matches!(x.action, Action::Oom | Action::Snapshot));
    let sid = sites.site(snap, e.stack);
    OomReport {
        index: i as u64,
        time_ns: time_ns(e),
        requested_bytes: e.size,
        device_free_bytes: e.device_free,
        stream: e.stream,
        frames: sites.display(sid),
        user_frame: sites.user_frame(sid),
        op_site: sites.op_site(sid),
        active_bytes: active,
        reserved_bytes: reserved,
        reserved_unused_bytes: unused,
        top_sites: top_sites(snap, sites, &live, SitesAt::Oom, None, top).sites,
        state_is_at_oom,
        cause,
        shortfall_bytes: e.size.saturating_sub(unused),
        device_free_covers_request: e.device_free.is_some_and(|f| f >= e.size),
    }
}

fn cut<T>(v: &mut Vec<T>, top: usize) {
    if top > 0 {
        v.truncate(top);
    }
}

fn top_sites(
    snap: &Snapshot,
    sites: &mut Sites,
    live: &[LiveAlloc],
    at: SitesAt,
    index: Option<u64>,
    top: usize,
) -> TopSites {
    let mut by: HashMap<u32, (u64, u64)> = HashMap::new();
    for a in live {
        let s = sites.site(snap, a.stack);
        let e = by.entry(s).or_default();
        e.0 += a.size;
        e.1 += 1;
    }
    let mut rows: Vec<Site> = by
        .into_iter()
        .map(|(s, (bytes, count))| Site {
            frames: sites.display(s),
            user_frame: sites.user_frame(s),
            op_site: sites.op_site(s),
            bytes,
            count,
        })
        .collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.frames.cmp(&b.frames)));
    let total = rows.len();
    cut(&mut rows, top);
    TopSites {
        at,
        index,
        bytes: live.iter().map(|a| a.size).sum(),
        sites: rows,
        sites_total: total,
    }
}

/// An entry's time, epoch ns (snapshots record µs).
fn time_ns(e: &TraceEntry) -> Option<i64> {
    e.time_us.map(|t| t.saturating_mul(1000))
}

fn timeline(r: &Replay, entries: &[TraceEntry], points: usize) -> Vec<TimelinePoint> {
    let n = r.active.len();
    let point = |i: usize| TimelinePoint {
        index: i as u64,
        time_ns: time_ns(&entries[i]),
        active_bytes: r.active[i],
        reserved_bytes: r.reserved[i],
    };
    if n <= points {
        return (0..n).map(point).collect();
    }
    let buckets = points / 2;
    let mut out = Vec::with_capacity(points);
    for b in 0..buckets {
        let lo = b * n / buckets;
        let hi = ((b + 1) * n / buckets).max(lo + 1);
        let (mut min_i, mut max_i) = (lo, lo);
        for i in lo..hi {
            if r.active[i] < r.active[min_i] {
                min_i = i;
            }
            if r.active[i] > r.active[max_i] {
                max_i = i;
            }
        }
        let (a, b2) = (min_i.min(max_i), min_i.max(max_i));
        out.push(point(a));
        if b2 != a {
            out.push(point(b2));
        }
    }
    out
}

fn leak_suspects(
    snap: &Snapshot,
    sites: &mut Sites,
    r: &Replay,
    entries: &[TraceEntry],
) -> Vec<LeakSuspect> {
    let n = entries.len().max(1);
    struct G {
        count: u64,
        bytes: u64,
        q: [u64; 4],
        first: usize,
        last: usize,
    }
    let mut groups: HashMap<u32, G> = HashMap::new();
    for (_, a) in &r.never_freed {
        let Some(i) = a.index else { continue };
        let s = sites.site(snap, a.stack);
        let g = groups.entry(s).or_insert(G {
            count: 0,
            bytes: 0,
            q: [0; 4],
            first: i,
            last: i,
        });
        g.count += 1;
        g.bytes += a.size;
        g.q[(i * 4 / n).min(3)] += 1;
        g.first = g.first.min(i);
        g.last = g.last.max(i);
    }
    let mut out: Vec<LeakSuspect> = groups
        .into_iter()
        .map(|(s, g)| {
            let quarters = g.q.iter().filter(|c| **c > 0).count();
            let growing = g.count >= 3 && quarters >= 2 && (g.last - g.first) * 4 >= n;
            let growth = match (entries[g.first].time_us, entries[g.last].time_us) {
                (Some(a), Some(b)) if b > a => Some(g.bytes as f64 / ((b - a) as f64 / 1e6)),
                _ => None,
            };
            LeakSuspect {
                frames: sites.display(s),
                user_frame: sites.user_frame(s),
                op_site: sites.op_site(s),
                count: g.count,
                bytes: g.bytes,
                per_quarter: g.q,
                first_index: g.first as u64,
                last_index: g.last as u64,
                growth_bytes_per_s: growth,
                growing,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.growing
            .cmp(&a.growing)
            .then(b.bytes.cmp(&a.bytes))
            .then_with(|| a.frames.cmp(&b.frames))
    });
    out
}

/// Which PyTorch releases write a snapshot with this file's features (the keys each
/// release of `torch.cuda.memory._snapshot` added).
fn pytorch_versions(snap: &Snapshot) -> String {
    let entries = || snap.device_traces.iter().flatten().flatten();
    if snap.layout == SnapshotLayout::BareList {
        return "1.13".to_owned();
    }
    if snap.other_keys.iter().any(|k| k.starts_with("host_"))
        || entries().any(|e| e.user_metadata.is_some() || e.action == Action::Annotate)
    {
        return "2.10+".to_owned();
    }
    if entries().any(|e| e.compile_context.is_some()) {
        return "2.7+".to_owned();
    }
    if !snap.external_annotations.is_empty() {
        return "2.5+".to_owned();
    }
    if snap.allocator_settings.is_some() {
        return "2.3+".to_owned();
    }
    if entries().any(|e| e.time_us.is_some()) {
        return "2.2+".to_owned();
    }
    if snap
        .segments
        .iter()
        .any(|s| s.segment_pool_id.is_some() || s.is_expandable.is_some())
    {
        return "2.1+".to_owned();
    }
    "2.0+".to_owned()
}
