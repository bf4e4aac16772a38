//! `kinetoscope merge`: one timeline of every rank of a folder, as Chrome JSON (plain
//! or gzip, [`json`]) or Perfetto protobuf ([`crate::pftrace`]), chosen by the output's
//! extension. Both are written from the models and streamed: memory is the models of
//! the ranks plus a few buffers.

pub mod json;

use std::io::{self, Write};
use std::path::Path;

use crate::layout::MergeInput;

/// What the output is, by its file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.json`: Chrome trace JSON.
    Json,
    /// `.json.gz`: the same, gzip-compressed.
    JsonGz,
    /// `.pftrace` (or `.perfetto-trace`): Perfetto's protobuf trace.
    Pftrace,
}

impl Format {
    /// The format of `path` by its extension, `None` when it names none of them.
    pub fn of(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".json.gz") {
            Some(Self::JsonGz)
        } else if name.ends_with(".json") {
            Some(Self::Json)
        } else if name.ends_with(".pftrace") || name.ends_with(".perfetto-trace") {
            Some(Self::Pftrace)
        } else {
            None
        }
    }
}

/// What a merge wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Spans and instants written.
    pub events: u64,
    /// Launch → GPU flows written.
    pub flows: u64,
}

/// Write `inputs` as one timeline in `format` to `out`.
pub fn write_merged(
    inputs: &[MergeInput<'_>],
    format: Format,
    out: impl Write,
) -> io::Result<MergeStats> {
    match format {
        Format::Json => json::write_json(inputs, out),
        Format::JsonGz => {
            let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
            let stats = json::write_json(inputs, &mut gz)?;
            gz.finish()?.flush()?;
            Ok(stats)
        }
        Format::Pftrace => crate::pftrace::write_pftrace(inputs, out),
    }
}
