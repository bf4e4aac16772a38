//! The in-memory model of PyTorch profiler artifacts and the readers that build it.
//!
//! The main types are [`Trace`] (one Kineto Chrome trace, columnar: interned names,
//! integer nanoseconds, a [`CategoryKind`] per event, tracks per process/thread/GPU
//! stream, and sparse argument tables), [`read::read_trace`] (reads one `.json` or
//! `.json.gz` file, detected by content; [`read::read_trace_bytes`] and
//! [`read::read_trace_from`] read bytes in memory and streams), [`read::sniff_path`]
//! (opens any input once and tells what it is, to be read by [`read::Sniffed::read`])
//! and [`read::open_input`] (a file, a folder of rank files or a run folder of phase
//! files). The model ([`model`], re-exported here) also holds the memory timeline, the
//! artifacts of a run and, in [`snapshot`], the CUDA memory snapshot.
//!
//! ```no_run
//! use kinetoscope_trace::read::{read_trace, ReadOptions};
//! let trace = read_trace("rank0.pt.trace.json.gz".as_ref(), &ReadOptions::default())?;
//! println!("{} events", trace.events.len());
//! # Ok::<(), kinetoscope_trace::TraceError>(())
//! ```
//!
//! Ids such as [`StrId`] or [`TrackId`] are valid only in the trace that issued them.

pub mod cache;
pub mod error;
pub mod model;
pub mod read;
pub mod snapshot;

pub use error::{TraceError, TraceResult};
pub use model::*;
