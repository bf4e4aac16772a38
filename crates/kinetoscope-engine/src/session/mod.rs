//! A loaded-trace session for long-lived front ends (the local web server): traces are
//! read once and kept in memory ([`TraceCache`], bounded by bytes, least recently used
//! first out), every view's document is computed by the same [`Engine`] methods as the
//! CLI's from those traces and kept by (run, view, options) ([`DocumentCache`]), and the
//! timeline queries are answered from each trace's [`TimelineIndex`].
//!
//! A cached trace or document is used only while its files' size and modification
//! time are unchanged ([`FileStamp`]).

mod documents;
mod traces;

pub use documents::DocumentCache;
pub use traces::{FileStamp, LoadedTrace, TraceCache};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kinetoscope_analysis::timeline::{
    EventDetail, SearchResult, TimelineTracks, Window, WindowQuery,
};

use crate::error::{EngineError, EngineResult};
use crate::Engine;

/// An engine whose reads go through a trace cache, a document cache, and the timeline.
pub struct Session {
    engine: Engine,
    traces: Arc<TraceCache>,
    documents: DocumentCache,
}

impl Session {
    /// A session over `engine` keeping at most `max_loaded_bytes` of trace models (and
    /// their timeline indexes) and `max_document_bytes` of documents.
    pub fn new(engine: Engine, max_loaded_bytes: u64, max_document_bytes: u64) -> Self {
        let traces = Arc::new(TraceCache::new(max_loaded_bytes));
        let mut engine = engine;
        engine.cache = Some(traces.clone());
        Self {
            engine,
            traces,
            documents: DocumentCache::new(max_document_bytes),
        }
    }

    /// The engine, reading through the session's trace cache.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The traces held now (path, bytes), most recently used first.
    pub fn held(&self) -> Vec<(PathBuf, u64)> {
        self.traces.held()
    }

    /// The document under `key` (a run, a view and its options) made from `files`: the
    /// cached text while every file is unchanged, else `make`'s, cached.
    pub fn document<E: From<EngineError>>(
        &self,
        key: &str,
        files: &[PathBuf],
        make: impl FnOnce(&Engine) -> Result<String, E>,
    ) -> Result<Arc<str>, E> {
        let stamps = files
            .iter()
            .map(|f| FileStamp::of(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| E::from(EngineError::from(e)))?;
        if let Some(hit) = self.documents.get(key, &stamps) {
            return Ok(hit);
        }
        let text: Arc<str> = make(&self.engine)?.into();
        self.documents.put(key.to_owned(), stamps, text.clone());
        Ok(text)
    }

    /// The trace of `path`, read (with progress) unless cached, with its timeline index
    /// built.
    pub fn load(&self, path: &Path) -> EngineResult<Arc<LoadedTrace>> {
        let mut opts = self.engine.read.clone();
        if let Some(p) = &self.engine.progress {
            opts.progress = p.start(&[path.to_owned()]);
        }
        let loaded = self.traces.get(path, &opts);
        if let Some(p) = &self.engine.progress {
            p.finish();
        }
        let loaded = loaded?;
        let index = loaded.timeline();
        if loaded.first_charge() {
            self.traces.charge(path, index.heap_bytes());
        }
        Ok(loaded)
    }

    /// The timeline's tracks and extent for the trace of `path`.
    pub fn timeline_tracks(&self, path: &Path) -> EngineResult<TimelineTracks> {
        Ok(self.load(path)?.timeline().tracks().clone())
    }

    /// A window of the timeline of `path`, with level of detail.
    pub fn timeline_window(&self, path: &Path, q: &WindowQuery) -> EngineResult<Window> {
        let l = self.load(path)?;
        l.timeline().window(&l.trace, q).map_err(EngineError::Query)
    }

    /// One event's details in the trace of `path`.
    pub fn timeline_event(&self, path: &Path, event: u64) -> EngineResult<EventDetail> {
        let l = self.load(path)?;
        l.timeline()
            .event(&l.trace, event)
            .map_err(EngineError::Query)
    }

    /// Spans whose name contains `query` in the trace of `path`.
    pub fn timeline_search(
        &self,
        path: &Path,
        query: &str,
        limit: usize,
    ) -> EngineResult<SearchResult> {
        let l = self.load(path)?;
        Ok(l.timeline().search(&l.trace, query, limit))
    }
}
