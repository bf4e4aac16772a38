//! Writers of new trace files from what kinetoscope read: `kinetoscope trim` (a smaller,
//! repaired Kineto trace whose kept events are the input's bytes), `kinetoscope merge`
//! (one timeline of every rank of a folder) and Perfetto's protobuf format.
//!
//! An exporter is a front end: it takes its decisions (which steps, which ranks, which
//! clock offsets) from the engine and never parses a trace itself.
//!
//! - [`layout`]: what both timeline writers share: the ranks as processes, their tracks
//!   as threads, the events written and the launch → GPU flows.
//! - [`merge`]: the merged Chrome JSON (plain or gzip), streamed.
//! - [`pftrace`]: the Perfetto protobuf writer.
//! - [`trim`]: a smaller, repaired Kineto trace whose kept events are the input's bytes.

pub mod layout;
pub mod merge;
pub mod pftrace;
pub mod trim;

pub use layout::MergeInput;
