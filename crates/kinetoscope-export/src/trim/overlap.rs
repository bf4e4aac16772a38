//! Complete (`X`) slices that a timeline viewer cannot draw on one row. On a host
//! thread, a slice that starts inside another and ends after it (overlapping, not
//! nested) moves to a new thread of the same process, named after the original with
//! ` (overlap)`; the slices nested in it follow it when they overlap too. On a GPU
//! stream, where kernels, copies and sets run one at a time, a slice that runs past the
//! start of the next one is clipped to end there.

use rustc_hash::FxHashMap;

use super::select::{Class, RawId, Records};

/// Past this many extra threads for one thread, overlapping slices share the last one.
const MAX_LANES: usize = 64;

/// What changes in one kept event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Edit {
    /// Its new `tid`.
    pub tid: Option<i64>,
    /// Its new `dur`, ns.
    pub dur_ns: Option<i64>,
}

/// A thread added for moved slices.
#[derive(Clone, Debug)]
pub struct NewThread {
    /// A record on the original thread (its `pid` bytes are copied).
    pub like: usize,
    /// The new `tid`.
    pub tid: i64,
    /// Its name as raw JSON string contents.
    pub name: Vec<u8>,
}

/// The overlap repairs of a trim.
#[derive(Debug, Default)]
pub struct Overlaps {
    /// Record index → its edit.
    pub edits: FxHashMap<usize, Edit>,
    /// Threads added, in order.
    pub threads: Vec<NewThread>,
    /// Slices moved to a new thread.
    pub moved: u64,
    /// GPU slices clipped.
    pub clipped: u64,
}

/// Find the overlaps among the kept `X` slices.
pub fn repair_overlaps(recs: &Records<'_>, keep: &[bool]) -> Overlaps {
    let mut by_track: FxHashMap<u32, (Vec<usize>, Vec<usize>)> = FxHashMap::default();
    for (i, r) in recs.items.iter().enumerate() {
        if keep[i] && r.ph == b'X' && r.ts.is_some() {
            let (stream, host) = by_track.entry(r.track).or_default();
            if r.class == Class::StreamActivity {
                stream.push(i);
            } else {
                host.push(i);
            }
        }
    }
    let mut tracks: Vec<_> = by_track.into_iter().collect();
    tracks.sort_unstable_by_key(|(t, _)| *t);
    let mut next_tid = free_tids(recs);
    let mut out = Overlaps::default();
    for (track, (stream, host)) in tracks {
        clip(recs, stream, &mut out);
        move_overlapping(recs, track, host, &mut next_tid, &mut out);
    }
    out
}

/// Per `pid`, the first integer `tid` above every one in use.
fn free_tids<'a>(recs: &Records<'a>) -> FxHashMap<RawId<'a>, i64> {
    let mut next: FxHashMap<RawId<'a>, i64> = FxHashMap::default();
    for (pid, tid) in &recs.tracks {
        let t = match tid {
            RawId::Int(t) => t.saturating_add(1),
            _ => 1,
        };
        let e = next.entry(*pid).or_insert(1);
        *e = (*e).max(t);
    }
    next
}

/// Clip each GPU slice that runs past the next one's start on its stream.
fn clip(recs: &Records<'_>, mut stream: Vec<usize>, out: &mut Overlaps) {
    let items = &recs.items;
    let ts = |i: usize| items[i].ts.unwrap_or(0);
    stream.sort_unstable_by_key(|&i| (ts(i), i));
    for w in stream.windows(2) {
        let (a, b) = (&items[w[0]], w[1]);
        let start = ts(w[0]);
        if start + a.dur > ts(b) {
            out.edits.entry(w[0]).or_default().dur_ns = Some(ts(b) - start);
            out.clipped += 1;
        }
    }
}

/// Move each host slice that overlaps a slice of its thread without nesting in it to
/// the first added thread where it nests (or stands alone).
fn move_overlapping<'a>(
    recs: &Records<'a>,
    track: u32,
    mut host: Vec<usize>,
    next_tid: &mut FxHashMap<RawId<'a>, i64>,
    out: &mut Overlaps,
) {
    let items = &recs.items;
    let span = |i: usize| {
        let t = items[i].ts.unwrap_or(0);
        (t, t + items[i].dur)
    };
    host.sort_unstable_by_key(|&i| (span(i).0, std::cmp::Reverse(span(i).1), i));
    // Per lane, the ends of the slices still open; lane 0 is the thread itself.
    let mut lanes: Vec<Vec<i64>> = vec![Vec::new()];
    let mut tids: Vec<i64> = Vec::new();
    for i in host {
        let (start, end) = span(i);
        let mut lane = None;
        for (k, open) in lanes.iter_mut().enumerate() {
            while open.last().is_some_and(|&e| e <= start) {
                open.pop();
            }
            if open.last().is_none_or(|&e| e >= end) {
                lane = Some(k);
                break;
            }
        }
        let lane = lane.unwrap_or_else(|| {
            if lanes.len() <= MAX_LANES {
                lanes.push(Vec::new());
            }
            lanes.len() - 1
        });
        lanes[lane].push(end);
        if lane == 0 {
            continue;
        }
        while tids.len() < lane {
            let (pid, _) = recs.tracks[track as usize];
            let t = next_tid.entry(pid).or_insert(1);
            tids.push(*t);
            out.threads.push(NewThread {
                like: i,
                tid: *t,
                name: overlap_name(recs, track, tids.len()),
            });
            *t += 1;
        }
        out.edits.entry(i).or_default().tid = Some(tids[lane - 1]);
        out.moved += 1;
    }
}

/// `<thread name> (overlap)`, `… (overlap 2)`, as raw JSON string contents.
fn overlap_name(recs: &Records<'_>, track: u32, k: usize) -> Vec<u8> {
    let mut name = match recs.thread_names.get(&track) {
        Some(n) => n.to_vec(),
        None => match recs.tracks[track as usize].1 {
            RawId::Int(t) => t.to_string().into_bytes(),
            RawId::Str(s) => s.to_vec(),
            RawId::None => b"thread".to_vec(),
        },
    };
    name.extend_from_slice(b" (overlap");
    if k > 1 {
        name.extend_from_slice(format!(" {k}").as_bytes());
    }
    name.push(b')');
    name
}
