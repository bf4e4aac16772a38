//! Links that are computed on first use: parent/child nesting of host events per track,
//! and the CUPTI correlation lookup between runtime calls and GPU activities.

use super::idmap::IdMap;
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
                per_track[e.track[i].index()].push((e.ts_ns[i], -e.dur_ns.at(i), i as u32));
            }
        }
        let mut stack: Vec<u32> = Vec::new();
        for spans in &mut per_track {
            // Stable: a track's spans come nearly in time order, in a few long runs
            // that the stable sort merges in about one pass (the keys are distinct).
            spans.sort();
            stack.clear();
            for &(start, _, i) in spans.iter() {
                let end = start + e.dur_ns.at(i as usize);
                while let Some(&top) = stack.last() {
                    let top_end = e.ts_ns[top as usize] + e.dur_ns.at(top as usize);
                    if start >= top_end {
                        stack.pop();
                    } else {
                        break;
                    }
                }
                if let Some(&top) = stack.last() {
                    let top_end = e.ts_ns[top as usize] + e.dur_ns.at(top as usize);
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
/// launched, in flat arrays: the id maps to a link number (a vector access when ids are
/// dense; a bisection when, as in many real traces, the ids the trace holds are a few of
/// a counter shared with activities it does not record), and each link holds its call
/// and a contiguous slice of GPU activities. Each linked event also keeps its link
/// number, so that a walk over the events needs no id lookup at all.
#[derive(Clone, Debug, Default)]
pub struct CorrelationIndex {
    /// Correlation id → link number (links are numbered in increasing id order).
    links: IdMap,
    /// Host launch call per link ([`NO_LAUNCH`] when none); the last of a repeated id.
    launch: Vec<u32>,
    /// Per link, where its GPU activities start in `gpu`; one more entry than links.
    gpu_from: Vec<u32>,
    /// GPU activities of every link, each link's in file order.
    gpu: Vec<EventId>,
    /// Link number per event ([`NO_LINK`] for events neither a GPU activity nor a
    /// launch call, or without an id).
    link_of: Vec<u32>,
}

/// A link without a host launch call.
const NO_LAUNCH: u32 = u32::MAX;
/// An event without a link.
const NO_LINK: u32 = u32::MAX;

impl CorrelationIndex {
    /// Build from the `correlation` column: every GPU activity and host launch call with
    /// a non-zero id, grouped by id.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
        // (id, event, is GPU) of every linked event, sorted by id then event.
        let mut linked: Vec<(i64, u32, bool)> = Vec::new();
        for i in 0..e.len() {
            let c = e.correlation.at(i);
            if c == 0 {
                continue;
            }
            match kinds.get(e.cat[i].0 as usize) {
                Some(k) if k.is_gpu() => linked.push((c, i as u32, true)),
                Some(k) if k.is_launch_call() => linked.push((c, i as u32, false)),
                _ => {}
            }
        }
        // Stable: ids rise through the launches and through the activities, two long
        // runs merged in about one pass (the keys are distinct).
        linked.sort();
        let mut idx = Self {
            link_of: vec![NO_LINK; e.len()],
            ..Self::default()
        };
        let mut ids: Vec<i64> = Vec::new();
        for &(c, i, is_gpu) in &linked {
            if ids.last() != Some(&c) {
                ids.push(c);
                idx.launch.push(NO_LAUNCH);
                idx.gpu_from.push(idx.gpu.len() as u32);
            }
            idx.link_of[i as usize] = idx.launch.len() as u32 - 1;
            if is_gpu {
                idx.gpu.push(EventId(i));
            } else {
                *idx.launch.last_mut().expect("a link was pushed") = i;
            }
        }
        idx.gpu_from.push(idx.gpu.len() as u32);
        drop(linked);
        idx.links = IdMap::build(|| ids.iter().enumerate().map(|(l, &c)| (c, l as u32)), true);
        idx
    }

    /// The host launch call with this correlation id (the last one when repeated).
    pub fn launch(&self, correlation: i64) -> Option<EventId> {
        let l = self.links.get(correlation)? as usize;
        let call = self.launch[l];
        (call != NO_LAUNCH).then_some(EventId(call))
    }

    /// The GPU activities with this correlation id, in file order (usually one).
    pub fn gpu(&self, correlation: i64) -> &[EventId] {
        match self.links.get(correlation) {
            Some(l) => self.gpu_of_link(l as usize),
            None => &[],
        }
    }

    /// The GPU activities launched by `call`: those sharing its correlation id when it is
    /// the call kept for that id ([`Self::launch`]); none for any other event. One array
    /// access, no id lookup.
    pub fn gpu_of_call(&self, call: EventId) -> &[EventId] {
        match self.link_of.get(call.index()) {
            Some(&l) if l != NO_LINK && self.launch[l as usize] == call.0 => {
                self.gpu_of_link(l as usize)
            }
            _ => &[],
        }
    }

    /// Every correlation id's launch call (if any) and GPU activities, in increasing id
    /// order.
    pub fn iter(&self) -> impl Iterator<Item = (Option<EventId>, &[EventId])> + '_ {
        self.launch.iter().enumerate().map(|(l, &call)| {
            (
                (call != NO_LAUNCH).then_some(EventId(call)),
                self.gpu_of_link(l),
            )
        })
    }

    /// The GPU activities of link `l`.
    fn gpu_of_link(&self, l: usize) -> &[EventId] {
        &self.gpu[self.gpu_from[l] as usize..self.gpu_from[l + 1] as usize]
    }
}
