//! Integration tests of the trace reader: real fixtures against an independent
//! `serde_json` reading, malformed and hostile inputs, property tests, input folders,
//! and (ignored by default) the whole shared reference corpus.

mod common;
mod entries;
mod fixtures;
mod fuzz;
mod malformed;
mod shared_corpus;
