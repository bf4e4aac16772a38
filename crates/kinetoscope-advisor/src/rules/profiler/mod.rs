//! Rules about how the trace was recorded.
pub mod profiler_overhead;
