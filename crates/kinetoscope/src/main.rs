//! The `kinetoscope` command line.

mod args;
mod commands;
mod progress;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use kinetoscope_report::sanitize;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Messages carry file names and names from traces: sanitised, line breaks kept.
            let line = |s: String| sanitize::text(&s).into_owned();
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "error: {}", line(err.to_string()));
            for cause in err.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {}", line(cause.to_string()));
            }
            let hint = err
                .chain()
                .find_map(|e| e.downcast_ref::<kinetoscope_engine::EngineError>())
                .and_then(|e| e.hint());
            if let Some(hint) = hint {
                let _ = writeln!(stderr, "hint: {}", line(hint));
            }
            ExitCode::from(2)
        }
    }
}
