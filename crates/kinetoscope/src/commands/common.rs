//! Plumbing shared by commands: read options, reading a file or a rank folder with a
//! progress bar and reducing each trace on its worker thread, and writing to stdout.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kinetoscope_trace::read::{map_traces, open_input, Input, ReadOptions};
use kinetoscope_trace::Trace;

use crate::args::ReadArgs;
use crate::progress;

/// Reader options from the command line.
pub fn read_options(read: &ReadArgs) -> ReadOptions {
    let mut opts = ReadOptions {
        strict: read.strict,
        ..ReadOptions::default()
    };
    if let Some(t) = read.threads {
        opts.threads = t.max(1);
    }
    opts
}

/// One trace's result.
pub struct PerTrace<T> {
    /// The file.
    pub path: PathBuf,
    /// The analysis result, or the read error as text.
    pub result: Result<T, String>,
}

/// Open `path` (a file, rank folder or run folder), read every trace in it in parallel
/// with a progress bar on a terminal, and reduce each with `f` on the thread that read
/// it. Returns the input layout and the results in file order.
pub fn map_input<T: Send>(
    path: &Path,
    opts: &ReadOptions,
    f: impl Fn(&Trace) -> T + Sync,
) -> anyhow::Result<(Input, Vec<PerTrace<T>>)> {
    let input = open_input(path).with_context(|| format!("cannot open {}", path.display()))?;
    let files = input.trace_files();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let bar = progress::bar_for(&refs);
    let mut opts = opts.clone();
    if let Some(b) = &bar {
        opts.progress = Some(progress::callback(b));
    }
    let results = map_traces(&files, &opts, |p, r| PerTrace {
        path: p.to_owned(),
        result: r.map(|t| f(&t)).map_err(|e| e.to_string()),
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok((input, results))
}

/// Write `text` to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
