//! Renderers for kinetoscope results. Each takes analysis results (never a file) and
//! returns text: [`summary`] renders `kinetoscope summary` as a terminal report or as
//! versioned JSON (documented in `docs/json.md`).

pub mod format;
pub mod summary;
pub mod tabular;

/// Version of the JSON documents kinetoscope writes; bumped on breaking changes.
pub const SCHEMA_VERSION: u32 = 1;
