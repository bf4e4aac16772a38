//! Renderers for kinetoscope results. Each takes analysis results (never a file) and
//! returns text: [`summary`] renders `kinetoscope summary` as a terminal report or as
//! versioned JSON (documented in `docs/json.md`); [`memory`] renders `kinetoscope memory`;
//! [`ops`] and [`kernels`] render `kinetoscope ops` and `kinetoscope kernels`.
//! [`overview`] renders `kinetoscope overview`.

pub mod format;
pub mod kernels;
pub mod memory;
pub mod ops;
pub mod overview;
pub mod summary;
pub mod tabular;

/// Version of the JSON documents kinetoscope writes; bumped on breaking changes.
pub const SCHEMA_VERSION: u32 = 1;
