//! The sample trace shipped in the binary (see `assets/SOURCE.md`), used when a command
//! is given no path.

use std::path::Path;

use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};
use kinetoscope_trace::{Trace, TraceResult};

/// The gzip-compressed sample trace.
const SAMPLE: &[u8] = include_bytes!("../../assets/sample_nccl_rank0.json.gz");
/// The name the sample is shown under.
pub const SAMPLE_NAME: &str = "(embedded sample) nccl_rank0.json.gz";

/// Read the embedded sample.
pub fn read_sample(opts: &ReadOptions) -> TraceResult<Trace> {
    read_trace_bytes(Path::new(SAMPLE_NAME), SAMPLE, opts)
}
