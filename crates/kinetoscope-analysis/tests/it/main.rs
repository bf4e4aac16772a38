//! The analyses' integration tests, one test binary.

mod comm_ranks;
mod common;
mod critical_path;
mod hta_differences;
mod hta_trace_filter;
mod memory;
mod memory_snapshot;
mod memory_step_pattern;
mod ops_kernels;
mod overview;
