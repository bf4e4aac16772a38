//! `pstats`: one or more cProfile / profile statistics files, summed as
//! `pstats.Stats(a, b, ...)` sums them, as pstats' function table, callers, callees
//! and an estimated call tree. A folder stands for its `.prof` / `.pstats` files.

use std::path::{Path, PathBuf};

use kinetoscope_analysis::pstats::{self, PstatsView, SortKey, Stats, TableOptions};
use kinetoscope_trace::read::{sniff_bytes, sniff_path};
use kinetoscope_trace::{ArtifactKind, PstatsProfile};
use serde::{Deserialize, Serialize};

use crate::document::SCHEMA_VERSION;
use crate::error::{EngineError, EngineResult};
use crate::input::Source;
use crate::Engine;

/// Options of the pstats view, as given (regular expressions as text).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PstatsOptions {
    /// Sort keys, most significant first (none: file order).
    pub sort: Vec<SortKey>,
    /// `strip_dirs()` first.
    pub strip_dirs: bool,
    /// Keep the functions whose standard name this regular expression matches.
    pub filter: Option<String>,
    /// Then keep the first N.
    pub top: Option<usize>,
    /// List the callers of the functions this regular expression matches.
    pub callers: Option<String>,
    /// List the callees of the functions this regular expression matches.
    pub callees: Option<String>,
    /// Build the estimated call tree (flame graph, collapsed stacks).
    pub tree: bool,
}

/// `pstats FILE...`: the files summed and their view.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PstatsDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The files read, in the order summed.
    pub inputs: Vec<String>,
    /// The options of the view.
    pub options: PstatsOptions,
    /// The view.
    pub pstats: PstatsView,
}

fn regex(what: &str, text: &Option<String>) -> EngineResult<Option<regex::Regex>> {
    text.as_deref()
        .map(|t| {
            regex::RegexBuilder::new(t)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| EngineError::Option(format!("{what} {t:?}: {e}")))
        })
        .transpose()
}

impl Engine {
    /// `pstats`: read every source (a folder: its pstats files by name), sum them in
    /// order and compute the view.
    pub fn pstats(&self, srcs: &[Source], opts: &PstatsOptions) -> EngineResult<PstatsDocument> {
        let analysis = pstats::PstatsOptions {
            table: TableOptions {
                sort: opts.sort.clone(),
                filter: regex("--filter", &opts.filter)?,
                top: opts.top,
            },
            strip_dirs: opts.strip_dirs,
            callers: regex("--callers", &opts.callers)?,
            callees: regex("--callees", &opts.callees)?,
            tree: opts.tree,
        };
        let profiles = self.read_pstats_sources(srcs)?;
        let inputs = profiles
            .iter()
            .map(|p| p.path.display().to_string())
            .collect();
        Ok(PstatsDocument {
            schema_version: SCHEMA_VERSION,
            inputs,
            options: opts.clone(),
            pstats: pstats::view(Stats::load(profiles), &analysis),
        })
    }

    /// Every pstats file of `srcs`, read in order; the first failure is the error.
    pub(crate) fn read_pstats_sources(&self, srcs: &[Source]) -> EngineResult<Vec<PstatsProfile>> {
        let mut out = Vec::new();
        for src in srcs {
            match src {
                Source::Bytes { name, data } => {
                    out.push(sniff_bytes(Path::new(name), data)?.read_pstats(&self.read)?)
                }
                Source::Path(p) if p.is_dir() => {
                    let files = pstats_files(p)?;
                    if files.is_empty() {
                        return Err(EngineError::WrongInput {
                            path: p.display().to_string(),
                            message: "this folder holds no pstats files (*.prof, *.pstats)"
                                .to_owned(),
                            hint: None,
                        });
                    }
                    for f in files {
                        out.push(sniff_path(&f)?.read_pstats(&self.read)?);
                    }
                }
                Source::Path(p) => out.push(sniff_path(p)?.read_pstats(&self.read)?),
            }
        }
        Ok(out)
    }
}

/// The regular files of `dir` named as pstats files (`*.prof`, `*.pstats`), sorted: what
/// `pstats`, `report` and `diff` read of a folder besides its traces.
pub fn pstats_files(dir: &Path) -> EngineResult<Vec<PathBuf>> {
    files_of_kind(dir, ArtifactKind::Pstats)
}

/// The regular files of `dir` whose names make them `kind`, sorted.
pub(crate) fn files_of_kind(dir: &Path, kind: ArtifactKind) -> EngineResult<Vec<PathBuf>> {
    let io = |source| kinetoscope_trace::TraceError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(ArtifactKind::from_file_name)
                == Some(kind)
        })
        .collect();
    files.sort();
    Ok(files)
}

/// One pstats file in `report`: its totals, its top functions by cumulative time and the
/// pstats rules' findings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PstatsFileReport {
    /// The file.
    pub path: String,
    /// Calls of every function.
    pub total_calls: i64,
    /// Seconds of own time of every function (the profile's total).
    pub total_tt: f64,
    /// The functions with the most cumulative time, at most [`REPORT_TOP`].
    pub top: Vec<kinetoscope_analysis::pstats::FunctionRow>,
    /// The pstats rules' findings (PY001–PY006), ranked.
    pub findings: Vec<kinetoscope_advisor::Finding>,
}

/// Functions listed per pstats file in `report`.
pub const REPORT_TOP: usize = 10;

impl Engine {
    /// The pstats files `report` shows for `src`: the file itself when it is one, or the
    /// pstats files of a folder (by name); files that fail go to the second list.
    pub(crate) fn pstats_reports(
        &self,
        src: &Source,
        config: &kinetoscope_advisor::Config,
    ) -> (Vec<PstatsFileReport>, Vec<crate::document::ReadFailure>) {
        let files = match src.path() {
            Some(p) if p.is_dir() => pstats_files(p).unwrap_or_default(),
            Some(p) if crate::diff::is_pstats_file(p) => vec![p.to_owned()],
            _ => Vec::new(),
        };
        let mut reports = Vec::new();
        let mut errors = Vec::new();
        for f in files {
            match sniff_path(&f).and_then(|s| s.read_pstats(&self.read)) {
                Ok(p) => reports.push(pstats_report(p, config)),
                Err(e) => errors.push(crate::document::ReadFailure {
                    path: f.display().to_string(),
                    error: e.to_string(),
                }),
            }
        }
        (reports, errors)
    }
}

fn pstats_report(p: PstatsProfile, config: &kinetoscope_advisor::Config) -> PstatsFileReport {
    let path = p.path.display().to_string();
    let stats = Stats::load([p]);
    let findings = kinetoscope_advisor::advise_pstats(&stats, &path, config);
    let opts = TableOptions {
        sort: vec![SortKey::Cumulative],
        filter: None,
        top: Some(REPORT_TOP),
    };
    let top = pstats::table::select(&stats, &opts)
        .into_iter()
        .map(|e| pstats::FunctionRow::of(e, stats.total_tt))
        .collect();
    PstatsFileReport {
        path,
        total_calls: stats.total_calls,
        total_tt: stats.total_tt,
        top,
        findings,
    }
}
