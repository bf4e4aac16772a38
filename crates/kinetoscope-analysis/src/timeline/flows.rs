//! Launch→kernel flows: each host launch call (runtime or driver API) linked to the GPU
//! activities with its CUPTI correlation, sorted by either end's time so a window finds
//! its flows by binary search.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{EventId, Trace};

/// One flow arrow: from a host launch call to the GPU activity it launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowLink {
    /// The launch call's event id.
    pub from_event: u32,
    /// The GPU activity's event id.
    pub to_event: u32,
    /// The launch call's track.
    pub from_track: u32,
    /// The GPU activity's track.
    pub to_track: u32,
    /// The launch call's start, ns after `t0_ns`.
    pub from_ns: i64,
    /// The GPU activity's start, ns after `t0_ns`.
    pub to_ns: i64,
}

/// Every flow of a trace, by the GPU end's start, and an order by the host end's start.
#[derive(Debug, Default)]
pub(crate) struct FlowIndex {
    /// Flows sorted by `to_ns` (epoch ns while indexed).
    by_to: Vec<FlowLink>,
    /// Positions in `by_to`, sorted by `from_ns`.
    by_from: Vec<u32>,
}

impl FlowIndex {
    /// Every launch call → GPU activity pair whose two events are on indexed tracks
    /// (`slot[track] != u32::MAX`).
    pub fn build(trace: &Trace, slot: &[u32]) -> Self {
        let e = &trace.events;
        let idx = trace.correlation_index();
        let on_timeline = |id: EventId| {
            slot.get(e.track[id.index()].index())
                .is_some_and(|&s| s != u32::MAX)
        };
        let mut by_to = Vec::new();
        for (launch, gpus) in idx.iter() {
            let Some(launch) = launch.filter(|&l| on_timeline(l)) else {
                continue;
            };
            for &gpu in gpus {
                if on_timeline(gpu) {
                    by_to.push(FlowLink {
                        from_event: launch.0,
                        to_event: gpu.0,
                        from_track: e.track[launch.index()].0,
                        to_track: e.track[gpu.index()].0,
                        from_ns: e.ts_ns[launch.index()],
                        to_ns: e.ts_ns[gpu.index()],
                    });
                }
            }
        }
        by_to.sort_by_key(|f| (f.to_ns, f.to_event, f.from_event));
        let mut by_from: Vec<u32> = (0..by_to.len() as u32).collect();
        by_from.sort_by_key(|&i| {
            let f = &by_to[i as usize];
            (f.from_ns, f.from_event, f.to_event)
        });
        Self { by_to, by_from }
    }

    /// Flows with an end in `[start, end)` (epoch ns) and on one of `tracks`, times made
    /// relative to `t0`; none (and `true`) when more than `cap` flow ends fall there.
    pub fn in_window(
        &self,
        start: i64,
        end: i64,
        tracks: &[u32],
        cap: u32,
        t0: i64,
    ) -> (Vec<FlowLink>, bool) {
        let to_lo = self.by_to.partition_point(|f| f.to_ns < start);
        let to_hi = self.by_to.partition_point(|f| f.to_ns < end);
        let from = |i: &u32| self.by_to[*i as usize].from_ns;
        let from_lo = self.by_from.partition_point(|i| from(i) < start);
        let from_hi = self.by_from.partition_point(|i| from(i) < end);
        let total = (to_hi - to_lo) + (from_hi - from_lo);
        if total > cap as usize {
            return (Vec::new(), true);
        }
        let wanted = |f: &FlowLink| tracks.contains(&f.from_track) || tracks.contains(&f.to_track);
        let gpu_end_inside = self.by_to[to_lo..to_hi].iter();
        let host_end_only = self.by_from[from_lo..from_hi]
            .iter()
            .map(|&i| &self.by_to[i as usize])
            .filter(|f| f.to_ns < start || f.to_ns >= end);
        let flows = gpu_end_inside
            .chain(host_end_only)
            .filter(|f| wanted(f))
            .map(|f| FlowLink {
                from_ns: f.from_ns - t0,
                to_ns: f.to_ns - t0,
                ..*f
            })
            .collect();
        (flows, false)
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.by_to.len() * std::mem::size_of::<FlowLink>() + self.by_from.len() * 4
    }
}
