//! Perfetto's protobuf trace format (`.pftrace`), written from the models.
//!
//! One packet sequence (`trusted_packet_sequence_id` 1): a first packet that clears the
//! incremental state and interns the debug-annotation names, then per rank a process
//! track (`ProcessDescriptor`: pid = rank + 1, `rank N`, the original processes as its
//! label), a thread track per host thread (`ThreadDescriptor`) and a named track per GPU
//! stream under the process, and the rank's spans as `TYPE_SLICE_BEGIN` / `TYPE_SLICE_END`
//! pairs and instants as `TYPE_INSTANT`. Names and categories are interned
//! (`InternedData`, `SEQ_NEEDS_INCREMENTAL_STATE`): a name costs its text once and a
//! varint after. Launch → GPU arrows are `flow_ids` on the launch's begin and
//! `terminating_flow_ids` on the GPU activity's. Kernels carry their grid and block,
//! operators their input shapes, both as debug annotations, and GPU activities and
//! launches their CUPTI correlation. Spans that do not nest on their row go to lanes
//! beside it ([`lanes`]). Times are the model's ns minus the rank's offset.
//!
//! The encoding is hand-written ([`encode`]: varints, fixed64 and length-delimited
//! fields, about 100 lines) rather than a protobuf crate's: generated code needs the
//! whole 680 KB schema compiled at build time (`protoc` or a build script) for the
//! dozen messages used here. The tests decode the output with a generic decoder against
//! the published schema, vendored only as a test fixture.

pub mod encode;
pub mod lanes;
pub mod schema;

use std::io::{self, BufWriter, Write};

use kinetoscope_trace::{EventId, Phase, Trace};
use rustc_hash::FxHashMap;

use self::encode::{varint, Message};
use self::lanes::{assign, for_each_step, Step};
use self::schema::{annotation, event, interned, packet, track, TRACE_PACKET};
use crate::layout::{is_written, layout, FlowIds, MergeInput, RankOut};
use crate::merge::MergeStats;

/// The one packet sequence of the file.
const SEQUENCE: u64 = 1;

/// Debug annotation names, interned once with these ids (index + 1).
const ANNOTATIONS: [&str; 4] = ["grid", "block", "Input Dims", "correlation"];

/// Write `inputs` as one Perfetto trace to `out`.
pub fn write_pftrace(inputs: &[MergeInput<'_>], out: impl Write) -> io::Result<MergeStats> {
    let mut w = Writer {
        out: BufWriter::with_capacity(1 << 20, out),
        names: FxHashMap::default(),
        categories: FxHashMap::default(),
        next_uuid: 1,
        next_flow: 1,
        stats: MergeStats::default(),
    };
    w.first_packet()?;
    for (input, rank) in inputs.iter().zip(layout(inputs)) {
        w.rank(input, &rank)?;
    }
    w.out.flush()?;
    Ok(w.stats)
}

struct Writer<'a, W: Write> {
    out: BufWriter<W>,
    names: FxHashMap<&'a str, u64>,
    categories: FxHashMap<&'a str, u64>,
    next_uuid: u64,
    next_flow: u64,
    stats: MergeStats,
}

/// What one event packet needs besides the event.
struct Ctx<'t, 'a> {
    input: &'t MergeInput<'a>,
    flows: &'t FlowIds,
    uuid: u64,
}

impl<'a, W: Write> Writer<'a, W> {
    fn packet(&mut self, m: &Message) -> io::Result<()> {
        let mut head = Vec::with_capacity(8);
        varint(&mut head, u64::from(TRACE_PACKET) << 3 | 2);
        varint(&mut head, m.bytes.len() as u64);
        self.out.write_all(&head)?;
        self.out.write_all(&m.bytes)
    }

    fn uuid(&mut self) -> u64 {
        self.next_uuid += 1;
        self.next_uuid - 1
    }

    fn first_packet(&mut self) -> io::Result<()> {
        let mut p = Message::default();
        p.uint(packet::SEQUENCE_ID, SEQUENCE)
            .uint(packet::SEQUENCE_FLAGS, packet::SEQ_CLEARED)
            .uint(packet::FIRST_ON_SEQUENCE, 1)
            .message(packet::INTERNED_DATA, |d| {
                for (i, name) in ANNOTATIONS.iter().enumerate() {
                    d.message(interned::DEBUG_ANNOTATION_NAMES, |n| {
                        n.uint(interned::IID, i as u64 + 1)
                            .string(interned::NAME, name);
                    });
                }
            });
        self.packet(&p)
    }

    fn descriptor(&mut self, build: impl FnOnce(&mut Message)) -> io::Result<()> {
        let mut p = Message::default();
        p.uint(packet::SEQUENCE_ID, SEQUENCE)
            .message(packet::TRACK_DESCRIPTOR, build);
        self.packet(&p)
    }

    /// One rank: its process, its tracks and their events.
    fn rank(&mut self, input: &MergeInput<'a>, rank: &RankOut) -> io::Result<()> {
        let trace = input.trace;
        let process = self.uuid();
        self.descriptor(|d| {
            d.uint(track::UUID, process)
                .uint(track::CHILD_ORDERING, track::ORDER_EXPLICIT)
                .message(track::PROCESS, |p| {
                    p.int(track::PID, rank.pid)
                        .string(track::PROCESS_NAME, &rank.name)
                        .string(track::PROCESS_LABELS, &rank.label);
                });
        })?;
        // Each output track's written events, in model order.
        let mut spans: Vec<Vec<u32>> = vec![Vec::new(); rank.tracks.len()];
        let mut instants: Vec<Vec<u32>> = vec![Vec::new(); rank.tracks.len()];
        for e in trace.events.ids() {
            if !is_written(trace, e) {
                continue;
            }
            let Some(t) = rank.by_track[trace.events.track[e.index()].index()] else {
                continue;
            };
            match trace.events.phase[e.index()] {
                Phase::Instant => instants[t].push(e.0),
                _ => spans[t].push(e.0),
            }
        }
        let flows = FlowIds::of(trace, &mut self.next_flow);
        self.stats.flows += flows.ends.len() as u64;
        for (i, t) in rank.tracks.iter().enumerate() {
            let uuid = self.uuid();
            self.descriptor(|d| {
                d.uint(track::UUID, uuid)
                    .int(track::SIBLING_ORDER_RANK, i as i64);
                if t.gpu {
                    d.uint(track::PARENT_UUID, process)
                        .string(track::NAME, &t.name);
                } else {
                    d.message(track::THREAD, |th| {
                        th.int(track::PID, rank.pid)
                            .int(track::TID, t.tid)
                            .string(track::THREAD_NAME, &t.name);
                    });
                }
            })?;
            let ctx = Ctx {
                input,
                flows: &flows,
                uuid,
            };
            self.track(&ctx, &t.name, &mut spans[i], &instants[i])?;
        }
        Ok(())
    }

    /// One track's spans (in nesting lanes) and instants.
    fn track(
        &mut self,
        ctx: &Ctx<'_, 'a>,
        name: &str,
        spans: &mut [u32],
        instants: &[u32],
    ) -> io::Result<()> {
        let trace = ctx.input.trace;
        let lanes = assign(trace, spans);
        for (k, lane) in lanes.iter().enumerate() {
            let uuid = if k == 0 {
                ctx.uuid
            } else {
                let uuid = self.uuid();
                self.descriptor(|d| {
                    d.uint(track::UUID, uuid)
                        .uint(track::PARENT_UUID, ctx.uuid)
                        .string(track::NAME, &format!("{name} (overlap {k})"));
                })?;
                uuid
            };
            let lane_ctx = Ctx { uuid, ..*ctx };
            for_each_step(trace, lane, |step| self.step(&lane_ctx, step))?;
        }
        for &e in instants {
            self.event(ctx, EventId(e), event::INSTANT, None)?;
        }
        Ok(())
    }

    fn step(&mut self, ctx: &Ctx<'_, 'a>, step: Step) -> io::Result<()> {
        match step {
            Step::Begin(e) => self.event(ctx, EventId(e), event::SLICE_BEGIN, None),
            Step::End(e, end) => self.event(ctx, EventId(e), event::SLICE_END, Some(end)),
        }
    }

    /// One event packet: a begin or instant (named, with category, flows and
    /// annotations), or an end at `end`.
    fn event(
        &mut self,
        ctx: &Ctx<'_, 'a>,
        e: EventId,
        kind: u64,
        end: Option<i64>,
    ) -> io::Result<()> {
        let trace: &'a Trace = ctx.input.trace;
        let i = e.index();
        let at = end.unwrap_or(trace.events.ts_ns[i]) - ctx.input.offset_ns;
        let ts = u64::try_from(at).map_err(|_| negative_time(trace, e, at))?;
        let mut p = Message::default();
        p.uint(packet::TIMESTAMP, ts)
            .uint(packet::SEQUENCE_ID, SEQUENCE)
            .uint(packet::SEQUENCE_FLAGS, packet::SEQ_NEEDS_STATE);
        if end.is_some() {
            p.message(packet::TRACK_EVENT, |t| {
                t.uint(event::TYPE, kind).uint(event::TRACK_UUID, ctx.uuid);
            });
            return self.packet(&p);
        }
        self.stats.events += 1;
        let name = trace.name(e);
        let cat = trace.categories.get(trace.events.cat[i]).raw.as_str();
        let (name_iid, new_name) = intern(&mut self.names, name);
        let (cat_iid, new_cat) = if cat.is_empty() {
            (None, false)
        } else {
            let (iid, new) = intern(&mut self.categories, cat);
            (Some(iid), new)
        };
        if new_name || new_cat {
            p.message(packet::INTERNED_DATA, |d| {
                if new_cat {
                    interned_entry(d, interned::EVENT_CATEGORIES, cat_iid.unwrap_or(0), cat);
                }
                if new_name {
                    interned_entry(d, interned::EVENT_NAMES, name_iid, name);
                }
            });
        }
        p.message(packet::TRACK_EVENT, |t| {
            t.uint(event::TYPE, kind)
                .uint(event::TRACK_UUID, ctx.uuid)
                .uint(event::NAME_IID, name_iid);
            if let Some(c) = cat_iid {
                t.uint(event::CATEGORY_IIDS, c);
            }
            for &id in ctx.flows.starts.get(&e.0).into_iter().flatten() {
                t.fixed64(event::FLOW_IDS, id);
            }
            if let Some(&id) = ctx.flows.ends.get(&e.0) {
                t.fixed64(event::TERMINATING_FLOW_IDS, id);
            }
            annotations(t, trace, e);
        });
        self.packet(&p)
    }
}

/// The interned id of `text` and whether it is new.
fn intern<'a>(table: &mut FxHashMap<&'a str, u64>, text: &'a str) -> (u64, bool) {
    let next = table.len() as u64 + 1;
    match table.entry(text) {
        std::collections::hash_map::Entry::Occupied(o) => (*o.get(), false),
        std::collections::hash_map::Entry::Vacant(v) => (*v.insert(next), true),
    }
}

fn interned_entry(d: &mut Message, field: u32, iid: u64, name: &str) {
    d.message(field, |n| {
        n.uint(interned::IID, iid).string(interned::NAME, name);
    });
}

/// Kernel grid and block, operator input shapes, the CUPTI correlation.
fn annotations(t: &mut Message, trace: &Trace, e: EventId) {
    let string = |t: &mut Message, name: u64, value: &str| {
        t.message(event::DEBUG_ANNOTATIONS, |a| {
            a.uint(annotation::NAME_IID, name)
                .string(annotation::STRING_VALUE, value);
        });
    };
    if let Some(k) = trace.args.kernel_of(e).map(|k| k.launch) {
        string(t, 1, &format!("{:?}", k.grid));
        string(t, 2, &format!("{:?}", k.block));
    }
    if let Some(op) = trace.args.op_of(e) {
        let dims = trace.strings.get(op.input_dims);
        if !dims.is_empty() {
            string(t, 3, dims);
        }
    }
    let correlation = trace.events.correlation.at(e.index());
    if correlation != 0 {
        t.message(event::DEBUG_ANNOTATIONS, |a| {
            a.uint(annotation::NAME_IID, 4)
                .int(annotation::INT_VALUE, correlation);
        });
    }
}

fn negative_time(trace: &Trace, e: EventId, at: i64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{}: event {} would be at {at} ns after its clock offset; Perfetto times \
             cannot be negative (try --align none)",
            trace.path.display(),
            e.0
        ),
    )
}
