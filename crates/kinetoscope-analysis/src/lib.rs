//! Analyses over the kinetoscope trace model. Every analysis takes a
//! [`kinetoscope_trace::Trace`] and returns plain serialisable structs; none prints.
//!
//! - [`kernels`]: the GPU kernel view (per kernel name, or name + operator + launch
//!   properties).
//! - [`memory`]: the memory view (curves, peaks, allocation events, per-operator statistics).
//! - [`ops`]: the operator view (per operator, by name, input shape, call stack or module).
//! - [`overview`]: the Overview page: step-time breakdown and per-GPU metrics.
//! - [`steps`]: training steps from `ProfilerStep#N` spans, with a documented fallback.
//! - [`stats`]: distribution statistics (mean, median, p90, coefficient of variation).
//! - [`summary`]: the per-trace summary behind `kinetoscope summary`.

pub mod kernels;
pub mod memory;
pub mod ops;
pub mod overview;
pub mod stats;
pub mod steps;
pub mod summary;
