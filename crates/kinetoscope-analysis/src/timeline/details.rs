//! One event's details for the timeline's side panel: what the model keeps of it, its
//! arguments under the names the trace gives them, and its launch/kernel peers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{EventId, Launcher, StrId, Trace};

use super::flows::FlowLink;
use super::{QueryError, TimelineIndex};

/// An argument value as the model keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ArgValue {
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// A text (raw JSON text for shapes and types, as the trace wrote it).
    Text(String),
    /// A list of integers (grid, block).
    Ints(Vec<i64>),
}

/// One event's details.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventDetail {
    /// The event id.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its category (the canonical name, or the raw one when unknown).
    pub category: String,
    /// Its track.
    pub track: u32,
    /// Start, ns after `t0_ns`.
    pub start_ns: i64,
    /// Duration (0 for an instant).
    pub dur_ns: i64,
    /// The arguments the model keeps, under the trace's own keys.
    pub args: BTreeMap<String, ArgValue>,
    /// Launch→kernel flows it is an end of.
    pub flows: Vec<FlowLink>,
    /// For a launch call or a GPU activity: the host operator that launched it.
    pub launched_by: Option<u32>,
}

impl TimelineIndex {
    /// The details of event `id`.
    pub fn event(&self, trace: &Trace, id: u64) -> Result<EventDetail, QueryError> {
        let e = &trace.events;
        let event = u32::try_from(id)
            .ok()
            .map(EventId)
            .filter(|ev| ev.index() < e.len())
            .ok_or(QueryError::UnknownEvent { id })?;
        let i = event.index();
        let t0 = self.tracks.t0_ns;
        let links = trace.launch_links();
        let launcher = links.of_call(event).or_else(|| {
            links
                .of_correlation(trace, e.correlation.at(i))
                .map(|(_, l)| l)
        });
        Ok(EventDetail {
            id: event.0,
            name: trace.name(event).to_owned(),
            category: trace.categories.get(e.cat[i]).display_name().to_owned(),
            track: e.track[i].0,
            start_ns: e.ts_ns[i] - t0,
            dur_ns: e.dur_ns.at(i),
            args: args_of(trace, event),
            flows: flows_of(trace, event, t0),
            launched_by: match launcher {
                Some(Launcher::Span(op)) => Some(op.0),
                _ => None,
            },
        })
    }
}

/// The flows `event` is an end of (through its CUPTI correlation).
fn flows_of(trace: &Trace, event: EventId, t0: i64) -> Vec<FlowLink> {
    let e = &trace.events;
    let c = e.correlation.at(event.index());
    if c == 0 {
        return Vec::new();
    }
    let idx = trace.correlation_index();
    let Some(launch) = idx.launch(c) else {
        return Vec::new();
    };
    let gpus = idx.gpu(c);
    gpus.iter()
        .filter(|&&g| g == event || launch == event)
        .map(|&g| FlowLink {
            from_event: launch.0,
            to_event: g.0,
            from_track: e.track[launch.index()].0,
            to_track: e.track[g.index()].0,
            from_ns: e.ts_ns[launch.index()] - t0,
            to_ns: e.ts_ns[g.index()] - t0,
        })
        .collect()
}

/// The arguments kept for `event`, under the trace's keys; absent values left out.
fn args_of(trace: &Trace, event: EventId) -> BTreeMap<String, ArgValue> {
    let mut out = Args {
        trace,
        map: BTreeMap::new(),
    };
    let e = &trace.events;
    out.int("External id", e.external_id.at(event.index()), 0);
    out.int("correlation", e.correlation.at(event.index()), 0);
    let a = &trace.args;
    if let Some(row) = a.op_row(event) {
        let op = &a.op[row];
        out.text("Input Dims", op.input_dims);
        out.text("Input type", op.input_types);
        out.text("Input Strides", op.input_strides);
        out.text("Concrete Inputs", op.concrete_inputs);
        out.text("Call stack", op.call_stack);
        out.text("Module Hierarchy", op.module_hierarchy);
        out.int("Sequence number", a.op_sequence_number.at(row), -1);
        out.int("Fwd thread id", a.op_fwd_thread_id.at(row), -1);
    }
    if let Some(k) = a.kernel_of(event).map(|k| k.launch) {
        out.int("device", k.device, -1);
        out.int("stream", k.stream, -1);
        out.put("grid", ArgValue::Ints(k.grid.map(i64::from).to_vec()));
        out.put("block", ArgValue::Ints(k.block.map(i64::from).to_vec()));
        out.int("registers per thread", k.registers_per_thread.into(), 0);
        out.int(
            "shared memory",
            k.shared_memory.try_into().unwrap_or(i64::MAX),
            0,
        );
        out.float("blocks per SM", k.blocks_per_sm);
        out.float("warps per SM", k.warps_per_sm);
        out.float("est. achieved occupancy %", k.est_achieved_occupancy_pct);
    }
    if let Some(t) = a.transfer_of(event) {
        out.int("device", t.device, -1);
        out.int("stream", t.stream, -1);
        out.int("bytes", t.bytes.try_into().unwrap_or(i64::MAX), -1);
    }
    if let Some(c) = a.collective_of(event) {
        out.text("Collective name", c.collective_name);
        out.text("dtype", c.dtype);
        out.int("In msg nelems", c.in_msg_nelems, -1);
        out.int("Out msg nelems", c.out_msg_nelems, -1);
        out.int("Group size", c.group_size, -1);
        out.text("Process Group Name", c.pg_name);
        out.text("Process Group Description", c.pg_desc);
        out.text("Process Group Ranks", c.pg_ranks);
        out.int("Seq", c.seq, -1);
    }
    out.map
}

/// Arguments being collected.
struct Args<'a> {
    trace: &'a Trace,
    map: BTreeMap<String, ArgValue>,
}

impl Args<'_> {
    fn put(&mut self, key: &str, v: ArgValue) {
        self.map.insert(key.to_owned(), v);
    }

    /// An integer, unless it is the table's "absent" value.
    fn int(&mut self, key: &str, v: i64, absent: i64) {
        if v != absent {
            self.put(key, ArgValue::Int(v));
        }
    }

    fn float(&mut self, key: &str, v: Option<f32>) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.put(key, ArgValue::Float(f64::from(v)));
        }
    }

    /// An interned text, unless empty.
    fn text(&mut self, key: &str, s: StrId) {
        let text = self.trace.strings.get(s);
        if !text.is_empty() {
            self.put(key, ArgValue::Text(text.to_owned()));
        }
    }
}
