//! The analyses' integration tests, one test binary (as ruff's and uv's
//! `crates/*/tests/it`): one module per theme and one shared helper module, [`common`]
//! (where the fixtures and `../shared` are, reading traces from files and inline JSON).
//!
//! - [`overview`], [`ops_kernels`], [`memory`]: the TensorBoard plugin's views against
//!   its reference outputs, its unit-test traces, and each documented difference.
//! - [`hta_trace_filter`], [`hta_differences`]: the GPU-time views against HTA 0.5.0,
//!   and each documented difference.
//! - [`comm_ranks`]: communication, the rank comparison, sequences, the critical path on
//!   real traces.
//! - [`collectives`]: what a collective is called and how it is matched across ranks
//!   (names from the calls, Gloo's worker spans, `Comms Id`, `Seq`, order), and the
//!   straggler on the real Gloo corpus run, the real 8-rank NCCL job and inline traces.
//! - [`what_if`]: the straggler what-if and the arrival skew per collective on rank
//!   summaries made by hand.
//! - [`critical_path`]: the critical path of small inline traces, computed by hand.
//! - [`gpu_traces`]: real GPU traces with exporter quirks (launch links whose ids
//!   disagree with time, ROCm device ids, matrix-core and Blackwell kernel names).
//! - [`timeline`]: the timeline's window queries, details and search on a real trace.
//! - [`memory_snapshot`], [`memory_step_pattern`], [`memory_modules`]: CUDA memory
//!   snapshots; per-step memory patterns; memory by `nn.Module` at the peak.
//! - [`pstats`]: cProfile / profile statistics against Python's own `pstats`.
//!
//! Tests that read `../shared` (`$KINETOSCOPE_SHARED`) are `#[ignore]`d, and fail with a
//! message naming the folder when it is missing: `cargo test -- --ignored`.

mod collectives;
mod comm_ranks;
mod common;
mod critical_path;
mod gpu_time;
mod gpu_traces;
mod hta_differences;
mod hta_reference;
mod hta_trace_filter;
mod memory;
mod memory_modules;
mod memory_snapshot;
mod memory_step_pattern;
mod ops_kernels;
mod overview;
mod pstats;
mod timeline;
mod tracelens_reference;
mod what_if;
