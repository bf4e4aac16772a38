//! The `kinetoscope` command line.

mod args;
mod commands;
mod progress;
mod size;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "error: {err}");
            for cause in err.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {cause}");
            }
            let hint = err
                .chain()
                .find_map(|e| e.downcast_ref::<kinetoscope_engine::EngineError>())
                .and_then(|e| e.hint());
            if let Some(hint) = hint {
                let _ = writeln!(stderr, "hint: {hint}");
            }
            ExitCode::from(2)
        }
    }
}
