//! The pstats reader: cProfile / profile statistics files (`dump_stats`, and
//! `pstats.Stats.dump_stats`) into [`PstatsProfile`], through a safe decoder of the
//! `marshal` subset they use ([`marshal`]).
//!
//! A marshal stream can hold code objects; this reader refuses them and every type a
//! pstats file does not use, with an error naming the file and the byte offset. Hostile
//! input is bounded (see [`limits`]): lengths are checked against the bytes left before
//! anything is allocated, nesting is capped, containers live in an arena so reference
//! loops are harmless, the typed walk may build at most 8 bytes (entries, edges, names)
//! per input byte, and the decoded values and the input held whole are charged to the
//! memory budget.

pub mod marshal;
mod schema;

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use super::{sniff_bytes, sniff_path, sniff_reader, ReadOptions};
use crate::model::{Charge, PstatsProfile};
use crate::{TraceError, TraceResult};

/// The limits that keep hostile marshal data bounded.
pub mod limits {
    /// Largest (decompressed) pstats file read: 1 GiB, held in memory.
    pub const MAX_INPUT_BYTES: u64 = 1 << 30;
    /// Deepest nesting of containers (a pstats file nests 4 deep).
    pub const MAX_DEPTH: usize = 64;
    /// Most containers.
    pub const MAX_OBJECTS: usize = 1 << 26;
}

/// Read a pstats file (plain or gzip), detected by content.
pub fn read_pstats(path: &Path) -> TraceResult<PstatsProfile> {
    sniff_path(path)?.read_pstats(&ReadOptions::default())
}

/// Read pstats data held in memory (plain or gzip); `name` is used in messages.
pub fn pstats_from_bytes(name: &Path, bytes: &[u8]) -> TraceResult<PstatsProfile> {
    sniff_bytes(name, bytes)?.read_pstats(&ReadOptions::default())
}

/// Read pstats data from a stream (plain or gzip); `name` is used in messages.
pub fn pstats_from_reader(name: &Path, reader: impl Read + Send) -> TraceResult<PstatsProfile> {
    sniff_reader(name, reader)?.read_pstats(&ReadOptions::default())
}

/// Decode the whole (decompressed) content of a pstats file.
pub(crate) fn decode(
    path: &Path,
    data: Cow<'_, [u8]>,
    charge: &mut Charge,
) -> TraceResult<PstatsProfile> {
    if data.len() as u64 > limits::MAX_INPUT_BYTES {
        return Err(TraceError::malformed(
            path,
            limits::MAX_INPUT_BYTES,
            format!("larger than {} GiB: refused", limits::MAX_INPUT_BYTES >> 30),
        ));
    }
    let m = marshal::decode(&data, charge).map_err(|e| match charge.refused() {
        Some(oom) => TraceError::OutOfMemory {
            path: path.to_owned(),
            offset: e.offset,
            needed: oom.needed,
            in_use: oom.in_use,
            limit: oom.limit,
        },
        None => TraceError::malformed(path, e.offset, e.message),
    })?;
    let file_bytes = data.len() as u64;
    drop(data);
    let entries = schema::Schema::new(&m, 8 * file_bytes + 4096)
        .entries()
        .map_err(|e| TraceError::malformed(path, e.offset, e.message))?;
    Ok(PstatsProfile {
        path: path.to_owned(),
        file_bytes,
        entries,
    })
}
