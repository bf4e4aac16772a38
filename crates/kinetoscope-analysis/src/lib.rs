//! Analyses over the kinetoscope trace model. Every analysis takes a
//! [`kinetoscope_trace::Trace`] and returns plain serialisable structs; none prints.
//!
//! - [`steps`]: training steps from `ProfilerStep#N` spans, with a documented fallback.
//! - [`stats`]: distribution statistics (mean, median, p90, coefficient of variation).
//! - [`summary`]: the per-trace summary behind `kinetoscope summary`.

pub mod stats;
pub mod steps;
pub mod summary;
