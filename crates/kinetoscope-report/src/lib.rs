//! Renderers for kinetoscope results. Each takes analysis results (never a file) and
//! returns text: [`summary`] renders `kinetoscope summary` as a terminal report or as
//! versioned JSON (documented in `docs/json.md`); [`memory`] renders `kinetoscope memory`
//! for traces, [`memory_snapshot`] for CUDA memory snapshots, [`memory_timeline`] for
//! profiler memory timelines and [`memory_html`] the self-contained HTML chart;
//! [`ops`] and [`kernels`] render `kinetoscope ops` and `kinetoscope kernels`.
//! [`overview`] renders `kinetoscope overview`. [`comm`] and [`ranks`] render
//! `kinetoscope comm` and `kinetoscope ranks`; [`sequences`] `kinetoscope sequences`; [`critical_path`] `kinetoscope critical-path`. [`gpu_time`] renders `kinetoscope temporal`,
//! `idle`, `launches` and `kernels --by-class`. [`report`] renders `kinetoscope report`
//! (the advisor's summary and findings). [`note`] words the analyses' notes and
//! warnings. [`run_folder`] shows each phase's memory
//! artifacts side by side. [`document`] is the JSON envelope the view documents share.
//! [`pstats`] and [`pstats_html`] render `kinetoscope pstats` (tables, collapsed stacks,
//! the flame graph page). [`xlsx`] writes `kinetoscope report --xlsx`, a workbook of every view.
//! [`sanitize`] is the one sanitiser every terminal and CSV text goes through.

pub mod check;
pub mod comm;
pub mod critical_path;
pub mod diff;
pub mod format;
pub mod gpu_time;
pub mod kernels;
pub mod memory;
pub mod memory_html;
pub mod memory_snapshot;
pub mod memory_timeline;
pub mod note;
pub mod nvtx;
pub mod ops;
pub mod overview;
pub mod perf;
pub mod pstats;
pub mod pstats_html;
pub mod ranks;
pub mod report;
pub mod run_folder;
pub mod sanitize;
pub mod sequences;
pub mod summary;
pub mod tables;
pub mod tabular;
pub mod web;
pub mod xlsx;
