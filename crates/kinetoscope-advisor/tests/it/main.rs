//! The advisor's integration tests, one binary (as ruff's `crates/*/tests/it`): one
//! module per theme and one shared helper module, [`common`].
//!
//! - [`rule_table`]: every rule fires on a minimal trace built for it and stays silent
//!   on its clean twin; the findings are snapshotted (`snapshots/`).
//! - [`new_rules`], [`synthetic_gpu`]: rules on inline traces whose numbers are known by
//!   construction.
//! - [`rocm`]: ROCm device numbering, HIP memory and AMD's terms on an inline trace.
//! - [`gpu_truth`]: one minimal trace per defect class of "Right on real GPU traces"
//!   (impacts the GPU did not lose, advice already followed, numbers on the wrong clock).
//! - [`real_traces`]: real GPU traces (`tests/fixtures/`) read as a profiling engineer
//!   would.
//! - [`corpus`]: the traces with planted problems (`corpus/`).
//! - [`fixtures_sweep`]: every reader fixture, and the GPU rules on a real trace.
//! - [`shared_sweep`]: every trace of `../shared` (ignored: needs that folder).
//! - [`pstats_rules`]: the pstats rules (PY001–PY006) table-driven, with snapshots.
//! - [`rule_docs`]: the rule files' doc comments and `docs/rules.md`.

mod common;
mod corpus;
mod fixtures_sweep;
mod gpu_truth;
mod new_rules;
mod pstats_rules;
mod real_traces;
mod rocm;
mod rule_docs;
mod rule_table;
mod shared_sweep;
mod synthetic_gpu;
