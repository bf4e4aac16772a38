//! `kinetoscope merge FOLDER -o OUT`: every rank of a folder read whole through the
//! engine (`Engine::merge_set`: ranks and clock offsets, the offsets `check` reports),
//! written as one timeline by `kinetoscope-export` in the format OUT's extension names,
//! streamed through `output_file::write_with` (never an input; a temporary file renamed).

use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_engine::{Align, Source};
use kinetoscope_export::merge::{write_merged, Format};
use kinetoscope_export::MergeInput;

use super::engine;
use super::output::{message, note_skipped};
use super::output_file::{files_read, write_with};
use crate::args::{AlignArg, MergeArgs};

/// Run `kinetoscope merge`.
pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let format = Format::of(&args.output).with_context(|| {
        format!(
            "-o {}: name the format by the extension: .json, .json.gz or .pftrace",
            args.output.display()
        )
    })?;
    let reads = files_read(&args.path, []);
    // Refuse a bad output before reading anything.
    super::output_file::check("-o", &args.output, &reads)?;
    let align = match args.align {
        AlignArg::Auto => Align::Auto,
        AlignArg::None => Align::None,
        AlignArg::Collectives => Align::Collectives,
        AlignArg::Start => Align::Start,
    };
    let set = engine(&args.read).merge_set(&Source::Path(args.path.clone()), align)?;
    note_skipped(&set.skipped);
    for e in &set.errors {
        message(&format!("error: {}: {}", e.path, e.error));
    }
    for r in &set.ranks {
        if r.offset_ns != 0 {
            message(&format!(
                "rank {}: clock offset {:.3} µs subtracted",
                r.rank,
                r.offset_ns as f64 / 1e3
            ));
        }
    }
    let inputs: Vec<MergeInput<'_>> = set
        .ranks
        .iter()
        .map(|r| MergeInput {
            rank: r.rank,
            trace: &r.trace,
            offset_ns: r.offset_ns,
        })
        .collect();
    let mut stats = None;
    write_with("-o", &args.output, &reads, |w| {
        stats = Some(write_merged(&inputs, format, w)?);
        Ok(())
    })?;
    if let Some(s) = stats {
        message(&format!(
            "{} ranks, {} events, {} launch flows",
            inputs.len(),
            s.events,
            s.flows
        ));
    }
    Ok(if set.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
