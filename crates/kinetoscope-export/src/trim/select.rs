//! Which elements of the event array a trim keeps. One pass over the reader's spans
//! ([`kinetoscope_trace::read::spans`]) records a few fields per element; the decisions
//! are then taken on those records: metadata always, host events starting inside the
//! window, GPU activities whose launch (by CUPTI `correlation`) was kept (else those
//! starting inside the window), flows whose every end lies on a kept slice.

use rustc_hash::{FxHashMap, FxHashSet};

use kinetoscope_trace::read::spans::{EventSpans, IdValue, SpanItem};
use kinetoscope_trace::CategoryKind;

use super::window::Window;

/// What an element is, for the decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `ph: "M"`: always kept.
    Meta,
    /// A flow end (`s`, `t`, `f`).
    Flow,
    /// A kernel, memcpy or memset: slices of a GPU stream, which must not overlap.
    StreamActivity,
    /// Another GPU-side event (GPU annotation, CUDA sync or event record).
    GpuOther,
    /// A runtime or driver call that may launch GPU work.
    Launch,
    /// A Python frame (`python_function`, `python`): what `--drop-stacks` drops.
    Python,
    /// Any other host event.
    Host,
    /// An element the reader could not read: never kept.
    Malformed,
}

/// A `pid` or `tid` as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RawId<'a> {
    /// Absent or unreadable.
    None,
    /// A number.
    Int(i64),
    /// A string's raw bytes.
    Str(&'a [u8]),
}

/// One element, as the decisions need it.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// Its bytes in the text.
    pub start: usize,
    /// One past its end.
    pub end: usize,
    /// `ph`.
    pub ph: u8,
    /// What it is.
    pub class: Class,
    /// Index of its `(pid, tid)` in [`Records::tracks`].
    pub track: u32,
    /// Index of its raw `cat` among the distinct ones met (flows of one `cat` share an
    /// id space).
    pub cat: u16,
    /// Start on the model's clock (ns); `None` when it has no readable `ts`.
    pub ts: Option<i64>,
    /// Duration (ns).
    pub dur: i64,
    /// `correlation` (GPU activities and launches) or the flow `id`.
    pub key: Option<i64>,
    /// Name bytes' span in the text (for repairs).
    pub name: Option<(usize, usize)>,
    /// The name held a quote that was not escaped.
    pub unescaped_quote: bool,
}

/// Every element of a trace's event array, and what the walk found around them.
pub struct Records<'a> {
    /// The elements in file order.
    pub items: Vec<Record>,
    /// Each `(pid, tid)` once.
    pub tracks: Vec<(RawId<'a>, RawId<'a>)>,
    /// `thread_name` metadata: track index → the name's raw bytes.
    pub thread_names: FxHashMap<u32, &'a [u8]>,
    /// The text before the first element.
    pub prefix: &'a [u8],
    /// The text from the array's `]`; `None` when the text is truncated.
    pub suffix: Option<&'a [u8]>,
    /// The trace is a bare array.
    pub bare: bool,
}

/// Bytes walked between two calls of `record`'s `release`.
const RELEASE_EVERY: usize = 64 << 20;

/// Record every element of `spans`; `base_ns` is added to written `ts` values (the
/// trace's `baseTimeNanoseconds`, as the model does). `release(upto)` is told, every
/// 64 MiB, that the text before `upto` was walked.
pub fn record<'a>(
    mut spans: EventSpans<'a>,
    text: &'a [u8],
    base_ns: i64,
    release: &dyn Fn(usize),
) -> Records<'a> {
    let mut released = 0;
    let mut items = Vec::new();
    let mut tracks = Vec::new();
    let mut ids: FxHashMap<(RawId<'a>, RawId<'a>), u32> = FxHashMap::default();
    let mut thread_names = FxHashMap::default();
    let mut cats: FxHashMap<&'a [u8], u16> = FxHashMap::default();
    let raw = |v: IdValue| match v {
        IdValue::None => RawId::None,
        IdValue::Int(i) => RawId::Int(i),
        IdValue::Str(s) => RawId::Str(&text[s.start..s.end]),
    };
    for item in spans.by_ref() {
        let at = match &item {
            SpanItem::Event(e) => e.start,
            SpanItem::Malformed { start, .. } => *start,
        };
        if at - released >= RELEASE_EVERY {
            release(at);
            released = at;
        }
        let e = match item {
            SpanItem::Event(e) => e,
            SpanItem::Malformed { start, end } => {
                items.push(Record {
                    start,
                    end,
                    ph: 0,
                    class: Class::Malformed,
                    track: 0,
                    cat: 0,
                    ts: None,
                    dur: 0,
                    key: None,
                    name: None,
                    unescaped_quote: false,
                });
                continue;
            }
        };
        let pair = (raw(e.pid), raw(e.tid));
        let next = ids.len() as u32;
        let track = *ids.entry(pair).or_insert_with(|| {
            tracks.push(pair);
            next
        });
        let name = e.name.map(|s| (s.start, s.end));
        let cat_text = e.cat.map(|c| &text[c.start..c.end]);
        let next_cat = cats.len().min(u16::MAX as usize) as u16;
        let cat = *cats.entry(cat_text.unwrap_or(b"")).or_insert(next_cat);
        let class = classify(e.ph, cat_text);
        if class == Class::Meta && name.is_some_and(|(s, t)| &text[s..t] == b"thread_name") {
            if let Some(m) = e.meta_text {
                thread_names.insert(track, &text[m.start..m.end]);
            }
        }
        let key = match class {
            Class::Flow => e.id.map(|i| i as i64),
            _ => e.correlation,
        };
        items.push(Record {
            start: e.start,
            end: e.end,
            ph: e.ph,
            class,
            track,
            cat,
            ts: e.ts_ns.map(|t| t.saturating_add(base_ns)),
            dur: e.dur_ns,
            key,
            name,
            unescaped_quote: e.defects.unescaped_quote,
        });
    }
    Records {
        items,
        tracks,
        thread_names,
        prefix: spans.prefix(),
        suffix: spans.suffix(),
        bare: spans.is_bare_array(),
    }
}

/// An element's class from its `ph` and raw `cat` (by the model's category kinds).
fn classify(ph: u8, cat: Option<&[u8]>) -> Class {
    match ph {
        b'M' => return Class::Meta,
        b's' | b't' | b'f' => return Class::Flow,
        _ => {}
    }
    let cat = cat.map(String::from_utf8_lossy).unwrap_or_default();
    if cat == "python" {
        return Class::Python;
    }
    match CategoryKind::from_raw(&cat) {
        CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset => {
            Class::StreamActivity
        }
        k if k.is_gpu() => Class::GpuOther,
        k if k.is_launch_call() => Class::Launch,
        CategoryKind::PythonFunction => Class::Python,
        _ => Class::Host,
    }
}

/// What to keep.
#[derive(Clone, Copy, Debug, Default)]
pub struct Filter {
    /// The window; `None` keeps every time.
    pub window: Option<Window>,
    /// Keep only GPU activities (and metadata).
    pub kernels_only: bool,
    /// Drop Python frames.
    pub drop_stacks: bool,
}

/// Which records are kept, and how many flows were dropped because an end was not.
pub struct Kept {
    /// One flag per record.
    pub keep: Vec<bool>,
    /// Flow elements dropped because another end of the same flow was not kept (flows
    /// none of whose ends were kept are not counted).
    pub flows_dropped: u64,
}

/// Decide which records are kept.
pub fn decide(recs: &Records<'_>, filter: &Filter) -> Kept {
    let items = &recs.items;
    let in_window = |r: &Record| match (filter.window, r.ts) {
        (None, _) => true,
        (Some(w), Some(ts)) => w.holds(ts),
        (Some(_), None) => false,
    };
    let class_ok = |c: Class| match c {
        Class::Meta => true,
        Class::Malformed => false,
        Class::StreamActivity | Class::GpuOther => true,
        Class::Python => !filter.drop_stacks && !filter.kernels_only,
        Class::Flow | Class::Launch | Class::Host => !filter.kernels_only,
    };
    // Launches, by correlation: all of them, and those inside the window.
    let mut launched = FxHashSet::default();
    let mut launched_kept = FxHashSet::default();
    for r in items.iter().filter(|r| r.class == Class::Launch) {
        if let Some(c) = r.key {
            launched.insert(c);
            if in_window(r) {
                launched_kept.insert(c);
            }
        }
    }
    let mut keep: Vec<bool> = items
        .iter()
        .map(|r| {
            class_ok(r.class)
                && match r.class {
                    Class::Meta => true,
                    Class::Flow | Class::Malformed => false,
                    Class::StreamActivity | Class::GpuOther => match r.key {
                        Some(c) if launched.contains(&c) => launched_kept.contains(&c),
                        _ => in_window(r),
                    },
                    _ => in_window(r),
                }
        })
        .collect();
    let flows_dropped = if class_ok(Class::Flow) {
        keep_bound_flows(recs, &mut keep)
    } else {
        0
    };
    Kept {
        keep,
        flows_dropped,
    }
}

/// Keep the flows every end of which lies on a kept slice of its track (start ≤ ts ≤
/// end); count the elements of the flows dropped although some end was bound.
fn keep_bound_flows(recs: &Records<'_>, keep: &mut [bool]) -> u64 {
    let items = &recs.items;
    // Per track: kept slices by start, with the running maximum of their ends.
    let mut slices: FxHashMap<u32, Vec<(i64, i64)>> = FxHashMap::default();
    for (r, _) in items
        .iter()
        .zip(keep.iter())
        .filter(|(r, k)| **k && r.ph == b'X')
    {
        if let Some(ts) = r.ts {
            slices.entry(r.track).or_default().push((ts, ts + r.dur));
        }
    }
    for v in slices.values_mut() {
        v.sort_unstable();
        let mut reach = i64::MIN;
        for s in v.iter_mut() {
            reach = reach.max(s.1);
            s.1 = reach;
        }
    }
    let bound = |r: &Record| {
        let (Some(ts), Some(v)) = (r.ts, slices.get(&r.track)) else {
            return false;
        };
        let i = v.partition_point(|s| s.0 <= ts);
        i > 0 && v[i - 1].1 >= ts
    };
    // A flow is `(cat text, id)`; it is kept when all its ends are bound.
    // Per flow: (every end bound, some end bound).
    let mut ends: FxHashMap<(u16, i64), (bool, bool)> = FxHashMap::default();
    let flow_key = |r: &Record| (r.cat, r.key.unwrap_or(i64::MIN));
    for r in items.iter().filter(|r| r.class == Class::Flow) {
        let b = bound(r);
        let e = ends.entry(flow_key(r)).or_insert((true, false));
        e.0 &= b;
        e.1 |= b;
    }
    let mut dropped = 0;
    for (r, k) in items.iter().zip(keep.iter_mut()) {
        if r.class == Class::Flow {
            let (all, some) = ends.get(&flow_key(r)).copied().unwrap_or((false, false));
            *k = all;
            dropped += u64::from(some && !all);
        }
    }
    dropped
}
