//! `kinetoscope.Trace`: a path read once into the engine's trace cache; each view
//! method computes its document from the traces in memory (the GIL released meanwhile)
//! and returns it as Python objects, or as an Arrow table (`table`, `events`). A
//! document is computed once per view and keywords, then kept with the handle.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kinetoscope_arrow::tables::{self, TABLES};
use kinetoscope_arrow::value::Value;
use kinetoscope_engine::{Engine, EngineError, ReadOptions, Source, TraceCache};
use kinetoscope_trace::cache::CacheOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;

use crate::convert;
use crate::error;
use crate::options::{self, Kw};
use crate::stream::ArrowStream;

/// The engine the package uses: the CLI's reading defaults (and its on-disk trace cache
/// settings), reads kept in `cache` when given.
pub fn engine(strict: bool, threads: Option<usize>, cache: Option<Arc<TraceCache>>) -> Engine {
    let mut read = ReadOptions {
        strict,
        cache: CacheOptions::from_env(),
        ..ReadOptions::default()
    };
    if let Some(t) = threads {
        read.threads = t.clamp(1, kinetoscope_engine::input::available_threads());
    }
    let mut engine = Engine::new(read);
    engine.cache = cache;
    engine
}

/// A trace, folder or export read once; every view is computed from it in memory.
#[pyclass(module = "kinetoscope._native", frozen)]
pub struct Trace {
    engine: Engine,
    cache: Arc<TraceCache>,
    path: PathBuf,
    summary: Value,
    documents: Mutex<HashMap<String, Value>>,
}

impl Trace {
    /// Read `path` (as `kinetoscope summary` does, keeping the traces), and build the
    /// links most views share ([`Engine::build_indices`]).
    pub fn open(
        py: Python<'_>,
        path: PathBuf,
        strict: bool,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let cache = Arc::new(TraceCache::new(u64::MAX));
        let engine = engine(strict, threads, Some(cache.clone()));
        let src = Source::Path(path.clone());
        let summary = py.detach(|| {
            let summary = engine
                .summary(&src)
                .map_err(Doc::Engine)
                .and_then(Doc::value);
            if summary.is_ok() {
                engine.build_indices(&src);
            }
            summary
        });
        Ok(Self {
            engine,
            cache,
            path,
            summary: summary.map_err(Doc::err)?,
            documents: Mutex::default(),
        })
    }

    /// The document of `view` with the keywords `kw`: computed on the first call with
    /// these keywords, then the kept one.
    fn value(&self, py: Python<'_>, view: &str, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Value> {
        let key = document_key(view, kw)?;
        if let Some(doc) = self.kept().get(&key) {
            return Ok(doc.clone());
        }
        let doc = self.compute(py, view, kw)?;
        self.kept().insert(key, doc.clone());
        Ok(doc)
    }

    /// The documents computed so far (a poisoned lock only means a panic elsewhere;
    /// the map itself is always whole).
    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, Value>> {
        self.documents.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The document of `view` with the keywords `kw`, computed from the traces.
    fn compute(
        &self,
        py: Python<'_>,
        view: &str,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Value> {
        macro_rules! doc {
            ($name:literal, $opts:expr, |$e:ident, $s:ident, $o:ident| $call:expr) => {{
                let mut k = Kw::new($name, kw);
                let $o = $opts(&mut k)?;
                k.finish()?;
                let ($e, $s) = (&self.engine, Source::Path(self.path.clone()));
                py.detach(|| Doc::of($call)).map_err(Doc::err)
            }};
        }
        fn none(_: &mut Kw<'_>) -> PyResult<()> {
            Ok(())
        }
        match view {
            "summary" => {
                Kw::new("summary", kw).finish()?;
                Ok(self.summary.clone())
            }
            "overview" => doc!("overview", none, |e, s, _o| e.overview(&s)),
            "ops" => doc!("ops", options::ops, |e, s, o| e.ops(&s, &o)),
            "kernels" => doc!("kernels", options::kernels, |e, s, o| e.kernels(&s, &o)),
            "kernel_classes" => {
                doc!("kernel_classes", options::kernel_classes, |e, s, o| e
                    .kernel_classes(&s, o.0, o.1))
            }
            "perf" => doc!("perf", options::perf, |e, s, o| e.perf(&s, &o)),
            "temporal" => doc!("temporal", |k: &mut Kw<'_>| k.compat(), |e, s, o| e
                .temporal(&s, o)),
            "idle" => doc!("idle", options::idle, |e, s, o| e.idle(&s, o)),
            "launches" => doc!("launches", options::launches, |e, s, o| e.launches(&s, o)),
            "comm" => doc!("comm", options::comm, |e, s, o| e.comm(&s, o)),
            "ranks" => doc!("ranks", options::ranks, |e, s, o| e.ranks(&s, o)),
            "nvtx" => doc!("nvtx", options::nvtx, |e, s, o| e.nvtx(&s, &o)),
            "sequences" => doc!("sequences", options::sequences, |e, s, o| e
                .sequences(&s, &o)),
            "critical_path" => {
                doc!("critical_path", options::critical_path, |e, s, o| e
                    .critical_path(&s, o))
            }
            "check" => doc!("check", options::check, |e, s, o| e.check(&s, &o)),
            "memory" => doc!("memory", options::memory, |e, s, o| e.memory(&s, &o)),
            "report" => doc!("report", none, |e, s, _o| e
                .report(&s, &kinetoscope_advisor::Config::default())),
            other => Err(PyValueError::new_err(format!("no view named {other:?}"))),
        }
    }

    fn dict<'py>(
        &self,
        py: Python<'py>,
        view: &str,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.value(py, view, kw)?)
    }
}

/// What identifies a document: the view and its keywords (sorted, each value by its
/// `repr`, so `top=5` and `top=5` are one document and `top=5`, `top=6` two).
fn document_key(view: &str, kw: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let mut items = Vec::new();
    if let Some(d) = kw {
        for (k, v) in d.iter() {
            items.push(format!("{}={}", k.str()?, v.repr()?));
        }
    }
    items.sort();
    Ok(format!("{view}({})", items.join(", ")))
}

/// A document, or why there is none.
enum Doc {
    Engine(EngineError),
    Json(serde_json::Error),
}

impl Doc {
    fn value<D: Serialize>(doc: D) -> Result<Value, Doc> {
        Value::of(&doc).map_err(Doc::Json)
    }

    fn of<D: Serialize>(doc: Result<D, EngineError>) -> Result<Value, Doc> {
        doc.map_err(Doc::Engine).and_then(Doc::value)
    }

    fn err(self) -> PyErr {
        match self {
            Doc::Engine(e) => error::engine(e),
            Doc::Json(e) => error::other(e),
        }
    }
}

#[pymethods]
impl Trace {
    /// The `summary` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn summary<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "summary", kwargs)
    }

    /// The `overview` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn overview<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "overview", kwargs)
    }

    /// The `ops` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn ops<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "ops", kwargs)
    }

    /// The `kernels` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn kernels<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "kernels", kwargs)
    }

    /// The `kernel_classes` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn kernel_classes<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "kernel_classes", kwargs)
    }

    /// The `perf` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn perf<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "perf", kwargs)
    }

    /// The `temporal` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn temporal<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "temporal", kwargs)
    }

    /// The `idle` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn idle<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "idle", kwargs)
    }

    /// The `launches` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn launches<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "launches", kwargs)
    }

    /// The `comm` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn comm<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "comm", kwargs)
    }

    /// The `ranks` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn ranks<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "ranks", kwargs)
    }

    /// The `nvtx` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn nvtx<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "nvtx", kwargs)
    }

    /// The `sequences` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn sequences<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "sequences", kwargs)
    }

    /// The `critical_path` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn critical_path<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "critical_path", kwargs)
    }

    /// The `check` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "check", kwargs)
    }

    /// The `memory` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn memory<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "memory", kwargs)
    }

    /// The `report` document (`docs/python.md`).
    #[pyo3(signature = (**kwargs))]
    fn report<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py, "report", kwargs)
    }

    /// The path given to `open`.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Trace files read from disk so far (a view computed from the traces in memory
    /// reads none).
    #[getter]
    fn files_read(&self) -> u64 {
        self.cache.reads()
    }

    /// The names of the tables `table()` knows, with the view each comes from.
    #[staticmethod]
    fn table_names() -> Vec<(&'static str, &'static str)> {
        TABLES.iter().map(|t| (t.name, t.view)).collect()
    }

    /// The rows of table `name` (`ops`, `kernels`, `overview`, ...) as an Arrow stream,
    /// computed with the view's keywords.
    #[pyo3(signature = (name, **kwargs))]
    fn _table(
        &self,
        py: Python<'_>,
        name: &str,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<ArrowStream> {
        let spec = tables::spec(name).ok_or_else(|| {
            let names: Vec<_> = TABLES.iter().map(|t| t.name).collect();
            PyValueError::new_err(format!(
                "no table named {name:?} (tables: {})",
                names.join(", ")
            ))
        })?;
        let doc = self.value(py, spec.view, kwargs)?;
        let batch = py
            .detach(|| tables::batch(&doc, spec))
            .map_err(error::other)?;
        Ok(ArrowStream::new(batch.schema(), vec![batch]))
    }

    /// Every event of every trace read (one batch per trace, with its `path`), as an
    /// Arrow stream.
    fn _events(&self, py: Python<'_>) -> PyResult<ArrowStream> {
        let files = kinetoscope_engine::input::open_path(&self.path)
            .map_err(|e| error::engine(e.into()))?
            .trace_files();
        let batches = py.detach(|| {
            let mut out = Vec::new();
            for f in &files {
                // Failed reads are the documents' `errors`; they have no events.
                if let Ok(loaded) = self.cache.get(f, &self.engine.read) {
                    out.push(kinetoscope_arrow::events::batch(&loaded.trace)?);
                }
            }
            Ok::<_, kinetoscope_arrow::ArrowError>(out)
        });
        let batches = batches.map_err(error::other)?;
        Ok(ArrowStream::new(
            kinetoscope_arrow::events::schema(),
            batches,
        ))
    }
}
