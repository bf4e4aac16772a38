//! The inputs users point kinetoscope at: a trace file, a folder of rank files (the
//! `tensorboard_trace_handler` layout), or a run folder of phase files
//! (`stage1-model_init_trace.json`, `stage3-training_microsteps_mem.pickle`,
//! `..._memory_timeline.html`), and reading many traces in parallel.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{read_trace, ReadOptions};
use crate::model::{parse_stage_name, Artifact, ArtifactKind, RunPhase, Trace};
use crate::{TraceError, TraceResult};

/// What a path given on the command line turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// One trace file.
    File(PathBuf),
    /// A folder of trace files, one per rank (or per worker/span), sorted by name.
    RankFolder {
        /// The folder.
        dir: PathBuf,
        /// The trace files.
        traces: Vec<PathBuf>,
    },
    /// A run folder of phase files, in stage order.
    RunFolder {
        /// The folder.
        dir: PathBuf,
        /// The phases.
        phases: Vec<RunPhase>,
    },
}

impl Input {
    /// All trace files of the input, in order.
    pub fn trace_files(&self) -> Vec<PathBuf> {
        match self {
            Input::File(p) => vec![p.clone()],
            Input::RankFolder { traces, .. } => traces.clone(),
            Input::RunFolder { phases, .. } => phases
                .iter()
                .flat_map(|p| &p.artifacts)
                .filter(|a| a.kind == ArtifactKind::Trace)
                .map(|a| a.path.clone())
                .collect(),
        }
    }
}

/// Work out what `path` is: a file, a rank folder or a run folder.
pub fn open_input(path: &Path) -> TraceResult<Input> {
    let meta = std::fs::metadata(path).map_err(|e| TraceError::Io {
        path: path.to_owned(),
        source: e,
    })?;
    if !meta.is_dir() {
        return Ok(Input::File(path.to_owned()));
    }
    let mut files = list_files(path)?;
    if !files
        .iter()
        .any(|f| ArtifactKind::from_file_name(&file_name(f)).is_some())
    {
        // Phase runs are often one timestamped sub-folder deeper.
        let mut deeper = Vec::new();
        for entry in list_dirs(path)? {
            deeper.extend(list_files(&entry)?);
        }
        files = deeper;
    }
    let staged: Vec<(u32, String, PathBuf)> = files
        .iter()
        .filter_map(|f| parse_stage_name(&file_name(f)).map(|(n, p)| (n, p, f.clone())))
        .collect();
    if !staged.is_empty() {
        let mut phases: Vec<RunPhase> = Vec::new();
        for (stage, phase, file) in staged {
            let Some(kind) = ArtifactKind::from_file_name(&file_name(&file)) else {
                continue;
            };
            let artifact = Artifact { path: file, kind };
            match phases
                .iter_mut()
                .find(|p| p.stage == stage && p.phase == phase)
            {
                Some(p) => p.artifacts.push(artifact),
                None => phases.push(RunPhase {
                    stage,
                    phase,
                    artifacts: vec![artifact],
                }),
            }
        }
        phases.sort_by(|a, b| (a.stage, &a.phase).cmp(&(b.stage, &b.phase)));
        for p in &mut phases {
            p.artifacts.sort_by(|a, b| a.path.cmp(&b.path));
        }
        return Ok(Input::RunFolder {
            dir: path.to_owned(),
            phases,
        });
    }
    let mut traces: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| ArtifactKind::from_file_name(&file_name(f)) == Some(ArtifactKind::Trace))
        .collect();
    traces.sort();
    if traces.is_empty() {
        return Err(TraceError::EmptyInput {
            path: path.to_owned(),
            message: "no trace files (*.json, *.json.gz) in this folder".into(),
        });
    }
    Ok(Input::RankFolder {
        dir: path.to_owned(),
        traces,
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn list_files(dir: &Path) -> TraceResult<Vec<PathBuf>> {
    list(dir, false)
}

fn list_dirs(dir: &Path) -> TraceResult<Vec<PathBuf>> {
    list(dir, true)
}

fn list(dir: &Path, dirs: bool) -> TraceResult<Vec<PathBuf>> {
    let io = |e| TraceError::Io {
        path: dir.to_owned(),
        source: e,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let is_dir = entry.file_type().map_err(io)?.is_dir();
        if is_dir == dirs {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// Read many traces in parallel and reduce each to a summary on the thread that read it,
/// so only a few whole traces are in memory at once. Results come back in input order.
pub fn map_traces<R: Send>(
    paths: &[PathBuf],
    opts: &ReadOptions,
    reduce: impl Fn(&Path, TraceResult<Trace>) -> R + Sync,
) -> Vec<R> {
    let workers = opts.threads.clamp(1, paths.len().max(1));
    let per_file = ReadOptions {
        threads: (opts.threads / workers).max(1),
        ..opts.clone()
    };
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..paths.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = paths.get(i) else { break };
                let r = reduce(path, read_trace(path, &per_file));
                out.lock().unwrap()[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every index is filled"))
        .collect()
}
