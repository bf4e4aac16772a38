//! Opening what a user points kinetoscope at: a file, a folder of rank files, a run
//! folder of phase files, or bytes already in memory; and reading every trace of it in
//! parallel, reducing each on the thread that read it so only a few whole traces are in
//! memory at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kinetoscope_trace::read::{
    gpu_processes, is_sqlite, process_path, read_trace, read_trace_bytes, split_process_path,
    ReadOptions, Sniffed,
};
use kinetoscope_trace::{
    parse_stage_name, Artifact, ArtifactKind, RunPhase, Trace, TraceError, TraceResult,
};

use crate::document::{InputLayout, ReadFailure, SkippedFile, SpecialFileKind};

/// What to analyse.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file, a rank folder or a run folder on disk.
    Path(PathBuf),
    /// One trace file's bytes (plain or gzip), already in memory: an upload, an
    /// embedded sample. `name` is how documents and errors refer to it.
    Bytes {
        /// The name shown for it.
        name: String,
        /// The file's content.
        data: Arc<[u8]>,
    },
}

impl Source {
    /// The source's name as documents show it.
    pub fn name(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Bytes { name, .. } => name.clone(),
        }
    }

    /// The path, for a source on disk.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::Path(p) => Some(p),
            Source::Bytes { .. } => None,
        }
    }
}

impl From<PathBuf> for Source {
    fn from(p: PathBuf) -> Self {
        Source::Path(p)
    }
}

impl From<&Path> for Source {
    fn from(p: &Path) -> Self {
        Source::Path(p.to_owned())
    }
}

/// What a path turned out to be.
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
        /// Its special files (FIFOs, sockets, devices), never opened.
        skipped: Vec<SkippedFile>,
    },
    /// A run folder of phase files, in stage order.
    RunFolder {
        /// The folder.
        dir: PathBuf,
        /// The phases.
        phases: Vec<RunPhase>,
        /// Its special files (FIFOs, sockets, devices), never opened.
        skipped: Vec<SkippedFile>,
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

    /// The special files of a folder that were skipped, not opened.
    pub fn skipped(&self) -> &[SkippedFile] {
        match self {
            Input::File(_) => &[],
            Input::RankFolder { skipped, .. } | Input::RunFolder { skipped, .. } => skipped,
        }
    }

    /// The layout documents report.
    pub fn layout(&self) -> InputLayout {
        match self {
            Input::File(_) => InputLayout::File,
            Input::RankFolder { .. } => InputLayout::RankFolder,
            Input::RunFolder { phases, .. } => InputLayout::RunFolder {
                phases: phases.clone(),
            },
        }
    }
}

/// An Nsight Systems export in which two or more processes ran GPU work (one file of
/// a multi-GPU `torchrun`): a rank folder of its processes, one rank each
/// (`kinetoscope_trace::read::process_path`). `None` for any other file.
fn nsys_processes(path: &Path) -> Option<Input> {
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).ok()?;
    std::io::Read::read_exact(&mut f, &mut head).ok()?;
    if !is_sqlite(&head) {
        return None;
    }
    let pids = gpu_processes(path).ok()?;
    (pids.len() >= 2).then(|| Input::RankFolder {
        dir: path.to_owned(),
        traces: pids.iter().map(|&p| process_path(path, p)).collect(),
        skipped: Vec::new(),
    })
}

/// Work out what `path` is: a file, a rank folder or a run folder. Special files in a
/// folder (FIFOs, sockets, devices) are never opened, so none can block the read; they
/// are listed in the input's `skipped`.
pub fn open_path(path: &Path) -> TraceResult<Input> {
    // One process of an Nsight Systems export, as the outputs name it (`run.sqlite#pid7`).
    if let Some((file, _)) = split_process_path(path) {
        if std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
            return Ok(Input::File(path.to_owned()));
        }
    }
    let meta = std::fs::metadata(path).map_err(|e| TraceError::Io {
        path: path.to_owned(),
        source: e,
    })?;
    if meta.is_dir() && kinetoscope_parquet::is_export(path) {
        return Err(TraceError::EmptyInput {
            path: path.to_owned(),
            message: "a kinetoscope Parquet export (kinetoscope-parquet.json), no traces: \
                      only `kinetoscope ranks` reads it"
                .into(),
        });
    }
    if !meta.is_dir() {
        // Only a regular file is opened here: a FIFO or a device is read once, later.
        let processes = meta.is_file().then(|| nsys_processes(path)).flatten();
        return Ok(processes.unwrap_or_else(|| Input::File(path.to_owned())));
    }
    let Listing {
        mut files,
        dirs,
        special: mut skipped,
    } = list(path)?;
    if !files
        .iter()
        .any(|f| ArtifactKind::from_file_name(&file_name(f)).is_some())
    {
        // Phase runs are often one timestamped sub-folder deeper.
        files = Vec::new();
        for dir in &dirs {
            let deeper = list(dir)?;
            files.extend(deeper.files);
            skipped.extend(deeper.special);
        }
    }
    if let Some(phases) = run_phases(&files) {
        return Ok(Input::RunFolder {
            dir: path.to_owned(),
            phases,
            skipped,
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
            message: "no trace files (*.json, *.json.gz, *.sqlite) in this folder".into(),
        });
    }
    Ok(Input::RankFolder {
        dir: path.to_owned(),
        traces,
        skipped,
    })
}

/// Every file a view may open for `path`, for a writer to refuse as its output: the
/// path itself; for a folder, every file in it, and one sub-folder down, whose name
/// says it is read (traces, snapshots, memory timelines); for a file, also the files
/// beside it that `memory` may read as its memory timeline. Unreadable folders give
/// what could be listed.
pub fn files_read(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_owned()];
    out.extend(split_process_path(path).map(|(file, _)| file));
    let readable =
        |f: &PathBuf| ArtifactKind::from_file_name(&file_name(f)).is_some_and(|k| k.is_readable());
    if path.is_dir() {
        let Ok(top) = list(path) else { return out };
        out.extend(top.files.iter().filter(|f| readable(f)).cloned());
        for dir in &top.dirs {
            if let Ok(deeper) = list(dir) {
                out.extend(deeper.files.into_iter().filter(|f| readable(f)));
            }
        }
    } else {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(beside) = list(dir) {
            out.extend(
                beside
                    .files
                    .into_iter()
                    .filter(|f| may_be_timeline(&file_name(f))),
            );
        }
    }
    out
}

/// Whether a file named `name` beside a trace is read by `memory` to see whether it is
/// the trace's memory timeline (the content decides).
pub(crate) fn may_be_timeline(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".gz")
}

/// The phases of a run folder (`stage<N>-<phase>_...` files), or `None` when no file
/// is named that way.
fn run_phases(files: &[PathBuf]) -> Option<Vec<RunPhase>> {
    let mut phases: Vec<RunPhase> = Vec::new();
    let mut staged = false;
    for file in files {
        let name = file_name(file);
        let Some((stage, phase)) = parse_stage_name(&name) else {
            continue;
        };
        staged = true;
        let Some(kind) = ArtifactKind::from_file_name(&name) else {
            continue;
        };
        let artifact = Artifact {
            path: file.clone(),
            kind,
        };
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
    if !staged {
        return None;
    }
    phases.sort_by(|a, b| (a.stage, &a.phase).cmp(&(b.stage, &b.phase)));
    for p in &mut phases {
        p.artifacts.sort_by(|a, b| a.path.cmp(&b.path));
    }
    Some(phases)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What a folder holds directly, each list sorted.
struct Listing {
    /// Regular files (and links to them, or links that lead nowhere: opening them
    /// gives the error).
    files: Vec<PathBuf>,
    /// Folders (and links to them).
    dirs: Vec<PathBuf>,
    /// FIFOs, sockets and devices (or links to them): never opened.
    special: Vec<SkippedFile>,
}

/// The entries directly in `dir`, by what they are (links followed).
fn list(dir: &Path) -> TraceResult<Listing> {
    let io = |e| TraceError::Io {
        path: dir.to_owned(),
        source: e,
    };
    let mut l = Listing {
        files: Vec::new(),
        dirs: Vec::new(),
        special: Vec::new(),
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        let mut file_type = entry.file_type().map_err(io)?;
        if file_type.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(target) => file_type = target.file_type(),
                Err(_) => {
                    l.files.push(path);
                    continue;
                }
            }
        }
        if file_type.is_dir() {
            l.dirs.push(path);
        } else if file_type.is_file() {
            l.files.push(path);
        } else {
            l.special.push(SkippedFile {
                path: path.display().to_string(),
                kind: SpecialFileKind::of(&file_type),
            });
        }
    }
    l.files.sort();
    l.dirs.sort();
    l.special.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(l)
}

/// One trace's reduced result, or why it could not be read.
pub struct PerTrace<T> {
    /// The file (or the name of in-memory bytes).
    pub path: PathBuf,
    /// The reduction, or the read error.
    pub result: Result<T, TraceError>,
}

/// Split per-trace results in order: each success goes to `ok` (with its file), each
/// failure becomes a [`ReadFailure`] in the returned list.
pub fn split_results<T>(
    results: Vec<PerTrace<T>>,
    mut ok: impl FnMut(PathBuf, T),
) -> Vec<ReadFailure> {
    let mut errors = Vec::new();
    for r in results {
        match r.result {
            Ok(t) => ok(r.path, t),
            Err(error) => errors.push(ReadFailure::new(&r.path, &error)),
        }
    }
    errors
}

/// The threads this process may run at once (the cores available to it; 1 when
/// unknown). More reader threads than this only cost memory, and thousands fail to
/// spawn.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// `opts` with its threads between 1 and [`available_threads`].
fn within_cores(opts: &ReadOptions) -> ReadOptions {
    ReadOptions {
        threads: opts.threads.clamp(1, available_threads()),
        ..opts.clone()
    }
}

/// Read `paths` in parallel (`opts.threads` in all, at most [`available_threads`],
/// split between files and the threads parsing each) and reduce each trace with `reduce` on the thread that read
/// it. Results come back in input order.
pub fn map_paths<T: Send>(
    paths: &[PathBuf],
    opts: &ReadOptions,
    reduce: impl Fn(&Trace) -> T + Sync,
) -> Vec<PerTrace<T>> {
    map_paths_with(paths, opts, read_trace, reduce)
}

/// [`map_paths`] with another way to get each trace (a cache of traces already read:
/// anything that borrows as a [`Trace`]).
pub fn map_paths_with<T: Send, R: std::borrow::Borrow<Trace>>(
    paths: &[PathBuf],
    opts: &ReadOptions,
    read: impl Fn(&Path, &ReadOptions) -> TraceResult<R> + Sync,
    reduce: impl Fn(&Trace) -> T + Sync,
) -> Vec<PerTrace<T>> {
    let mut out = Vec::with_capacity(paths.len());
    map_paths_each(paths, opts, read, reduce, |r| out.push(r));
    out
}

/// How many files past the oldest result not yet consumed a reader may start, per
/// reader: results that wait for an earlier, slower file stay few.
const READ_AHEAD_PER_READER: usize = 4;

/// [`map_paths_with`], handing each result to `consume` on the calling thread, in the
/// order of `paths`, as soon as it and every one before it are done: a folder of
/// thousands of traces is never held as one list of results.
pub fn map_paths_each<T: Send, R: std::borrow::Borrow<Trace>>(
    paths: &[PathBuf],
    opts: &ReadOptions,
    read: impl Fn(&Path, &ReadOptions) -> TraceResult<R> + Sync,
    reduce: impl Fn(&Trace) -> T + Sync,
    mut consume: impl FnMut(PerTrace<T>),
) {
    let threads = within_cores(opts).threads;
    let workers = threads.min(paths.len().max(1));
    let per_file = ReadOptions {
        threads: (threads / workers).max(1),
        ..opts.clone()
    };
    let window = ReadAhead::new(workers * READ_AHEAD_PER_READER);
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, PerTrace<T>)>();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, window, per_file, read, reduce) =
                (&next, &window, &per_file, &read, &reduce);
            s.spawn(move || {
                let _stop = window.stop_on_panic();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = paths.get(i) else { break };
                    if !window.wait_for(i) {
                        break;
                    }
                    let result = read(path, per_file).map(|t| reduce(t.borrow()));
                    let r = PerTrace {
                        path: path.clone(),
                        result,
                    };
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let _stop = window.stop_on_panic();
        let mut waiting = std::collections::BTreeMap::new();
        let mut done = 0;
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&done) {
                consume(r);
                done += 1;
                window.consumed(done);
            }
        }
    });
}

/// The read-ahead bound of [`map_paths_each`]: readers wait before file `i` until fewer
/// than `ahead` results before it are unconsumed.
struct ReadAhead {
    /// Files allowed past the consumed ones.
    ahead: usize,
    /// Results consumed so far, and whether a reader panicked (the others then stop
    /// instead of waiting for its result).
    state: Mutex<(usize, bool)>,
    /// Signalled on every change of `state`.
    changed: std::sync::Condvar,
}

impl ReadAhead {
    fn new(ahead: usize) -> Self {
        Self {
            ahead: ahead.max(1),
            state: Mutex::new((0, false)),
            changed: std::sync::Condvar::new(),
        }
    }

    /// Wait until file `i` may be read; `false` when a reader panicked.
    fn wait_for(&self, i: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while i >= state.0 + self.ahead && !state.1 {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        !state.1
    }

    /// `n` results have been consumed.
    fn consumed(&self, n: usize) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0 = n;
        self.changed.notify_all();
    }

    /// A guard that, dropped while its thread panics (a reader, or the consumer), wakes
    /// and stops the readers; the scope then raises the panic as before.
    fn stop_on_panic(&self) -> impl Drop + '_ {
        struct Guard<'a>(&'a ReadAhead);
        impl Drop for Guard<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.state.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
                    self.0.changed.notify_all();
                }
            }
        }
        Guard(self)
    }
}

/// Read one trace from bytes in memory and reduce it.
pub fn map_bytes<T>(
    name: &str,
    data: &[u8],
    opts: &ReadOptions,
    reduce: impl Fn(&Trace) -> T,
) -> PerTrace<T> {
    let path = PathBuf::from(name);
    let result = read_trace_bytes(&path, data, &within_cores(opts)).map(|t| reduce(&t));
    PerTrace { path, result }
}

/// Read one trace from a file already opened and sniffed, and reduce it.
pub fn map_sniffed<T>(
    sniffed: Sniffed<'_>,
    opts: &ReadOptions,
    reduce: impl Fn(&Trace) -> T,
) -> PerTrace<T> {
    let path = sniffed.path().to_owned();
    let result = sniffed.read_trace(&within_cores(opts)).map(|t| reduce(&t));
    PerTrace { path, result }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_folder_groups_phases_in_stage_order() {
        let files: Vec<PathBuf> = [
            "stage2-train_trace.json",
            "stage1-model_init_mem.pickle",
            "stage1-model_init_trace.json",
            "notes.txt",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let phases = run_phases(&files).expect("staged names");
        assert_eq!(phases.len(), 2);
        assert_eq!(
            (phases[0].stage, phases[0].phase.as_str()),
            (1, "model_init")
        );
        assert_eq!(phases[0].artifacts.len(), 2);
        assert_eq!(phases[1].artifacts[0].kind, ArtifactKind::Trace);
        assert!(run_phases(&[PathBuf::from("rank0.json")]).is_none());
    }
}
