//! The export crate's integration tests, one binary.
//!
//! - [`common`]: the 8-rank PARAM fixture read through the engine, per-rank counts of
//!   the models, and the `.pftrace` decoder (the vendored Perfetto schema compiled by
//!   `protox`, decoded by `prost-reflect`).
//! - [`json`]: the merged Chrome JSON checked with `serde_json`.
//! - [`pftrace`]: the Perfetto output decoded against the published schema.
//! - [`shared`]: the same on `../shared` (ignored; fails without it) with timings.

mod common;
mod json;
mod pftrace;
mod shared;
