//! What `serve` shows: runs found under the paths given, as TensorBoard's `--logdir`
//! took them. A path is a trace file (one run), a rank folder or a run folder (one
//! run), or a log dir whose sub-folders are runs. A run's trace files are its workers
//! and spans by their `tensorboard_trace_handler` names (`<worker>.<span>.pt.trace.json`
//! with the span a timestamp). The folders are listed again on every request (no file is
//! read), so runs and files that appear later show up without a restart.
//!
//! Only what lies under the paths given is ever read: every path is resolved (links
//! followed) and must stay inside its root; a run whose folder links out is refused.

use std::path::{Path, PathBuf};

use kinetoscope_engine::input::{files_read, open_path, Input};
use kinetoscope_trace::ArtifactKind;
use serde::Serialize;

use crate::error::ApiError;

/// How a run was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A trace file given as a path.
    Trace,
    /// A folder of trace files (ranks, workers, spans) given as a path.
    RankFolder,
    /// A run folder of `stage<N>-<phase>_…` files given as a path.
    RunFolder,
    /// A sub-folder of a log dir.
    LogdirRun,
}

/// A worker or span: its id (what requests name) and its display name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Named {
    /// The id.
    pub id: String,
    /// The name shown.
    pub name: String,
}

/// A run as `GET /api/v1/runs` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct RunInfo {
    /// A stable id (from the run's path).
    pub id: String,
    /// The name shown (the path's last part).
    pub name: String,
    /// How it was found.
    pub kind: RunKind,
    /// Its workers, by name.
    pub workers: Vec<Named>,
    /// Its spans, by name.
    pub spans: Vec<Named>,
}

/// One trace file of a run.
#[derive(Clone, Debug)]
pub struct RunFile {
    /// The file (resolved, inside the root).
    pub path: PathBuf,
    /// Its worker.
    pub worker: String,
    /// Its span, when its name has one.
    pub span: Option<String>,
}

/// A run: what it shows and where its files are.
#[derive(Clone, Debug)]
pub struct Run {
    /// Its listing.
    pub info: RunInfo,
    /// The root it was found under (resolved).
    pub root: PathBuf,
    /// The file or folder the whole run's views read.
    pub path: PathBuf,
    /// Its trace files.
    pub files: Vec<RunFile>,
}

/// The roots given to `serve`, resolved.
#[derive(Clone, Debug)]
pub struct Catalog {
    roots: Vec<PathBuf>,
}

impl Catalog {
    /// Resolve `paths`: each must be a regular file or a folder.
    pub fn new(paths: &[PathBuf]) -> Result<Self, String> {
        let mut roots = Vec::new();
        for p in paths {
            let real = p
                .canonicalize()
                .map_err(|e| format!("{}: {e}", p.display()))?;
            let meta = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", p.display()))?;
            if !meta.is_file() && !meta.is_dir() {
                return Err(format!(
                    "{}: not a file or a folder (special files are never opened)",
                    p.display()
                ));
            }
            roots.push(real);
        }
        Ok(Self { roots })
    }

    /// The runs now.
    pub fn scan(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        for root in &self.roots {
            if root.is_file() {
                runs.extend(run_at(root, root, RunKind::Trace));
            } else if holds_artifacts(root) {
                runs.extend(run_at(root, root, folder_kind(root)));
            } else {
                for dir in sub_folders(root) {
                    runs.extend(run_at(root, &dir, RunKind::LogdirRun));
                }
            }
        }
        runs
    }

    /// The run with id `id`.
    pub fn run(&self, id: &str) -> Result<Run, ApiError> {
        self.scan()
            .into_iter()
            .find(|r| r.info.id == id)
            .ok_or_else(|| ApiError::not_found(format!("no run {id:?}")))
    }
}

impl Run {
    /// What a view of this run reads: the whole run, or one worker's trace (its span,
    /// else its latest span). Refused when anything it would read resolves outside the
    /// root.
    pub fn target(&self, worker: Option<&str>, span: Option<&str>) -> Result<PathBuf, ApiError> {
        let path = match (worker, span) {
            (None, None) => self.path.clone(),
            _ => self.file(worker, span)?,
        };
        self.check_inside(&path)?;
        Ok(path)
    }

    /// The one trace a timeline shows: the worker's (and span's), or the run's only one.
    /// Only that file is read (it resolved inside the root when the run was listed).
    pub fn trace(&self, worker: Option<&str>, span: Option<&str>) -> Result<PathBuf, ApiError> {
        let path = if worker.is_none() && span.is_none() && self.files.len() == 1 {
            self.files[0].path.clone()
        } else if worker.is_none() && span.is_none() {
            return Err(ApiError::bad_request(format!(
                "this run has {} traces: choose one with worker= (and span=)",
                self.files.len()
            )));
        } else {
            self.file(worker, span)?
        };
        Ok(path)
    }

    /// The trace file of `worker` and `span` (the latest span when none is given).
    fn file(&self, worker: Option<&str>, span: Option<&str>) -> Result<PathBuf, ApiError> {
        let mut matching: Vec<&RunFile> = self
            .files
            .iter()
            .filter(|f| worker.is_none_or(|w| f.worker == w))
            .filter(|f| span.is_none_or(|s| f.span.as_deref() == Some(s)))
            .collect();
        if worker.is_none() {
            let mut workers: Vec<&str> = matching.iter().map(|f| f.worker.as_str()).collect();
            workers.sort_unstable();
            workers.dedup();
            if workers.len() > 1 {
                return Err(ApiError::bad_request(
                    "this span has several workers: choose one with worker=",
                ));
            }
        }
        matching.sort_by(|a, b| a.span.cmp(&b.span));
        matching.last().map(|f| f.path.clone()).ok_or_else(|| {
            ApiError::not_found(format!(
                "no trace for worker {:?} and span {:?} in this run",
                worker.unwrap_or(""),
                span.unwrap_or("")
            ))
        })
    }

    /// Refuse `path` when it, or anything a view may read for it, resolves outside the
    /// run's root (for a file given alone, outside its folder).
    fn check_inside(&self, path: &Path) -> Result<(), ApiError> {
        // A file given alone is read with the files the CLI reads beside it (its
        // memory timeline): those must stay in its folder.
        let scope = match self.root.parent() {
            Some(folder) if self.root.is_file() => folder,
            _ => self.root.as_path(),
        };
        for f in files_read(path) {
            if let Ok(real) = f.canonicalize() {
                if !real.starts_with(scope) {
                    return Err(ApiError::new(
                        403,
                        "this run links to files outside the paths being served",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The run at `path` under `root`, if it holds traces (or other artifacts).
fn run_at(root: &Path, path: &Path, kind: RunKind) -> Option<Run> {
    let input = open_path(path).ok()?;
    let files: Vec<RunFile> = input
        .trace_files()
        .into_iter()
        .filter_map(|p| {
            let real = p.canonicalize().ok()?;
            real.starts_with(root).then(|| run_file(real))
        })
        .collect();
    let mut workers: Vec<Named> = Vec::new();
    let mut spans: Vec<Named> = Vec::new();
    for f in &files {
        push_unique(&mut workers, &f.worker);
        if let Some(s) = &f.span {
            push_unique(&mut spans, s);
        }
    }
    spans.sort_by(|a, b| a.id.cmp(&b.id));
    let kind = match (&input, kind) {
        (Input::RunFolder { .. }, RunKind::RankFolder) => RunKind::RunFolder,
        (_, k) => k,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Some(Run {
        info: RunInfo {
            id: run_id(path),
            name,
            kind,
            workers,
            spans,
        },
        root: root.to_owned(),
        path: path.to_owned(),
        files,
    })
}

fn push_unique(list: &mut Vec<Named>, name: &str) {
    if !list.iter().any(|n| n.id == name) {
        list.push(Named {
            id: name.to_owned(),
            name: name.to_owned(),
        });
    }
}

/// A trace file's worker and span from its name.
fn run_file(path: PathBuf) -> RunFile {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (worker, span) = worker_and_span(&name);
    RunFile { path, worker, span }
}

/// `<worker>.<span>.pt.trace.json[.gz]` (span all digits) → worker and span; any other
/// trace name → its stem as the worker.
pub(crate) fn worker_and_span(name: &str) -> (String, Option<String>) {
    for suffix in [".pt.trace.json.gz", ".pt.trace.json"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            if let Some((w, s)) = stem.rsplit_once('.') {
                if !w.is_empty() && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                    return (w.to_owned(), Some(s.to_owned()));
                }
            }
            return (stem.to_owned(), None);
        }
    }
    let stem = [".json.gz", ".json"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name);
    (stem.to_owned(), None)
}

/// A folder path's run kind: a run folder or a rank folder.
fn folder_kind(dir: &Path) -> RunKind {
    match open_path(dir) {
        Ok(Input::RunFolder { .. }) => RunKind::RunFolder,
        _ => RunKind::RankFolder,
    }
}

/// Whether a folder directly holds files kinetoscope reads (by name).
fn holds_artifacts(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        ArtifactKind::from_file_name(&name).is_some() && e.path().is_file()
    })
}

/// The sub-folders of a log dir that resolve inside it, sorted.
fn sub_folders(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| e.path().canonicalize().ok())
        .filter(|p| p.is_dir() && p.starts_with(root) && p != root)
        .collect();
    dirs.sort();
    dirs
}

/// A stable id for a run: FNV-1a of its path, 16 hex digits.
fn run_id(path: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::worker_and_span;

    #[test]
    fn tensorboard_names_give_worker_and_span() {
        let ws = |n: &str| worker_and_span(n);
        assert_eq!(
            ws("host_123.1700000000123.pt.trace.json.gz"),
            ("host_123".into(), Some("1700000000123".into()))
        );
        assert_eq!(ws("worker0.pt.trace.json"), ("worker0".into(), None));
        assert_eq!(ws("rank-3.json"), ("rank-3".into(), None));
        assert_eq!(ws("a.b.json.gz"), ("a.b".into(), None));
    }
}
