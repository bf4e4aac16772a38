//! Links that are computed on first use: parent/child nesting of host events per track,
//! and the CUPTI correlation lookup between runtime calls and GPU activities.

use super::groups::Groups;
use super::id_rank::IdRank;
use super::start_order::sort_by_start;
use super::{CategoryKind, EventId, Phase, Trace};

/// Parent of each event on its track by time containment (host-side spans only; GPU
/// activities and instants have no parent), and each track's spans in start order.
#[derive(Clone, Debug, Default)]
pub struct Nesting {
    /// Parent per event (`u32::MAX` for roots and for events not nested).
    pub parent: Vec<u32>,
    /// The spans of each track (grouped by track index): by start, longest first, then
    /// in file order. The analyses that walk a thread's operators in this order take
    /// theirs from here instead of grouping and sorting them again.
    pub order: Groups<u32>,
}

impl Nesting {
    /// Build by sorting each track's spans by (start asc, duration desc) and walking
    /// them with a stack.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let tracks = trace.tracks.len();
        let mut parent = vec![u32::MAX; e.len()];
        let is_span = |i: usize| {
            let kind = trace.categories.kind(e.cat[i]);
            e.phase[i] == Phase::Complete && !kind.is_gpu() && kind != CategoryKind::TraceSpan
        };
        // Every span, grouped by track in file order: 4 bytes each, its start and
        // duration read from the columns as the sort and the walk need them.
        let mut spans = Groups::build(tracks, |put| {
            for i in (0..e.len()).filter(|&i| is_span(i)) {
                put(e.track[i].index(), i as u32);
            }
        });
        let start = |&i: &u32| e.ts_ns[i as usize];
        let dur = |i: u32| e.dur_ns.at(i as usize);
        let mut stack: Vec<u32> = Vec::new();
        for t in 0..tracks {
            let spans = spans.group_mut(t);
            // A track's spans come in start order, ties aside (the keys are distinct):
            // equal starts longest first, then in file order.
            sort_by_start(spans, start, |&a, &b| (dur(b), a).cmp(&(dur(a), b)));
            stack.clear();
            for &i in spans.iter() {
                let start = e.ts_ns[i as usize];
                let end = start + dur(i);
                while let Some(&top) = stack.last() {
                    let top_end = e.ts_ns[top as usize] + dur(top);
                    if start >= top_end {
                        stack.pop();
                    } else {
                        break;
                    }
                }
                if let Some(&top) = stack.last() {
                    let top_end = e.ts_ns[top as usize] + dur(top);
                    if end <= top_end {
                        parent[i as usize] = top;
                    }
                }
                stack.push(i);
            }
        }
        Self {
            parent,
            order: spans,
        }
    }

    /// The spans of track `track` (a track index) in start order: by start, longest
    /// first, then in file order.
    pub fn in_start_order(&self, track: usize) -> &[u32] {
        if track < self.order.len() {
            &self.order.items()[self.order.range(track)]
        } else {
            &[]
        }
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
    /// Correlation id → link number (links are numbered in increasing id order: the
    /// id's rank).
    links: IdRank,
    /// Host launch call per link ([`NO_LAUNCH`] when none); the last of a repeated id.
    launch: Vec<u32>,
    /// The first launch call per link (the same as `launch` unless the id repeats).
    first_launch: Vec<u32>,
    /// Per link, where its GPU activities start in `gpu`; one more entry than links.
    gpu_from: Vec<u32>,
    /// GPU activities of every link, each link's in file order.
    gpu: Vec<EventId>,
    /// Link number plus one per event ([`NO_LINK`] for events neither a GPU activity
    /// nor a launch call, or without an id): zeroed, so the pages of events without a
    /// link (operators, annotations) are never written.
    link_of: Vec<u32>,
}

/// A link without a host launch call.
const NO_LAUNCH: u32 = u32::MAX;
/// An event without a link (in [`CorrelationIndex::link_of`], which holds link + 1).
const NO_LINK: u32 = 0;

impl CorrelationIndex {
    /// Build from the `correlation` column: every GPU activity and host launch call with
    /// a non-zero id, grouped by id: through a bit per id when the ids are dense
    /// (Kineto's counters; no sort), else by sorting.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
        // Per event: whether it is linked (a GPU activity or a launch call with an id),
        // and whether it is on the GPU.
        let linked = |i: usize| -> Option<(i64, bool)> {
            let c = e.correlation.at(i);
            if c == 0 {
                return None;
            }
            match kinds.get(e.cat[i].0 as usize) {
                Some(k) if k.is_gpu() => Some((c, true)),
                Some(k) if k.is_launch_call() => Some((c, false)),
                _ => None,
            }
        };
        let (mut min, mut max, mut n) = (i64::MAX, i64::MIN, 0usize);
        for (c, _) in (0..e.len()).filter_map(linked) {
            (min, max, n) = (min.min(c), max.max(c), n + 1);
        }
        let span = if n == 0 {
            0
        } else {
            max as i128 - min as i128 + 1
        };
        let mut idx = Self {
            link_of: vec![NO_LINK; e.len()],
            ..Self::default()
        };
        if n > 0 && span <= 4 * n as i128 + 4096 {
            idx.group_by_bits(trace, (min, max), linked);
        } else {
            idx.group_by_sort(trace, linked);
        }
        idx
    }

    /// Group by id through a bit per id of `min ..= max` ([`IdRank::bits`], no sort):
    /// number the ids present in increasing order, count each link's GPU activities,
    /// then place every event in file order (so each link's activities are in file
    /// order, and the last launch call of a repeated id is kept, as
    /// [`Self::group_by_sort`] does).
    fn group_by_bits(
        &mut self,
        trace: &Trace,
        (min, max): (i64, i64),
        linked: impl Fn(usize) -> Option<(i64, bool)>,
    ) {
        let n = trace.events.len();
        let links = IdRank::bits(min, max, (0..n).filter_map(&linked).map(|(c, _)| c));
        // Per link, its GPU activities, counted one place ahead, then summed into where
        // each link starts in `gpu`. (Every linked id has its bit: `get` finds it.)
        let mut gpu_from = vec![0u32; links.len() + 1];
        for i in 0..n {
            let Some((l, is_gpu)) = linked(i).and_then(|(c, g)| Some((links.get(c)?, g))) else {
                continue;
            };
            self.link_of[i] = l + 1;
            gpu_from[l as usize + 1] += u32::from(is_gpu);
        }
        for l in 1..gpu_from.len() {
            gpu_from[l] += gpu_from[l - 1];
        }
        self.launch = vec![NO_LAUNCH; links.len()];
        self.first_launch = vec![NO_LAUNCH; links.len()];
        self.gpu = vec![EventId(0); gpu_from[links.len()] as usize];
        let mut next: Vec<u32> = gpu_from[..links.len()].to_vec();
        for i in 0..n {
            let Some(l) = self.link_of[i].checked_sub(1) else {
                continue;
            };
            let l = l as usize;
            if linked(i).is_some_and(|(_, is_gpu)| is_gpu) {
                self.gpu[next[l] as usize] = EventId(i as u32);
                next[l] += 1;
            } else {
                self.launch[l] = i as u32;
                if self.first_launch[l] == NO_LAUNCH {
                    self.first_launch[l] = i as u32;
                }
            }
        }
        self.gpu_from = gpu_from;
        self.links = links;
    }

    /// Group by id by sorting the linked events on (id, event).
    fn group_by_sort(&mut self, trace: &Trace, linked: impl Fn(usize) -> Option<(i64, bool)>) {
        // (id, event, is GPU) of every linked event, sorted by id then event.
        let mut list: Vec<(i64, u32, bool)> = (0..trace.events.len())
            .filter_map(|i| linked(i).map(|(c, is_gpu)| (c, i as u32, is_gpu)))
            .collect();
        // Stable: ids rise through the launches and through the activities, two long
        // runs merged in about one pass (the keys are distinct).
        list.sort();
        let mut ids: Vec<i64> = Vec::new();
        for &(c, i, is_gpu) in &list {
            if ids.last() != Some(&c) {
                ids.push(c);
                self.launch.push(NO_LAUNCH);
                self.first_launch.push(NO_LAUNCH);
                self.gpu_from.push(self.gpu.len() as u32);
            }
            self.link_of[i as usize] = self.launch.len() as u32;
            if is_gpu {
                self.gpu.push(EventId(i));
            } else {
                *self.launch.last_mut().expect("a link was pushed") = i;
                let first = self.first_launch.last_mut().expect("a link was pushed");
                if *first == NO_LAUNCH {
                    *first = i;
                }
            }
        }
        self.gpu_from.push(self.gpu.len() as u32);
        drop(list);
        self.links = IdRank::new(ids);
    }

    /// The host launch call with this correlation id (the last one when repeated).
    pub fn launch(&self, correlation: i64) -> Option<EventId> {
        let l = self.links.get(correlation)? as usize;
        let call = self.launch[l];
        (call != NO_LAUNCH).then_some(EventId(call))
    }

    /// The correlation ids held, each answering its link number (its rank), and the
    /// first launch call of each link (`u32::MAX` for none): HTA's launch index, which
    /// keeps the first call of a repeated id, read off this one.
    pub fn first_launches(&self) -> (&IdRank, &[u32]) {
        (&self.links, &self.first_launch)
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
            Some(&l) if l != NO_LINK && self.launch[l as usize - 1] == call.0 => {
                self.gpu_of_link(l as usize - 1)
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

    /// Number of links (correlation ids held).
    pub fn links(&self) -> usize {
        self.launch.len()
    }

    /// The link of an event (a GPU activity, or a call of a launch kind, with a non-zero
    /// id), by position: events share a link when they share a correlation id.
    pub fn link_of_event(&self, event: EventId) -> Option<usize> {
        match self.link_of.get(event.index()) {
            Some(&l) if l != NO_LINK => Some(l as usize - 1),
            _ => None,
        }
    }

    /// The launch call kept for link `l` ([`Self::launch`]).
    pub(crate) fn launch_of_link(&self, l: usize) -> Option<EventId> {
        let call = self.launch[l];
        (call != NO_LAUNCH).then_some(EventId(call))
    }

    /// The GPU activities of link `l`.
    fn gpu_of_link(&self, l: usize) -> &[EventId] {
        &self.gpu[self.gpu_from[l] as usize..self.gpu_from[l + 1] as usize]
    }
}
