//! Merging segments, in file order, into one [`Trace`], and finishing it: time base,
//! row names, track kinds.

use rustc_hash::FxHashMap;

use super::segment::Segment;
use crate::model::*;
use crate::TraceError;

/// Local → global id maps of one worker's segment; they grow as the worker's interner,
/// categories and tracks grow, and persist across windows.
#[derive(Default)]
struct WorkerMaps {
    strings: Vec<StrId>,
    cats: Vec<CatId>,
    tracks: Vec<TrackId>,
}

/// A trace under construction.
pub(crate) struct TraceBuilder {
    pub trace: Trace,
    maps: Vec<WorkerMaps>,
    track_ids: FxHashMap<(RawId, RawId), TrackId>,
    meta: Vec<(RawId, RawId, String, StrId)>,
    /// Elements merged so far (the next element's index).
    pub elements: u64,
    /// The first problem in file order, for strict mode.
    pub first_problem: Option<(u64, u64, String)>,
}

impl TraceBuilder {
    pub fn new(trace: Trace) -> Self {
        Self {
            trace,
            maps: Vec::new(),
            track_ids: FxHashMap::default(),
            meta: Vec::new(),
            elements: 0,
            first_problem: None,
        }
    }

    /// Append the segment of worker `worker`, whose buffer starts at byte `base` of the
    /// JSON text.
    pub fn merge(&mut self, seg: &Segment, worker: usize, base: i64) {
        if self.maps.len() <= worker {
            self.maps.resize_with(worker + 1, WorkerMaps::default);
        }
        let t = &mut self.trace;
        let maps = &mut self.maps[worker];
        for text in seg.strings.iter().skip(maps.strings.len()) {
            maps.strings.push(t.strings.intern(text));
        }
        for (id, c) in seg.cats.iter().skip(maps.cats.len()) {
            maps.cats.push(
                if id == CategoryTable::METADATA || id == CategoryTable::NONE {
                    id
                } else {
                    t.categories.intern(&c.raw)
                },
            );
        }
        for (id, c) in seg.cats.iter() {
            if c.count > 0 {
                t.categories.add_count(maps.cats[id.0 as usize], c.count);
            }
        }
        let str_map = &maps.strings;
        let s = |id: StrId| str_map[id.0 as usize];
        let remap_raw = |r: RawId| match r {
            RawId::Str(x) => RawId::Str(s(x)),
            i => i,
        };
        for &(p, q) in seg.tracks.iter().skip(maps.tracks.len()) {
            let key = (remap_raw(p), remap_raw(q));
            let id = *self.track_ids.entry(key).or_insert_with(|| {
                let id = TrackId(t.tracks.list.len() as u32);
                t.tracks.list.push(Track {
                    pid: key.0,
                    tid: key.1,
                    kind: TrackKind::CpuThread,
                    thread_name: StrId(0),
                    process_name: StrId(0),
                    process_label: StrId(0),
                });
                id
            });
            maps.tracks.push(id);
        }
        let cat_map = &maps.cats;
        let track_map = &maps.tracks;

        let off = t.events.len() as u32;
        let ev = |e: EventId| EventId(e.0 + off);
        let src = &seg.events;
        let dst = &mut t.events;
        dst.reserve(src.len());
        dst.ts_ns.extend_from_slice(&src.ts_ns);
        dst.dur_ns.extend_from_slice(&src.dur_ns);
        dst.name.extend(src.name.iter().map(|&n| s(n)));
        dst.cat
            .extend(src.cat.iter().map(|c| cat_map[c.0 as usize]));
        dst.phase.extend_from_slice(&src.phase);
        dst.track
            .extend(src.track.iter().map(|k| track_map[k.index()]));
        dst.external_id.extend_from_slice(&src.external_id);
        dst.correlation.extend_from_slice(&src.correlation);

        let a = &seg.args;
        let d = &mut t.args;
        d.kernel.extend(a.kernel.iter().map(|k| KernelArgs {
            event: ev(k.event),
            ..k.clone()
        }));
        d.transfer.extend(a.transfer.iter().map(|k| TransferArgs {
            event: ev(k.event),
            ..k.clone()
        }));
        d.sync.extend(a.sync.iter().map(|k| SyncArgs {
            event: ev(k.event),
            ..k.clone()
        }));
        d.memory.extend(a.memory.iter().map(|k| MemoryArgs {
            event: ev(k.event),
            ..k.clone()
        }));
        d.python.extend(a.python.iter().map(|k| PythonArgs {
            event: ev(k.event),
            ..k.clone()
        }));
        d.op.extend(a.op.iter().map(|k| OpArgs {
            event: ev(k.event),
            input_dims: s(k.input_dims),
            input_types: s(k.input_types),
            input_strides: s(k.input_strides),
            concrete_inputs: s(k.concrete_inputs),
            call_stack: s(k.call_stack),
            module_hierarchy: s(k.module_hierarchy),
            ..k.clone()
        }));
        d.collective
            .extend(a.collective.iter().map(|k| CollectiveArgs {
                event: ev(k.event),
                collective_name: s(k.collective_name),
                dtype: s(k.dtype),
                pg_name: s(k.pg_name),
                pg_desc: s(k.pg_desc),
                pg_ranks: s(k.pg_ranks),
                ..k.clone()
            }));

        let f = &seg.flows;
        let g = &mut t.flows;
        g.cat.extend(f.cat.iter().map(|c| cat_map[c.0 as usize]));
        g.id.extend_from_slice(&f.id);
        g.end.extend_from_slice(&f.end);
        g.ts_ns.extend_from_slice(&f.ts_ns);
        g.track.extend(f.track.iter().map(|k| track_map[k.index()]));

        for m in &seg.meta {
            let key = seg.strings.get(m.key).to_owned();
            self.meta
                .push((remap_raw(m.pid), remap_raw(m.tid), key, s(m.value)));
        }
        for &(kind, count, offset, element) in &seg.defects {
            t.report.add(
                kind,
                count,
                (base + offset as i64) as u64,
                self.elements + element,
            );
        }
        if self.first_problem.is_none() {
            if let Some(p) = &seg.first_problem {
                self.first_problem = Some((
                    (base + p.offset as i64) as u64,
                    self.elements + p.element,
                    p.message.clone(),
                ));
            }
        }
        let fs = &seg.features;
        let ff = &mut t.meta.features;
        ff.fractional_ts |= fs.fractional_ts;
        ff.string_tids |= fs.string_tids;
        ff.profiler_event_index |= fs.profiler_event_index;
        ff.ev_idx |= fs.ev_idx;
        ff.record_function_id |= fs.record_function_id;
        ff.concrete_inputs |= fs.concrete_inputs;
        self.elements += seg.elements;
    }

    /// In strict mode, the first defect as an error.
    pub fn strict_error(&self, path: &std::path::Path) -> Option<TraceError> {
        self.first_problem
            .as_ref()
            .map(|(offset, index, msg)| TraceError::Malformed {
                path: path.to_owned(),
                offset: *offset,
                event_index: Some(*index),
                message: format!("{msg} (run without --strict to skip and count such defects)"),
            })
    }

    /// Apply the time base, row names and track kinds, decide the GPU vendor and device
    /// numbers, link launches to operators; return the finished trace.
    pub fn finish(mut self) -> Trace {
        let t = &mut self.trace;
        if let Some(base) = t.meta.base_time_ns {
            for ts in &mut t.events.ts_ns {
                *ts += base;
            }
            for ts in &mut t.flows.ts_ns {
                *ts += base;
            }
        }
        t.report.elements = self.elements;
        let file_name = t.path.file_name().unwrap_or_default().to_string_lossy();
        t.meta.decide_rank(&file_name);
        for (_, c) in t.categories.iter() {
            let f = &mut t.meta.features;
            match c.raw.as_str() {
                "Operator" => f.operator_category = true,
                "Runtime" | "Kernel" | "Memcpy" | "Memset" => f.capitalised_cuda_categories = true,
                _ => {}
            }
            if c.kind.is_flow() && c.count > 0 {
                f.flow_categories.push(c.raw.clone());
            }
        }
        // Row names from metadata.
        let mut proc_name: FxHashMap<RawId, StrId> = FxHashMap::default();
        let mut proc_label: FxHashMap<RawId, StrId> = FxHashMap::default();
        let mut thread_name: FxHashMap<(RawId, RawId), StrId> = FxHashMap::default();
        for (pid, tid, key, value) in &self.meta {
            match key.as_str() {
                "process_name" => {
                    proc_name.insert(*pid, *value);
                }
                "process_labels" => {
                    proc_label.insert(*pid, *value);
                }
                "thread_name" => {
                    thread_name.insert((*pid, *tid), *value);
                }
                _ => {}
            }
        }
        // Track kinds from what runs on them.
        let mut gpu_events = vec![0u64; t.tracks.len()];
        let mut other_events = vec![0u64; t.tracks.len()];
        for i in 0..t.events.len() {
            let k = t.categories.kind(t.events.cat[i]);
            let tr = t.events.track[i].index();
            if k.is_gpu() {
                gpu_events[tr] += 1;
            } else if !matches!(
                k,
                CategoryKind::TraceSpan | CategoryKind::Uncategorised | CategoryKind::Overhead
            ) {
                other_events[tr] += 1;
            }
        }
        let strings = &t.strings;
        for (i, track) in t.tracks.list.iter_mut().enumerate() {
            track.process_name = proc_name.get(&track.pid).copied().unwrap_or_default();
            track.process_label = proc_label.get(&track.pid).copied().unwrap_or_default();
            track.thread_name = thread_name
                .get(&(track.pid, track.tid))
                .copied()
                .unwrap_or_default();
            track.kind = if gpu_events[i] > 0 && gpu_events[i] >= other_events[i] {
                TrackKind::GpuStream {
                    device: id_number(strings, track.pid),
                    stream: id_number(strings, track.tid),
                }
            } else if other_events[i] > 0 {
                TrackKind::CpuThread
            } else {
                TrackKind::Other
            };
        }
        super::devices::decide_devices(t);
        let (links, repairs) = LaunchLinks::build(t);
        t.links = links;
        t.report.launch_links = repairs;
        self.trace
    }
}

/// The number in an id: the integer, or the last run of digits in a string id
/// (`"stream 7"` → 7); -1 when there is none.
fn id_number(strings: &StringTable, id: RawId) -> i64 {
    match id {
        RawId::Int(i) => i,
        RawId::Str(s) => {
            let text = strings.get(s);
            let digits: String = text
                .split(|c: char| !c.is_ascii_digit())
                .rfind(|p| !p.is_empty())
                .unwrap_or("")
                .to_owned();
            digits.parse().unwrap_or(-1)
        }
    }
}
