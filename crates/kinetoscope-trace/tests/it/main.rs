//! Integration tests of the trace crate: real fixtures against an independent
//! `serde_json` reading, every reader entry (file, bytes, stream, with and without
//! mmap), malformed and hostile inputs, property tests, memory timelines, CUDA
//! snapshots (the safe pickle reader), and (ignored by default) the whole shared
//! reference corpus.

mod cache;
mod caps;
mod common;
mod devices;
mod entries;
mod fixtures;
mod fuzz;
mod fuzz_regressions;
mod key_averages;
mod links;
mod malformed;
mod memory_timeline;
mod nsys;
mod pstats;
mod shared_corpus;
mod snapshot;
mod spans;
