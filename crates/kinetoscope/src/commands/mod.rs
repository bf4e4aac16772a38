//! Subcommand implementations: each turns arguments into options, calls the library
//! crates and writes the rendered result.

mod comm;
mod common;
mod critical_path;
mod gpu_time;
mod kernels;
mod memory;
mod memory_html;
mod memory_snapshot;
mod memory_timeline;
mod ops;
mod overview;
mod ranks;
mod report;
mod run_folder;
mod sample;
mod sequences;
mod summary;

use std::process::ExitCode;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Summary(a)) => summary::run(a),
        Some(Command::Memory(a)) => memory::run(a),
        Some(Command::Overview(a)) => overview::run(a),
        Some(Command::Ops(a)) => ops::run(a),
        Some(Command::Kernels(a)) => kernels::run(a),
        Some(Command::Temporal(a)) => gpu_time::temporal(a),
        Some(Command::Idle(a)) => gpu_time::idle(a),
        Some(Command::Launches(a)) => gpu_time::launches(a),
        Some(Command::Comm(a)) => comm::run(a),
        Some(Command::Ranks(a)) => ranks::run(a),
        Some(Command::Sequences(a)) => sequences::run(a),
        Some(Command::CriticalPath(a)) => critical_path::run(a),
        None => report::run(cli.report),
    }
}
