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
//! multiply the work. Work is linear in the input size.

mod decode;
mod vm;

use std::io::Read;
use std::path::Path;

pub use vm::{unpickle, Obj, Pickle, PickleError, Val, REFUSED_OPCODES};

use super::ContentKind;
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

/// Whether the file's content is a pickle (or a gzip-compressed pickle).
pub fn is_snapshot_file(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(8);
    if f.take(8).read_to_end(&mut head).is_err() {
        return false;
    }
    match ContentKind::sniff(&head) {
        ContentKind::Pickle => true,
        ContentKind::Gzip => {
            let Ok(f) = std::fs::File::open(path) else {
                return false;
            };
            let mut inner = Vec::with_capacity(8);
            let _ = flate2::read::MultiGzDecoder::new(f)
                .take(8)
                .read_to_end(&mut inner);
            ContentKind::sniff(&inner) == ContentKind::Pickle
        }
        _ => false,
    }
}

/// Read a CUDA caching-allocator snapshot (`_dump_snapshot` pickle, optionally gzipped).
pub fn read_snapshot(path: &Path) -> TraceResult<Snapshot> {
    let io_err = |e: std::io::Error| TraceError::Io {
        path: path.to_owned(),
        source: e,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let mut head = Vec::with_capacity(8);
    (&file).take(8).read_to_end(&mut head).map_err(io_err)?;
    let gzip = ContentKind::sniff(&head) == ContentKind::Gzip;
    let file = std::fs::File::open(path).map_err(io_err)?;
    let reader: Box<dyn Read> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut data = Vec::new();
    reader
        .take(limits::MAX_INPUT_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(io_err)?;
    if data.len() as u64 > limits::MAX_INPUT_BYTES {
        return Err(malformed(
            path,
            limits::MAX_INPUT_BYTES,
            format!("larger than {} GiB: refused", limits::MAX_INPUT_BYTES >> 30),
        ));
    }
    let p = parse(path, &data)?;
    let file_bytes = data.len() as u64;
    drop(data); // the values own their strings: the raw bytes are no longer needed
    let mut s = decode_snapshot(path, &p, file_bytes)?;
    s.gzip = gzip;
    Ok(s)
}

fn malformed(path: &Path, offset: u64, message: String) -> TraceError {
    TraceError::Malformed {
        path: path.to_owned(),
        offset,
        event_index: None,
        message,
    }
}

/// Decode a snapshot held in memory; `path` names it in errors.
pub fn snapshot_from_bytes(path: &Path, data: &[u8]) -> TraceResult<Snapshot> {
    let p = parse(path, data)?;
    decode_snapshot(path, &p, data.len() as u64)
}

fn parse(path: &Path, data: &[u8]) -> TraceResult<Pickle> {
    let kind = ContentKind::sniff(&data[..data.len().min(64)]);
    if kind != ContentKind::Pickle {
        return Err(malformed(
            path,
            0,
            format!(
                "not a CUDA memory snapshot: the content looks like {}",
                kind.describe()
            ),
        ));
    }
    unpickle(data).map_err(|e| {
        let offset = e.offset();
        let full = e.to_string();
        let message = full
            .strip_prefix(&format!("byte {offset}: "))
            .unwrap_or(&full)
            .to_owned();
        malformed(path, offset, message)
    })
}

fn decode_snapshot(path: &Path, p: &Pickle, file_bytes: u64) -> TraceResult<Snapshot> {
    let root = p.root.as_ref().expect("unpickle returns a root");
    let mut dec = decode::Decoder::new(p, 4 * file_bytes + 4096);
    let d = dec
        .root(root)
        .map_err(|e| malformed(path, e.offset, e.message))?;
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
