//! Subcommand implementations: each turns arguments into options, calls the library
//! crates and writes the rendered result.

mod common;
mod summary;

use std::process::ExitCode;

use crate::args::{Cli, Command};

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Summary(a)) => summary::run(a),
        None => summary::run(cli.summary),
    }
}
