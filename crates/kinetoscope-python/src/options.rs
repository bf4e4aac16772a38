//! Keyword arguments to the engine's view options, with the CLI's names and defaults
//! except `top`, which keeps every row (0) unless given. Enum values are the JSON
//! documents' names (`sort="device_total"`, `group_by="shape"`); an unknown keyword is a
//! `TypeError`, an unknown value a `ValueError`.

use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::launches::LaunchOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::integrity::CheckOptions;
use kinetoscope_analysis::nvtx::NvtxOptions;
use kinetoscope_analysis::perf::PerfOptions;
use kinetoscope_analysis::ranks::{ClockMode, RanksOptions};
use kinetoscope_analysis::sequences::SequenceOptions;
use kinetoscope_engine::{
    CommOptions, DiffOptions, GateExpr, IdleOptions, KernelsOptions, LaunchesOptions,
    MemoryOptions, OpsOptions,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::de::DeserializeOwned;

/// The keyword arguments of one call, taken one by one; [`Kw::finish`] refuses the rest.
pub struct Kw<'py> {
    view: &'static str,
    dict: Option<Bound<'py, PyDict>>,
    taken: Vec<&'static str>,
}

impl<'py> Kw<'py> {
    /// The keywords `dict` of a call of `view`.
    pub fn new(view: &'static str, dict: Option<&Bound<'py, PyDict>>) -> Self {
        Self {
            view,
            dict: dict.cloned(),
            taken: Vec::new(),
        }
    }

    /// The keyword `name` (None when absent or None).
    pub fn get<T: FromPyObjectOwned<'py>>(&mut self, name: &'static str) -> PyResult<Option<T>> {
        self.taken.push(name);
        let Some(d) = &self.dict else { return Ok(None) };
        match d.get_item(name)? {
            Some(v) if !v.is_none() => v.extract::<T>().map(Some).map_err(|e| {
                PyTypeError::new_err(format!("{}(): {name}: {}", self.view, e.into()))
            }),
            _ => Ok(None),
        }
    }

    /// The keyword `name`, else `default`.
    pub fn or<T: FromPyObjectOwned<'py>>(&mut self, name: &'static str, default: T) -> PyResult<T> {
        Ok(self.get(name)?.unwrap_or(default))
    }

    /// The keyword `name` as one of an enum's names, else its default.
    pub fn choice<T: DeserializeOwned + Default>(&mut self, name: &'static str) -> PyResult<T> {
        match self.get::<String>(name)? {
            None => Ok(T::default()),
            Some(s) => serde_json::from_value(serde_json::Value::String(s.clone()))
                .map_err(|e| PyValueError::new_err(format!("{}(): {name}={s:?}: {e}", self.view))),
        }
    }

    /// `hta_compat=` as the definitions to follow.
    pub fn compat(&mut self) -> PyResult<Compat> {
        Ok(if self.or("hta_compat", false)? {
            Compat::Hta
        } else {
            Compat::Kinetoscope
        })
    }

    /// Refuse keywords not taken.
    pub fn finish(self) -> PyResult<()> {
        let Some(d) = &self.dict else { return Ok(()) };
        for key in d.keys() {
            let key: String = key.extract()?;
            if !self.taken.contains(&key.as_str()) {
                return Err(PyTypeError::new_err(format!(
                    "{}() got an unexpected keyword argument '{key}' (it takes: {})",
                    self.view,
                    self.taken.join(", ")
                )));
            }
        }
        Ok(())
    }
}

fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

/// `ops(group_by="name", sort="device_self", top=0)`.
pub fn ops(kw: &mut Kw<'_>) -> PyResult<OpsOptions> {
    Ok(OpsOptions {
        group_by: kw.choice("group_by")?,
        sort: kw.choice("sort")?,
        top: kw.or("top", 0)?,
    })
}

/// `kernels(group_by="name", sort="total", top=0)`.
pub fn kernels(kw: &mut Kw<'_>) -> PyResult<KernelsOptions> {
    Ok(KernelsOptions {
        group_by: kw.choice("group_by")?,
        sort: kw.choice("sort")?,
        top: kw.or("top", 0)?,
    })
}

/// `perf(peak_tflops=None, peak_tbps=None, top=0)`.
pub fn perf(kw: &mut Kw<'_>) -> PyResult<PerfOptions> {
    let opts = PerfOptions {
        peak_tflops: kw.get("peak_tflops")?,
        peak_tbps: kw.get("peak_tbps")?,
        top: kw.or("top", 0)?,
    };
    for (name, v) in [
        ("peak_tflops", opts.peak_tflops),
        ("peak_tbps", opts.peak_tbps),
    ] {
        if v.is_some_and(|p| !(p.is_finite() && p > 0.0)) {
            return Err(PyValueError::new_err(format!(
                "perf(): {name} must be a positive number"
            )));
        }
    }
    Ok(opts)
}

/// `idle(hta_compat=False, kernel_wait_us=30.0)`.
pub fn idle(kw: &mut Kw<'_>) -> PyResult<IdleOptions> {
    Ok(IdleOptions {
        compat: kw.compat()?,
        kernel_wait_ns: ns(kw.or("kernel_wait_us", 30.0)?),
    })
}

/// `launches(hta_compat=False, runtime_cutoff_us=50.0, delay_cutoff_us=100.0, top=20)`.
pub fn launches(kw: &mut Kw<'_>) -> PyResult<LaunchesOptions> {
    Ok(LaunchesOptions {
        compat: kw.compat()?,
        launch: LaunchOptions {
            runtime_cutoff_ns: ns(kw.or("runtime_cutoff_us", 50.0)?),
            delay_cutoff_ns: ns(kw.or("delay_cutoff_us", 100.0)?),
            top: kw.or("top", 20)?,
            all: false,
        },
    })
}

/// `comm(hta_compat=False)`.
pub fn comm(kw: &mut Kw<'_>) -> PyResult<CommOptions> {
    Ok(CommOptions {
        hta_compat: kw.or("hta_compat", false)?,
    })
}

/// `ranks(clock="auto", top=0)`.
pub fn ranks(kw: &mut Kw<'_>) -> PyResult<RanksOptions> {
    let clock: ClockMode = kw.choice("clock")?;
    let top: usize = kw.or("top", 0)?;
    Ok(RanksOptions {
        clock,
        top_collectives: if top == 0 { usize::MAX } else { top },
    })
}

/// `nvtx(filter=None, top=0)`.
pub fn nvtx(kw: &mut Kw<'_>) -> PyResult<NvtxOptions> {
    let top: usize = kw.or("top", 0)?;
    Ok(NvtxOptions {
        filter: kw.get("filter")?,
        top: (top > 0).then_some(top),
    })
}

/// `sequences(op=None, min_len=3, max_len=6, top=5)`.
pub fn sequences(kw: &mut Kw<'_>) -> PyResult<SequenceOptions> {
    let min_len: usize = kw.or("min_len", 3)?;
    let max_len: usize = kw.or("max_len", 6)?;
    Ok(SequenceOptions {
        op: kw.get("op")?,
        min_len: min_len.max(1),
        max_len: max_len.max(min_len),
        top: kw.or("top", 5)?,
    })
}

/// `critical_path(step=None, top=15)`.
pub fn critical_path(kw: &mut Kw<'_>) -> PyResult<CriticalPathOptions> {
    Ok(CriticalPathOptions {
        step: kw.get("step")?,
        top: kw.or("top", 15)?,
    })
}

/// `check(examples=3)`.
pub fn check(kw: &mut Kw<'_>) -> PyResult<CheckOptions> {
    Ok(CheckOptions {
        examples: kw.or("examples", 3)?,
    })
}

/// `memory(points=500, top=0)`.
pub fn memory(kw: &mut Kw<'_>) -> PyResult<MemoryOptions> {
    Ok(MemoryOptions {
        points: kw.or::<usize>("points", 500)?.max(10),
        device: None,
        sort: None,
        top: kw.or("top", 0)?,
        timeline: None,
    })
}

/// `kernel_classes(hta_compat=False, top=20)`: (compat, top).
pub fn kernel_classes(kw: &mut Kw<'_>) -> PyResult<(Compat, usize)> {
    Ok((kw.compat()?, kw.or("top", 20)?))
}

/// `diff(..., fail_if=[], batch_size=None, tokens_per_step=None)`.
pub fn diff(
    fail_if: &[String],
    batch_size: Option<f64>,
    tokens_per_step: Option<f64>,
) -> PyResult<DiffOptions> {
    for (name, v) in [
        ("batch_size", batch_size),
        ("tokens_per_step", tokens_per_step),
    ] {
        if v.is_some_and(|n| !(n > 0.0 && n.is_finite())) {
            return Err(PyValueError::new_err(format!(
                "diff(): {name} must be a positive number"
            )));
        }
    }
    let fail_if = fail_if
        .iter()
        .map(|s| s.parse::<GateExpr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("diff(): fail_if: {e}")))?;
    Ok(DiffOptions {
        fail_if,
        batch_size,
        tokens_per_step,
    })
}
