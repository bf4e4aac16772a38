//! kinetoscope's Parquet contract: per-rank tables of traces, written one file per
//! table per rank (`OUTDIR/<table>/rank-<RRRRR>.parquet`, a `rank` column in each, the
//! manifest `OUTDIR/kinetoscope-parquet.json`), and the rank summaries read back from
//! them for `kinetoscope ranks OUTDIR`. The schema is versioned and documented in
//! `docs/parquet.md`.
//!
//! - [`schema`]: the tables, their columns and [`schema::SCHEMA_VERSION`].
//! - [`tables`]: one rank's tables from its trace and analyses (the events table is
//!   `kinetoscope-arrow`'s).
//! - [`write`]: an export: staging, files renamed into place, the manifest last; or
//!   its ranks written by other processes ([`write::write_part`], a distributed map)
//!   and put in place by one ([`Export::parts`]).
//! - [`manifest`]: what makes a folder an export.
//! - [`read`]: each rank's `RankSummary` back from its files.

pub mod error;
pub mod manifest;
pub mod read;
pub mod schema;
pub mod tables;
pub mod write;

pub use error::{ExportError, ExportResult};
pub use manifest::{is_export, Manifest, MANIFEST};
pub use schema::{Table, SCHEMA_VERSION};
pub use write::{write_part, Export, Staged};
