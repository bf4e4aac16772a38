//! The `kinetoscope` binary's integration tests, one test binary.

mod cli;
mod common;
mod gpu_time;
mod memory;
mod memory_html_browser;
mod memory_snapshot;
mod memory_timeline;
mod ops_kernels;
mod ranks;
mod report;
