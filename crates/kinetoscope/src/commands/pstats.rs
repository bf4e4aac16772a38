//! `kinetoscope pstats`: cProfile / profile statistics files, summed, as pstats' table,
//! callers and callees; `--flame` and `--collapsed` write the estimated call tree.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kinetoscope_analysis::pstats::{SortKey, SORT_KEYS};
use kinetoscope_engine::{PstatsOptions, Source};
use kinetoscope_report as render;

use super::output::emit;
use super::{engine, output_file};
use crate::args::{ReadArgs, ViewFormat};

/// `kinetoscope pstats`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct PstatsArgs {
    /// pstats files (cProfile / profile `dump_stats`, detected by content) or folders of
    /// them (*.prof, *.pstats); several are summed as `pstats.Stats(a, b)` sums them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format (CSV: the function table).
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Sort keys, most significant first (repeat or separate with commas): pstats'
    /// cumulative|cumtime, time|tottime, calls|ncalls, pcalls, name, nfl, stdname,
    /// filename|module, line (or an unambiguous prefix), and kinetoscope's percall
    /// (own time per call) and cumpercall.
    #[arg(long, value_delimiter = ',', value_parser = parse_sort, default_value = "cumulative")]
    pub sort: Vec<SortKey>,
    /// Cut file names to their base name, merging functions that then collide (pstats'
    /// strip_dirs()).
    #[arg(long)]
    pub strip_dirs: bool,
    /// Keep the functions whose `file:line(name)` this regular expression matches.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Show the first N functions (0 = all).
    #[arg(long, default_value_t = 30)]
    pub top: usize,
    /// Who calls the functions matching REGEX, per edge (pstats' print_callers).
    #[arg(long, value_name = "REGEX")]
    pub callers: Option<String>,
    /// What the functions matching REGEX call, per edge (pstats' print_callees).
    #[arg(long, value_name = "REGEX")]
    pub callees: Option<String>,
    /// Write the estimated call tree as a self-contained HTML flame graph (icicle).
    #[arg(long, value_name = "OUT.html")]
    pub flame: Option<PathBuf>,
    /// Write the estimated call tree as collapsed stacks (`a;b;c microseconds`).
    #[arg(long, value_name = "OUT.txt")]
    pub collapsed: Option<PathBuf>,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

fn parse_sort(s: &str) -> Result<SortKey, String> {
    SortKey::parse(s).ok_or_else(|| {
        let names: Vec<&str> = SORT_KEYS.iter().map(|(n, _)| *n).collect();
        format!(
            "unknown or ambiguous sort key; one of: {}",
            names.join(", ")
        )
    })
}

/// Read, analyse, write the call tree if asked, render.
pub fn run(args: PstatsArgs) -> anyhow::Result<ExitCode> {
    // Every file read: the paths given and, for a folder, its traces and pstats files.
    let folder_pstats = args
        .paths
        .iter()
        .filter(|p| p.is_dir())
        .flat_map(|p| kinetoscope_engine::pstats::pstats_files(p).unwrap_or_default());
    let reads: Vec<PathBuf> = args
        .paths
        .iter()
        .flat_map(|p| output_file::files_read(p, []))
        .chain(args.paths.iter().cloned())
        .chain(folder_pstats)
        .collect();
    for (flag, out) in [("--flame", &args.flame), ("--collapsed", &args.collapsed)] {
        if let Some(out) = out {
            output_file::check(flag, out, &reads)?;
        }
    }
    let opts = PstatsOptions {
        sort: args.sort.clone(),
        strip_dirs: args.strip_dirs,
        filter: args.filter.clone(),
        top: (args.top > 0).then_some(args.top),
        callers: args.callers.clone(),
        callees: args.callees.clone(),
        tree: args.flame.is_some() || args.collapsed.is_some(),
    };
    let sources: Vec<Source> = args.paths.iter().map(|p| Source::Path(p.clone())).collect();
    let doc = engine(&args.read).pstats(&sources, &opts)?;
    if let Some(tree) = &doc.pstats.tree {
        if let Some(out) = &args.flame {
            let html = render::pstats_html::render(&doc.inputs, tree);
            output_file::write("--flame", out, &reads, html.as_bytes())?;
        }
        if let Some(out) = &args.collapsed {
            let text = render::pstats::collapsed(tree);
            output_file::write("--collapsed", out, &reads, text.as_bytes())?;
        }
    }
    emit(
        &doc,
        &[],
        args.format,
        render::pstats::to_table,
        Some(&render::pstats::to_csv),
    )
}
