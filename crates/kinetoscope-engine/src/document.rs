//! The documents the engine returns, one per view: the envelope every view shares
//! ([`Document`]: schema version, the input and its layout, one result per trace read,
//! the traces that could not be read) and the few views whose shape differs (a rank
//! comparison, the advisor's report, a snapshot, a memory timeline).
//!
//! Front ends render these and never compute: the JSON a document serialises to holds
//! every number a terminal table shows (`docs/json.md`).

use kinetoscope_advisor::{Finding, Severity, SeverityCounts, TraceReport};
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::integrity::{
    CheckOptions, CheckResult, Severity as CheckSeverity, TraceCheck,
};
use kinetoscope_analysis::memory::snapshot::SnapshotView;
use kinetoscope_analysis::memory::timeline::TimelineView;
use kinetoscope_analysis::ranks::RanksReport;
use kinetoscope_trace::RunPhase;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::run_folder::{PhaseMemory, RunReport};
use crate::safe_json::{SafeCompactFormatter, SafeFormatter};

/// Version of the JSON documents kinetoscope writes; bumped on breaking changes.
pub const SCHEMA_VERSION: u32 = 3;

/// How the input was laid out.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "layout", rename_all = "snake_case")]
pub enum InputLayout {
    /// One file (or bytes already in memory).
    File,
    /// A folder of rank (or worker) trace files.
    RankFolder,
    /// A run folder of phase files, in stage order.
    RunFolder {
        /// The phases and their files.
        phases: Vec<RunPhase>,
    },
    /// A Parquet export of rank traces (`export --parquet`): its tables, not the traces'
    /// events, so only what needs all the ranks (the rank comparison and the cross-rank
    /// rules) is computed from it.
    ParquetExport,
}

/// A trace that could not be read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReadFailure {
    /// The file.
    pub path: String,
    /// The error, with its location.
    pub error: String,
}

impl ReadFailure {
    /// The failure to read `path` with `error`.
    pub fn new(path: &std::path::Path, error: &impl std::fmt::Display) -> Self {
        Self {
            path: path.display().to_string(),
            error: error.to_string(),
        }
    }
}

/// What a special file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecialFileKind {
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A block device.
    BlockDevice,
    /// A character device.
    CharDevice,
    /// Anything else that is neither a file nor a folder.
    Other,
}

impl SpecialFileKind {
    /// The kind of a file type that is neither a regular file nor a folder.
    pub fn of(t: &std::fs::FileType) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if t.is_fifo() {
                return Self::Fifo;
            } else if t.is_socket() {
                return Self::Socket;
            } else if t.is_block_device() {
                return Self::BlockDevice;
            } else if t.is_char_device() {
                return Self::CharDevice;
            }
        }
        let _ = t;
        Self::Other
    }
}

/// A file of an input folder that is not a regular file (a FIFO, socket or device):
/// skipped, never opened, since opening one can block for ever or never end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    /// The file.
    pub path: String,
    /// What it is.
    pub kind: SpecialFileKind,
}

/// Everything a view shows for one input: one `T` per trace read.
///
/// `X` holds the view's own options (`group_by`, `sort`, `top`, ...); its fields are
/// written right after the layout, before `traces`. `()` writes nothing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Document<T, X = ()> {
    /// JSON schema version.
    pub schema_version: u32,
    /// The input's name (the path given, or the name of bytes read from memory).
    pub input: String,
    /// Its layout.
    #[serde(flatten)]
    pub layout: InputLayout,
    /// The view's options, written inline.
    #[serde(flatten)]
    pub options: X,
    /// One result per trace read, in file order.
    pub traces: Vec<T>,
    /// Run folders (summary and memory views): each phase's memory artifacts side by side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_memory: Vec<PhaseMemory>,
    /// Traces that could not be read.
    pub errors: Vec<ReadFailure>,
    /// Special files of the input folder, skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
}

impl<T, X> Document<T, X> {
    /// An empty document for `input` with `options`.
    pub fn with_options(input: String, layout: InputLayout, options: X) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            input,
            layout,
            options,
            traces: Vec::new(),
            phase_memory: Vec::new(),
            errors: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// Whether the input holds more than one trace file (a rank or run folder).
    pub fn multi(&self) -> bool {
        !matches!(self.layout, InputLayout::File)
    }
}

/// The options of a sorted, cut table view (`ops`, `kernels`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TableOptions<G, S> {
    /// Grouping of the rows.
    pub group_by: G,
    /// Sort key.
    pub sort: S,
    /// Rows kept per trace (0 = all).
    pub top: usize,
}

/// Which of the GPU-time views a [`GpuTimeDocument`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuTimeAnalysis {
    /// `temporal`: idle, compute and non-compute GPU time.
    Temporal,
    /// `idle`: idle time split by cause.
    Idle,
    /// `launches`: launch delays and runtime outliers.
    Launches,
    /// `kernels --by-class`: compute, communication and memory kernels.
    KernelClasses,
}

/// The options every GPU-time document carries.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GpuTimeOptions {
    /// The view.
    pub analysis: GpuTimeAnalysis,
    /// Definitions followed (`kinetoscope` or `hta`).
    pub compat: Compat,
    /// Whether HTA's step filter was applied (HTA mode, two or more distinct
    /// `ProfilerStep`s over all ranks).
    pub step_filter: bool,
}

/// A GPU-time view (`temporal`, `idle`, `launches`, `kernels --by-class`).
pub type GpuTimeDocument<T> = Document<T, GpuTimeOptions>;

/// `ranks`: a folder of rank traces compared side by side.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RanksDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The folder given.
    pub input: String,
    /// The comparison.
    pub report: RanksReport,
    /// Rank files that could not be read (left out of the comparison).
    pub errors: Vec<ReadFailure>,
    /// Special files of the folder, skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
}

/// `check`: the integrity report of every trace of an input, and of a rank folder as a
/// whole.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The input's name.
    pub input: String,
    /// Its layout.
    #[serde(flatten)]
    pub layout: InputLayout,
    /// The options of the checks.
    #[serde(flatten)]
    pub options: CheckOptions,
    /// One report per trace read, in file order.
    pub traces: Vec<TraceCheck>,
    /// Defects across the traces of a rank folder (missing ranks and steps, clock skew);
    /// empty for one file.
    pub ranks: Vec<CheckResult>,
    /// Occurrences of every defect of the document, by severity.
    pub counts: DefectCounts,
    /// The most severe defect's severity; absent when the input is clean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst: Option<CheckSeverity>,
    /// Traces that could not be read.
    pub errors: Vec<ReadFailure>,
    /// Special files of the input folder, skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
}

/// Occurrences of defects by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefectCounts {
    /// Errors.
    pub error: u64,
    /// Warnings.
    pub warning: u64,
    /// Infos.
    pub info: u64,
}

impl DefectCounts {
    /// The counts of `results`.
    pub fn of<'a>(results: impl IntoIterator<Item = &'a CheckResult>) -> Self {
        let mut c = Self::default();
        for r in results {
            let slot = match r.severity {
                CheckSeverity::Error => &mut c.error,
                CheckSeverity::Warning => &mut c.warning,
                CheckSeverity::Info => &mut c.info,
            };
            *slot = slot.saturating_add(r.count);
        }
        c
    }
}

/// `report`: the advisor's summary and findings for every trace of an input, with the
/// cross-rank findings and every finding ranked.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The input's name.
    pub input: String,
    /// Its layout.
    #[serde(flatten)]
    pub layout: InputLayout,
    /// Run folders: the phases side by side (time, peak memory, top operators, the
    /// findings that matter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunReport>,
    /// One report per trace read, in file order.
    pub traces: Vec<TraceReport>,
    /// Findings across the rank traces of the input (stragglers).
    pub cross_rank_findings: Vec<Finding>,
    /// Every finding of the document (per trace and cross-rank), ranked.
    pub findings: Vec<Finding>,
    /// `findings` by severity.
    pub counts: SeverityCounts,
    /// Throughput at the run's median step, when the items per step were given
    /// (`report --batch-size` / `--tokens-per-step`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<crate::throughput::RunThroughput>,
    /// Traces that could not be read.
    pub errors: Vec<ReadFailure>,
    /// Special files of the input folder, skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
    /// cProfile / pstats files of the input (a pstats file given, or those of a folder):
    /// top functions and the pstats rules' findings (kept apart from `findings`, whose
    /// impact is per step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pstats: Vec<crate::views::pstats::PstatsFileReport>,
    /// PyTorch key_averages tables of the input (a table given, or those of a folder,
    /// such as oumi's `prof_<rank>_local_<local_rank>_<sort_key>.txt`), by rank.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<crate::views::tables::ReportTable>,
}

impl ReportDocument {
    /// The report of `input` before anything was found: no trace, no finding.
    pub fn empty(input: String, layout: InputLayout) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            input,
            layout,
            run: None,
            traces: Vec::new(),
            cross_rank_findings: Vec::new(),
            findings: Vec::new(),
            counts: SeverityCounts::default(),
            throughput: None,
            errors: Vec::new(),
            skipped: Vec::new(),
            pstats: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// The most severe finding's severity.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// What a single-file memory document holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryFileKind {
    /// A CUDA caching-allocator snapshot.
    MemorySnapshot,
    /// A profiler memory timeline.
    MemoryTimeline,
}

/// `memory SNAPSHOT`: a CUDA caching-allocator snapshot.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapshotDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// Always [`MemoryFileKind::MemorySnapshot`].
    pub kind: MemoryFileKind,
    /// The input's name.
    pub input: String,
    /// The view.
    pub snapshot: SnapshotView,
}

/// `memory TIMELINE`: a profiler memory timeline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimelineDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// Always [`MemoryFileKind::MemoryTimeline`].
    pub kind: MemoryFileKind,
    /// The view.
    #[serde(flatten)]
    pub view: TimelineView,
}

/// Pretty JSON text of any document (the one JSON renderer every front end uses).
/// Strings hold no raw control or bidirectional character: those are written as
/// `\uNNNN` escapes, which read back as the same text.
pub fn to_json<D: Serialize>(doc: &D) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    write_json(&mut out, doc)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// [`to_json`] serialised straight into `w` (the same text, never held whole: a report
/// over a thousand ranks is written as it is serialised).
pub fn write_json<D: Serialize, W: std::io::Write>(w: W, doc: &D) -> Result<(), serde_json::Error> {
    let mut ser = serde_json::Serializer::with_formatter(w, SafeFormatter::new());
    doc.serialize(&mut ser)
}

/// [`to_json`] without whitespace: for answers sent over the network (the web API's
/// runs and timeline), with the same escapes.
pub fn to_json_compact<D: Serialize>(doc: &D) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, SafeCompactFormatter);
    doc.serialize(&mut ser)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// A document read back from its JSON text (a saved `--format json` output); writing it
/// again with [`to_json`] gives the same text.
pub fn from_json<D: DeserializeOwned>(text: &str) -> Result<D, serde_json::Error> {
    serde_json::from_str(text)
}
