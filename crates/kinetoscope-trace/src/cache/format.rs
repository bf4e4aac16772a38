//! The body of a cache file: a [`Trace`]'s columns as little-endian arrays (events,
//! flows, arguments, launch links), its string arena as one buffer and its end offsets,
//! the small tables (categories, tracks) as columns too, and the metadata and read
//! report as JSON. Decoding checks every id against the table it names and every
//! enum against its values, so what it returns upholds the model's invariants whatever
//! the bytes were. What the model builds on first use (nesting, the correlation index)
//! is not stored.

use super::codec::{Bad, In, Out};
use crate::model::{
    ArgTables, CatId, Category, CategoryKind, CategoryTable, Charge, CollectiveArgs, EventId,
    EventTable, FlowEnd, FlowTable, KernelLaunch, KernelTable, LaunchLinks, MemoryArgs,
    NarrowColumn, OpArgs, Phase, PythonArgs, RawId, StrId, StringTable, SyncArgs, TextArena, Trace,
    Track, TrackId, TrackKind, TrackTable, TransferArgs,
};

/// Every category kind, by its stored number.
const KINDS: [CategoryKind; 20] = [
    CategoryKind::CpuOp,
    CategoryKind::UserAnnotation,
    CategoryKind::GpuUserAnnotation,
    CategoryKind::PythonFunction,
    CategoryKind::CudaRuntime,
    CategoryKind::CudaDriver,
    CategoryKind::OtherRuntime,
    CategoryKind::Kernel,
    CategoryKind::GpuMemcpy,
    CategoryKind::GpuMemset,
    CategoryKind::CpuInstantEvent,
    CategoryKind::CudaSync,
    CategoryKind::CudaEvent,
    CategoryKind::Overhead,
    CategoryKind::TraceSpan,
    CategoryKind::FlowLaunch,
    CategoryKind::FlowForwardBackward,
    CategoryKind::Metadata,
    CategoryKind::Uncategorised,
    CategoryKind::Other,
];
/// Every event phase, by its stored number.
const PHASES: [Phase; 4] = [
    Phase::Complete,
    Phase::Instant,
    Phase::Counter,
    Phase::Other,
];
/// Every flow end, by its stored number.
const ENDS: [FlowEnd; 3] = [FlowEnd::Start, FlowEnd::Finish, FlowEnd::Step];
/// An absent `f32` argument, stored in a `u64` (a present one is its bits).
const NO_F32: u64 = u64::MAX;

/// The stored number of `v` in `all`.
fn number<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(0) as u8
}

/// The value stored as `n` in `all`.
fn of_number<T: Copy>(all: &[T], n: u8) -> Result<T, Bad> {
    all.get(n as usize).copied().ok_or(Bad)
}

/// The body of `trace`'s cache file.
pub(super) fn encode(trace: &Trace, out: &mut Out<'_>) -> Result<(), Bad> {
    out.blob(&serde_json::to_vec(&trace.meta).map_err(|_| Bad)?);
    out.blob(&serde_json::to_vec(&trace.report).map_err(|_| Bad)?);
    let (bytes, starts) = trace.strings.arena().parts();
    out.blob(bytes);
    out.col(starts.iter().copied());
    encode_categories(out, &trace.categories);
    encode_tracks(out, &trace.tracks);
    let e = &trace.events;
    out.col(e.ts_ns.iter().copied());
    out.col(e.dur_ns.iter());
    out.col(e.name.iter().map(|s| s.0));
    out.col(e.cat.iter().map(|c| c.0));
    out.col(e.phase.iter().map(|p| number(&PHASES, p)));
    out.col(e.track.iter().map(|t| t.0));
    out.col(e.external_id.iter());
    out.col(e.correlation.iter());
    let f = &trace.flows;
    out.col(f.cat.iter().map(|c| c.0));
    out.col(f.id.iter());
    out.col(f.end.iter().map(|x| number(&ENDS, x)));
    out.col(f.ts_ns.iter().copied());
    out.col(f.track.iter().map(|t| t.0));
    encode_args(out, &trace.args);
    let (calls, launcher) = trace.launch_links().parts();
    out.col(calls.iter().copied());
    out.col(launcher.iter().copied());
    Ok(())
}

/// Categories: raw names, kinds and counts.
fn encode_categories(out: &mut Out<'_>, cats: &CategoryTable) {
    out.len(cats.len());
    for (_, c) in cats.iter() {
        out.blob(c.raw.as_bytes());
        out.num(number(&KINDS, &c.kind));
        out.num(c.count);
    }
}

/// A `pid` or `tid` as a tag (0 integer, 1 string) and a value.
fn raw_id(id: RawId) -> (u8, i64) {
    match id {
        RawId::Int(v) => (0, v),
        RawId::Str(s) => (1, s.0 as i64),
    }
}

/// A track kind as a tag (0 CPU thread, 1 GPU stream, 2 other) and device and stream.
fn track_kind(kind: TrackKind) -> (u8, i64, i64) {
    match kind {
        TrackKind::CpuThread => (0, 0, 0),
        TrackKind::GpuStream { device, stream } => (1, device, stream),
        TrackKind::Other => (2, 0, 0),
    }
}

/// Tracks, column by column.
fn encode_tracks(out: &mut Out<'_>, tracks: &TrackTable) {
    let l = &tracks.list;
    out.col(l.iter().map(|t| raw_id(t.pid).0));
    out.col(l.iter().map(|t| raw_id(t.pid).1));
    out.col(l.iter().map(|t| raw_id(t.tid).0));
    out.col(l.iter().map(|t| raw_id(t.tid).1));
    out.col(l.iter().map(|t| track_kind(t.kind).0));
    out.col(l.iter().map(|t| track_kind(t.kind).1));
    out.col(l.iter().map(|t| track_kind(t.kind).2));
    out.col(l.iter().map(|t| t.thread_name.0));
    out.col(l.iter().map(|t| t.process_name.0));
    out.col(l.iter().map(|t| t.process_label.0));
}

/// An optional `f32` in a `u64`.
fn opt_f32(v: Option<f32>) -> u64 {
    v.map_or(NO_F32, |f| f.to_bits() as u64)
}

/// Every argument table, column by column.
fn encode_args(out: &mut Out<'_>, a: &ArgTables) {
    let op = &a.op;
    out.col(op.iter().map(|x| x.event.0));
    for f in [
        |x: &OpArgs| x.input_dims,
        |x: &OpArgs| x.input_types,
        |x: &OpArgs| x.input_strides,
        |x: &OpArgs| x.concrete_inputs,
        |x: &OpArgs| x.call_stack,
        |x: &OpArgs| x.module_hierarchy,
    ] {
        out.col(op.iter().map(|x| f(x).0));
    }
    out.col(a.op_sequence_number.iter());
    out.col(a.op_fwd_thread_id.iter());
    let (events, launch_of, launches) = a.kernel.columns();
    out.col(events.iter().map(|x| x.0));
    out.col(launch_of.iter().copied());
    let k = launches;
    out.col(k.iter().map(|x| x.device));
    out.col(k.iter().map(|x| x.stream));
    for i in 0..3 {
        out.col(k.iter().map(|x| x.grid[i]));
        out.col(k.iter().map(|x| x.block[i]));
    }
    out.col(k.iter().map(|x| x.registers_per_thread));
    out.col(k.iter().map(|x| x.shared_memory));
    out.col(k.iter().map(|x| opt_f32(x.blocks_per_sm)));
    out.col(k.iter().map(|x| opt_f32(x.warps_per_sm)));
    out.col(k.iter().map(|x| opt_f32(x.est_achieved_occupancy_pct)));
    let t = &a.transfer;
    out.col(t.iter().map(|x| x.event.0));
    out.col(t.iter().map(|x| x.device));
    out.col(t.iter().map(|x| x.stream));
    out.col(t.iter().map(|x| x.bytes));
    out.col(a.sync.iter().map(|x| x.event.0));
    out.col(a.sync.iter().map(|x| x.stream));
    let m = &a.memory;
    out.col(m.iter().map(|x| x.event.0));
    out.col(m.iter().map(|x| x.addr));
    for f in [
        |x: &MemoryArgs| x.bytes,
        |x: &MemoryArgs| x.total_allocated,
        |x: &MemoryArgs| x.total_reserved,
        |x: &MemoryArgs| x.device_type,
        |x: &MemoryArgs| x.device_id,
    ] {
        out.col(m.iter().map(f));
    }
    let c = &a.collective;
    out.col(c.iter().map(|x| x.event.0));
    for f in [
        |x: &CollectiveArgs| x.collective_name,
        |x: &CollectiveArgs| x.dtype,
        |x: &CollectiveArgs| x.pg_name,
        |x: &CollectiveArgs| x.pg_desc,
        |x: &CollectiveArgs| x.pg_ranks,
    ] {
        out.col(c.iter().map(|x| f(x).0));
    }
    for f in [
        |x: &CollectiveArgs| x.in_msg_nelems,
        |x: &CollectiveArgs| x.out_msg_nelems,
        |x: &CollectiveArgs| x.group_size,
        |x: &CollectiveArgs| x.seq,
    ] {
        out.col(c.iter().map(f));
    }
    out.col(c.iter().map(|x| u8::from(x.comms_id.is_some())));
    out.col(c.iter().map(|x| x.comms_id.unwrap_or(0)));
    let p = &a.python;
    out.col(p.iter().map(|x| x.event.0));
    out.col(p.iter().map(|x| x.python_id));
    out.col(p.iter().map(|x| x.parent_id));
    out.col(p.iter().map(|x| x.module_id));
}

/// The limits ids are checked against while decoding.
struct Limits {
    strings: u32,
    categories: u16,
    tracks: u32,
    events: u32,
}

impl Limits {
    fn str(&self, v: u32) -> Result<StrId, Bad> {
        (v < self.strings).then_some(StrId(v)).ok_or(Bad)
    }
    fn event(&self, v: u32) -> Result<EventId, Bad> {
        (v < self.events).then_some(EventId(v)).ok_or(Bad)
    }
    fn cat(&self, v: u16) -> Result<CatId, Bad> {
        (v < self.categories).then_some(CatId(v)).ok_or(Bad)
    }
    fn track(&self, v: u32) -> Result<TrackId, Bad> {
        (v < self.tracks).then_some(TrackId(v)).ok_or(Bad)
    }
}

/// Every value of `v` mapped by a check that may refuse it.
fn checked<T: Copy, U>(v: Vec<T>, f: impl Fn(T) -> Result<U, Bad>) -> Result<Vec<U>, Bad> {
    v.into_iter().map(f).collect()
}

/// The trace a body written by [`encode`] holds (its `path` left empty), its bytes
/// taken from `charge`; [`Bad`] for anything that is not such a body.
pub(super) fn decode(mut r: In<'_>, mut charge: Charge) -> Result<Trace, Bad> {
    let meta = serde_json::from_slice(r.blob()?).map_err(|_| Bad)?;
    let report = serde_json::from_slice(r.blob()?).map_err(|_| Bad)?;
    let bytes = r.blob()?.to_vec();
    let starts = r.col(|v: u64| v)?;
    let arena = TextArena::from_parts(bytes, starts).ok_or(Bad)?;
    if arena.len() == 0 || !arena.get(0).is_empty() || arena.len() > u32::MAX as usize {
        return Err(Bad);
    }
    let categories = decode_categories(&mut r)?;
    let mut lim = Limits {
        strings: arena.len() as u32,
        categories: categories.len() as u16,
        tracks: 0,
        events: 0,
    };
    let tracks = decode_tracks(&mut r, &lim)?;
    lim.tracks = u32::try_from(tracks.len()).map_err(|_| Bad)?;
    let events = decode_events(&mut r, &lim)?;
    lim.events = u32::try_from(events.len()).map_err(|_| Bad)?;
    let flows = decode_flows(&mut r, &lim)?;
    let args = decode_args(&mut r, &lim)?;
    let calls = r.col(|v: u32| v)?;
    let launcher = r.col(|v: u32| v)?;
    let links = LaunchLinks::from_parts(calls, launcher, events.len()).ok_or(Bad)?;
    if !r.is_done() {
        return Err(Bad);
    }
    charge
        .take(model_bytes(&events, &flows, &args, &arena))
        .map_err(|_| Bad)?;
    let strings = StringTable::from_arena(arena, &mut charge).map_err(|_| Bad)?;
    Ok(Trace {
        meta,
        strings,
        categories,
        tracks,
        events,
        args,
        flows,
        report,
        links,
        charge,
        ..Trace::default()
    })
}

/// What the decoded columns hold, as the reader's accounting counts it.
fn model_bytes(e: &EventTable, f: &FlowTable, a: &ArgTables, arena: &TextArena) -> u64 {
    fn b<T>(v: &[T]) -> u64 {
        std::mem::size_of_val(v) as u64
    }
    let narrow = e.dur_ns.bytes() + e.external_id.bytes() + e.correlation.bytes();
    let events = b(&e.ts_ns) + narrow + b(&e.name) * 2 + b(&e.cat) + b(&e.phase);
    let flows = b(&f.cat) + f.id.bytes() + b(&f.end) + b(&f.ts_ns) + b(&f.track);
    let args = b(&a.op)
        + a.op_sequence_number.bytes()
        + a.op_fwd_thread_id.bytes()
        + a.kernel.heap_bytes()
        + b(&a.transfer)
        + b(&a.sync)
        + b(&a.memory)
        + b(&a.collective)
        + b(&a.python);
    let (bytes, starts) = arena.parts();
    events + flows + args + b(bytes) + b(starts)
}

/// Categories written by [`encode_categories`].
fn decode_categories(r: &mut In<'_>) -> Result<CategoryTable, Bad> {
    let n = r.len(17)?;
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        let raw = r.text()?;
        let kind = of_number(&KINDS, r.num()?)?;
        let count = r.num()?;
        list.push(Category { raw, kind, count });
    }
    CategoryTable::from_list(list).ok_or(Bad)
}

/// A `pid` or `tid` from its tag and value.
fn raw_id_of(tag: u8, v: i64, lim: &Limits) -> Result<RawId, Bad> {
    match tag {
        0 => Ok(RawId::Int(v)),
        1 => Ok(RawId::Str(lim.str(u32::try_from(v).map_err(|_| Bad)?)?)),
        _ => Err(Bad),
    }
}

/// Tracks written by [`encode_tracks`].
fn decode_tracks(r: &mut In<'_>, lim: &Limits) -> Result<TrackTable, Bad> {
    let pid_tag = r.col(|v: u8| v)?;
    let n = pid_tag.len();
    let pid = r.col_of(n, |v: i64| v)?;
    let tid_tag = r.col_of(n, |v: u8| v)?;
    let tid = r.col_of(n, |v: i64| v)?;
    let kind = r.col_of(n, |v: u8| v)?;
    let device = r.col_of(n, |v: i64| v)?;
    let stream = r.col_of(n, |v: i64| v)?;
    let names: [Vec<u32>; 3] = [
        r.col_of(n, |v: u32| v)?,
        r.col_of(n, |v: u32| v)?,
        r.col_of(n, |v: u32| v)?,
    ];
    let mut list = Vec::with_capacity(n);
    for i in 0..n {
        list.push(Track {
            pid: raw_id_of(pid_tag[i], pid[i], lim)?,
            tid: raw_id_of(tid_tag[i], tid[i], lim)?,
            kind: match kind[i] {
                0 => TrackKind::CpuThread,
                1 => TrackKind::GpuStream {
                    device: device[i],
                    stream: stream[i],
                },
                2 => TrackKind::Other,
                _ => return Err(Bad),
            },
            thread_name: lim.str(names[0][i])?,
            process_name: lim.str(names[1][i])?,
            process_label: lim.str(names[2][i])?,
        });
    }
    Ok(TrackTable { list })
}

/// The event columns, every id checked.
fn decode_events(r: &mut In<'_>, lim: &Limits) -> Result<EventTable, Bad> {
    let ts_ns = r.col(|v: i64| v)?;
    let n = ts_ns.len();
    Ok(EventTable {
        ts_ns,
        dur_ns: r.col_into::<i64, _>(n)?,
        name: checked(r.col_of(n, |v: u32| v)?, |v| lim.str(v))?,
        cat: checked(r.col_of(n, |v: u16| v)?, |v| lim.cat(v))?,
        phase: checked(r.col_of(n, |v: u8| v)?, |v| of_number(&PHASES, v))?,
        track: checked(r.col_of(n, |v: u32| v)?, |v| lim.track(v))?,
        external_id: r.col_into::<i64, _>(n)?,
        correlation: r.col_into::<i64, _>(n)?,
    })
}

/// The flow columns, every id checked.
fn decode_flows(r: &mut In<'_>, lim: &Limits) -> Result<FlowTable, Bad> {
    let cat = checked(r.col(|v: u16| v)?, |v| lim.cat(v))?;
    let n = cat.len();
    Ok(FlowTable {
        cat,
        id: r.col_into::<i64, _>(n)?,
        end: checked(r.col_of(n, |v: u8| v)?, |v| of_number(&ENDS, v))?,
        ts_ns: r.col_of(n, |v: i64| v)?,
        track: checked(r.col_of(n, |v: u32| v)?, |v| lim.track(v))?,
    })
}

/// An argument table's event column: ids in range and in order (lookups bisect it).
fn arg_events(r: &mut In<'_>, lim: &Limits) -> Result<Vec<EventId>, Bad> {
    let events = checked(r.col(|v: u32| v)?, |v| lim.event(v))?;
    if events.windows(2).any(|w| w[0] > w[1]) {
        return Err(Bad);
    }
    Ok(events)
}

/// `n` string ids, checked.
fn strs(r: &mut In<'_>, n: usize, lim: &Limits) -> Result<Vec<StrId>, Bad> {
    checked(r.col_of(n, |v: u32| v)?, |v| lim.str(v))
}

/// An optional `f32` from its `u64`.
fn f32_of(v: u64) -> Result<Option<f32>, Bad> {
    match v {
        NO_F32 => Ok(None),
        v => Ok(Some(f32::from_bits(u32::try_from(v).map_err(|_| Bad)?))),
    }
}

/// Every argument table written by [`encode_args`].
fn decode_args(r: &mut In<'_>, lim: &Limits) -> Result<ArgTables, Bad> {
    let (op, op_sequence_number, op_fwd_thread_id) = decode_op(r, lim)?;
    Ok(ArgTables {
        op,
        op_sequence_number,
        op_fwd_thread_id,
        kernel: decode_kernel(r, lim)?,
        transfer: {
            let event = arg_events(r, lim)?;
            let n = event.len();
            let (device, stream) = (r.col_of(n, |v: i64| v)?, r.col_of(n, |v: i64| v)?);
            let bytes = r.col_of(n, |v: u64| v)?;
            (0..n)
                .map(|i| TransferArgs {
                    event: event[i],
                    device: device[i],
                    stream: stream[i],
                    bytes: bytes[i],
                })
                .collect()
        },
        sync: {
            let event = arg_events(r, lim)?;
            let stream = r.col_of(event.len(), |v: i64| v)?;
            let pairs = event.into_iter().zip(stream);
            pairs
                .map(|(event, stream)| SyncArgs { event, stream })
                .collect()
        },
        memory: decode_memory(r, lim)?,
        collective: decode_collective(r, lim)?,
        python: {
            let event = arg_events(r, lim)?;
            let n = event.len();
            let ids: [Vec<i64>; 3] = [
                r.col_of(n, |v: i64| v)?,
                r.col_of(n, |v: i64| v)?,
                r.col_of(n, |v: i64| v)?,
            ];
            (0..n)
                .map(|i| PythonArgs {
                    event: event[i],
                    python_id: ids[0][i],
                    parent_id: ids[1][i],
                    module_id: ids[2][i],
                })
                .collect()
        },
    })
}

/// The operator arguments.
fn decode_op(r: &mut In<'_>, lim: &Limits) -> Result<OpColumns, Bad> {
    let event = arg_events(r, lim)?;
    let n = event.len();
    let mut s: Vec<Vec<StrId>> = Vec::with_capacity(6);
    for _ in 0..6 {
        s.push(strs(r, n, lim)?);
    }
    let op = (0..n)
        .map(|i| OpArgs {
            event: event[i],
            input_dims: s[0][i],
            input_types: s[1][i],
            input_strides: s[2][i],
            concrete_inputs: s[3][i],
            call_stack: s[4][i],
            module_hierarchy: s[5][i],
        })
        .collect();
    let seq = r.col_into::<i64, _>(n)?;
    let fwd = r.col_into::<i64, _>(n)?;
    Ok((op, seq, fwd))
}

/// The operator arguments, their sequence numbers and their forward threads.
type OpColumns = (Vec<OpArgs>, NarrowColumn, NarrowColumn);

/// The kernel arguments: the kernels' events and configuration indices, then the
/// distinct configurations.
fn decode_kernel(r: &mut In<'_>, lim: &Limits) -> Result<KernelTable, Bad> {
    let event = arg_events(r, lim)?;
    let launch_of = r.col_of(event.len(), |v: u32| v)?;
    let device = r.col(|v: i64| v)?;
    let n = device.len();
    let stream = r.col_of(n, |v: i64| v)?;
    let mut dims: Vec<Vec<u32>> = Vec::with_capacity(6);
    for _ in 0..6 {
        dims.push(r.col_of(n, |v: u32| v)?);
    }
    let registers = r.col_of(n, |v: u32| v)?;
    let shared = r.col_of(n, |v: u64| v)?;
    let mut floats: Vec<Vec<Option<f32>>> = Vec::with_capacity(3);
    for _ in 0..3 {
        floats.push(checked(r.col_of(n, |v: u64| v)?, f32_of)?);
    }
    let launches = (0..n)
        .map(|i| KernelLaunch {
            device: device[i],
            stream: stream[i],
            grid: [dims[0][i], dims[2][i], dims[4][i]],
            block: [dims[1][i], dims[3][i], dims[5][i]],
            registers_per_thread: registers[i],
            shared_memory: shared[i],
            blocks_per_sm: floats[0][i],
            warps_per_sm: floats[1][i],
            est_achieved_occupancy_pct: floats[2][i],
        })
        .collect();
    KernelTable::from_columns(event, launch_of, launches).ok_or(Bad)
}

/// The memory-instant arguments.
fn decode_memory(r: &mut In<'_>, lim: &Limits) -> Result<Vec<MemoryArgs>, Bad> {
    let event = arg_events(r, lim)?;
    let n = event.len();
    let addr = r.col_of(n, |v: u64| v)?;
    let mut v: Vec<Vec<i64>> = Vec::with_capacity(5);
    for _ in 0..5 {
        v.push(r.col_of(n, |x: i64| x)?);
    }
    Ok((0..n)
        .map(|i| MemoryArgs {
            event: event[i],
            addr: addr[i],
            bytes: v[0][i],
            total_allocated: v[1][i],
            total_reserved: v[2][i],
            device_type: v[3][i],
            device_id: v[4][i],
        })
        .collect())
}

/// The collective arguments.
fn decode_collective(r: &mut In<'_>, lim: &Limits) -> Result<Vec<CollectiveArgs>, Bad> {
    let event = arg_events(r, lim)?;
    let n = event.len();
    let mut s: Vec<Vec<StrId>> = Vec::with_capacity(5);
    for _ in 0..5 {
        s.push(strs(r, n, lim)?);
    }
    let mut v: Vec<Vec<i64>> = Vec::with_capacity(4);
    for _ in 0..4 {
        v.push(r.col_of(n, |x: i64| x)?);
    }
    let has_id = r.col_of(n, |x: u8| x)?;
    let id = r.col_of(n, |x: u64| x)?;
    (0..n)
        .map(|i| {
            Ok(CollectiveArgs {
                event: event[i],
                collective_name: s[0][i],
                dtype: s[1][i],
                pg_name: s[2][i],
                pg_desc: s[3][i],
                pg_ranks: s[4][i],
                in_msg_nelems: v[0][i],
                out_msg_nelems: v[1][i],
                group_size: v[2][i],
                seq: v[3][i],
                comms_id: match has_id[i] {
                    0 => None,
                    1 => Some(id[i]),
                    _ => return Err(Bad),
                },
            })
        })
        .collect()
}
