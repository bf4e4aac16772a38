//! The `kinetoscope` binary's integration tests, one test binary (as ruff's and uv's
//! `crates/*/tests/it`): one module per theme and one shared helper module, [`common`],
//! which runs the binary. Insta snapshots are in `snapshots/`, named by the snapshot alone.
//!
//! - [`check`]: `check` on real traces against independent counts of their raw JSON, and
//!   on synthetic traces with one planted defect each; exit codes and formats.
//! - [`cli`]: help, the default subcommand, `summary`, read errors and exit codes.
//! - [`views`]: one snapshot per view of what the terminal shows, and no view panicking
//!   on any committed input.
//! - [`ops_kernels`], [`gpu_time`], [`ranks`]: `ops`, `kernels`; `temporal`, `idle`,
//!   `launches`, `kernels --by-class`; `comm`, `ranks`, `sequences`, `critical-path`:
//!   formats, options and exit codes.
//! - [`memory`], [`memory_snapshot`], [`memory_timeline`]: `memory` on traces, CUDA
//!   memory snapshots, profiler memory timelines and run folders.
//! - [`memory_html_browser`]: `memory --html` in headless Chromium (passes with a note
//!   when Chromium is missing, fails then if `KINETOSCOPE_REQUIRE_BROWSER` is set).
//! - [`pstats`]: `pstats` on cProfile / profile files: numbers, sums, callers, the
//!   flame page and collapsed stacks.
//! - [`browser`]: the web UI (`report --html`) in headless Chromium over the DevTools
//!   protocol: pages load without errors and show the documents' numbers.
//! - [`gpu_h200`]: the project's real H200 recordings (`corpus/gpu-h200`): counts against
//!   the recorder's manifest, snapshots, OOM, timelines, graphs, compiled runs' advice.
//! - [`report`]: the advisor's `report` on the planted-problem corpus.
//! - [`diff`]: `diff` on recorded pairs: exit codes of the gate, formats, saved
//!   baselines, refused expressions.
//! - [`serve`]: `serve`'s first line, its views equal to the CLI's JSON, `--host`.
//! - [`nsys`]: Nsight Systems exports: every view, numbers against SQL, the environment
//!   kept private (a planted canary), inputs unchanged, `.nsys-rep` refused with the
//!   export command.
//! - [`merge`]: `merge` in each format, read back; outputs refused before reading.
//! - [`trim`]: `trim` against an independent `serde_json` reading of the input: the
//!   events a step window keeps, byte-for-byte copies, repairs, ranks, refusals.
//! - [`hostile`]: bad and hostile input, generated at test time, one module per class.

mod browser;
mod cache;
mod check;
mod cli;
mod common;
mod diff;
mod gpu_h200;
mod gpu_time;
mod hostile;
mod memory;
mod memory_html_browser;
mod memory_snapshot;
mod memory_timeline;
mod merge;
mod nsys;
mod ops_kernels;
mod parquet;
mod pstats;
mod ranks;
mod report;
mod serve;
mod tables;
mod trim;
mod views;
