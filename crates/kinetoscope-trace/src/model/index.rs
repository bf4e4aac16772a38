//! Links that are computed on first use: parent/child nesting of host events per track,
//! and the CUPTI correlation lookup between runtime calls and GPU activities.

use rustc_hash::FxHashMap;

use super::{CategoryKind, EventId, Phase, Trace};

/// Parent of each event on its track by time containment (host-side spans only; GPU
/// activities and instants have no parent).
#[derive(Clone, Debug, Default)]
pub struct Nesting {
    /// Parent per event (`u32::MAX` for roots and for events not nested).
    pub parent: Vec<u32>,
}

impl Nesting {
    /// Build by sorting each track's spans by (start asc, duration desc) and walking
    /// them with a stack.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let mut parent = vec![u32::MAX; e.len()];
        // (start, -duration, event) per track: the sort compares keys held in place.
        let mut per_track: Vec<Vec<(i64, i64, u32)>> = vec![Vec::new(); trace.tracks.len()];
        for i in 0..e.len() {
            let kind = trace.categories.kind(e.cat[i]);
            if e.phase[i] == Phase::Complete && !kind.is_gpu() && kind != CategoryKind::TraceSpan {
                per_track[e.track[i].index()].push((e.ts_ns[i], -e.dur_ns[i], i as u32));
            }
        }
        let mut stack: Vec<u32> = Vec::new();
        for spans in &mut per_track {
            spans.sort_unstable();
            stack.clear();
            for &(start, _, i) in spans.iter() {
                let end = start + e.dur_ns[i as usize];
                while let Some(&top) = stack.last() {
                    let top_end = e.ts_ns[top as usize] + e.dur_ns[top as usize];
                    if start >= top_end {
                        stack.pop();
                    } else {
                        break;
                    }
                }
                if let Some(&top) = stack.last() {
                    let top_end = e.ts_ns[top as usize] + e.dur_ns[top as usize];
                    if end <= top_end {
                        parent[i as usize] = top;
                    }
                }
                stack.push(i);
            }
        }
        Self { parent }
    }

    /// The parent of an event, if nested.
    pub fn parent_of(&self, event: EventId) -> Option<EventId> {
        let p = self.parent[event.index()];
        (p != u32::MAX).then_some(EventId(p))
    }
}

/// CUPTI correlation id → the host runtime/driver call and the GPU activities it
/// launched.
#[derive(Clone, Debug, Default)]
pub struct CorrelationIndex {
    /// Host-side launch call per correlation id.
    pub launch: FxHashMap<i64, EventId>,
    /// GPU activities per correlation id (usually one).
    pub gpu: FxHashMap<i64, Vec<EventId>>,
}

impl CorrelationIndex {
    /// Build from the `correlation` column.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let mut idx = Self::default();
        for i in 0..e.len() {
            let c = e.correlation[i];
            if c == 0 {
                continue;
            }
            let kind = trace.categories.kind(e.cat[i]);
            if kind.is_gpu() {
                idx.gpu.entry(c).or_default().push(EventId(i as u32));
            } else if kind.is_launch_call() {
                idx.launch.insert(c, EventId(i as u32));
            }
        }
        idx
    }
}
