//! Collective operations of one trace: every communication kernel (with the collective
//! arguments Kineto copied onto it, or those of the `record_param_comms` op that launched
//! it, matched by `External id`), plus `record_param_comms` ops that launched no kernel
//! (CPU collectives such as Gloo's), and the per-(collective, process group) table of
//! `kinetoscope comm`.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, CollectiveArgs, EventId, Phase, Trace, TrackKind};

use super::names::{busbw_factor, dtype_size, fold_collective, is_comm_kernel, parse_nccl_kernel};

/// One collective call as the trace shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveInstance {
    /// Collective name: the `Collective name` arg (`allreduce`), else the kernel's
    /// (`AllReduce`, `SendRecv`).
    pub collective: String,
    /// `Process Group Name` (`""` when unknown).
    pub process_group: String,
    /// `Process Group Description` (`""` when unknown).
    pub process_group_desc: String,
    /// NCCL algorithm and protocol from the kernel name (`RING_LL`), if any.
    pub algorithm: Option<String>,
    /// `dtype` (`""` when unknown).
    pub dtype: String,
    /// `Group size`, or -1.
    pub group_size: i64,
    /// max(`In msg nelems`, `Out msg nelems`) × element size, when known.
    pub bytes: Option<u64>,
    /// `Seq`, or -1.
    pub seq: i64,
    /// Start, epoch ns (the kernel's, or the host op's for host-only collectives).
    pub start_ns: i64,
    /// End, epoch ns.
    pub end_ns: i64,
    /// GPU stream of the kernel (-1 for host-only collectives).
    pub stream: i64,
    /// Whether a GPU kernel ran it.
    pub on_gpu: bool,
}

/// Every collective of a trace, in start order.
pub fn collective_instances(trace: &Trace) -> Vec<CollectiveInstance> {
    let e = &trace.events;
    // record_param_comms host ops with collective args, by External id.
    let mut host: FxHashMap<i64, (EventId, &CollectiveArgs)> = FxHashMap::default();
    for a in &trace.args.collective {
        let i = a.event.index();
        if trace.kind(a.event) == CategoryKind::CpuOp
            && e.phase[i] == Phase::Complete
            && e.external_id[i] != 0
        {
            host.insert(e.external_id[i], (a.event, a));
        }
    }
    let mut used: rustc_hash::FxHashSet<i64> = Default::default();
    let mut out = Vec::new();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || trace.categories.kind(e.cat[i]) != CategoryKind::Kernel
        {
            continue;
        }
        let name = trace.strings.get(e.name[i]);
        if !is_comm_kernel(name) {
            continue;
        }
        let id = EventId(i as u32);
        let args = trace.args.collective_of(id).or_else(|| {
            let x = e.external_id[i];
            host.get(&x).map(|(_, a)| *a)
        });
        if e.external_id[i] != 0 {
            used.insert(e.external_id[i]);
        }
        let (kernel_op, algorithm) = parse_nccl_kernel(name);
        let stream = match trace.tracks.get(e.track[i]).kind {
            TrackKind::GpuStream { stream, .. } => stream,
            _ => trace.args.kernel_of(id).map_or(-1, |k| k.stream),
        };
        let mut c = from_args(trace, args, kernel_op);
        c.algorithm = algorithm;
        c.start_ns = e.ts_ns[i];
        c.end_ns = e.ts_ns[i] + e.dur_ns[i];
        c.stream = stream;
        c.on_gpu = true;
        out.push(c);
    }
    for (x, (ev, a)) in &host {
        if used.contains(x) {
            continue;
        }
        let c = from_args(trace, Some(a), String::new());
        if c.collective.is_empty() || fold_collective(&c.collective) == "wait" {
            continue;
        }
        out.push(CollectiveInstance {
            start_ns: e.ts_ns[ev.index()],
            end_ns: e.end_ns(*ev),
            ..c
        });
    }
    out.sort_by_key(|c| (c.start_ns, c.end_ns));
    out
}

fn from_args(
    trace: &Trace,
    args: Option<&CollectiveArgs>,
    kernel_op: String,
) -> CollectiveInstance {
    let s = |id| trace.strings.get(id).to_owned();
    let mut c = CollectiveInstance {
        collective: kernel_op,
        process_group: String::new(),
        process_group_desc: String::new(),
        algorithm: None,
        dtype: String::new(),
        group_size: -1,
        bytes: None,
        seq: -1,
        start_ns: 0,
        end_ns: 0,
        stream: -1,
        on_gpu: false,
    };
    if let Some(a) = args {
        let name = s(a.collective_name);
        if !name.is_empty() {
            c.collective = name;
        }
        c.process_group = s(a.pg_name);
        c.process_group_desc = s(a.pg_desc);
        c.dtype = s(a.dtype);
        c.group_size = a.group_size;
        c.seq = a.seq;
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
    /// Ranks in the group, or -1.
    pub group_size: i64,
    /// Calls.
    pub count: u64,
    /// Whether the calls ran as GPU kernels (false: host-only collectives, timed by the
    /// `record_param_comms` op).
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
        if r.group_size < 0 {
            r.group_size = c.group_size;
        }
    }
    for r in &mut rows {
        r.mean_latency_ns = r.latency_ns as f64 / r.count.max(1) as f64;
        if let Some(b) = r.bytes.filter(|&b| b > 0) {
            if r.latency_ns > 0 {
                let algbw = b as f64 / r.latency_ns as f64;
                r.algbw_gbps = Some(algbw);
                r.busbw_gbps = busbw_factor(&r.collective, r.group_size).map(|f| f * algbw);
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
