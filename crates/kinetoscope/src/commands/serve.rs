//! `kinetoscope serve PATH…`: the local web UI. Prints the URL (with its token) as the
//! first line of stdout, warns on stderr when `--host` exposes it, opens a browser only
//! with `--open`, then serves until interrupted.

use std::process::ExitCode;

use kinetoscope_server::{ServeOptions, Server};

use super::engine;
use super::output::{message, write_stdout};
use crate::args::ServeArgs;

/// Bind, print the URL, serve.
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut engine = engine(&args.read);
    // A file truncated while mapped would raise SIGBUS in a long-lived server.
    engine.read.mmap = false;
    let opts = ServeOptions {
        host: args.host,
        port: args.port,
        max_loaded_bytes: args.max_loaded,
        engine,
        ..ServeOptions::default()
    };
    let server = Server::bind(&args.paths, opts).map_err(|e| {
        anyhow::anyhow!(
            "{e}{}",
            if e.contains("listen") {
                " (choose another with --port N)"
            } else {
                ""
            }
        )
    })?;
    let url = server.url();
    write_stdout(&format!("{url}\n"))?;
    if !args.host.is_loopback() {
        message(&format!(
            "warning: listening on {}: anyone who can reach this address and has the URL's token \
             can read the traces served; use --host 127.0.0.1 to keep it on this machine",
            server.addr()
        ));
    }
    message("serving (read-only); press Ctrl-C to stop");
    if args.open {
        open_browser(&url);
    }
    server.run();
    Ok(ExitCode::SUCCESS)
}

/// Ask the desktop to open `url` (failures are reported, not fatal).
fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        message(&format!(
            "could not open a browser ({program}: {e}); open the URL above"
        ));
    }
}
