//! Writers of new trace files from what kinetoscope read: `kinetoscope trim` (a smaller,
//! repaired Kineto trace whose kept events are the input's bytes), `kinetoscope merge`
//! (one timeline of every rank of a folder) and Perfetto's protobuf format.
//!
//! An exporter is a front end: it takes its decisions (which steps, which ranks, which
//! clock offsets) from the engine and never parses a trace itself.

pub mod trim;
