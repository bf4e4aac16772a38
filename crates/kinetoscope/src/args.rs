//! Command-line arguments (clap derive; doc comments are the help text).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Reads PyTorch profiler traces (Kineto Chrome JSON, plain or gzip) and tells you
/// what is in them.
///
/// Examples:
///   kinetoscope                               summary of the embedded sample trace
///   kinetoscope summary rank0.pt.trace.json.gz
///   kinetoscope summary ./traces/ --format json   one entry per rank file
#[derive(Debug, Parser)]
#[command(
    name = "kinetoscope",
    version,
    args_conflicts_with_subcommands = true,
    verbatim_doc_comment
)]
pub struct Cli {
    /// What to do (default: `summary`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand: the options of `summary`.
    #[command(flatten)]
    pub summary: SummaryArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Per trace: PyTorch era, devices, rank, span, events per category, steps, warnings.
    Summary(SummaryArgs),
}

/// Output formats.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// A report for the terminal.
    #[default]
    Table,
    /// A versioned JSON document (see docs/json.md).
    Json,
}

/// Output formats of the view commands.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum ViewFormat {
    /// Tables for the terminal.
    #[default]
    Table,
    /// A versioned JSON document (see docs/json.md).
    Json,
    /// CSV (one table; see each command's help for which).
    Csv,
}

/// Options shared by the view commands (`overview`, `ops`, `kernels`, `memory`, ...).
#[derive(Debug, Args, Clone)]
pub struct ViewArgs {
    /// A trace file (.json or .json.gz) or a folder of rank files.
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Show only the first N rows of each table (0 = all).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Sort key (a column name; see each command's help).
    #[arg(long)]
    pub sort: Option<String>,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Options for reading inputs.
#[derive(Debug, Args, Clone)]
pub struct ReadArgs {
    /// Fail on the first defect (unescaped quote, N/A, truncated tail...) instead of
    /// skipping and counting it.
    #[arg(long)]
    pub strict: bool,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    pub threads: Option<usize>,
}

/// `summary` options.
#[derive(Debug, Args, Clone)]
pub struct SummaryArgs {
    /// A trace file (.json or .json.gz), a folder of rank files, or a run folder.
    /// Default: the sample trace embedded in the binary.
    pub path: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}
