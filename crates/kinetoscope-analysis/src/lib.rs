//! Analyses over the kinetoscope trace model. Every analysis takes a
//! [`kinetoscope_trace::Trace`] and returns plain serialisable structs of numbers, enums
//! and ids; none prints or writes prose (what it had to assume is a [`note::Note`]; the
//! renderers and the advisor word things).
//!
//! - [`ancestry`]: the nearest ancestor passing a test, for any number of events in O(n).
//! - [`comm`]: communication/computation overlap, exposed communication, collectives.
//! - [`critical_path`]: the critical path of one step, by category and event.
//! - [`device_activity`]: launch calls against recorded device activity, kernels
//!   replayed from CUDA / HIP graphs, and each GPU's busy and queued time.
//! - [`diff`]: two runs compared: step-time change with an interval, breakdown, operators
//!   and kernels matched across runs, a uniform (machine) change told apart.
//! - [`gpu_time`]: GPU time as HTA defines it: temporal and idle breakdowns, kernel
//!   classes, launch statistics, with an HTA-compatible mode.
//! - [`integrity`]: `kinetoscope check`: trace defects counted with their first
//!   examples (reader repairs, overlaps, lost launches and flows, steps, ranks).
//! - [`kernels`]: the GPU kernel view (per kernel name, or name + operator + launch
//!   properties).
//! - [`memory`]: the memory view (curves, peaks, allocation events, per-operator statistics).
//! - [`note`]: what an analysis had to assume or could not compute, as data.
//! - [`nvtx`]: NVTX ranges by name (`nsys stats` `nvtx_sum`) with the GPU time launched inside.
//! - [`ops`]: the operator view (per operator, by name, input shape, call stack or module).
//! - [`pstats`]: cProfile / profile statistics: pstats' function table, callers and
//!   callees, sums of files, an estimated call tree.
//! - [`ranks`]: rank traces side by side: collectives matched, skew, waits, stragglers.
//! - [`range_extremes`]: range minimum / maximum and searches by value in O(log n).
//! - [`sequences`]: frequent kernel sequences in an operator or a step (fusion candidates).
//! - [`overview`]: the Overview page: step-time breakdown and per-GPU metrics.
//! - [`steps`]: training steps from `ProfilerStep#N` spans, with a documented fallback.
//! - [`stats`]: distribution statistics (mean, median, p90, coefficient of variation).
//! - [`summary`]: the per-trace summary behind `kinetoscope summary`.
//! - [`timeline`]: the web UI's timeline: tracks, window queries with level of detail,
//!   event details and name search.
//! - [`up_search`]: the first ancestor passing a test that holds up to the root, in
//!   O(log depth).

pub mod ancestry;
pub mod comm;
pub mod critical_path;
pub mod device_activity;
pub mod diff;
pub mod gpu_time;
pub mod integrity;
pub mod kernels;
pub mod memory;
pub mod name_memo;
pub mod note;
pub mod nvtx;
pub mod ops;
pub mod overview;
pub mod perf;
pub mod pstats;
pub mod range_extremes;
pub mod ranks;
pub mod sequences;
mod sort_key;
pub mod stats;
pub mod steps;
pub mod summary;
pub mod tables;
pub mod timeline;
pub mod up_search;

pub use overview::intervals::Measure;
