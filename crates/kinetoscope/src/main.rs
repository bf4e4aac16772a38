//! The `kinetoscope` command line.

mod args;
mod commands;
mod progress;
mod size;

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;
use kinetoscope_report::sanitize;

fn main() -> ExitCode {
    let cli = args::Cli::try_parse().unwrap_or_else(|e| exit_on_clap_error(e));
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

/// Print clap's error (or help, or version) and exit as clap does; an error that
/// echoes an argument holding control characters (a file name from a shell glob) is
/// printed sanitised, without colours.
fn exit_on_clap_error(e: clap::Error) -> ! {
    let plain = e.render().to_string();
    let informational = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if informational || !plain.chars().any(sanitize::is_unsafe_in_text) {
        e.exit();
    }
    let _ = write!(std::io::stderr().lock(), "{}", sanitize::text(&plain));
    std::process::exit(e.exit_code());
}
