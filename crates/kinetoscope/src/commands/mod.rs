//! Subcommand implementations: each turns arguments into options, calls the library
//! crates and writes the rendered result.

mod common;
mod kernels;
mod memory;
mod ops;
mod overview;
mod summary;

use std::process::ExitCode;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Summary(a)) => summary::run(a),
        Some(Command::Memory(a)) => memory::run(a),
        Some(Command::Overview(a)) => overview::run(a),
        Some(Command::Ops(a)) => ops::run(a),
        Some(Command::Kernels(a)) => kernels::run(a),
        None => summary::run(cli.summary),
    }
}
