//! Subcommands: each turns its arguments into engine options, calls the engine
//! (`kinetoscope-engine`) and renders the document it returns (`kinetoscope-report`).

mod cache;
mod check;
mod diff;
mod explain;
mod export;
mod memory;
mod merge;
mod output;
mod output_file;
pub(crate) mod pstats;
mod report;
mod sample;
mod serve;
mod summary;
pub(crate) mod tables;
mod trim;
mod views;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use kinetoscope_engine::{Engine, ReadOptions, Source};
use kinetoscope_trace::cache::CacheOptions;
use kinetoscope_trace::MemoryBudget;

use crate::args::{Cli, Command, ReadArgs};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Summary(a)) => summary::run(a),
        Some(Command::Memory(a)) => memory::run(a),
        Some(Command::Overview(a)) => views::overview(a),
        Some(Command::Ops(a)) => views::ops(a),
        Some(Command::Perf(a)) => views::perf(a),
        Some(Command::Kernels(a)) => views::kernels(a),
        Some(Command::Temporal(a)) => views::temporal(a),
        Some(Command::Idle(a)) => views::idle(a),
        Some(Command::Launches(a)) => views::launches(a),
        Some(Command::Comm(a)) => views::comm(a),
        Some(Command::Ranks(a)) => views::ranks(a),
        Some(Command::Sequences(a)) => views::sequences(a),
        Some(Command::Nvtx(a)) => views::nvtx(a),
        Some(Command::CriticalPath(a)) => views::critical_path(a),
        Some(Command::Check(a)) => check::run(a),
        Some(Command::Merge(a)) => merge::run(a),
        Some(Command::Diff(a)) => diff::run(a),
        Some(Command::Pstats(a)) => pstats::run(a),
        Some(Command::Tables(a)) => tables::run(a),
        Some(Command::Explain(a)) => explain::run(a),
        Some(Command::Serve(a)) => serve::run(a),
        Some(Command::Cache(a)) => cache::run(a),
        Some(Command::Trim(a)) => trim::run(a),
        Some(Command::Export(a)) => export::run(a),
        None => report::run(cli.report),
    }
}

/// The engine for the reading options given, with a progress bar on a terminal.
fn engine(read: &ReadArgs) -> Engine {
    let mut opts = ReadOptions {
        strict: read.strict,
        mmap: !read.no_mmap,
        nvtx_step: read.nvtx_step.clone(),
        cache: if read.no_cache {
            None
        } else {
            CacheOptions::from_env()
        },
        ..ReadOptions::default()
    };
    if let Some(t) = read.threads {
        opts.threads = threads(t);
    }
    if let Some(cap) = read.max_element {
        opts.max_element_bytes = cap;
    }
    if let Some(limit) = read.max_memory {
        opts.budget = MemoryBudget::new(limit.0);
    }
    Engine::new(opts).with_progress(Arc::new(crate::progress::TerminalProgress::default()))
}

/// `-j N` clamped to between 1 and the cores available, with a note when it is not.
fn threads(asked: usize) -> usize {
    let cores = kinetoscope_engine::input::available_threads();
    let used = asked.clamp(1, cores);
    if used != asked {
        output::message(&format!(
            "note: -j {asked}: using {used} thread{} ({cores} core{} available)",
            if used == 1 { "" } else { "s" },
            if cores == 1 { "" } else { "s" },
        ));
    }
    used
}

/// The source for a path argument; none means the sample trace embedded in the binary.
fn source(path: Option<&Path>) -> Source {
    match path {
        Some(p) => Source::Path(p.to_owned()),
        None => sample::source(),
    }
}
