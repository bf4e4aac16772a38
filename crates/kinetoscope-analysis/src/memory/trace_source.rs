//! Memory records from a Kineto trace: its `[memory]` instants (`profile_memory=True`),
//! each attributed to the innermost operator enclosing it on the same thread.
//!
//! Operators here are host spans of `cpu_op` (1.8/1.9 `Operator`) and `user_annotation`
//! (`record_function`) category, except the `ProfilerStep#N` spans, which are steps.
//! A record at time `t` belongs to a span when `start <= t < end` (half-open, so a record
//! at the boundary of two consecutive operators goes to the second).
//!
//! One sweep per thread over spans sorted by (start, longest first) and records sorted
//! by time keeps a stack of open spans: it gives each record its innermost span and each
//! span its parent, in O(n log n) for the sort.
//!
//! As in the PyTorch autograd profiler and the TensorBoard plugin, an operator whose only
//! child operator has the same name is merged with that child (one call, not two).
//!
//! Threads are matched by `(pid, tid)` with numeric strings read as numbers: 1.8/1.9
//! traces write operator tids as strings (`"25738"`) and memory tids as integers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

use kinetoscope_trace::{
    sort_by_start, CategoryKind, Groups, MemoryArgs, Phase, RawId, StrId, Trace,
};

use super::{Device, MemoryInput, MemoryRecord, MemorySource, OpForest, OpNode};

/// A pid or tid with numeric strings read as numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum IdKey {
    Int(i64),
    Str(StrId),
}

fn id_key(trace: &Trace, id: RawId) -> IdKey {
    match id {
        RawId::Int(i) => IdKey::Int(i),
        RawId::Str(s) => match trace.strings.get(s).trim().parse::<i64>() {
            Ok(i) => IdKey::Int(i),
            Err(_) => IdKey::Str(s),
        },
    }
}

/// The device of a memory record (the CPU's id is always -1).
fn device_of(m: &MemoryArgs) -> Device {
    Device {
        device_type: m.device_type,
        device_id: if m.device_type == 0 { -1 } else { m.device_id },
    }
}

/// No operator or module, in the per-record columns.
const NONE: u32 = u32::MAX;

/// Build the [`MemoryInput`] of a trace.
pub fn from_trace(trace: &Trace) -> MemoryInput {
    from_trace_with(trace, Modules::Find)
}

/// Whether [`from_trace_with`] finds the `nn.Module` around each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Modules {
    /// Each record's innermost module, and the modules' paths.
    Find,
    /// No module for any record (the advisor's rules read none).
    Skip,
}

/// The [`MemoryInput`] of a trace, with or without the modules around its records.
pub(crate) fn from_trace_with(trace: &Trace, find_modules: Modules) -> MemoryInput {
    let e = &trace.events;

    // Thread of every track, by normalised (pid, tid).
    let mut thread_of_track: Vec<u32> = Vec::with_capacity(trace.tracks.len());
    let mut threads: HashMap<(IdKey, IdKey), u32> = HashMap::new();
    for (_, t) in trace.tracks.iter() {
        let key = (id_key(trace, t.pid), id_key(trace, t.tid));
        let n = threads.len() as u32;
        thread_of_track.push(*threads.entry(key).or_insert(n));
    }

    // Memory records (and out-of-memory events), as (time, index into the memory
    // arguments): in time order, ties in file order, this is the order of the records.
    let memory_name = trace.strings.find("[memory]");
    let mut out_of_memory: BTreeMap<Device, u64> = BTreeMap::new();
    let mut order: Vec<(i64, u32)> = Vec::new();
    for (k, m) in trace.args.memory.iter().enumerate() {
        let i = m.event.index();
        if Some(e.name[i]) == memory_name {
            order.push((e.ts_ns[i], k as u32));
        } else {
            *out_of_memory.entry(device_of(m)).or_default() += 1;
        }
    }
    order.sort_unstable();

    // Per thread, the positions of its records in `order` (so in time order).
    let thread_of = |k: u32| {
        let event = trace.args.memory[k as usize].event;
        thread_of_track[e.track[event.index()].index()]
    };
    let points = Groups::build(threads.len(), |put| {
        for (pos, &(_, k)) in order.iter().enumerate() {
            let thread = thread_of(k);
            put(thread as usize, (thread, pos as u32));
        }
    })
    .into_items();
    let point = |p: &(u32, u32)| (p.0, order[p.1 as usize].0);

    // Operator spans, grouped by thread in file order, then each thread's sorted.
    let (spans, names) = if order.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        operator_spans(trace, &thread_of_track, threads.len())
    };

    // The sweep: parent of each span, innermost span of each record.
    let (parent, owner) = nest((&spans, |s| (s.0, s.1, s.2)), (&points, point));
    let modules = match find_modules {
        Modules::Find => module_paths(trace, &thread_of_track, &points, point),
        Modules::Skip => ModulePaths::default(),
    };

    let (nodes, calls, rep) = merge_same_name(&spans, &parent, names.len());

    // Operator and module of each record, by position in `order`.
    let mut op_at = vec![NONE; order.len()];
    // Empty when no module was looked for.
    let mut module_at = vec![NONE; order.len().min(modules.of_point.len())];
    for (j, p) in points.iter().enumerate() {
        if let Some(o) = owner[j] {
            op_at[p.1 as usize] = rep[o as usize];
        }
        if let Some(&Some(m)) = modules.of_point.get(j) {
            module_at[p.1 as usize] = m;
        }
    }
    drop((points, owner));
    let some = |v: u32| (v != NONE).then_some(v);
    let records: Vec<MemoryRecord> = order
        .iter()
        .enumerate()
        .map(|(pos, &(ts_ns, k))| {
            let m = &trace.args.memory[k as usize];
            MemoryRecord {
                ts_ns,
                device: device_of(m),
                addr: (m.addr != 0).then_some(m.addr),
                bytes: m.bytes,
                total_allocated: (m.total_allocated >= 0).then_some(m.total_allocated),
                total_reserved: (m.total_reserved >= 0).then_some(m.total_reserved),
                op: some(op_at[pos]),
                module: module_at.get(pos).and_then(|&m| some(m)),
            }
        })
        .collect();

    let first_record = records.first().map_or(i64::MAX, |r| r.ts_ns);
    let origin_ns = trace
        .span_ns()
        .map_or(first_record, |(lo, _)| lo.min(first_record));
    let origin_ns = if origin_ns == i64::MAX { 0 } else { origin_ns };

    let capacity = trace
        .meta
        .devices
        .iter()
        .filter(|d| d.total_memory_bytes > 0)
        .map(|d| (Device::cuda(d.id), d.total_memory_bytes))
        .collect();

    MemoryInput {
        source: MemorySource::KinetoTrace,
        records,
        ops: OpForest {
            names,
            nodes,
            calls,
        },
        origin_ns,
        capacity,
        out_of_memory,
        modules: modules.paths,
    }
}

/// An operator span: (thread, start, end, event, local name).
type OpSpan = (u32, i64, i64, u32, u32);

/// The operator calls of `spans` (with each span's `parent`), an operator whose only
/// child has the same name merged with that child: the nodes, the calls per local name
/// and each span's representative node. A child's representative is its parent's (a
/// parent always comes before its children).
fn merge_same_name(
    spans: &[OpSpan],
    parent: &[u32],
    names: usize,
) -> (Vec<OpNode>, Vec<u64>, Vec<u32>) {
    let mut children = vec![0u32; spans.len()];
    for &p in parent {
        if p != NONE {
            children[p as usize] += 1;
        }
    }
    let mut rep: Vec<u32> = Vec::with_capacity(spans.len());
    let mut calls = vec![0u64; names];
    let nodes = spans
        .iter()
        .zip(parent)
        .enumerate()
        .map(|(k, (s, &p))| {
            let up = (p != NONE).then(|| rep[p as usize]);
            let merged = p != NONE && children[p as usize] == 1 && spans[p as usize].4 == s.4;
            rep.push(if merged { rep[p as usize] } else { k as u32 });
            calls[s.4 as usize] += u64::from(!merged);
            OpNode {
                name: s.4,
                parent: up,
            }
        })
        .collect();
    (nodes, calls, rep)
}

/// The operator spans of every thread, sorted by (thread, start, end descending, event),
/// with the local names' text. `ProfilerStep#` spans are left out (they are steps).
/// Grouped by thread in file order first (a counting sort: file order interleaves the
/// threads), then each thread's sorted on its own.
fn operator_spans(
    trace: &Trace,
    thread_of_track: &[u32],
    threads: usize,
) -> (Vec<OpSpan>, Vec<String>) {
    let e = &trace.events;
    const NO_NAME: u32 = u32::MAX;
    // Per name: its local number, or NO_NAME (not seen yet, or a step).
    let mut local_name: Vec<u32> = vec![NO_NAME; trace.strings.len()];
    let mut seen: Vec<bool> = vec![false; trace.strings.len()];
    let mut names: Vec<String> = Vec::new();
    // (event, local name) of every span, in file order.
    let mut picked: Vec<(u32, u32)> = Vec::new();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = trace.categories.kind(e.cat[i]);
        if !matches!(kind, CategoryKind::CpuOp | CategoryKind::UserAnnotation) {
            continue;
        }
        let name = e.name[i].0 as usize;
        if !seen.get(name).copied().unwrap_or(true) {
            seen[name] = true;
            let text = trace.strings.get(e.name[i]);
            if !text.starts_with("ProfilerStep#") {
                names.push(text.to_owned());
                local_name[name] = (names.len() - 1) as u32;
            }
        }
        let n = local_name.get(name).copied().unwrap_or(NO_NAME);
        if n != NO_NAME && e.track[i].index() < thread_of_track.len() {
            picked.push((i as u32, n));
        }
    }
    let mut spans = Groups::build(threads, |put| {
        for &(i, n) in &picked {
            let i = i as usize;
            let thread = thread_of_track[e.track[i].index()];
            let start = e.ts_ns[i];
            let end = start + e.dur_ns.at(i).max(0);
            put(thread as usize, (thread, start, end, i as u32, n));
        }
    });
    drop(picked);
    for t in 0..threads {
        // Each thread's spans come in start order, ties aside (the keys are distinct).
        sort_by_start(
            spans.group_mut(t),
            |s| s.1,
            |a, b| (Reverse(a.2), a.3).cmp(&(Reverse(b.2), b.3)),
        );
    }
    let spans = spans.into_items();
    (spans, names)
}

/// Nest spans and place points, per thread: `spans` sorted by their (thread, start,
/// longest first) as `span` gives (thread, start, end), `points` sorted by their
/// (thread, time) as `point` gives it. Returns each span's parent (`u32::MAX` for none)
/// and each point's innermost span.
fn nest<S, P>(
    (spans, span): (&[S], impl Fn(&S) -> (u32, i64, i64)),
    (points, point): (&[P], impl Fn(&P) -> (u32, i64)),
) -> (Vec<u32>, Vec<Option<u32>>) {
    let mut parent = vec![u32::MAX; spans.len()];
    let mut owner = vec![None; points.len()];
    let mut stack: Vec<u32> = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < spans.len() || j < points.len() {
        let thread = match (spans.get(i).map(&span), points.get(j).map(&point)) {
            (Some(s), Some(r)) => s.0.min(r.0),
            (Some(s), None) => s.0,
            (None, Some(r)) => r.0,
            (None, None) => break,
        };
        stack.clear();
        loop {
            let s = spans.get(i).map(&span).filter(|s| s.0 == thread);
            let r = points.get(j).map(&point).filter(|r| r.0 == thread);
            let (take_span, t) = match (s, r) {
                (Some(s), Some(r)) if s.1 <= r.1 => (true, s.1),
                (Some(s), None) => (true, s.1),
                (_, Some(r)) => (false, r.1),
                (None, None) => break,
            };
            while stack
                .last()
                .is_some_and(|&k| span(&spans[k as usize]).2 <= t)
            {
                stack.pop();
            }
            if take_span {
                if let Some(&top) = stack.last() {
                    parent[i] = top;
                }
                stack.push(i as u32);
                i += 1;
            } else {
                owner[j] = stack.last().copied();
                j += 1;
            }
        }
    }
    (parent, owner)
}

/// The `nn.Module` paths of a trace and the innermost one around each point (none
/// when `of_point` is empty).
#[derive(Default)]
struct ModulePaths {
    /// Path texts (`GPT/Block_0/MLP_0`), by id.
    paths: Vec<String>,
    /// Per point, its path id.
    of_point: Vec<Option<u32>>,
}

/// The `nn.Module: X` frames (`python_function`, recorded with `with_stack` or
/// `with_modules`) around each point (sorted by (thread, time) as for [`nest`]), as
/// module paths from the outermost module in.
fn module_paths<P>(
    trace: &Trace,
    thread_of_track: &[u32],
    points: &[P],
    point: impl Fn(&P) -> (u32, i64),
) -> ModulePaths {
    let e = &trace.events;
    let mut frames: Vec<(u32, i64, i64, u32)> = Vec::new();
    let mut is_module: HashMap<StrId, bool> = HashMap::new();
    if !points.is_empty() {
        for i in 0..e.len() {
            if e.phase[i] != Phase::Complete
                || trace.categories.kind(e.cat[i]) != CategoryKind::PythonFunction
            {
                continue;
            }
            let module = *is_module
                .entry(e.name[i])
                .or_insert_with(|| trace.strings.get(e.name[i]).starts_with(MODULE_PREFIX));
            if module {
                let start = e.ts_ns[i];
                let end = start + e.dur_ns.at(i).max(0);
                frames.push((thread_of_track[e.track[i].index()], start, end, i as u32));
            }
        }
    }
    frames.sort_by_key(|&(t, s, end, i)| (t, s, std::cmp::Reverse(end), i));
    let (parent, owner) = nest((&frames, |f| (f.0, f.1, f.2)), (points, point));
    // Path of each frame, parents first (a parent always sorts before its children).
    let mut ids: HashMap<(u32, StrId), u32> = HashMap::new();
    let mut paths: Vec<String> = Vec::new();
    let mut path_of = vec![u32::MAX; frames.len()];
    for (k, f) in frames.iter().enumerate() {
        let up = match parent[k] {
            u32::MAX => u32::MAX,
            p => path_of[p as usize],
        };
        let name = e.name[f.3 as usize];
        let next = paths.len() as u32;
        let id = *ids.entry((up, name)).or_insert(next);
        if id == next {
            let short = trace.strings.get(name).trim_start_matches(MODULE_PREFIX);
            paths.push(match up {
                u32::MAX => short.to_owned(),
                _ => format!("{}/{short}", paths[up as usize]),
            });
        }
        path_of[k] = id;
    }
    ModulePaths {
        paths,
        of_point: owner
            .iter()
            .map(|o| o.map(|k| path_of[k as usize]))
            .collect(),
    }
}

/// How a module frame's name starts.
const MODULE_PREFIX: &str = "nn.Module: ";
