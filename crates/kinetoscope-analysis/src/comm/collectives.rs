//! Collective operations of one trace, and the per-(collective, process group) table of
//! `kinetoscope comm`.
//!
//! A collective shows up in a trace in up to three places:
//!
//! - the **call**: the host spans of the program calling it, nested on one thread
//!   (`c10d::alltoall_base_` > `record_param_comms` > `nccl:all_to_all`);
//! - its **GPU work**: a communication kernel, launched from inside the call (linked by
//!   CUPTI correlation through the launch, else by `External id`);
//! - for backends that run the work on a worker thread (Gloo, UCC, MPI), the
//!   **backend's span** of that work on the worker (`gloo:all_reduce`), which no id links
//!   to the call: the two are paired in order, per collective.
//!
//! One [`CollectiveInstance`] is listed per communication kernel, per backend worker
//! span and per call that launched no GPU work and has no worker span (a host
//! collective timed by its call). Its name comes from the collective arguments when
//! recorded (`Collective name`), else from the backend span (`nccl:all_to_all` →
//! `all_to_all`), else from the `c10d::` op, else from the kernel name (`SendRecv`).

use std::cell::OnceCell;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, CollectiveArgs, EventId, Phase, Trace, TrackKind};

use crate::ancestry::AncestorSearch;
use crate::overview::intervals::{merge, Span};

use super::names::{
    busbw_factor, dtype_size, fold_collective, host_collective, is_comm_kernel, parse_nccl_kernel,
    HostCollective,
};
use crate::name_memo::NameMemo;

/// One collective call as the trace shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveInstance {
    /// Collective name (see the module documentation for where it comes from).
    pub collective: String,
    /// `Process Group Name` (`""` when unknown).
    pub process_group: String,
    /// `Process Group Description` (`""` when unknown).
    pub process_group_desc: String,
    /// NCCL algorithm and protocol from the kernel name (`RING_LL`), if any.
    pub algorithm: Option<String>,
    /// `dtype` (`""` when unknown).
    pub dtype: String,
    /// `Group size`, when recorded.
    pub group_size: Option<i64>,
    /// max(`In msg nelems`, `Out msg nelems`) × element size, when known.
    pub bytes: Option<u64>,
    /// `Seq`: the call's sequence number in its process group, when recorded.
    pub seq: Option<i64>,
    /// `Comms Id`: the same value on every rank for one call, when recorded.
    pub comms_id: Option<u64>,
    /// When the program called it: the start of the call's outermost host span (of the
    /// launch call when no collective span encloses it), epoch ns; `None` when the
    /// trace links the work to no call.
    pub call_ns: Option<i64>,
    /// Start of the work, epoch ns: the kernel's, the backend worker span's, or the
    /// call's for a host collective with neither.
    pub start_ns: i64,
    /// End of the work, epoch ns.
    pub end_ns: i64,
    /// GPU stream of the kernel (-1 for host collectives).
    pub stream: i64,
    /// Whether a GPU kernel ran it.
    pub on_gpu: bool,
}

/// The outermost host span of a call and what its spans say.
struct Call<'t> {
    root: EventId,
    /// `Collective name` from the arguments of one of its spans.
    args: Option<&'t CollectiveArgs>,
    /// The backend span's collective (`all_to_all`), if one is inside.
    backend: Option<&'t str>,
    /// The `c10d::` op's collective (`alltoall_base`), if one is inside.
    c10d: Option<&'t str>,
    /// Whether the root itself is a backend span (a worker thread's span of the work).
    root_is_backend: bool,
    /// Whether a kernel launch is nested inside: the call ran on the GPU, even when its
    /// kernel is not in the trace.
    launched: bool,
}

impl<'t> Call<'t> {
    /// The collective's name: the arguments', else the backend span's, else the
    /// `c10d::` op's.
    fn name(&self, trace: &'t Trace) -> Option<&'t str> {
        self.args
            .map(|a| trace.strings.get(a.collective_name))
            .filter(|n| !n.is_empty())
            .or(self.backend)
            .or(self.c10d)
    }
}

/// No call yet, in [`Calls::build`]'s per-span calls.
const NO_CALL: usize = usize::MAX;

/// The calls of a trace: every host span named like a collective, grouped under the
/// outermost one of each nest.
struct Calls<'t> {
    calls: Vec<Call<'t>>,
    /// (`External id`, call) of the spans with an id, in file order.
    externals: Vec<(i64, usize)>,
    /// Call by `External id` of its spans (the last span's), built from `externals` on
    /// first use: only kernels without a launch need it.
    by_external: OnceCell<FxHashMap<i64, usize>>,
    /// Call (or `None`: a launch outside any call) and launch start by correlation, for
    /// the correlation ids asked for (those of the communication kernels).
    by_correlation: FxHashMap<i64, (Option<usize>, i64)>,
}

/// A runtime call that launches a kernel (`cudaLaunchKernel`, `cuLaunchKernelEx`,
/// `cudaLaunchCooperativeKernel`, `hipLaunchKernel`, ...), not a copy or an event.
fn is_kernel_launch(name: &str) -> bool {
    name.contains("Launch") && name.contains("Kernel")
}

fn is_host_span(trace: &Trace, i: usize) -> bool {
    trace.events.phase[i] == Phase::Complete
        && matches!(
            trace.categories.kind(trace.events.cat[i]),
            CategoryKind::CpuOp | CategoryKind::UserAnnotation
        )
}

impl<'t> Calls<'t> {
    /// The calls of `trace`; of the kernel launches, those in a call mark it launched,
    /// and those whose link in the correlation index is `wanted` are kept by
    /// correlation.
    fn build(trace: &'t Trace, wanted: &[bool]) -> Self {
        let e = &trace.events;
        let mut by_name = NameMemo::new(trace, host_collective);
        // The collective host spans in file order, with what their names say: a few
        // among all events, so kept apart (with one flag per event for the nesting
        // searches) rather than as an optional kind per event.
        let spans: Vec<(u32, HostCollective<'t>)> = (0..e.len())
            .filter_map(|i| {
                is_host_span(trace, i)
                    .then(|| by_name.get(e.name[i]))
                    .flatten()
                    .map(|kind| (i as u32, kind))
            })
            .collect();
        let mut out = Calls {
            calls: Vec::new(),
            externals: Vec::new(),
            by_external: OnceCell::new(),
            by_correlation: FxHashMap::default(),
        };
        if spans.is_empty() {
            return out;
        }
        let mut is_collective = vec![false; e.len()];
        for &(i, _) in &spans {
            is_collective[i as usize] = true;
        }
        // A collective span's position in `spans`.
        let pos_of = |a: usize| spans.binary_search_by_key(&(a as u32), |s| s.0).ok();
        // The outermost span of each chain of nested collective spans: for a span whose
        // parent is a collective, the nearest ancestor whose own parent is not one.
        let nesting = trace.nesting();
        let collective = |a: usize| is_collective.get(a).copied().unwrap_or(false);
        let parent = |a: usize| nesting.parent_of(EventId(a as u32)).map(|p| p.index());
        let mut chain_root = AncestorSearch::new(nesting, |a| {
            collective(a) && !parent(a).is_some_and(collective)
        });
        let mut root_of = |i: usize| {
            let r = match parent(i) {
                Some(p) if collective(p) => chain_root.nearest(i).unwrap_or(p),
                _ => i,
            };
            EventId(r as u32)
        };
        // The call of each span, by position; a call is made at the first span of its
        // chain met (the root is always a collective span).
        let mut call_of_span = vec![NO_CALL; spans.len()];
        for (k, &(i, kind)) in spans.iter().enumerate() {
            let i = i as usize;
            let root = root_of(i);
            let root_pos = pos_of(root.index()).unwrap_or(k);
            let c = match call_of_span[root_pos] {
                NO_CALL => {
                    out.calls.push(Call {
                        root,
                        args: None,
                        backend: None,
                        c10d: None,
                        root_is_backend: matches!(spans[root_pos].1, HostCollective::Backend(_)),
                        launched: false,
                    });
                    call_of_span[root_pos] = out.calls.len() - 1;
                    out.calls.len() - 1
                }
                c => c,
            };
            call_of_span[k] = c;
            let call = &mut out.calls[c];
            match kind {
                HostCollective::ParamComms => {}
                HostCollective::C10d(op) => call.c10d = call.c10d.or(Some(op)),
                HostCollective::Backend(op) => call.backend = call.backend.or(Some(op)),
            }
            if let Some(a) = trace.args.collective_of(EventId(i as u32)) {
                call.args = call.args.or(Some(a));
            }
            if e.external_id.at(i) != 0 {
                out.externals.push((e.external_id.at(i), c));
            }
        }
        // Kernel launches: the call they are nested in, by correlation. A launch lies in
        // a call only if it starts inside a collective span of its track: others (most)
        // need no search up the nesting.
        let within = Within::of(trace, spans.iter().map(|&(i, _)| i as usize));
        let index = trace.correlation_index();
        let mut in_call = AncestorSearch::new(nesting, collective);
        let mut launch_name = NameMemo::new(trace, is_kernel_launch);
        // The runtime calls (complete calls of a launch kind) the launch links hold.
        for (call, _) in trace.launch_links().iter() {
            let i = call.index();
            if e.correlation.at(i) == 0 || !launch_name.get(e.name[i]) {
                continue;
            }
            let call = within
                .any(e.track[i].0, e.ts_ns[i])
                .then(|| in_call.nearest(i))
                .flatten()
                .and_then(|p| pos_of(p).map(|k| call_of_span[k]));
            if let Some(c) = call {
                out.calls[c].launched = true;
            }
            // A launch call with an id always has a link; its link is a wanted kernel's
            // when it has that kernel's id.
            let link = index.link_of_event(EventId(i as u32));
            if link.is_some_and(|l| wanted[l]) {
                out.by_correlation
                    .insert(e.correlation.at(i), (call, e.ts_ns[i]));
            }
        }
        out
    }

    /// The call a kernel belongs to: through its launch (CUPTI correlation), else by
    /// `External id` when the trace's ids agree with time
    /// ([`kinetoscope_trace::LinkRepairs::ids_trusted`]); and the call time (the call's
    /// start, else the launch's).
    fn of_kernel(&self, trace: &Trace, k: usize) -> (Option<usize>, Option<i64>) {
        let e = &trace.events;
        let start = |c: usize| e.ts_ns[self.calls[c].root.index()];
        if let Some(&(call, launch_ns)) = self.by_correlation.get(&e.correlation.at(k)) {
            return (call, Some(call.map_or(launch_ns, start)));
        }
        if !trace.report.launch_links.ids_trusted() {
            return (None, None);
        }
        let by_external = self
            .by_external
            .get_or_init(|| self.externals.iter().copied().collect());
        match by_external.get(&e.external_id.at(k)) {
            Some(&c) if e.external_id.at(k) != 0 => (Some(c), Some(start(c))),
            _ => (None, None),
        }
    }
}

/// The time some spans cover on each track (by track index), merged per track
/// ([`merge`]). An empty span is left out: it cannot enclose a launch in the nesting.
struct Within(Vec<Vec<Span>>);

impl Within {
    /// What `spans` (event indices) cover.
    fn of(trace: &Trace, spans: impl Iterator<Item = usize>) -> Self {
        let e = &trace.events;
        let mut by_track: Vec<Vec<Span>> = vec![Vec::new(); trace.tracks.len()];
        for i in spans {
            let range = (e.ts_ns[i], e.end_ns(EventId(i as u32)));
            if let Some(v) = by_track.get_mut(e.track[i].index()) {
                v.push(range);
            }
        }
        Self(by_track.into_iter().map(merge).collect())
    }

    /// Whether time `t` on track `track` lies in one of the spans, ends included.
    fn any(&self, track: u32, t: i64) -> bool {
        self.0.get(track as usize).is_some_and(|ranges| {
            let k = ranges.partition_point(|&(s, _)| s <= t);
            k > 0 && t <= ranges[k - 1].1
        })
    }
}

/// Every collective of a trace, in start order.
pub fn collective_instances(trace: &Trace) -> Vec<CollectiveInstance> {
    let e = &trace.events;
    // The communication kernels first: the launches of theirs are the ones looked up.
    let mut comm_kernel = NameMemo::new(trace, is_comm_kernel);
    let kernels: Vec<usize> = (0..e.len())
        .filter(|&i| {
            e.phase[i] == Phase::Complete
                && trace.categories.kind(e.cat[i]) == CategoryKind::Kernel
                && comm_kernel.get(e.name[i])
        })
        .collect();
    let index = trace.correlation_index();
    let mut wanted = vec![false; index.links()];
    for &i in &kernels {
        if let Some(l) = index.link_of_event(EventId(i as u32)) {
            wanted[l] = true;
        }
    }
    let calls = Calls::build(trace, &wanted);
    let mut kernel_of_call = vec![false; calls.calls.len()];
    let mut out = Vec::new();
    for i in kernels {
        let name = trace.strings.get(e.name[i]);
        let id = EventId(i as u32);
        let (call, call_ns) = calls.of_kernel(trace, i);
        let call = call.map(|c| {
            kernel_of_call[c] = true;
            &calls.calls[c]
        });
        let (kernel_op, algorithm) = parse_nccl_kernel(name);
        let kernel_args = trace.args.collective_of(id);
        let mut c = instance(trace, kernel_args.or(call.and_then(|c| c.args)));
        c.collective = kernel_args
            .map(|a| trace.strings.get(a.collective_name))
            .filter(|n| !n.is_empty())
            .or(call.and_then(|c| c.name(trace)))
            .unwrap_or(&kernel_op)
            .to_owned();
        c.algorithm = algorithm;
        c.call_ns = call_ns;
        c.start_ns = e.ts_ns[i];
        c.end_ns = e.end_ns(id);
        c.stream = match trace.tracks.get(e.track[i]).kind {
            TrackKind::GpuStream { stream, .. } => stream,
            _ => trace.args.kernel_of(id).map_or(-1, |k| k.launch.stream),
        };
        c.on_gpu = true;
        out.push(c);
    }
    // Host collectives: calls that launched no GPU work, and backend worker spans, paired
    // in order per collective.
    let mut program: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    let mut workers: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    for (k, call) in calls.calls.iter().enumerate() {
        if call.launched || kernel_of_call[k] {
            continue;
        }
        let Some(name) = call.name(trace) else {
            continue;
        };
        let key = fold_collective(name);
        if key == "wait" {
            continue;
        }
        let side = if call.root_is_backend {
            &mut workers
        } else {
            &mut program
        };
        side.entry(key).or_default().push(k);
    }
    let root_span = |k: usize| {
        let r = calls.calls[k].root;
        (e.ts_ns[r.index()], e.end_ns(r))
    };
    let by_start = |v: &mut Vec<usize>| v.sort_by_key(|&k| root_span(k));
    for (key, mut progs) in program {
        let mut work = workers.remove(&key).unwrap_or_default();
        by_start(&mut progs);
        by_start(&mut work);
        for n in 0..progs.len().max(work.len()) {
            let (p, w) = (progs.get(n).copied(), work.get(n).copied());
            out.push(host_instance(trace, &calls, p, w));
        }
    }
    for work in workers.into_values() {
        for w in work {
            out.push(host_instance(trace, &calls, None, Some(w)));
        }
    }
    out.sort_by_key(|c| (c.start_ns, c.end_ns));
    out
}

/// A host collective from its program call `p` and its worker span `w` (at least one).
fn host_instance(
    trace: &Trace,
    calls: &Calls<'_>,
    p: Option<usize>,
    w: Option<usize>,
) -> CollectiveInstance {
    let e = &trace.events;
    let (p, w) = (p.map(|k| &calls.calls[k]), w.map(|k| &calls.calls[k]));
    let work = w.or(p).expect("a call or a worker span");
    let args = p.and_then(|c| c.args).or(w.and_then(|c| c.args));
    let mut c = instance(trace, args);
    c.collective = p
        .and_then(|c| c.args)
        .map(|a| trace.strings.get(a.collective_name))
        .filter(|n| !n.is_empty())
        .or(w.and_then(|c| c.name(trace)))
        .or(p.and_then(|c| c.name(trace)))
        .unwrap_or_default()
        .to_owned();
    c.call_ns = p.map(|c| e.ts_ns[c.root.index()]);
    c.start_ns = e.ts_ns[work.root.index()];
    c.end_ns = e.end_ns(work.root);
    c
}

/// An instance with what the collective arguments say (name, group, sizes, sequence);
/// times are filled by the caller.
fn instance(trace: &Trace, args: Option<&CollectiveArgs>) -> CollectiveInstance {
    let s = |id| trace.strings.get(id).to_owned();
    let mut c = CollectiveInstance {
        collective: String::new(),
        process_group: String::new(),
        process_group_desc: String::new(),
        algorithm: None,
        dtype: String::new(),
        group_size: None,
        bytes: None,
        seq: None,
        comms_id: None,
        call_ns: None,
        start_ns: 0,
        end_ns: 0,
        stream: -1,
        on_gpu: false,
    };
    if let Some(a) = args {
        c.process_group = s(a.pg_name);
        c.process_group_desc = s(a.pg_desc);
        c.dtype = s(a.dtype);
        c.group_size = (a.group_size >= 0).then_some(a.group_size);
        c.seq = (a.seq >= 0).then_some(a.seq);
        c.comms_id = a.comms_id;
        let nelems = a.in_msg_nelems.max(a.out_msg_nelems);
        if nelems >= 0 {
            c.bytes = dtype_size(&c.dtype).map(|b| b * nelems as u64);
        }
    }
    c
}

/// One row of the collectives table: calls of one collective in one process group with
/// one algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveRow {
    /// Collective name.
    pub collective: String,
    /// Process group name (`""` when the trace does not say).
    pub process_group: String,
    /// Process group description (`default_pg`, ...).
    pub process_group_desc: String,
    /// NCCL algorithm_protocol from the kernel name, if any.
    pub algorithm: Option<String>,
    /// Element type.
    pub dtype: String,
    /// Ranks in the group, when recorded.
    pub group_size: Option<i64>,
    /// Calls.
    pub count: u64,
    /// Whether the calls ran as GPU kernels (false: host collectives, timed by the
    /// backend's worker span, else by the call).
    pub on_gpu: bool,
    /// Total bytes (max of in/out message × element size), when every call's size is
    /// known.
    pub bytes: Option<u64>,
    /// Sum of the calls' durations (kernel time), ns.
    pub latency_ns: i64,
    /// Mean duration, ns.
    pub mean_latency_ns: f64,
    /// Algorithm bandwidth = bytes / latency, GB/s (10⁹ bytes per second).
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth = algbw × the nccl-tests factor of the collective (see
    /// [`busbw_factor`]), GB/s.
    pub busbw_gbps: Option<f64>,
}

/// Group instances into table rows, by total latency, largest first.
pub fn collective_rows(instances: &[CollectiveInstance]) -> Vec<CollectiveRow> {
    let mut rows: Vec<CollectiveRow> = Vec::new();
    let mut index: FxHashMap<(String, String, Option<String>, bool), usize> = Default::default();
    let mut all_sized: Vec<bool> = Vec::new();
    for c in instances {
        let key = (
            c.collective.clone(),
            c.process_group.clone(),
            c.algorithm.clone(),
            c.on_gpu,
        );
        let k = *index.entry(key).or_insert_with(|| {
            rows.push(CollectiveRow {
                collective: c.collective.clone(),
                process_group: c.process_group.clone(),
                process_group_desc: c.process_group_desc.clone(),
                algorithm: c.algorithm.clone(),
                dtype: c.dtype.clone(),
                group_size: c.group_size,
                count: 0,
                on_gpu: c.on_gpu,
                bytes: Some(0),
                latency_ns: 0,
                mean_latency_ns: 0.0,
                algbw_gbps: None,
                busbw_gbps: None,
            });
            all_sized.push(true);
            rows.len() - 1
        });
        let r = &mut rows[k];
        r.count += 1;
        r.latency_ns += c.end_ns - c.start_ns;
        match c.bytes {
            Some(b) if all_sized[k] => r.bytes = r.bytes.map(|x| x + b),
            _ => {
                all_sized[k] = false;
                r.bytes = None;
            }
        }
        r.group_size = r.group_size.or(c.group_size);
    }
    for r in &mut rows {
        r.mean_latency_ns = r.latency_ns as f64 / r.count.max(1) as f64;
        if let Some(b) = r.bytes.filter(|&b| b > 0) {
            if r.latency_ns > 0 {
                let algbw = b as f64 / r.latency_ns as f64;
                r.algbw_gbps = Some(algbw);
                r.busbw_gbps = r
                    .group_size
                    .and_then(|n| busbw_factor(&r.collective, n))
                    .map(|f| f * algbw);
            }
        } else if r.bytes == Some(0) {
            r.bytes = None;
        }
    }
    rows.sort_by(|a, b| {
        b.latency_ns
            .cmp(&a.latency_ns)
            .then_with(|| a.collective.cmp(&b.collective))
    });
    rows
}
