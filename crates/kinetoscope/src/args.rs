//! Command-line arguments (clap derive; doc comments are the help text).

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use kinetoscope_analysis::kernels::KernelSortKey;
use kinetoscope_analysis::memory::SortKey as MemorySortKey;
use kinetoscope_analysis::ops::OpSortKey;
use kinetoscope_report::overview::StepOrder;

/// Reads PyTorch profiler traces (Kineto Chrome JSON, plain or gzip) and tells you
/// what is in them.
///
/// Examples:
///   kinetoscope                               report (summary + findings) of the embedded sample
///   kinetoscope rank0.pt.trace.json.gz        the same as `kinetoscope report rank0.pt.trace.json.gz`
///   kinetoscope report ./traces/ --fail-on warning   CI gate: exit 1 on a warning or worse
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
    /// What to do (default: `report`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand: the options of `report`.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The advisor: a one-screen summary (steps, breakdown, GPU metrics, memory peak vs
    /// device memory, FLOPs and MFU) followed by findings ranked by estimated
    /// recoverable time and severity, each with impact, confidence, evidence and a fix.
    /// What `kinetoscope PATH` runs. A Parquet export of ranks (`export --parquet`) gives
    /// the findings across ranks only (the other rules need the traces' events).
    ///
    /// Exit codes: 0, or 1 with --fail-on when a finding reaches that severity, 2 on
    /// errors. Thresholds: --config advisor.toml and --set section.key=value (see
    /// crates/kinetoscope-advisor/src/config.rs).
    Report(ReportArgs),
    /// Per trace: PyTorch era, devices, rank, span, events per category, steps, warnings.
    Summary(SummaryArgs),
    /// Memory (traces recorded with profile_memory=True): allocated and reserved curves
    /// per device, peaks with time and operator, allocation events, per-operator
    /// statistics.
    ///
    /// Given a CUDA memory snapshot (`torch.cuda.memory._dump_snapshot`, a pickle,
    /// detected by content): allocator state and fragmentation, the active-memory
    /// timeline and its peak, top allocation sites by stack, the state at each OOM,
    /// leak suspects, allocator settings (--format table or json).
    Memory(MemoryArgs),
    /// Step-time breakdown per step and on average (Kernel, Memcpy, Memset,
    /// Communication, Runtime, DataLoader, CPU Exec, Other; steps stretched to the end of
    /// their GPU work) and per GPU: utilization, est. SM efficiency, est. achieved
    /// occupancy, tensor-core share of kernel time; devices and workers.
    ///
    /// CSV: the per-step breakdown (µs) with an `average` row per trace. Sort keys
    /// (--sort, step rows only): step (time order, default), total, kernel, memcpy,
    /// memset, communication, runtime, dataloader, cpu_exec, other.
    Overview(OverviewArgs),
    /// Operator table: per operator, calls, host self/total time, device self/total time
    /// (kernels, memcpy, memset launched by the operator, plain sums), tensor-core
    /// eligibility and tensor-core share of its device time (TensorBoard plugin
    /// definitions).
    ///
    /// Sort keys (--sort): device_self (default, like the plugin; ties by host self
    /// time), device_total, host_self, host_total, calls, tc_total, name.
    /// CSV: one table for all traces, times in µs.
    Ops(OpsArgs),
    /// Performance model (roofline): per operator + input dims + dtypes, the family
    /// (gemm, attention, conv, elementwise, reduction, normalization, softmax,
    /// embedding_index, optimizer, other), GFLOP and bytes per call, FLOP per byte,
    /// kernel time (busy time of the GPU work under the call), achieved TFLOP/s and
    /// TB/s, the device's peaks, the bound, the fraction of the roofline reached and the
    /// time lost against it; rows ranked by time lost, a per-family summary on top.
    ///
    /// Peaks come from the device table (docs/devices.md) unless --peak-tflops /
    /// --peak-tbps are given; an unknown device gets rates without roofline verdicts.
    /// CSV: one table for all traces, the JSON row keys as columns.
    Perf(PerfArgs),
    /// GPU kernel table: per kernel name (or name + launching operator + grid, block,
    /// registers, shared memory with --group-by properties), calls, total, mean, min and
    /// max duration, tensor-core use, time-weighted mean blocks per SM and est. achieved
    /// occupancy (the TensorBoard plugin's GPU Kernel view).
    ///
    /// Sort keys (--sort): total (default), calls, mean, max, min, blocks_per_sm,
    /// occupancy, name. CSV: one table for all traces, times in µs.
    Kernels(KernelsArgs),
    /// Per rank (HTA's temporal breakdown): over the span from the first to the
    /// last GPU activity, idle time, compute time (computation kernels) and non-compute
    /// time (communication, memory, sync not overlapped by computation), in µs and %.
    ///
    /// --hta-compat applies HTA's step filter (drops the last step). CSV: one row per rank.
    Temporal(GpuTimeArgs),
    /// Idle time per rank and stream (HTA definition, B.7), split into host wait (launched
    /// after the stream drained), kernel wait (gap below --kernel-wait-us) and other, with
    /// interval statistics (count, mean, p50, p90, max) per class.
    Idle(IdleArgs),
    /// CUDA kernel launch statistics (HTA definition, B.12): per launch, CPU launch
    /// duration, kernel duration and launch delay; short kernels (kernel shorter than its
    /// launch), runtime and delay outliers (top --top of each); a per-step summary.
    ///
    /// CSV: one row per launch (every launch).
    Launches(LaunchesArgs),
    /// Communication per trace: communication/computation overlap % (kinetoscope
    /// definition: kernels inside the kept steps; HTA 0.5.0's with --hta-compat),
    /// exposed communication per step, and a collectives table (collective, process
    /// group, algorithm, count, bytes, latency, algorithm and bus bandwidth).
    ///
    /// CSV: the collectives of every trace (µs, bytes, GB/s).
    Comm(CommArgs),
    /// A folder of ≥ 2 rank traces side by side: per-rank step times and breakdown,
    /// collectives matched across ranks (by Seq, else by order within the process
    /// group), start skew and waits, and the straggler ranking with its evidence. Clock
    /// offsets: see --clock. A Parquet export of the ranks (`export --parquet`) gives
    /// the same comparison, read from its tables.
    ///
    /// CSV: the per-rank table (µs).
    Ranks(RanksArgs),
    /// The most frequent kernel sequences (fusion candidates) inside operators whose
    /// name contains --op (HTA's definition: the operator's kernels in order), or
    /// without --op inside each step (runs of consecutive kernels per stream), with
    /// their count and total kernel time.
    ///
    /// CSV: one row per pattern, kernels joined with `|`.
    Sequences(SequencesArgs),
    /// NVTX ranges by name, as `nsys stats --report nvtx_sum`: count, total, average,
    /// median, minimum, maximum and standard deviation of duration, and the GPU time of
    /// the work launched inside each range on its thread (the `nvtx_gpu_proj_sum`
    /// projection). On an Nsight Systems export: its NVTX ranges (`emit_nvtx`
    /// operator ranges under the operator's name); on a Kineto trace: its
    /// `record_function` ranges.
    ///
    /// CSV: one row per range name.
    Nvtx(NvtxArgs),
    /// The critical path of one step: walking back from the step's end through stream
    /// order, host→device launch edges, synchronisations and waits between streams;
    /// time on the path by category and the events with the most time on it.
    ///
    /// CSV: time per category.
    CriticalPath(CriticalPathArgs),
    /// Trace integrity: defects the reader repaired or skipped, GPU activities
    /// overlapping on one stream, host slices running past their parent's end, negative
    /// durations, launches without GPU activity and activities without launch (those
    /// cut by the profiling window told apart), negative launch latencies, flows that
    /// point nowhere, missing or repeated step numbers; for a rank folder also missing
    /// ranks, steps missing on some ranks and clock skew between ranks. Each with its
    /// count and first examples (time as written in the file, track, event names).
    ///
    /// Exit codes: 0 clean (nothing at or above --fail-on), 1 defects at or above
    /// --fail-on (default: error), 2 when a trace cannot be read. docs/check.md says
    /// what each check means. CSV: one row per example.
    Check(CheckArgs),
    /// Merge the traces of a rank folder into one timeline: one process per rank
    /// (`rank N`, labelled with its original process), its host threads and GPU streams
    /// under it, clock offsets between ranks applied (--align), launch → kernel arrows
    /// kept. OUT's extension picks the format: .json, .json.gz (Chrome trace JSON, for
    /// Perfetto UI or chrome://tracing) or .pftrace (Perfetto protobuf: smaller, names
    /// interned). docs/merge.md.
    Merge(MergeArgs),
    /// Compare two runs: step times with a 95 % interval and a verdict (faster, slower,
    /// no significant change), where the time went (breakdown, host phases), operators
    /// and kernels matched across the runs (added, removed, changed; renamed kernels
    /// matched through their launching call path), deterministic counts, GPU metrics,
    /// memory, communication, and findings new, resolved, worse or better. Tells a
    /// uniform slowdown (the machine) from a code change.
    ///
    /// Each side is a trace, a rank folder, a run folder, or a saved `kinetoscope report
    /// --format json` (a CI baseline). --fail-if EXPR (repeatable) is the CI gate: exit
    /// 1 when an expression holds, e.g. `step_time.median > +5%`, `memory.peak > +1GiB`,
    /// `kernels.launches > +10%`, `findings.new >= warning`; wall-time gates trip only on
    /// a significant change (docs/diff.md). Exit codes: 0, 1 gate tripped, 2 error.
    ///
    /// Two cProfile / pstats files (detected by content) are compared function by
    /// function instead: own and cumulative time and calls, added and removed functions
    /// (docs/pstats.md); two folders that both hold pstats files get that section too.
    Diff(DiffArgs),
    /// cProfile / profile statistics (`dump_stats` files, detected by content): pstats'
    /// function table (ncalls, tottime, percall, cumtime, percall) with its sort keys,
    /// --strip-dirs, a regex --filter and --top; --callers / --callees REGEX per edge;
    /// several files summed as `pstats.Stats(a, b)` sums them; the estimated call tree
    /// as a flame graph (--flame OUT.html) or collapsed stacks (--collapsed OUT.txt).
    /// The numbers equal Python's pstats on the same files.
    ///
    /// CSV: the function table (seconds).
    Pstats(crate::commands::pstats::PstatsArgs),
    /// PyTorch key_averages tables (`prof.key_averages(...).table(...)` text, oumi's
    /// `prof_<rank>_local_<local_rank>_<sort_key>.txt`; detected by content): the rows
    /// with typed cells, --sort by any column, --top; each next to the Chrome trace of
    /// the same run when it is in the same folder (calls and self CPU time per operator,
    /// with the difference).
    ///
    /// CSV: one line per cell (ns, bytes, 0-1 shares, FLOPs).
    Tables(crate::commands::tables::TablesArgs),
    /// Print the documentation of an advisor rule: what it finds, why it matters, the
    /// evidence, the fix, and its thresholds with their sources (`kinetoscope explain
    /// GP005`; `kinetoscope explain` lists every rule).
    Explain(ExplainArgs),
    /// The local web UI (the TensorBoard profiler plugin's pages and a timeline that
    /// opens 1 GB traces): serves the runs under PATH… — a log dir of runs (sub-folders),
    /// a rank or run folder, or trace files — on http://127.0.0.1:PORT. The first line
    /// printed is the URL with its access token; files added later show up without a
    /// restart. Read-only; the API is docs/api.md.
    Serve(ServeArgs),
    /// The trace cache (docs/cache.md): where it is, whether it is on and what it holds
    /// (`info`), or remove its entries (`clear`). Traces of 4 MiB and more read from
    /// files are kept there and read back while the file is unchanged; `--no-cache` on
    /// a command, or KINETOSCOPE_NO_CACHE=1, turns it off.
    Cache(CacheArgs),
    /// Cut a smaller trace that Perfetto or chrome://tracing can open: the events of
    /// some steps (`--steps 3..5`) or of a time window, optionally only the GPU's or
    /// without Python frames. Kept events are the input's bytes; invalid JSON and
    /// overlapping slices are repaired and counted (docs/trim.md). A rank folder gives
    /// a folder of trimmed files.
    Trim(TrimArgs),
    /// Export traces as tables for other engines: `--parquet OUTDIR` writes per-rank
    /// Parquet files (`OUTDIR/<table>/rank-<RRRRR>.parquet`: steps with their breakdown,
    /// kernels per step, operators, collectives, memory per step, events and their
    /// names) and `OUTDIR/kinetoscope-parquet.json`. DuckDB, Polars, pandas and Spark
    /// read `OUTDIR/<table>/*.parquet`; `kinetoscope ranks OUTDIR` compares the ranks
    /// from them. OUTDIR must be new, empty, or a previous export (replaced). Schema:
    /// docs/parquet.md.
    Export(ExportArgs),
}

/// `kinetoscope export`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// A trace or a folder of rank traces.
    pub path: PathBuf,
    /// The folder to write the Parquet tables to.
    #[arg(long, value_name = "OUTDIR")]
    pub parquet: PathBuf,
    /// What to print: a summary (table) or the export's manifest (json).
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `kinetoscope trim`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct TrimArgs {
    /// A Kineto trace (.json or .json.gz) or a rank folder.
    pub path: PathBuf,
    /// Where to write: a file for a trace (gzip when it ends in .gz; Perfetto protobuf
    /// when it ends in .pftrace), a folder (created if missing; one file per kept rank,
    /// names kept) for a rank folder.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Keep the steps ProfilerStep#A to #B (inclusive, numbers as written in the
    /// trace): `3..5`, or one step `4`. GPU work they launched is kept even when it runs
    /// past their end.
    #[arg(long, value_parser = parse_steps)]
    pub steps: Option<(i64, i64)>,
    /// Keep events starting in a time window: `A..B` in ms after the trace's first
    /// event, or `ts` values as written in the file with a `us` suffix
    /// (`1700000us..1750000us`).
    #[arg(long)]
    pub time: Option<kinetoscope_export::trim::TimeRange>,
    /// With a rank folder: keep these ranks only (as the reader decided them:
    /// distributedInfo, else the file name), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub ranks: Vec<i64>,
    /// Keep only GPU activities (kernels, memcpy, memset, GPU annotations, syncs) and
    /// the metadata naming processes and threads.
    #[arg(long)]
    pub kernels_only: bool,
    /// Drop the Python frames of with_stack traces (`python_function` events), which
    /// are most of their size.
    #[arg(long)]
    pub drop_stacks: bool,
    /// What to print: a summary on stderr (`table`), or the trim reports as JSON on
    /// stdout.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `3..5` or `4`: a range of step numbers.
fn parse_steps(s: &str) -> Result<(i64, i64), String> {
    let num = |t: &str| {
        t.trim()
            .parse::<i64>()
            .map_err(|_| format!("`{s}`: expected A..B or N (step numbers)"))
    };
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.trim_start_matches('='))?),
        None => (num(s)?, num(s)?),
    };
    if b < a {
        return Err(format!("`{s}`: the last step is before the first"));
    }
    Ok((a, b))
}

/// `kinetoscope cache`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct CacheArgs {
    /// What to do.
    #[arg(value_enum, default_value_t)]
    pub action: CacheAction,
}

/// What `kinetoscope cache` does.
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum CacheAction {
    /// Where the cache is, whether it is on, its entries and their size.
    #[default]
    Info,
    /// Remove every entry (only the cache's own files, never the folder or others).
    Clear,
}

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Log dirs, run folders, rank folders or trace files to serve.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The address to listen on. Anything but a loopback address exposes the traces to
    /// the network (the token still protects them; a warning is printed).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// The port to listen on (0: any free port).
    #[arg(long, default_value_t = 6006)]
    pub port: u16,
    /// Open the page in a browser (never done unless asked).
    #[arg(long)]
    pub open: bool,
    /// Most memory kept by loaded traces (models and timeline indexes), e.g. 8GiB; the
    /// least recently used are dropped beyond it.
    #[arg(long, default_value = "8GiB", value_parser = crate::size::parse_size)]
    pub max_loaded: u64,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
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
    /// Read plain JSON through read() instead of memory-mapping it: slower, but a file
    /// truncated by another process while it is read gives an error instead of a crash.
    #[arg(long)]
    pub no_mmap: bool,
    /// The largest single event or top-level value read (default 64MiB): a larger one
    /// is skipped and counted, or an error with --strict.
    #[arg(long, value_name = "SIZE", value_parser = crate::size::parse_size)]
    pub max_element: Option<u64>,
    /// Memory the traces read may hold, shared by all files read at once (default: 3/4
    /// of the machine's or cgroup's memory, 1/2 of `ulimit -v`); `none` for no budget.
    /// Going over it is an error, never a crash.
    #[arg(long, value_name = "SIZE", value_parser = crate::size::parse_budget)]
    pub max_memory: Option<crate::size::Budget>,
    /// Nsight Systems exports: the NVTX range that marks a step (its instances become
    /// steps, in start order); ranges named `step N` are steps without it.
    #[arg(long, value_name = "NAME")]
    pub nvtx_step: Option<String>,
    /// Neither read traces back from the trace cache nor write them there (also
    /// KINETOSCOPE_NO_CACHE=1). Traces of 4 MiB and more are otherwise kept in
    /// $KINETOSCOPE_CACHE_DIR, else ~/.cache/kinetoscope/traces, and read again from there
    /// while the file is unchanged.
    #[arg(long)]
    pub no_cache: bool,
}

/// `report` options.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// A trace file (.json or .json.gz), a folder of rank files, or a run folder.
    /// Default: the sample trace embedded in the binary.
    pub path: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Exit with status 1 when a finding is at least this severe (for CI).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// A TOML file of thresholds (sections named after the rules, e.g.
    /// `[dataloader_stall] warning_pct = 10`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override one threshold: `section.key=value` (repeatable), e.g.
    /// `--set gating.min_steps_critical=3`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Peak TFLOP/s for MFU, instead of the dense datasheet peak of the detected GPU.
    #[arg(long, value_name = "TFLOPS")]
    pub peak_tflops: Option<f64>,
    /// Samples per step: adds throughput (samples/s at the median step).
    #[arg(long, value_name = "N", conflicts_with = "tokens_per_step")]
    pub batch_size: Option<f64>,
    /// Tokens per step: adds throughput (tokens/s at the median step).
    #[arg(long, value_name = "N")]
    pub tokens_per_step: Option<f64>,
    /// Also write the web UI's pages (overview, operators, kernels, memory,
    /// distributed, trace) as one self-contained offline HTML file.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Most bytes of data the `--html` file embeds (views first, then timeline detail),
    /// e.g. `20MB`.
    #[arg(long, value_name = "SIZE", default_value = "10MB", value_parser = crate::size::parse_size, requires = "html")]
    pub html_budget: u64,
    /// Also write a workbook (.xlsx) of every view to this file: summary, overview,
    /// operators by name and by shape, kernels, the perf model, memory, collectives and
    /// findings, one sheet each (docs/xlsx.md).
    #[arg(long, value_name = "OUT.xlsx")]
    pub xlsx: Option<PathBuf>,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Severities `--fail-on` accepts.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum FailOn {
    /// A warning or a critical finding.
    Warning,
    /// A critical finding.
    Critical,
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
    /// Bytes live at the allocated peak by nn.Module.
    Modules,
}

/// Row grouping of `kinetoscope memory`.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum MemoryGroupBy {
    /// Every table (curve summary, operators, allocations).
    #[default]
    Op,
    /// Only the bytes live at each device's peak by enclosing nn.Module path (needs
    /// with_stack=True or with_modules=True); the same as --table modules.
    Module,
}

/// `memory` options.
///
/// Sort keys (--sort): operator table: name, calls, increase, self_increase (default),
/// alloc_count, self_alloc_count, alloc_size, self_alloc_size; allocation events: size
/// (default), alloc_time, release_time, lifetime.
#[derive(Debug, Args, Clone)]
pub struct MemoryArgs {
    /// Path, format, --top and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Sort key.
    #[arg(long, value_parser = keys(&MemorySortKey::ALL))]
    pub sort: Option<MemorySortKey>,
    /// The table CSV writes (default: operators); with --format table, show only this one.
    #[arg(long, value_enum)]
    pub table: Option<MemoryTableArg>,
    /// Group by operator (every table) or by nn.Module (`--group-by module`: the memory
    /// live at each peak by module).
    #[arg(long, value_enum, default_value_t = MemoryGroupBy::Op)]
    pub group_by: MemoryGroupBy,
    /// Only this device: cpu, gpu (all GPUs), gpu0, cuda:0 or 0.
    #[arg(long, value_parser = parse_device_filter)]
    pub device: Option<kinetoscope_analysis::memory::DeviceFilter>,
    /// Curve points per device after down-sampling (each bucket's exact min and max are
    /// kept, so the peak is never lost).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(10..))]
    pub points: u32,
    /// PyTorch's memory timeline of the same run (`export_memory_timeline` .json or
    /// .raw.json.gz), to print its categories next to kinetoscope's inferred ones. By
    /// default a timeline file in the trace's folder is used.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<std::path::PathBuf>,
    /// Also write a self-contained HTML chart (stacked areas by category, the peak
    /// marked, hover details, zoom) to this file; never an input file.
    #[arg(long, value_name = "OUT")]
    pub html: Option<std::path::PathBuf>,
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
    /// Path, format, --top and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Sort key.
    #[arg(long, value_parser = keys(&OpSortKey::ALL))]
    pub sort: Option<OpSortKey>,
    /// How calls are grouped into rows.
    #[arg(long, value_enum, default_value_t)]
    pub group_by: OpsGroupBy,
}

/// `perf` options.
#[derive(Debug, Args, Clone)]
pub struct PerfArgs {
    /// Path, format, --top and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Compute peak in TFLOP/s for every row, instead of the device table's.
    #[arg(long, value_name = "TFLOPS")]
    pub peak_tflops: Option<f64>,
    /// Memory bandwidth peak in TB/s, instead of the device table's.
    #[arg(long, value_name = "TBPS")]
    pub peak_tbps: Option<f64>,
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
    /// Path, format, --top and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Sort key.
    #[arg(long, value_parser = keys(&KernelSortKey::ALL))]
    pub sort: Option<KernelSortKey>,
    /// How launches are grouped into rows.
    #[arg(long, value_enum, default_value_t)]
    pub group_by: KernelsGroupBy,
    /// Instead: time in computation, communication and memory kernels per rank (HTA
    /// classes), their overlaps, and the top kernels of each.
    #[arg(long)]
    pub by_class: bool,
    /// With --by-class: HTA 0.5.0's step filter and class rules (docs/hta-differences.md).
    #[arg(long, requires = "by_class")]
    pub hta_compat: bool,
}

/// Options of the GPU-time commands (`temporal`, `idle`, `launches`).
#[derive(Debug, Args, Clone)]
pub struct GpuTimeArgs {
    /// Path, format, --top and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Reproduce HTA 0.5.0: drop host events from the start of each rank's last
    /// ProfilerStep on and GPU work they did not launch; HTA's class rules
    /// (docs/hta-differences.md).
    #[arg(long)]
    pub hta_compat: bool,
}

/// `idle` options.
#[derive(Debug, Args, Clone)]
pub struct IdleArgs {
    /// Path, format, reading options and --hta-compat.
    #[command(flatten)]
    pub common: GpuTimeArgs,
    /// A gap shorter than this (µs) after an in-time launch is kernel wait (HTA's
    /// consecutive_kernel_delay).
    #[arg(long, default_value_t = 30.0)]
    pub kernel_wait_us: f64,
}

/// `launches` options.
#[derive(Debug, Args, Clone)]
pub struct LaunchesArgs {
    /// Path, format, --top (rows per list), reading options and --hta-compat.
    #[command(flatten)]
    pub common: GpuTimeArgs,
    /// A launch call longer than this (µs) is a runtime outlier.
    #[arg(long, default_value_t = 50.0)]
    pub runtime_cutoff_us: f64,
    /// A launch delay longer than this (µs) is a delay outlier.
    #[arg(long, default_value_t = 100.0)]
    pub delay_cutoff_us: f64,
}

/// `comm` options.
#[derive(Debug, Args, Clone)]
pub struct CommArgs {
    /// Path, format, --top (rows per table) and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Overlap as HTA 0.5.0 computes it: its load-time step filter, its kernel-class
    /// regexes, over the whole trace (docs/hta-differences.md).
    #[arg(long)]
    pub hta_compat: bool,
}

/// Clock handling of `ranks`.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum ClockArg {
    /// Estimate each rank's offset from collective end times; apply it only where a
    /// constant offset fits them.
    #[default]
    Auto,
    /// Use the timestamps as recorded (one shared clock).
    None,
    /// Always subtract the offsets estimated from collective end times.
    CollectiveEnd,
}

/// `ranks` options.
#[derive(Debug, Args, Clone)]
pub struct RanksArgs {
    /// Folder, format, --top (rows of the step and collective tables) and reading
    /// options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// How clock offsets between ranks are handled.
    #[arg(long, value_enum, default_value_t)]
    pub clock: ClockArg,
}

/// `sequences` options.
#[derive(Debug, Args, Clone)]
pub struct SequencesArgs {
    /// A trace file (.json or .json.gz) or a folder of rank files.
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Operator name (substring) whose kernels form the patterns; default: whole steps.
    #[arg(long)]
    pub op: Option<String>,
    /// Shortest pattern, in kernels.
    #[arg(long, default_value_t = 3)]
    pub min_len: usize,
    /// Longest pattern in step mode, in kernels.
    #[arg(long, default_value_t = 6)]
    pub max_len: usize,
    /// Patterns to show per trace.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `nvtx` options.
#[derive(Debug, Args, Clone)]
pub struct NvtxArgs {
    /// An Nsight Systems export (.sqlite), a trace file or a folder of rank files.
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Keep only range names containing this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Rows to show per trace (all when not given).
    #[arg(long)]
    pub top: Option<usize>,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `merge` options.
#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// A folder of rank traces (or an Nsight Systems export of several processes).
    pub path: PathBuf,
    /// The merged file: .json, .json.gz or .pftrace.
    #[arg(short, long)]
    pub output: PathBuf,
    /// How the ranks' clocks are lined up.
    #[arg(long, value_enum, default_value_t)]
    pub align: AlignArg,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Clock alignment of `merge`.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum AlignArg {
    /// What `check` decides: offsets estimated from collective end times, applied only
    /// where one constant offset explains them.
    #[default]
    Auto,
    /// The timestamps as recorded (one shared clock).
    None,
    /// Always subtract the offsets estimated from collective end times.
    Collectives,
    /// Move each rank's first event onto the lowest rank's first event.
    Start,
}

/// `check` options.
#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// A trace file (.json, .json.gz, .sqlite) or a folder of rank files.
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Exit with status 1 when a defect is at least this severe (`none`: never).
    #[arg(long, value_enum, default_value_t)]
    pub fail_on: CheckFailOn,
    /// Examples to show per kind of defect (the earliest in time).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub examples: u16,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Severities `check --fail-on` accepts.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum CheckFailOn {
    /// A warning or an error.
    Warning,
    /// An error.
    #[default]
    Error,
    /// Never fail on defects (exit 1 is not used).
    None,
}

/// `critical-path` options.
#[derive(Debug, Args, Clone)]
pub struct CriticalPathArgs {
    /// A trace file (.json or .json.gz) or a folder of rank files.
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// The step number N of ProfilerStep#N (default: the last kept step).
    #[arg(long)]
    pub step: Option<i64>,
    /// Events to list (0 = all).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// A `--sort` parser over a table of key spellings: the keys are listed in `--help`,
/// `host-self` is accepted for `host_self`, and a typo gets clap's "did you mean" and
/// the list.
fn keys<K: Copy + Send + Sync + 'static>(
    all: &'static [(&'static str, K)],
) -> impl TypedValueParser<Value = K> {
    let values = all.iter().map(|(n, _)| {
        let value = PossibleValue::new(*n);
        if n.contains('_') {
            value.alias(n.replace('_', "-"))
        } else {
            value
        }
    });
    PossibleValuesParser::new(values).map(move |s| {
        let s = s.replace('-', "_");
        // The parser admits only the spellings of `all` (and their hyphen aliases).
        all.iter()
            .find(|(n, _)| *n == s)
            .map_or(all[0].1, |(_, k)| *k)
    })
}

/// `kinetoscope overview`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct OverviewArgs {
    /// Path, format, --top (step rows) and reading options.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Order of the step rows: step (time order), total, or a part of the breakdown.
    #[arg(long, value_parser = keys(&StepOrder::ALL))]
    pub sort: Option<StepOrder>,
}

/// Output formats of `diff`.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub enum DiffFormat {
    /// A report for the terminal.
    #[default]
    Table,
    /// A versioned JSON document (see docs/json.md).
    Json,
    /// One self-contained HTML page (side-by-side bars; works offline).
    Html,
}

/// `kinetoscope diff`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct DiffArgs {
    /// The base run: a trace, a rank or run folder, or a saved `report --format json`.
    pub base: PathBuf,
    /// The new run (the same kinds).
    pub new: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: DiffFormat,
    /// Exit with status 1 when EXPR holds (repeatable): METRIC OP VALUE, e.g.
    /// `step_time.median > +5%`, `memory.peak > +1GiB`, `sync.calls > 0`,
    /// `findings.new >= warning` (metrics and units: docs/diff.md).
    #[arg(long = "fail-if", value_name = "EXPR", value_parser = parse_gate)]
    pub fail_if: Vec<kinetoscope_engine::GateExpr>,
    /// Samples per step, for throughput (samples/s).
    #[arg(long, value_name = "N")]
    pub batch_size: Option<f64>,
    /// Tokens per step, for throughput (tokens/s).
    #[arg(long, value_name = "N")]
    pub tokens_per_step: Option<f64>,
    /// Rows of the operator and kernel tables (0 = all; JSON has every row).
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// A TOML file of advisor thresholds (as `report --config`), for the findings.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override one advisor threshold: `section.key=value` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

fn parse_gate(s: &str) -> Result<kinetoscope_engine::GateExpr, String> {
    s.parse()
}

/// `kinetoscope explain`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct ExplainArgs {
    /// A rule code (`GP005`) or name (`HostBoundGaps`); none lists every rule.
    pub code: Option<String>,
}

impl From<Format> for ViewFormat {
    fn from(f: Format) -> Self {
        match f {
            Format::Table => ViewFormat::Table,
            Format::Json => ViewFormat::Json,
        }
    }
}
