//! Shared by the CLI tests: run the `kinetoscope` binary and capture what it wrote.

use std::path::Path;
use std::process::Command;

/// Exit code, stdout and stderr of one run.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Run `kinetoscope args` in `dir`, 100 columns wide and without colours.
pub fn kinetoscope(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(args)
        .current_dir(dir)
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .output()
        .expect("run kinetoscope");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}
