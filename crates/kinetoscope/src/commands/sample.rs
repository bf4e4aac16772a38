//! The sample trace shipped in the binary (see `assets/SOURCE.md`), used when a command
//! is given no path.

use kinetoscope_engine::Source;

/// The gzip-compressed sample trace.
const SAMPLE: &[u8] = include_bytes!("../../assets/sample_nccl_rank0.json.gz");
/// The name the sample is shown under.
const SAMPLE_NAME: &str = "(embedded sample) nccl_rank0.json.gz";

/// The embedded sample as an in-memory source.
pub fn source() -> Source {
    Source::Bytes {
        name: SAMPLE_NAME.to_owned(),
        data: SAMPLE.into(),
    }
}
