//! `kinetoscope summary`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_analysis::summary::summarize;
use kinetoscope_report::summary::{to_json, to_table, InputLayout, ReadFailure, SummaryDocument};
use kinetoscope_trace::read::{map_traces, open_input, read_trace_bytes, Input, ReadOptions};

use crate::args::{Format, SummaryArgs};
use crate::progress;

/// The sample trace shipped in the binary (see `assets/SOURCE.md`).
const SAMPLE: &[u8] = include_bytes!("../../assets/sample_nccl_rank0.json.gz");
/// The name the sample is shown under.
const SAMPLE_NAME: &str = "(embedded sample) nccl_rank0.json.gz";

pub fn run(args: SummaryArgs) -> anyhow::Result<ExitCode> {
    let mut opts = ReadOptions {
        strict: args.read.strict,
        ..ReadOptions::default()
    };
    if let Some(t) = args.read.threads {
        opts.threads = t.max(1);
    }
    let doc = match &args.path {
        None => {
            let mut doc = SummaryDocument::new(SAMPLE_NAME.into(), InputLayout::File);
            let trace = read_trace_bytes(Path::new(SAMPLE_NAME), SAMPLE, &opts)?;
            doc.traces.push(summarize(&trace));
            doc
        }
        Some(path) => summarize_path(path, &mut opts)?,
    };
    let text = match args.format {
        Format::Table => to_table(&doc),
        Format::Json => to_json(&doc) + "\n",
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    if let Some(failure) = doc.errors.first() {
        if doc.traces.is_empty() {
            anyhow::bail!("{}", failure.error);
        }
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn summarize_path(path: &Path, opts: &mut ReadOptions) -> anyhow::Result<SummaryDocument> {
    let input = open_input(path).with_context(|| format!("cannot open {}", path.display()))?;
    let layout = match &input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder {
            phases: phases.clone(),
        },
    };
    let files: Vec<PathBuf> = input.trace_files();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let bar = progress::bar_for(&refs);
    if let Some(b) = &bar {
        opts.progress = Some(progress::callback(b));
    }
    let mut doc = SummaryDocument::new(path.display().to_string(), layout);
    let results = map_traces(&files, opts, |p, r| match r {
        Ok(trace) => Ok(summarize(&trace)),
        Err(e) => Err(ReadFailure {
            path: p.display().to_string(),
            error: e.to_string(),
        }),
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for r in results {
        match r {
            Ok(s) => doc.traces.push(s),
            Err(f) => doc.errors.push(f),
        }
    }
    Ok(doc)
}
