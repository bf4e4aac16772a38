//! The `kinetoscope` command line (the body is the library's [`kinetoscope::run`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    kinetoscope::run(std::env::args_os())
}
