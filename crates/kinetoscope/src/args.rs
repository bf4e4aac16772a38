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
    /// Memory (traces recorded with profile_memory=True): allocated and reserved curves
    /// per device, peaks with time and operator, allocation events, per-operator
    /// statistics.
    Memory(MemoryArgs),
    /// Step-time breakdown per step and on average (Kernel, Memcpy, Memset,
    /// Communication, Runtime, DataLoader, CPU Exec, Other; steps stretched to the end of
    /// their GPU work) and per GPU: utilization, est. SM efficiency, est. achieved
    /// occupancy, tensor-core share of kernel time; devices and workers.
    ///
    /// CSV: the per-step breakdown (µs) with an `average` row per trace. Sort keys
    /// (--sort, step rows only): step (time order, default), total, kernel, memcpy,
    /// memset, communication, runtime, dataloader, cpu_exec, other.
    Overview(ViewArgs),
    /// Operator table: per operator, calls, host self/total time, device self/total time
    /// (kernels, memcpy, memset launched by the operator, plain sums), tensor-core
    /// eligibility and tensor-core share of its device time (TensorBoard plugin
    /// definitions, docs/metrics.md A.9).
    ///
    /// Sort keys (--sort): device_self (default, like the plugin; ties by host self
    /// time), device_total, host_self, host_total, calls, tc_total, name.
    /// CSV: one table for all traces, times in µs.
    Ops(OpsArgs),
    /// GPU kernel table: per kernel name (or name + launching operator + grid, block,
    /// registers, shared memory with --group-by properties), calls, total, mean, min and
    /// max duration, tensor-core use, time-weighted mean blocks per SM and est. achieved
    /// occupancy (docs/metrics.md A.10).
    ///
    /// Sort keys (--sort): total (default), calls, mean, max, min, blocks_per_sm,
    /// occupancy, name. CSV: one table for all traces, times in µs.
    Kernels(KernelsArgs),
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

/// Tables of `kinetoscope memory`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum MemoryTableArg {
    /// Allocated and reserved bytes over time, down-sampled.
    Curve,
    /// Allocations paired with their frees.
    Events,
    /// Per-operator statistics.
    Operators,
}

/// `memory` options.
///
/// Sort keys (--sort): operator table: name, calls, increase, self_increase (default),
/// alloc_count, self_alloc_count, alloc_size, self_alloc_size; allocation events: size
/// (default), alloc_time, release_time, lifetime.
#[derive(Debug, Args, Clone)]
pub struct MemoryArgs {
    /// Path, format, --top, --sort and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// The table CSV writes (default: operators); with --format table, show only this one.
    #[arg(long, value_enum)]
    pub table: Option<MemoryTableArg>,
    /// Only this device: cpu, gpu (all GPUs), gpu0, cuda:0 or 0.
    #[arg(long, value_parser = parse_device_filter)]
    pub device: Option<kinetoscope_analysis::memory::DeviceFilter>,
    /// Curve points per device after down-sampling (each bucket's exact min and max are
    /// kept, so the peak is never lost).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(10..))]
    pub points: u32,
}

fn parse_device_filter(s: &str) -> Result<kinetoscope_analysis::memory::DeviceFilter, String> {
    s.parse()
}

/// Row grouping of `kinetoscope ops`.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum OpsGroupBy {
    /// Operator name.
    #[default]
    Name,
    /// Operator name + input shapes (needs record_shapes=True).
    Shape,
    /// Operator name + call stack (needs with_stack=True).
    Stack,
    /// Operator name + enclosing nn.Module path (needs with_modules=True) or
    /// TorchScript module hierarchy.
    Module,
}

/// `ops` options.
#[derive(Debug, Args, Clone)]
pub struct OpsArgs {
    /// Path, format, --top, --sort and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// How calls are grouped into rows.
    #[arg(long, value_enum, default_value_t)]
    pub group_by: OpsGroupBy,
}

/// Row grouping of `kinetoscope kernels`.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum KernelsGroupBy {
    /// Kernel name.
    #[default]
    Name,
    /// Kernel name + launching operator + grid + block + registers per thread + shared
    /// memory.
    Properties,
}

/// `kernels` options.
#[derive(Debug, Args, Clone)]
pub struct KernelsArgs {
    /// Path, format, --top, --sort and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// How launches are grouped into rows.
    #[arg(long, value_enum, default_value_t)]
    pub group_by: KernelsGroupBy,
}
