//! Shared helpers: fixtures, model counts, the Perfetto decoder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kinetoscope_engine::{Align, Engine, MergeSet, Source};
use kinetoscope_export::MergeInput;
use kinetoscope_trace::{Phase, Trace};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value};

/// The PARAM DLRM job: eight ranks on V100s (the analysis crate's fixture; licence and
/// source beside it).
pub fn param_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto")
}

/// Every rank of `dir`, read through the engine with `align`.
pub fn merge_set(dir: &Path, align: Align) -> MergeSet {
    Engine::default()
        .merge_set(&Source::Path(dir.to_owned()), align)
        .expect("the folder reads")
}

/// The writer's inputs for a merge set.
pub fn inputs(set: &MergeSet) -> Vec<MergeInput<'_>> {
    set.ranks
        .iter()
        .map(|r| MergeInput {
            rank: r.rank,
            trace: &r.trace,
            offset_ns: r.offset_ns,
        })
        .collect()
}

/// What a rank's model holds that the writers write: spans and instants, each as
/// (name, start − offset, duration), sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Spans.
    pub spans: Vec<(String, i64, i64)>,
    /// Instants.
    pub instants: Vec<(String, i64)>,
}

/// [`Written`] of one model, counted here from its columns.
pub fn written(trace: &Trace, offset: i64) -> Written {
    let mut w = Written::default();
    let ev = &trace.events;
    for i in 0..ev.len() {
        let name = trace.strings.get(ev.name[i]).to_owned();
        match ev.phase[i] {
            Phase::Complete => w.spans.push((name, ev.ts_ns[i] - offset, ev.dur_ns.at(i))),
            Phase::Instant => w.instants.push((name, ev.ts_ns[i] - offset)),
            _ => {}
        }
    }
    w.spans.sort();
    w.instants.sort();
    w
}

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/perfetto");
        let files = protox::compile(["perfetto_trace.proto"], [dir]).expect("schema compiles");
        DescriptorPool::from_file_descriptor_set(files).expect("descriptor pool")
    })
}

/// `bytes` decoded as `perfetto.protos.Trace`.
pub fn decode_trace(bytes: &[u8]) -> DynamicMessage {
    let desc: MessageDescriptor = pool()
        .get_message_by_name("perfetto.protos.Trace")
        .expect("Trace in the schema");
    DynamicMessage::decode(desc, bytes).expect("a valid Perfetto trace")
}

/// A field of a message (its default when unset).
pub fn field<'m>(m: &'m DynamicMessage, name: &str) -> std::borrow::Cow<'m, Value> {
    m.get_field_by_name(name)
        .unwrap_or_else(|| panic!("no field {name} in {}", m.descriptor().full_name()))
}

/// A message field.
pub fn sub(m: &DynamicMessage, name: &str) -> DynamicMessage {
    field(m, name).as_message().expect("a message").clone()
}

/// An unsigned field.
pub fn uint(m: &DynamicMessage, name: &str) -> u64 {
    match &*field(m, name) {
        Value::U64(v) => *v,
        Value::U32(v) => u64::from(*v),
        Value::I64(v) => *v as u64,
        Value::I32(v) => *v as u64,
        Value::EnumNumber(v) => *v as u64,
        other => panic!("{name}: not an integer: {other:?}"),
    }
}

/// A repeated message field.
pub fn list(m: &DynamicMessage, name: &str) -> Vec<DynamicMessage> {
    field(m, name)
        .as_list()
        .expect("a list")
        .iter()
        .map(|v| v.as_message().expect("a message").clone())
        .collect()
}

/// A repeated integer field.
pub fn uints(m: &DynamicMessage, name: &str) -> Vec<u64> {
    field(m, name)
        .as_list()
        .expect("a list")
        .iter()
        .map(|v| v.as_u64().expect("u64"))
        .collect()
}

/// Counts by key.
pub fn counts<K: Ord>(keys: impl IntoIterator<Item = K>) -> BTreeMap<K, usize> {
    let mut m = BTreeMap::new();
    for k in keys {
        *m.entry(k).or_insert(0) += 1;
    }
    m
}
