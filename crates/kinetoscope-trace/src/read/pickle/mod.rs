//! The CUDA memory snapshot reader: a safe, data-only pickle decoder ([`unpickle`])
//! and the snapshot schema on top of it ([`read_snapshot`], [`snapshot_from_bytes`]).
//!
//! A pickle is a program for Python's unpickler; this reader runs only the opcodes that
//! build plain data (dicts, lists, tuples, sets, str, bytes, int, float, bool, None) and
//! the memo, and refuses every opcode that would import or call code
//! ([`REFUSED_OPCODES`]) with an error naming the opcode and its byte offset.
//!
//! Hostile input is refused in bounded memory and time (see [`limits`]): every length is
//! checked against the bytes left before anything is allocated; containers live in a flat
//! arena so nesting depth costs no recursion; the stack, open marks, containers and memo
//! entries are capped; decoding into the typed model spends a budget of 4 units per input
//! byte (one per element, one per dict item scanned), so shared references cannot
//! multiply the work. Work is linear in the input size. The pickle's bytes, and the
//! stack, containers, their items and the memo as they grow, are charged to the memory
//! budget (`ReadOptions::budget`): running out is an error, not an abort.

mod decode;
mod vm;

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

pub use vm::{unpickle, Obj, Pickle, PickleError, Val, REFUSED_OPCODES};

use super::{sniff_bytes, sniff_path, sniff_reader, ReadOptions};
use crate::model::Charge;
use crate::snapshot::Snapshot;
use crate::{TraceError, TraceResult};

/// The limits that keep hostile pickles bounded.
pub mod limits {
    /// Largest (decompressed) snapshot read: 4 GiB. The whole pickle is held in memory.
    pub const MAX_INPUT_BYTES: u64 = 4 << 30;
    /// Most values on the pickle stack at once. Python's pickler batches at most 1,000
    /// items per MARK, so real snapshots stay far below this.
    pub const MAX_STACK: usize = 1 << 22;
    /// Most MARKs open at once (one per nesting level under construction; real
    /// snapshots nest 6 deep).
    pub const MAX_MARKS: usize = 4096;
    /// Most containers (dicts, lists, tuples, sets); about 64 bytes each.
    pub const MAX_OBJECTS: usize = 1 << 26;
    /// Most memo entries.
    pub const MAX_MEMO: usize = 1 << 26;
}

/// Read a CUDA caching-allocator snapshot file (`_dump_snapshot` pickle, optionally
/// gzipped).
pub fn read_snapshot(path: &Path) -> TraceResult<Snapshot> {
    sniff_path(path)?.read_snapshot(&ReadOptions::default())
}

/// Read a snapshot held in memory (plain or gzip); `name` is used in messages.
pub fn snapshot_from_bytes(name: &Path, bytes: &[u8]) -> TraceResult<Snapshot> {
    sniff_bytes(name, bytes)?.read_snapshot(&ReadOptions::default())
}

/// Read a snapshot from a stream (plain or gzip); `name` is used in messages.
pub fn snapshot_from_reader(name: &Path, reader: impl Read + Send) -> TraceResult<Snapshot> {
    sniff_reader(name, reader)?.read_snapshot(&ReadOptions::default())
}

/// Decode the whole (decompressed) pickle of a snapshot (refused above
/// [`limits::MAX_INPUT_BYTES`]); the raw bytes are dropped once the values are built,
/// before the typed decoding.
pub(crate) fn decode(
    path: &Path,
    data: Cow<'_, [u8]>,
    gzip: bool,
    charge: &mut Charge,
) -> TraceResult<Snapshot> {
    if data.len() as u64 > limits::MAX_INPUT_BYTES {
        return Err(TraceError::malformed(
            path,
            limits::MAX_INPUT_BYTES,
            format!("larger than {} GiB: refused", limits::MAX_INPUT_BYTES >> 30),
        ));
    }
    let p = parse(path, &data, charge)?;
    let file_bytes = data.len() as u64;
    drop(data); // the values own their strings: the raw bytes are no longer needed
    let mut s = decode_snapshot(path, &p, file_bytes)?;
    s.gzip = gzip;
    Ok(s)
}

fn parse(path: &Path, data: &[u8], charge: &mut Charge) -> TraceResult<Pickle> {
    vm::unpickle_charged(data, charge).map_err(|e| {
        let offset = e.offset();
        if let Some(oom) = charge.refused() {
            return TraceError::OutOfMemory {
                path: path.to_owned(),
                offset,
                needed: oom.needed,
                in_use: oom.in_use,
                limit: oom.limit,
            };
        }
        let full = e.to_string();
        let message = full
            .strip_prefix(&format!("byte {offset}: "))
            .unwrap_or(&full)
            .to_owned();
        TraceError::malformed(path, offset, message)
    })
}

fn decode_snapshot(path: &Path, p: &Pickle, file_bytes: u64) -> TraceResult<Snapshot> {
    let root = p.root.as_ref().expect("unpickle returns a root");
    let mut dec = decode::Decoder::new(p, 4 * file_bytes + 4096);
    let d = dec
        .root(root)
        .map_err(|e| TraceError::malformed(path, e.offset, e.message))?;
    Ok(Snapshot {
        path: path.to_owned(),
        file_bytes,
        gzip: false,
        protocol: p.protocol,
        layout: d.layout,
        segments: d.segments,
        device_traces: d.device_traces,
        allocator_settings: d.allocator_settings,
        external_annotations: d.external_annotations,
        stacks: dec.finish(),
        other_keys: d.other_keys,
    })
}
