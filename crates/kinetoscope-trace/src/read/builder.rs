//! Merging segments, in file order, into one [`Trace`], and finishing it: time base,
//! row names, track kinds.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

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
    /// Track ids hashed by their `(pid, tid)` in the trace's track list.
    track_index: HashTable<u32>,
    /// Metadata records: pid, tid, key and value (trace string ids).
    pub meta: Vec<(RawId, RawId, StrId, StrId)>,
    /// Elements merged so far (the next element's index).
    pub elements: u64,
    /// The first problem in file order, for strict mode.
    pub first_problem: Option<(u64, u64, String)>,
}

fn hash_track(key: &(RawId, RawId)) -> u64 {
    FxBuildHasher.hash_one(key)
}

impl TraceBuilder {
    pub fn new(trace: Trace) -> Self {
        Self {
            trace,
            maps: Vec::new(),
            track_index: HashTable::new(),
            meta: Vec::new(),
            elements: 0,
            first_problem: None,
        }
    }

    /// Forget worker `worker`'s local → trace id maps of names and tracks (the worker
    /// forgot its own names and tracks).
    pub fn forget_worker(&mut self, worker: usize) {
        if let Some(m) = self.maps.get_mut(worker) {
            m.strings.clear();
            m.tracks.clear();
        }
    }

    /// Append the segment of worker `worker`, whose buffer starts at byte `base` of the
    /// JSON text. Every column grows fallibly, charged to the trace's memory budget.
    pub fn merge(&mut self, seg: &Segment, worker: usize, base: i64) -> Result<(), MemoryError> {
        if let Some(e) = seg.strings.failed {
            return Err(e);
        }
        if self.maps.len() <= worker {
            self.maps.resize_with(worker + 1, WorkerMaps::default);
        }
        self.merge_names(seg, worker)?;
        self.reserve_for(seg)?;
        self.merge_columns(seg, worker);
        self.merge_meta_and_defects(seg, worker, base);
        Ok(())
    }

    /// Map the segment's new names, categories and tracks to the trace's.
    fn merge_names(&mut self, seg: &Segment, worker: usize) -> Result<(), MemoryError> {
        let t = &mut self.trace;
        let maps = &mut self.maps[worker];
        let new_names = seg.strings.len().saturating_sub(maps.strings.len());
        grow(&mut maps.strings, new_names, &mut t.charge)?;
        for text in seg.strings.iter_from(maps.strings.len()) {
            maps.strings
                .push(t.strings.try_intern(text, &mut t.charge)?);
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
        let remap_raw = |r: RawId| match r {
            RawId::Str(x) => RawId::Str(str_map[x.0 as usize]),
            i => i,
        };
        let new_tracks = seg.tracks.len().saturating_sub(maps.tracks.len());
        grow(&mut maps.tracks, new_tracks, &mut t.charge)?;
        grow(&mut t.tracks.list, new_tracks, &mut t.charge)?;
        for &(p, q) in seg.tracks.iter().skip(maps.tracks.len()) {
            let key = (remap_raw(p), remap_raw(q));
            let hash = hash_track(&key);
            let list = &mut t.tracks.list;
            let found = self
                .track_index
                .find(hash, |&i| {
                    (list[i as usize].pid, list[i as usize].tid) == key
                })
                .copied();
            let id = match found {
                Some(id) => id,
                None => {
                    let id = list.len() as u32;
                    if self.track_index.len() == self.track_index.capacity() {
                        let add = self.track_index.len().max(16);
                        t.charge.take((add * 2 * 5) as u64)?;
                        self.track_index
                            .try_reserve(add, |&i| {
                                hash_track(&(list[i as usize].pid, list[i as usize].tid))
                            })
                            .map_err(|_| MemoryError::refused((add * 10) as u64))?;
                    }
                    list.push(Track {
                        pid: key.0,
                        tid: key.1,
                        kind: TrackKind::CpuThread,
                        thread_name: StrId(0),
                        process_name: StrId(0),
                        process_label: StrId(0),
                    });
                    self.track_index.insert_unique(hash, id, |&i| {
                        hash_track(&(list[i as usize].pid, list[i as usize].tid))
                    });
                    id
                }
            };
            maps.tracks.push(TrackId(id));
        }
        Ok(())
    }

    /// Make room in every column of the trace for the segment's rows.
    fn reserve_for(&mut self, seg: &Segment) -> Result<(), MemoryError> {
        let t = &mut self.trace;
        let c = &mut t.charge;
        let n = seg.events.len();
        if t.events.len() + n > u32::MAX as usize {
            return Err(MemoryError::refused(u64::MAX));
        }
        let e = &mut t.events;
        grow(&mut e.ts_ns, n, c)?;
        e.dur_ns.grow_for(&seg.events.dur_ns, c)?;
        grow(&mut e.name, n, c)?;
        grow(&mut e.cat, n, c)?;
        grow(&mut e.phase, n, c)?;
        grow(&mut e.track, n, c)?;
        e.external_id.grow_for(&seg.events.external_id, c)?;
        e.correlation.grow_for(&seg.events.correlation, c)?;
        let (a, d) = (&seg.args, &mut t.args);
        d.kernel.reserve_for(&a.kernel, c)?;
        grow(&mut d.transfer, a.transfer.len(), c)?;
        grow(&mut d.sync, a.sync.len(), c)?;
        grow(&mut d.memory, a.memory.len(), c)?;
        grow(&mut d.python, a.python.len(), c)?;
        grow(&mut d.op, a.op.len(), c)?;
        d.op_sequence_number.grow_for(&a.op_sequence_number, c)?;
        d.op_fwd_thread_id.grow_for(&a.op_fwd_thread_id, c)?;
        grow(&mut d.collective, a.collective.len(), c)?;
        let (f, g) = (&seg.flows, &mut t.flows);
        let m = f.id.len();
        grow(&mut g.cat, m, c)?;
        g.id.grow_for(&f.id, c)?;
        grow(&mut g.end, m, c)?;
        grow(&mut g.ts_ns, m, c)?;
        grow(&mut g.track, m, c)?;
        grow(&mut self.meta, seg.meta.len(), c)
    }

    /// Append the segment's rows (room was made by [`Self::reserve_for`]).
    fn merge_columns(&mut self, seg: &Segment, worker: usize) {
        let t = &mut self.trace;
        let maps = &self.maps[worker];
        let str_map = &maps.strings;
        let s = |id: StrId| str_map[id.0 as usize];
        let cat_map = &maps.cats;
        let track_map = &maps.tracks;

        let off = t.events.len() as u32;
        let ev = |e: EventId| EventId(e.0 + off);
        let src = &seg.events;
        let dst = &mut t.events;
        dst.ts_ns.extend_from_slice(&src.ts_ns);
        dst.dur_ns.extend_from(&src.dur_ns);
        dst.name.extend(src.name.iter().map(|&n| s(n)));
        dst.cat
            .extend(src.cat.iter().map(|c| cat_map[c.0 as usize]));
        dst.phase.extend_from_slice(&src.phase);
        dst.track
            .extend(src.track.iter().map(|k| track_map[k.index()]));
        dst.external_id.extend_from(&src.external_id);
        dst.correlation.extend_from(&src.correlation);
        let a = &seg.args;
        let d = &mut t.args;
        d.kernel.extend_shifted(&a.kernel, off);
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
        }));
        d.op_sequence_number.extend_from(&a.op_sequence_number);
        d.op_fwd_thread_id.extend_from(&a.op_fwd_thread_id);
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
        g.id.extend_from(&f.id);
        g.end.extend_from_slice(&f.end);
        g.ts_ns.extend_from_slice(&f.ts_ns);
        g.track.extend(f.track.iter().map(|k| track_map[k.index()]));
    }

    /// Append the segment's metadata records and defects, and count its elements.
    fn merge_meta_and_defects(&mut self, seg: &Segment, worker: usize, base: i64) {
        let t = &mut self.trace;
        let str_map = &self.maps[worker].strings;
        let s = |id: StrId| str_map[id.0 as usize];
        let remap_raw = |r: RawId| match r {
            RawId::Str(x) => RawId::Str(s(x)),
            i => i,
        };
        for m in &seg.meta {
            self.meta
                .push((remap_raw(m.pid), remap_raw(m.tid), s(m.key), s(m.value)));
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
    /// numbers, link launches to operators (on two threads when `parallel`); return the
    /// finished trace. The links and the passes over the tracks are charged to the
    /// budget first.
    pub fn finish(mut self, parallel: bool) -> Result<Trace, MemoryError> {
        let t = &mut self.trace;
        let links = (t.events.len() as u64) * 16 + (t.tracks.len() as u64) * 8;
        t.charge.take(links)?;
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
            match t.strings.get(*key) {
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
        let mut gpu_events = vec![0u32; t.tracks.len()];
        let mut other_events = vec![0u32; t.tracks.len()];
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
        let (links, repairs, without_launch) = LaunchLinks::build(t, parallel);
        t.links = links;
        t.report.launch_links = repairs;
        t.report.gpu_without_launch = without_launch;
        Ok(self.trace)
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
