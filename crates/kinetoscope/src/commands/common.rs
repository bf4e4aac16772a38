//! Plumbing shared by commands: read options, reading a file or a rank folder with a
//! progress bar and reducing each trace on its worker thread, collecting the results into
//! a document, writing to stdout and the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_report::document::{Document, InputLayout, ReadFailure};
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

/// The layout of an opened input, as documents report it.
pub fn layout_of(input: Input) -> InputLayout {
    match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    }
}

/// Split per-trace results, in order: each success goes to `ok` (with its file), each
/// failure becomes a [`ReadFailure`] in the returned list.
pub fn split_results<T>(
    results: Vec<PerTrace<T>>,
    mut ok: impl FnMut(PathBuf, T),
) -> Vec<ReadFailure> {
    let mut errors = Vec::new();
    for r in results {
        match r.result {
            Ok(t) => ok(r.path, t),
            Err(error) => errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    errors
}

/// Read every trace of `path` (see [`map_input`]), reduce each with `f`, and collect the
/// results into a document with `options`: successes in `traces`, failures in `errors`.
pub fn read_document<T: Send, X>(
    path: &Path,
    opts: &ReadOptions,
    options: X,
    f: impl Fn(&Trace) -> T + Sync,
) -> anyhow::Result<Document<T, X>> {
    let (input, results) = map_input(path, opts, f)?;
    let mut doc = Document::with_options(path.display().to_string(), layout_of(input), options);
    doc.errors = split_results(results, |_, t| doc.traces.push(t));
    Ok(doc)
}

/// The `--sort` key of a table view: `default` when absent; an unknown spelling is an
/// error listing the keys of `all`.
pub fn sort_key<K: Copy>(
    text: Option<&str>,
    default: K,
    parse: impl Fn(&str) -> Option<K>,
    all: &[(&'static str, K)],
) -> anyhow::Result<K> {
    match text {
        None => Ok(default),
        Some(s) => parse(s)
            .ok_or_else(|| {
                let keys: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
                anyhow::anyhow!("unknown key `{s}`; valid keys: {}", keys.join(", "))
            })
            .context("--sort"),
    }
}

/// Print each read failure to stderr (CSV output has no place for them).
pub fn eprint_errors(errors: &[ReadFailure]) {
    for e in errors {
        eprintln!("error: {}", e.error);
    }
}

/// An error (the first failure's) when traces failed and none was read.
pub fn ensure_any_read(read: usize, errors: &[ReadFailure]) -> anyhow::Result<()> {
    match errors.first() {
        Some(failure) if read == 0 => anyhow::bail!("{}", failure.error),
        _ => Ok(()),
    }
}

/// Write `text` to stdout, then the exit status: an error (the first failure's) when
/// nothing was read, 2 when some traces could not be read, else success.
pub fn finish(text: &str, read: usize, errors: &[ReadFailure]) -> anyhow::Result<ExitCode> {
    write_stdout(text)?;
    ensure_any_read(read, errors)?;
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// [`finish`] for a [`Document`].
pub fn finish_document<T, X>(text: &str, doc: &Document<T, X>) -> anyhow::Result<ExitCode> {
    finish(text, doc.traces.len(), &doc.errors)
}
