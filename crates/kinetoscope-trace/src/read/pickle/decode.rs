//! From decoded pickle values to the typed [`Snapshot`] model.
//!
//! The decoder walks a fixed schema, never the value graph at large, so it cannot
//! recurse without bound or loop on a cyclic pickle. Shared frame lists (the allocator
//! shares one Python list between every event with the same traceback) are decoded
//! once per list and interned by content. A budget of 4 units per input byte (one per
//! decoded element, one per dict item scanned) stops a memo "billion laughs" (one large
//! list or dict referenced many times) from costing more than linear time.

use std::collections::HashMap;
use std::rc::Rc;

use super::vm::{Obj, Pickle, Val};
use crate::snapshot::*;

/// A schema error: where (a path like `segments[3].blocks[0].size`), the byte offset of
/// the nearest container, and what.
#[derive(Debug)]
pub struct SchemaError {
    /// Byte offset of the container at fault (0 when unknown).
    pub offset: u64,
    /// Field path and message.
    pub message: String,
}

type R<T> = Result<T, SchemaError>;

pub(super) struct Decoder<'p> {
    p: &'p Pickle,
    budget: u64,
    stack_by_obj: HashMap<u32, StackId>,
    stack_by_content: HashMap<Vec<Frame>, StackId>,
    stacks: Vec<Vec<Frame>>,
}

type Items<'p> = &'p [(Val, Val)];

impl<'p> Decoder<'p> {
    pub(super) fn new(p: &'p Pickle, budget: u64) -> Self {
        let mut stack_by_content = HashMap::new();
        stack_by_content.insert(Vec::new(), StackId::EMPTY);
        Self {
            p,
            budget,
            stack_by_obj: HashMap::new(),
            stack_by_content,
            stacks: vec![Vec::new()],
        }
    }

    fn fail(&self, near: &Val, path: &str, message: impl fmt::Display) -> SchemaError {
        SchemaError {
            offset: self.p.offset_of(near).unwrap_or(0),
            message: format!("{path}: {message}"),
        }
    }

    fn spend(&mut self, near: &Val, path: &str) -> R<()> {
        self.spend_n(near, path, 1)
    }

    fn spend_n(&mut self, near: &Val, path: &str, n: u64) -> R<()> {
        if self.budget < n {
            return Err(self.fail(
                near,
                path,
                "decoding would cost more than 4 units per input byte (shared references \
                 multiplying the data: refused as hostile)",
            ));
        }
        self.budget -= n;
        Ok(())
    }

    /// A dict's items; each visit spends one unit per item, since key lookups scan them.
    fn dict(&mut self, v: &'p Val, path: &str) -> R<Items<'p>> {
        match self.p.obj(v) {
            Some(Obj::Dict(d)) => {
                self.spend_n(v, path, d.len() as u64)?;
                Ok(d)
            }
            _ => Err(self.fail(
                v,
                path,
                format!("expected a dict, found a {}", self.p.type_name(v)),
            )),
        }
    }

    fn seq(&self, v: &'p Val, path: &str) -> R<&'p [Val]> {
        match self.p.obj(v) {
            Some(Obj::List(l) | Obj::Tuple(l)) => Ok(l),
            _ => Err(self.fail(
                v,
                path,
                format!("expected a list, found a {}", self.p.type_name(v)),
            )),
        }
    }

    fn int(&self, v: &Val, path: &str) -> R<i128> {
        match v {
            Val::Int(i) => Ok(*i as i128),
            Val::UInt(u) => Ok(*u as i128),
            Val::Bool(b) => Ok(*b as i128),
            _ => Err(self.fail(
                v,
                path,
                format!("expected an int, found a {}", self.p.type_name(v)),
            )),
        }
    }

    fn u64(&self, v: &Val, path: &str) -> R<u64> {
        let i = self.int(v, path)?;
        u64::try_from(i).map_err(|_| self.fail(v, path, format!("{i} is not a valid size")))
    }

    fn i64(&self, v: &Val, path: &str) -> R<i64> {
        let i = self.int(v, path)?;
        i64::try_from(i).map_err(|_| self.fail(v, path, format!("{i} does not fit 64 bits")))
    }

    fn str(&self, v: &'p Val, path: &str) -> R<&'p str> {
        match v {
            Val::Str(s) => Ok(s),
            _ => Err(self.fail(
                v,
                path,
                format!("expected a str, found a {}", self.p.type_name(v)),
            )),
        }
    }

    /// Stream ids are pointers written as ints; a negative one (never seen) is kept as
    /// its two's-complement bits.
    fn stream(&self, v: Option<&Val>, path: &str) -> R<u64> {
        match v {
            None | Some(Val::None) => Ok(0),
            Some(v) => Ok(self.int(v, path)? as u64),
        }
    }

    pub(super) fn finish(self) -> Vec<Vec<Frame>> {
        self.stacks
    }

    /// Decode the root value.
    pub(super) fn root(&mut self, root: &'p Val) -> R<Decoded> {
        let mut out = Decoded::default();
        match self.p.obj(root) {
            Some(Obj::List(_)) => {
                out.layout = SnapshotLayout::BareList;
                out.segments = self.segments(root, "segments")?;
            }
            Some(Obj::Dict(d)) => {
                out.layout = SnapshotLayout::Dict;
                let mut segments = None;
                for (k, v) in d.iter() {
                    let key = match k {
                        Val::Str(s) => s.clone(),
                        _ => continue,
                    };
                    match &*key {
                        "segments" => segments = Some(v),
                        "device_traces" => out.device_traces = Some(self.traces(v)?),
                        "allocator_settings" => {
                            out.allocator_settings = Some(self.settings(v)?);
                        }
                        "external_annotations" => {
                            out.external_annotations = self.annotations(v)?;
                        }
                        other => {
                            if !out.other_keys.iter().any(|o| o == other) {
                                out.other_keys.push(other.to_owned());
                            }
                        }
                    }
                }
                let seg = segments.ok_or_else(|| SchemaError {
                    offset: self.p.offset_of(root).unwrap_or(0),
                    message: "no `segments` key: not a CUDA memory snapshot".to_owned(),
                })?;
                out.segments = self.segments(seg, "segments")?;
            }
            _ => {
                return Err(self.fail(
                    root,
                    "snapshot",
                    format!(
                        "expected a dict or a list of segments, found a {}",
                        self.p.type_name(root)
                    ),
                ))
            }
        }
        Ok(out)
    }

    fn segments(&mut self, v: &'p Val, path: &str) -> R<Vec<Segment>> {
        let list = self.seq(v, path)?;
        let mut out = Vec::with_capacity(list.len().min(1 << 16));
        for (i, s) in list.iter().enumerate() {
            let path = format!("{path}[{i}]");
            self.spend(s, &path)?;
            out.push(self.segment(s, &path)?);
        }
        Ok(out)
    }

    fn segment(&mut self, v: &'p Val, path: &str) -> R<Segment> {
        let d = self.dict(v, path)?;
        let f = |k: &str| get(d, k);
        let address = match f("address") {
            Some(a) => self.u64(a, &format!("{path}.address"))?,
            None => 0,
        };
        let mut blocks = Vec::new();
        if let Some(b) = f("blocks") {
            let list = self.seq(b, &format!("{path}.blocks"))?;
            blocks.reserve(list.len().min(1 << 16));
            let mut next = address;
            for (j, bv) in list.iter().enumerate() {
                let bpath = format!("{path}.blocks[{j}]");
                self.spend(bv, &bpath)?;
                let block = self.block(bv, &bpath, next)?;
                next = block.address.saturating_add(block.size);
                blocks.push(block);
            }
        }
        let sum = |pred: &dyn Fn(&BlockState) -> bool| -> u64 {
            blocks
                .iter()
                .filter(|b| pred(&b.state))
                .map(|b| b.size)
                .sum()
        };
        let total_size = match f("total_size") {
            Some(t) => self.u64(t, &format!("{path}.total_size"))?,
            None => blocks.iter().map(|b| b.size).sum(),
        };
        let allocated_size = match f("allocated_size") {
            Some(t) => self.u64(t, &format!("{path}.allocated_size"))?,
            None => sum(&|s| *s == BlockState::ActiveAllocated),
        };
        let active_size = match f("active_size") {
            Some(t) => self.u64(t, &format!("{path}.active_size"))?,
            None => sum(&|s| s.is_active()),
        };
        let requested_size = match f("requested_size") {
            Some(t) => Some(self.u64(t, &format!("{path}.requested_size"))?),
            None => None,
        };
        let segment_pool_id = match f("segment_pool_id") {
            Some(Val::None) | None => None,
            Some(t) => {
                let p = format!("{path}.segment_pool_id");
                let s = self.seq(t, &p)?;
                match s {
                    [a, b] => Some((self.i64(a, &p)?, self.i64(b, &p)?)),
                    _ => return Err(self.fail(t, &p, "expected a pair")),
                }
            }
        };
        Ok(Segment {
            device: match f("device") {
                Some(x) => self.i64(x, &format!("{path}.device"))?,
                None => 0,
            },
            address,
            total_size,
            allocated_size,
            active_size,
            requested_size,
            stream: self.stream(f("stream"), &format!("{path}.stream"))?,
            segment_type: match f("segment_type") {
                Some(t) => Some(self.str(t, &format!("{path}.segment_type"))?.to_owned()),
                None => None,
            },
            segment_pool_id,
            is_expandable: match f("is_expandable") {
                Some(Val::Bool(b)) => Some(*b),
                _ => None,
            },
            stack: self.frames(f("frames"), &format!("{path}.frames"))?,
            blocks,
        })
    }

    fn block(&mut self, v: &'p Val, path: &str, next: u64) -> R<Block> {
        let d = self.dict(v, path)?;
        let f = |k: &str| get(d, k);
        let size = match f("size") {
            Some(s) => self.u64(s, &format!("{path}.size"))?,
            None => return Err(self.fail(v, path, "block without `size`")),
        };
        let state = match f("state") {
            Some(s) => BlockState::parse(self.str(s, &format!("{path}.state"))?),
            None => return Err(self.fail(v, path, "block without `state`")),
        };
        // 1.13 `history`: newest first; the newest entry describes the live allocation.
        let history = match f("history") {
            Some(h) => {
                let list = self.seq(h, &format!("{path}.history"))?;
                match list.first() {
                    Some(first) => Some(self.dict(first, &format!("{path}.history[0]"))?),
                    None => None,
                }
            }
            None => None,
        };
        let (address, address_computed) = match f("address") {
            Some(a) => (self.u64(a, &format!("{path}.address"))?, false),
            None => (next, true),
        };
        let requested_size = match (
            f("requested_size"),
            history.and_then(|h| get(h, "real_size")),
        ) {
            (Some(r), _) => self.u64(r, &format!("{path}.requested_size"))?,
            (None, Some(r)) => self.u64(r, &format!("{path}.history[0].real_size"))?,
            (None, None) => size,
        };
        let frames = f("frames").or_else(|| history.and_then(|h| get(h, "frames")));
        Ok(Block {
            address,
            address_computed,
            size,
            requested_size,
            state,
            stack: self.frames(frames, &format!("{path}.frames"))?,
        })
    }

    fn frames(&mut self, v: Option<&'p Val>, path: &str) -> R<StackId> {
        let v = match v {
            None | Some(Val::None) => return Ok(StackId::EMPTY),
            Some(v) => v,
        };
        let Val::Obj(obj) = v else {
            return Err(self.fail(v, path, "expected a list of frames"));
        };
        if let Some(id) = self.stack_by_obj.get(obj) {
            return Ok(*id);
        }
        let list = self.seq(v, path)?;
        let mut frames = Vec::with_capacity(list.len().min(1024));
        for (i, fv) in list.iter().enumerate() {
            let fpath = format!("{path}[{i}]");
            self.spend(fv, &fpath)?;
            let d = self.dict(fv, &fpath)?;
            let text = |k: &str| -> String {
                match get(d, k) {
                    Some(Val::Str(s)) => s.to_string(),
                    _ => String::new(),
                }
            };
            frames.push(Frame {
                filename: text("filename"),
                line: match get(d, "line") {
                    Some(Val::Int(l)) => *l,
                    _ => 0,
                },
                name: text("name"),
            });
        }
        let next = StackId(self.stacks.len() as u32);
        let id = *self.stack_by_content.entry(frames).or_insert_with_key(|k| {
            self.stacks.push(k.clone());
            next
        });
        self.stack_by_obj.insert(*obj, id);
        Ok(id)
    }

    fn traces(&mut self, v: &'p Val) -> R<Vec<Vec<TraceEntry>>> {
        let devices = self.seq(v, "device_traces")?;
        let mut out = Vec::with_capacity(devices.len().min(1024));
        for (d, tv) in devices.iter().enumerate() {
            let path = format!("device_traces[{d}]");
            let list = self.seq(tv, &path)?;
            let mut entries = Vec::with_capacity(list.len().min(1 << 20));
            for (k, ev) in list.iter().enumerate() {
                let epath = format!("{path}[{k}]");
                self.spend(ev, &epath)?;
                entries.push(self.entry(ev, &epath)?);
            }
            out.push(entries);
        }
        Ok(out)
    }

    fn entry(&mut self, v: &'p Val, path: &str) -> R<TraceEntry> {
        let d = self.dict(v, path)?;
        let f = |k: &str| get(d, k);
        let action = match f("action") {
            Some(a) => Action::parse(self.str(a, &format!("{path}.action"))?),
            None => return Err(self.fail(v, path, "trace entry without `action`")),
        };
        let opt_u64 = |me: &Self, k: &str| -> R<Option<u64>> {
            match f(k) {
                None | Some(Val::None) => Ok(None),
                Some(x) => Ok(Some(me.u64(x, &format!("{path}.{k}"))?)),
            }
        };
        let opt_str = |k: &str| -> Option<String> {
            match f(k) {
                Some(Val::Str(s)) if !s.is_empty() => Some(s.to_string()),
                _ => None,
            }
        };
        Ok(TraceEntry {
            action,
            addr: opt_u64(self, "addr")?,
            size: opt_u64(self, "size")?.unwrap_or(0),
            stream: self.stream(f("stream"), &format!("{path}.stream"))?,
            time_us: match f("time_us") {
                None | Some(Val::None) => None,
                Some(t) => Some(self.i64(t, &format!("{path}.time_us"))?),
            },
            device_free: opt_u64(self, "device_free")?,
            stack: self.frames(f("frames"), &format!("{path}.frames"))?,
            compile_context: opt_str("compile_context"),
            user_metadata: opt_str("user_metadata"),
        })
    }

    fn annotations(&mut self, v: &'p Val) -> R<Vec<ExternalAnnotation>> {
        let list = self.seq(v, "external_annotations")?;
        let mut out = Vec::with_capacity(list.len().min(1 << 16));
        for (i, a) in list.iter().enumerate() {
            let path = format!("external_annotations[{i}]");
            self.spend(a, &path)?;
            let d = self.dict(a, &path)?;
            let text = |k: &str| match get(d, k) {
                Some(Val::Str(s)) => s.to_string(),
                _ => String::new(),
            };
            let int = |k: &str| match get(d, k) {
                Some(Val::Int(i)) => Some(*i),
                _ => None,
            };
            out.push(ExternalAnnotation {
                name: text("name"),
                stage: text("stage"),
                device: int("device"),
                time_us: int("time_us"),
            });
        }
        Ok(out)
    }

    fn settings(&mut self, v: &'p Val) -> R<serde_json::Map<String, serde_json::Value>> {
        let d = self.dict(v, "allocator_settings")?;
        let mut out = serde_json::Map::new();
        for (k, val) in d {
            self.spend(val, "allocator_settings")?;
            let key = match k {
                Val::Str(s) => s.to_string(),
                other => json_scalar(other).to_string(),
            };
            out.insert(key, self.json(val, 0)?);
        }
        Ok(out)
    }

    /// A settings value as JSON, at most 4 levels deep (settings are 2 deep).
    fn json(&mut self, v: &'p Val, depth: u32) -> R<serde_json::Value> {
        use serde_json::Value as J;
        let Some(obj) = self.p.obj(v) else {
            return Ok(json_scalar(v));
        };
        if depth >= 4 {
            return Ok(J::String(format!("<{} nested too deep>", obj.type_name())));
        }
        Ok(match obj {
            Obj::List(l) | Obj::Tuple(l) | Obj::Set(l) => {
                let mut a = Vec::new();
                for x in l {
                    self.spend(x, "allocator_settings")?;
                    a.push(self.json(x, depth + 1)?);
                }
                J::Array(a)
            }
            Obj::Dict(d) => {
                let mut m = serde_json::Map::new();
                for (k, x) in d {
                    self.spend(x, "allocator_settings")?;
                    let key = match k {
                        Val::Str(s) => s.to_string(),
                        other => json_scalar(other).to_string(),
                    };
                    m.insert(key, self.json(x, depth + 1)?);
                }
                J::Object(m)
            }
        })
    }
}

use std::fmt;

fn json_scalar(v: &Val) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Val::None => J::Null,
        Val::Bool(b) => J::Bool(*b),
        Val::Int(i) => J::from(*i),
        Val::UInt(u) => J::from(*u),
        Val::BigInt => J::String("<big int>".to_owned()),
        Val::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Val::Str(s) => J::String(s.to_string()),
        Val::Bytes(b) => J::String(format!("<{} bytes>", b.len())),
        Val::Obj(_) => J::Null,
    }
}

/// The value of a string key; the last occurrence wins, as in Python.
fn get<'p>(d: Items<'p>, key: &str) -> Option<&'p Val> {
    d.iter().rev().find_map(|(k, v)| match k {
        Val::Str(s) if Rc::as_ref(s) == key => Some(v),
        _ => None,
    })
}

/// What the decoder produces (the reader adds path, size and protocol).
#[derive(Debug)]
pub(super) struct Decoded {
    pub layout: SnapshotLayout,
    pub segments: Vec<Segment>,
    pub device_traces: Option<Vec<Vec<TraceEntry>>>,
    pub allocator_settings: Option<serde_json::Map<String, serde_json::Value>>,
    pub external_annotations: Vec<ExternalAnnotation>,
    pub other_keys: Vec<String>,
}

impl Default for Decoded {
    fn default() -> Self {
        Self {
            layout: SnapshotLayout::Dict,
            segments: Vec::new(),
            device_traces: None,
            allocator_settings: None,
            external_annotations: Vec::new(),
            other_keys: Vec::new(),
        }
    }
}
