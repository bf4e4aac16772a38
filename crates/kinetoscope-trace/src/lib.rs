//! The in-memory model of PyTorch profiler artifacts and the readers that build it.
//!
//! The main types are [`Trace`] (one Kineto Chrome trace, columnar: interned names,
//! integer nanoseconds, a [`CategoryKind`] per event, tracks per process/thread/GPU
//! stream, and sparse argument tables), [`read::read_trace`] (reads one `.json` or
//! `.json.gz` file, detected by content).
//!
//! ```no_run
//! use kinetoscope_trace::read::{read_trace, ReadOptions};
//! let trace = read_trace("rank0.pt.trace.json.gz".as_ref(), &ReadOptions::default())?;
//! println!("{} events", trace.events.len());
//! # Ok::<(), kinetoscope_trace::TraceError>(())
//! ```
//!
//! Ids such as [`StrId`] or [`TrackId`] are valid only in the trace that issued them.

pub mod error;
pub mod model;
pub mod read;
pub mod snapshot;

pub use error::{TraceError, TraceResult};
pub use model::*;
