//! The `kinetoscope` command line as a library: [`run`] parses the arguments and runs
//! one command, exactly as the `kinetoscope` binary does (its `main` calls it), so the
//! Python package can offer the same command (`kinetoscope._native.main`).

mod args;
mod commands;
mod progress;
mod size;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;
use kinetoscope_report::sanitize;

/// Run the command line `args` (the program name first) and return its exit status:
/// 0 ok, 1 a `--fail-on` gate tripped, 2 an error (clap's own status for a usage error).
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    ExitCode::from(run_status(args))
}

/// [`run`], with the exit status as a number (what a host language's `main` returns).
pub fn run_status(args: impl IntoIterator<Item = OsString>) -> u8 {
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    let status = match commands::run(cli) {
        Ok(code) => status_of(code),
        Err(err) => {
            report_error(&err);
            2
        }
    };
    let _ = std::io::stdout().flush();
    status
}

/// The number behind one of the exit codes the commands return (0, 1 or 2).
fn status_of(code: ExitCode) -> u8 {
    (0..=2).find(|&s| ExitCode::from(s) == code).unwrap_or(2)
}

/// Print an error with its causes and the engine's hint, if any, to stderr.
fn report_error(err: &anyhow::Error) {
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
}

/// Print clap's error (or help, or version) as clap does and return its exit status;
/// an error that echoes an argument holding control characters (a file name from a
/// shell glob) is printed sanitised, without colours.
fn clap_error(e: clap::Error) -> u8 {
    let plain = e.render().to_string();
    let informational = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if informational || !plain.chars().any(sanitize::is_unsafe_in_text) {
        let _ = e.print();
    } else {
        let _ = write!(std::io::stderr().lock(), "{}", sanitize::text(&plain));
    }
    let _ = std::io::stdout().flush();
    u8::try_from(e.exit_code()).unwrap_or(2)
}
