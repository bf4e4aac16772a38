//! Traces kept in memory after their first read, least recently used first out, within
//! a byte budget counted on the models (the reader's own accounting) and their timeline
//! indexes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use kinetoscope_analysis::timeline::TimelineIndex;
use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::{Trace, TraceError, TraceResult};

/// A file's size and modification time: a cached trace of it is current while both
/// are unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileStamp {
    /// Size in bytes.
    pub len: u64,
    /// Modification time.
    pub modified: Option<SystemTime>,
}

impl FileStamp {
    /// The stamp of `path` now.
    pub fn of(path: &Path) -> TraceResult<Self> {
        let file = kinetoscope_trace::read::split_process_path(path).map(|(f, _)| f);
        let meta =
            std::fs::metadata(file.as_deref().unwrap_or(path)).map_err(|e| TraceError::Io {
                path: path.to_owned(),
                source: e,
            })?;
        Ok(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// One trace read into memory, with its timeline index built on first use.
#[derive(Debug)]
pub struct LoadedTrace {
    /// The model.
    pub trace: Trace,
    timeline: OnceLock<TimelineIndex>,
    /// Whether the index was counted in the cache's bytes.
    charged: AtomicBool,
}

impl LoadedTrace {
    /// The trace's timeline index (built on first call, then kept).
    pub fn timeline(&self) -> &TimelineIndex {
        self.timeline
            .get_or_init(|| TimelineIndex::build(&self.trace))
    }

    /// Whether this is the first call (the one that counts the index in the cache).
    pub(crate) fn first_charge(&self) -> bool {
        !self.charged.swap(true, Ordering::Relaxed)
    }
}

/// A loaded trace, shared: borrows as its [`Trace`].
pub struct SharedTrace(pub Arc<LoadedTrace>);

impl std::borrow::Borrow<Trace> for SharedTrace {
    fn borrow(&self) -> &Trace {
        &self.0.trace
    }
}

/// A cached trace and its bookkeeping.
struct Entry {
    stamp: FileStamp,
    loaded: Arc<LoadedTrace>,
    /// What it cost when cached (the model; the index is counted when built).
    bytes: u64,
    /// When it was last used (a counter).
    used: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<PathBuf, Entry>,
    clock: u64,
}

/// Traces kept in memory by path, at most `max_bytes` of models (the most recently used
/// one is always kept, whatever its size). Reads of one path wait for each other, so a
/// trace is read once however many requests want it at the same time; failures are not
/// kept (the next request reads again and reports the error again).
pub struct TraceCache {
    max_bytes: u64,
    state: Mutex<State>,
    /// One lock per path being read.
    reading: Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>,
    /// Files read so far (cache misses).
    reads: AtomicU64,
}

impl TraceCache {
    /// A cache keeping at most `max_bytes` of models.
    pub fn new(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            state: Mutex::new(State::default()),
            reading: Mutex::new(HashMap::new()),
            reads: AtomicU64::new(0),
        }
    }

    /// How many times a file was read (rather than found in the cache) so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// The trace of `path`, from the cache when the file is unchanged, else read with
    /// `opts` and kept.
    pub fn get(&self, path: &Path, opts: &ReadOptions) -> TraceResult<Arc<LoadedTrace>> {
        let stamp = FileStamp::of(path)?;
        if let Some(hit) = self.lookup(path, stamp) {
            return Ok(hit);
        }
        let gate = {
            let mut reading = lock(&self.reading);
            reading.entry(path.to_owned()).or_default().clone()
        };
        let _turn = lock(&gate);
        if let Some(hit) = self.lookup(path, stamp) {
            return Ok(hit);
        }
        // Kept before the gate goes, so a request arriving meanwhile finds it; a failure
        // is not kept (the next request reads again).
        self.reads.fetch_add(1, Ordering::Relaxed);
        let read = read_trace(path, opts).map(|trace| {
            let loaded = Arc::new(LoadedTrace {
                trace,
                timeline: OnceLock::new(),
                charged: AtomicBool::new(false),
            });
            self.insert(path, stamp, loaded.clone());
            loaded
        });
        lock(&self.reading).remove(path);
        read
    }

    /// [`TraceCache::get`], as something that borrows as the [`Trace`].
    pub fn get_shared(&self, path: &Path, opts: &ReadOptions) -> TraceResult<SharedTrace> {
        self.get(path, opts).map(SharedTrace)
    }

    /// Count `bytes` more against `path`'s entry (its timeline index), evicting others
    /// if that passes the budget.
    pub fn charge(&self, path: &Path, bytes: u64) {
        let mut state = lock(&self.state);
        if let Some(e) = state.entries.get_mut(path) {
            e.bytes += bytes;
        }
        self.evict(&mut state, path);
    }

    /// Paths and bytes of the traces held now, most recently used first.
    pub fn held(&self) -> Vec<(PathBuf, u64)> {
        let state = lock(&self.state);
        let mut v: Vec<_> = state
            .entries
            .iter()
            .map(|(p, e)| (e.used, p.clone(), e.bytes))
            .collect();
        v.sort_by_key(|e| std::cmp::Reverse(e.0));
        v.into_iter().map(|(_, p, b)| (p, b)).collect()
    }

    fn lookup(&self, path: &Path, stamp: FileStamp) -> Option<Arc<LoadedTrace>> {
        let mut state = lock(&self.state);
        state.clock += 1;
        let now = state.clock;
        let e = state.entries.get_mut(path)?;
        if e.stamp != stamp {
            state.entries.remove(path);
            return None;
        }
        e.used = now;
        Some(e.loaded.clone())
    }

    fn insert(&self, path: &Path, stamp: FileStamp, loaded: Arc<LoadedTrace>) {
        let mut state = lock(&self.state);
        state.clock += 1;
        let entry = Entry {
            stamp,
            bytes: loaded.trace.model_bytes(),
            loaded,
            used: state.clock,
        };
        state.entries.insert(path.to_owned(), entry);
        self.evict(&mut state, path);
    }

    /// Drop least recently used traces (never `keep`) while over the budget.
    fn evict(&self, state: &mut State, keep: &Path) {
        loop {
            let total: u64 = state.entries.values().map(|e| e.bytes).sum();
            if total <= self.max_bytes {
                return;
            }
            let oldest = state
                .entries
                .iter()
                .filter(|(p, _)| p.as_path() != keep)
                .min_by_key(|(_, e)| e.used)
                .map(|(p, _)| p.clone());
            match oldest {
                Some(p) => state.entries.remove(&p),
                None => return,
            };
        }
    }
}

/// A lock, whether or not a thread panicked holding it (the data stays consistent:
/// every update is one insert or remove).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
