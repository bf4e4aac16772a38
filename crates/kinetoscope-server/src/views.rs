//! `GET /api/v1/runs/{run}/views/{view}`: a view's query parameters turned into the
//! same engine options as the CLI's flags (same names, `snake_case`; the same
//! defaults), the engine's method called, and its document returned as the CLI's
//! `--format json` prints it.

use std::path::Path;

use kinetoscope_advisor::Config;
use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::launches::LaunchOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::nvtx::NvtxOptions;
use kinetoscope_analysis::sequences::SequenceOptions;
use kinetoscope_engine::{
    to_json, CommOptions, Engine, EngineResult, IdleOptions, KernelsOptions, LaunchesOptions,
    MemoryOptions, OpsOptions, RanksOptions, Source,
};
use serde::Serialize;

use crate::error::ApiError;
use crate::params::Query;

/// The views, by the name the API uses.
pub const VIEWS: [&str; 15] = [
    "summary",
    "overview",
    "ops",
    "kernels",
    "memory",
    "ranks",
    "comm",
    "temporal",
    "idle",
    "launches",
    "kernel_classes",
    "sequences",
    "critical_path",
    "nvtx",
    "report",
];

/// The CLI's default `--top` for table views.
const TOP: usize = 20;

/// The options a view takes (besides `worker`, `span` and `token`).
pub fn options_of(view: &str) -> &'static [&'static str] {
    match view {
        "ops" | "kernels" => &["group_by", "sort", "top"],
        "memory" => &["sort", "top", "points", "device"],
        "ranks" => &["clock", "top"],
        "comm" | "temporal" => &["hta_compat"],
        "idle" => &["hta_compat", "kernel_wait_us"],
        "launches" => &["hta_compat", "runtime_cutoff_us", "delay_cutoff_us", "top"],
        "kernel_classes" => &["hta_compat", "top"],
        "sequences" => &["op", "min_len", "max_len", "top"],
        "critical_path" => &["step", "top"],
        "nvtx" => &["filter", "top"],
        _ => &[],
    }
}

/// The JSON document of `view` for the file or folder `path`, with the options of `q`.
pub fn document(engine: &Engine, view: &str, path: &Path, q: &Query) -> Result<String, ApiError> {
    let src = Source::Path(path.to_owned());
    let compat = || -> Result<Compat, ApiError> {
        Ok(if q.flag("hta_compat")? {
            Compat::Hta
        } else {
            Compat::Kinetoscope
        })
    };
    let top = || q.parse("top", TOP);
    match view {
        "summary" => json(engine.summary(&src)),
        "overview" => json(engine.overview(&src)),
        "ops" => {
            let opts = OpsOptions {
                group_by: q.enum_value("group_by")?.unwrap_or_default(),
                sort: q.enum_value("sort")?.unwrap_or_default(),
                top: top()?,
            };
            json(engine.ops(&src, &opts))
        }
        "kernels" => {
            let opts = KernelsOptions {
                group_by: q.enum_value("group_by")?.unwrap_or_default(),
                sort: q.enum_value("sort")?.unwrap_or_default(),
                top: top()?,
            };
            json(engine.kernels(&src, &opts))
        }
        "memory" => {
            let points: usize = q.parse("points", 500)?;
            if points < 10 {
                return Err(ApiError::bad_request("points must be at least 10"));
            }
            let opts = MemoryOptions {
                points,
                device: q.parse_opt("device")?,
                sort: q.parse_opt("sort")?,
                top: top()?,
                timeline: None,
            };
            json(engine.memory(&src, &opts))
        }
        "ranks" => {
            let top = top()?;
            let opts = RanksOptions {
                clock: q.enum_value("clock")?.unwrap_or_default(),
                top_collectives: if top == 0 { usize::MAX } else { top },
            };
            json(engine.ranks(&src, opts))
        }
        "comm" => json(engine.comm(
            &src,
            CommOptions {
                hta_compat: q.flag("hta_compat")?,
            },
        )),
        "temporal" => json(engine.temporal(&src, compat()?)),
        "idle" => {
            let opts = IdleOptions {
                compat: compat()?,
                kernel_wait_ns: ns(q.parse("kernel_wait_us", 30.0)?)?,
            };
            json(engine.idle(&src, opts))
        }
        "launches" => {
            let opts = LaunchesOptions {
                compat: compat()?,
                launch: LaunchOptions {
                    runtime_cutoff_ns: ns(q.parse("runtime_cutoff_us", 50.0)?)?,
                    delay_cutoff_ns: ns(q.parse("delay_cutoff_us", 100.0)?)?,
                    top: top()?,
                    all: false,
                },
            };
            json(engine.launches(&src, opts))
        }
        "kernel_classes" => json(engine.kernel_classes(&src, compat()?, top()?)),
        "sequences" => {
            let min_len: usize = q.parse("min_len", 3)?;
            let max_len: usize = q.parse("max_len", 6)?;
            let opts = SequenceOptions {
                op: q.get("op").map(str::to_owned),
                min_len: min_len.max(1),
                max_len: max_len.max(min_len),
                top: q.parse("top", 5)?,
            };
            json(engine.sequences(&src, &opts))
        }
        "critical_path" => {
            let opts = CriticalPathOptions {
                step: q.parse_opt("step")?,
                top: q.parse("top", 10)?,
            };
            json(engine.critical_path(&src, opts))
        }
        "nvtx" => {
            let opts = NvtxOptions {
                filter: q.get("filter").map(str::to_owned),
                top: q.parse_opt("top")?,
            };
            json(engine.nvtx(&src, &opts))
        }
        "report" => {
            let config = Config::from_toml("", &[]).map_err(ApiError::bad_request)?;
            json(engine.report(&src, &config))
        }
        _ => Err(ApiError::not_found(format!(
            "no view {view:?} (views: {})",
            VIEWS.join(", ")
        ))),
    }
}

/// Microseconds to nanoseconds as the CLI rounds them; a negative or non-finite value
/// is refused.
fn ns(us: f64) -> Result<i64, ApiError> {
    if !(0.0..1e12).contains(&us) {
        return Err(ApiError::bad_request(format!("{us}: not a duration in µs")));
    }
    Ok((us * 1000.0).round() as i64)
}

/// A document as JSON text, or the engine's error.
fn json<T: Serialize>(doc: EngineResult<T>) -> Result<String, ApiError> {
    let doc = doc?;
    to_json(&doc).map_err(|e| ApiError::new(500, format!("cannot render the document: {e}")))
}
