//! A segment: the events of one slice of the event array, parsed by one worker into its
//! own columns with its own interner, then merged in file order into the trace.

use rustc_hash::FxHashMap;

use super::event::{ArgsScratch, IdValue, RawEvent};
use super::lexer::{decode_str, StrSpan};
use crate::model::*;

/// A metadata (`ph: "M"`) record naming a row.
pub(crate) struct MetaRecord {
    pub pid: RawId,
    pub tid: RawId,
    pub key: StrId,
    pub value: StrId,
}

/// The first malformation seen in a segment, for strict mode.
pub(crate) struct FirstProblem {
    pub offset: usize,
    pub element: u64,
    pub message: String,
}

/// A segment's own interner, keyed by the raw bytes between the quotes so that a name
/// seen again costs one hash lookup and no UTF-8 check or unescaping. Raw keys and
/// decoded texts live in two byte arenas; the table holds ids only.
#[derive(Default)]
pub(crate) struct RawInterner {
    raw: TextArena,
    texts: TextArena,
    index: TextIndex,
    /// The first allocation that failed: the segment's names are then incomplete and
    /// the read fails with this.
    pub failed: Option<MemoryError>,
}

/// Times beyond ± this (from corrupt input) are clamped, so that sums of a base, a start
/// and a duration can never overflow.
const TIME_LIMIT: i64 = 1 << 61;

/// A worker forgets its names (and its tracks) once it holds more than this many bytes
/// of them, so its tables stay bounded whatever the number of distinct names.
const FORGET_BYTES: usize = 8 << 20;
/// ... or more than this many of them.
const FORGET_COUNT: usize = 1 << 17;

impl RawInterner {
    fn new() -> Self {
        let mut t = Self::default();
        t.intern(b"", false);
        t
    }

    /// The id of `raw` (JSON string bytes, `escaped` if they hold backslash escapes).
    #[inline]
    fn intern(&mut self, raw: &[u8], escaped: bool) -> StrId {
        if let Some(id) = self.index.find(&self.raw, raw) {
            return StrId(id);
        }
        self.add(raw, escaped)
    }

    /// Add a name not seen yet.
    #[cold]
    fn add(&mut self, raw: &[u8], escaped: bool) -> StrId {
        let id = self.raw.len() as u32;
        let text = decode_str(raw, escaped);
        let mut charge = Charge::default();
        let added = self
            .raw
            .push(raw, &mut charge)
            .and_then(|()| self.texts.push(text.as_bytes(), &mut charge))
            .and_then(|()| self.index.insert(&self.raw, raw, id, &mut charge));
        match added {
            Ok(()) => StrId(id),
            Err(e) => {
                self.failed.get_or_insert(e);
                StrId(0)
            }
        }
    }

    /// The text of an id.
    pub fn get(&self, id: StrId) -> &str {
        // Texts are pushed from `decode_str`, which returns `str`.
        std::str::from_utf8(self.texts.get(id.0 as usize)).unwrap_or("")
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// The texts from id `from` on, in id order.
    pub fn iter_from(&self, from: usize) -> impl Iterator<Item = &str> {
        (from..self.texts.len()).map(|i| self.get(StrId(i as u32)))
    }

    /// Whether it holds enough to be forgotten ([`FORGET_BYTES`], [`FORGET_COUNT`]).
    fn is_large(&self) -> bool {
        self.raw.text_bytes() + self.texts.text_bytes() > FORGET_BYTES
            || self.raw.len() > FORGET_COUNT
    }

    fn clear(&mut self) {
        self.raw.clear();
        self.texts.clear();
        self.index.clear();
        self.intern(b"", false);
    }
}

/// Columns built by one worker.
pub(crate) struct Segment {
    pub strings: RawInterner,
    pub cats: CategoryTable,
    track_ids: FxHashMap<(RawId, RawId), TrackId>,
    pub tracks: Vec<(RawId, RawId)>,
    pub events: EventTable,
    pub args: ArgTables,
    pub flows: FlowTable,
    pub meta: Vec<MetaRecord>,
    /// (kind, count, first offset in buffer, first element index in segment).
    pub defects: Vec<(DefectKind, u64, usize, u64)>,
    pub first_problem: Option<FirstProblem>,
    pub elements: u64,
    pub features: FormatFeatures,
    /// The raw bytes of the categories seen, each with its id (at most [`RAW_CATS`] of at
    /// most [`RAW_CAT_BYTES`]; a trace has a dozen): a category is found by its bytes,
    /// with no decoding or hashing.
    raw_cats: Vec<(Box<[u8]>, CatId)>,
}

/// How many categories' raw bytes a segment keeps for finding them again, and the
/// longest it keeps (a hostile trace's categories cost no more than this).
const RAW_CATS: usize = 32;
const RAW_CAT_BYTES: usize = 256;

impl Segment {
    pub fn new() -> Self {
        Self {
            strings: RawInterner::new(),
            cats: CategoryTable::default(),
            track_ids: FxHashMap::default(),
            tracks: Vec::new(),
            events: EventTable::default(),
            args: ArgTables::default(),
            flows: FlowTable::default(),
            meta: Vec::new(),
            defects: Vec::new(),
            first_problem: None,
            elements: 0,
            features: FormatFeatures::default(),
            raw_cats: Vec::new(),
        }
    }

    /// Record a defect at `offset` (in the buffer) on the element being read.
    pub fn defect(&mut self, kind: DefectKind, offset: usize, message: &str) {
        let element = self.elements;
        if self.first_problem.is_none() {
            self.first_problem = Some(FirstProblem {
                offset,
                element,
                message: message.to_owned(),
            });
        }
        match self.defects.iter_mut().find(|d| d.0 == kind) {
            Some(d) => d.1 += 1,
            None => self.defects.push((kind, 1, offset, element)),
        }
    }

    /// Drop the columns of the last window (after a merge, or a wrong guess) while
    /// keeping the interner, categories and tracks, and the allocations, for the next.
    pub fn clear(&mut self) {
        self.cats.reset_counts();
        let e = &mut self.events;
        e.ts_ns.clear();
        e.dur_ns.clear();
        e.name.clear();
        e.cat.clear();
        e.phase.clear();
        e.track.clear();
        e.external_id.clear();
        e.correlation.clear();
        let a = &mut self.args;
        a.op.clear();
        a.op_sequence_number.clear();
        a.op_fwd_thread_id.clear();
        a.kernel.clear();
        a.transfer.clear();
        a.sync.clear();
        a.memory.clear();
        a.collective.clear();
        a.python.clear();
        let f = &mut self.flows;
        f.cat.clear();
        f.id.clear();
        f.end.clear();
        f.ts_ns.clear();
        f.track.clear();
        self.meta.clear();
        self.defects.clear();
        self.first_problem = None;
        self.elements = 0;
    }

    /// When its names or tracks have grown past [`FORGET_BYTES`] / [`FORGET_COUNT`],
    /// forget them (the worker's maps to the trace's ids must be forgotten too); returns
    /// whether it did.
    pub fn forget_if_large(&mut self) -> bool {
        if !self.strings.is_large() && self.tracks.len() <= FORGET_COUNT {
            return false;
        }
        self.strings.clear();
        self.track_ids.clear();
        self.tracks.clear();
        true
    }

    /// Count an element that was skipped as malformed.
    pub fn skip_element(&mut self) {
        self.elements += 1;
    }

    fn text(&mut self, buf: &[u8], s: StrSpan) -> StrId {
        self.strings.intern(&buf[s.start..s.end], s.escaped)
    }

    /// Raw JSON text (an array, say) kept verbatim.
    fn raw_text(&mut self, buf: &[u8], span: Option<(usize, usize)>) -> StrId {
        match span {
            None => StrId(0),
            Some((s, e)) => self.strings.intern(&buf[s..e], false),
        }
    }

    fn opt_text(&mut self, buf: &[u8], s: Option<StrSpan>) -> StrId {
        s.map(|s| self.text(buf, s)).unwrap_or_default()
    }

    fn raw_id(&mut self, buf: &[u8], v: IdValue) -> RawId {
        match v {
            IdValue::None => RawId::Int(0),
            IdValue::Int(i) => RawId::Int(i),
            IdValue::Str(s) => RawId::Str(self.text(buf, s)),
        }
    }

    fn track(&mut self, pid: RawId, tid: RawId) -> TrackId {
        if let Some(&t) = self.track_ids.get(&(pid, tid)) {
            return t;
        }
        let t = TrackId(self.tracks.len() as u32);
        self.tracks.push((pid, tid));
        self.track_ids.insert((pid, tid), t);
        t
    }

    /// Add one parsed element that started at `offset` in `buf`.
    pub fn push(&mut self, ev: &RawEvent, buf: &[u8], offset: usize) {
        self.note_defects(ev, offset);
        let name = self.opt_text(buf, ev.name);
        let cat = self.category(ev, buf, name);
        self.note_features(ev);
        if ev.ph == b'M' {
            self.push_meta(ev, buf, name, cat);
            return;
        }
        let Some(ts) = ev.ts_ns.map(|t| t.clamp(-TIME_LIMIT, TIME_LIMIT)) else {
            self.defect(
                DefectKind::MissingTimestamp,
                offset,
                "an event without a numeric `ts`",
            );
            self.elements += 1;
            return;
        };
        self.cats.add_count(cat, 1);
        self.elements += 1;
        let pid = self.raw_id(buf, ev.pid);
        let tid = self.raw_id(buf, ev.tid);
        let track = self.track(pid, tid);
        let kind = self.cats.kind(cat);
        if matches!(ev.ph, b's' | b'f' | b't') || kind.is_flow() {
            self.push_flow(ev, cat, ts, track);
            return;
        }
        let event = self.push_event(ev, name, cat, ts, track);
        self.push_kind_args(kind, event, &ev.args, buf);
        if ev.args.collective_name.is_some() {
            self.push_collective(event, &ev.args, buf);
        }
    }

    /// Count the defects the lexer repaired in the element.
    #[inline]
    fn note_defects(&mut self, ev: &RawEvent, offset: usize) {
        if ev.defects.unescaped_quote {
            self.defect(
                DefectKind::UnescapedQuote,
                offset,
                "an unescaped quote in a name",
            );
        }
        if ev.defects.bare_token {
            self.defect(
                DefectKind::BareToken,
                offset,
                "a bare token (such as N/A) where a JSON value belongs",
            );
        }
        if ev.defects.control_char {
            self.defect(
                DefectKind::ControlCharacter,
                offset,
                "a raw control character in a string",
            );
        }
        if ev.defects.negative_duration {
            self.defect(
                DefectKind::NegativeDuration,
                offset,
                "a negative duration (read as 0)",
            );
        }
    }

    /// The element's category: its `cat` (the last few raw texts remembered, so a
    /// repeated one costs a comparison), or the one its phase or name implies.
    #[inline]
    fn category(&mut self, ev: &RawEvent, buf: &[u8], name: StrId) -> CatId {
        match ev.cat {
            Some(s) => {
                let raw = &buf[s.start..s.end];
                match self.raw_cats.iter().find(|(r, _)| **r == *raw) {
                    Some(&(_, id)) => id,
                    None => {
                        let id = self.cats.intern(&decode_str(raw, s.escaped));
                        if self.raw_cats.len() < RAW_CATS && raw.len() <= RAW_CAT_BYTES {
                            self.raw_cats.push((raw.into(), id));
                        }
                        id
                    }
                }
            }
            None if ev.ph == b'M' => CategoryTable::METADATA,
            None if matches!(self.strings.get(name), "[memory]" | "[OutOfMemory]") => {
                self.cats.intern("cpu_instant_event")
            }
            None => CategoryTable::NONE,
        }
    }

    /// Note which optional profiler features the element shows.
    #[inline]
    fn note_features(&mut self, ev: &RawEvent) {
        let a = &ev.args;
        self.features.ev_idx |= a.saw_ev_idx;
        self.features.profiler_event_index |= a.saw_profiler_event_index;
        self.features.record_function_id |= a.saw_record_function_id;
        self.features.concrete_inputs |= a.concrete_inputs.is_some();
        self.features.fractional_ts |= ev.ts_fraction;
        self.features.string_tids |= ev.string_id;
    }

    /// Keep a metadata (`ph: "M"`) element: a process's or thread's name or label.
    #[inline]
    fn push_meta(&mut self, ev: &RawEvent, buf: &[u8], name: StrId, cat: CatId) {
        self.cats.add_count(cat, 1);
        self.elements += 1;
        let pid = self.raw_id(buf, ev.pid);
        let tid = self.raw_id(buf, ev.tid);
        let value = self.opt_text(buf, ev.args.meta_text);
        self.meta.push(MetaRecord {
            pid,
            tid,
            key: name,
            value,
        });
    }

    /// Keep a flow element (`ph` `s`, `t` or `f`, or a flow category).
    #[inline]
    fn push_flow(&mut self, ev: &RawEvent, cat: CatId, ts: i64, track: TrackId) {
        self.flows.cat.push(cat);
        self.flows.id.push(ev.id.unwrap_or(0) as i64);
        self.flows.end.push(match ev.ph {
            b's' => FlowEnd::Start,
            b't' => FlowEnd::Step,
            _ => FlowEnd::Finish,
        });
        self.flows.ts_ns.push(ts);
        self.flows.track.push(track);
    }

    /// Add the element's row to the event columns; returns its id.
    #[inline]
    fn push_event(
        &mut self,
        ev: &RawEvent,
        name: StrId,
        cat: CatId,
        ts: i64,
        track: TrackId,
    ) -> EventId {
        let event = EventId(self.events.len() as u32);
        let a = &ev.args;
        let e = &mut self.events;
        e.ts_ns.push(ts);
        e.dur_ns.push(if ev.ph == b'X' {
            ev.dur_ns.min(TIME_LIMIT)
        } else {
            0
        });
        e.name.push(name);
        e.cat.push(cat);
        e.phase.push(match ev.ph {
            b'X' => Phase::Complete,
            b'i' | b'I' => Phase::Instant,
            b'C' => Phase::Counter,
            _ => Phase::Other,
        });
        e.track.push(track);
        e.external_id.push(a.external_id.unwrap_or(0));
        e.correlation.push(a.correlation.unwrap_or(0));
        event
    }

    /// Keep the arguments that events of `kind` carry: a kernel's launch, a copy's
    /// bytes, an operator's shapes and stack, a memory instant's totals, a Python
    /// frame's ids.
    #[inline]
    fn push_kind_args(&mut self, kind: CategoryKind, event: EventId, a: &ArgsScratch, buf: &[u8]) {
        match kind {
            CategoryKind::Kernel => self.args.kernel.push(KernelArgs {
                event,
                launch: KernelLaunch {
                    device: a.device.unwrap_or(-1),
                    stream: a.stream.unwrap_or(-1),
                    grid: a.grid.unwrap_or_default(),
                    block: a.block.unwrap_or_default(),
                    registers_per_thread: a.registers.unwrap_or(0),
                    shared_memory: a.shared_memory.unwrap_or(0),
                    blocks_per_sm: a.blocks_per_sm,
                    warps_per_sm: a.warps_per_sm,
                    est_achieved_occupancy_pct: a.occupancy,
                },
            }),
            CategoryKind::GpuMemcpy | CategoryKind::GpuMemset => {
                self.args.transfer.push(TransferArgs {
                    event,
                    device: a.device.unwrap_or(-1),
                    stream: a.stream.unwrap_or(-1),
                    bytes: a.bytes.unwrap_or(0).max(0) as u64,
                })
            }
            CategoryKind::CudaSync => self.args.sync.push(SyncArgs {
                event,
                stream: a.stream.unwrap_or(-1),
            }),
            CategoryKind::CpuOp | CategoryKind::UserAnnotation
                if a.input_dims.is_some()
                    || a.input_types.is_some()
                    || a.call_stack.is_some()
                    || a.sequence_number.is_some()
                    || a.module_hierarchy.is_some() =>
            {
                self.push_op_args(event, a, buf)
            }
            CategoryKind::CpuInstantEvent if a.bytes.is_some() || a.total_allocated.is_some() => {
                self.args.memory.push(MemoryArgs {
                    event,
                    addr: a.addr.unwrap_or(0),
                    bytes: a.bytes.unwrap_or(0),
                    total_allocated: a.total_allocated.unwrap_or(-1),
                    total_reserved: a.total_reserved.unwrap_or(-1),
                    device_type: a.device_type.unwrap_or(0),
                    device_id: a.device_id.unwrap_or(-1),
                });
            }
            CategoryKind::PythonFunction if a.python_id.is_some() => {
                self.args.python.push(PythonArgs {
                    event,
                    python_id: a.python_id.unwrap_or(-1),
                    parent_id: a.python_parent_id.unwrap_or(-1),
                    module_id: a.python_module_id.unwrap_or(-1),
                });
            }
            _ => {}
        }
    }

    /// Keep an operator's recorded shapes, types, stack and module.
    #[inline]
    fn push_op_args(&mut self, event: EventId, a: &ArgsScratch, buf: &[u8]) {
        let op = OpArgs {
            event,
            input_dims: self.raw_text(buf, a.input_dims),
            input_types: self.raw_text(buf, a.input_types),
            input_strides: self.raw_text(buf, a.input_strides),
            concrete_inputs: self.raw_text(buf, a.concrete_inputs),
            call_stack: self.opt_text(buf, a.call_stack),
            module_hierarchy: self.opt_text(buf, a.module_hierarchy),
        };
        self.args.op.push(op);
        self.args
            .op_sequence_number
            .push(a.sequence_number.unwrap_or(-1));
        self.args
            .op_fwd_thread_id
            .push(a.fwd_thread_id.unwrap_or(-1));
    }

    /// Keep a collective's arguments (`record_param_comms` and its kernels).
    fn push_collective(&mut self, event: EventId, a: &ArgsScratch, buf: &[u8]) {
        let c = CollectiveArgs {
            event,
            collective_name: self.opt_text(buf, a.collective_name),
            dtype: self.opt_text(buf, a.dtype),
            in_msg_nelems: a.in_msg_nelems.unwrap_or(-1),
            out_msg_nelems: a.out_msg_nelems.unwrap_or(-1),
            group_size: a.group_size.unwrap_or(-1),
            pg_name: self.quoted_or_raw_text(buf, a.pg_name),
            pg_desc: self.opt_text(buf, a.pg_desc),
            pg_ranks: self.quoted_or_raw_text(buf, a.pg_ranks),
            seq: a.seq.unwrap_or(-1),
            comms_id: a.comms_id,
        };
        self.args.collective.push(c);
    }

    /// A value's text: a string's contents without its quotes, any other value as it
    /// is written.
    fn quoted_or_raw_text(&mut self, buf: &[u8], span: Option<(usize, usize)>) -> StrId {
        match span {
            Some((s, e)) if buf[s] == b'"' => self.strings.intern(&buf[s + 1..e - 1], false),
            other => self.raw_text(buf, other),
        }
    }
}
