//! The offline bundle behind `kinetoscope report PATH --html OUT`: the answers of the
//! web API (`docs/api.md`) that the web app's pages ask for, computed ahead of time, so
//! the same pages work from one file without a server.
//!
//! Each answer is stored under the exact API path (and query) the app requests, with
//! the document the server would return for it, or the API's error object when the
//! view does not apply to the input (`ranks` on one trace). The view documents are
//! always included (they are bounded by their row and point limits); what the budget
//! bounds is the timeline's detail ([`timeline`]: each trace's share of what the views
//! leave).

mod timeline;

use std::collections::BTreeMap;

use kinetoscope_analysis::comm::CommOptions;
use kinetoscope_analysis::kernels::KernelGroupBy;
use kinetoscope_analysis::nvtx::NvtxOptions;
use kinetoscope_analysis::ops::OpGroupBy;
use kinetoscope_analysis::timeline::Window;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{ReportDocument, SCHEMA_VERSION};
use crate::error::{EngineError, EngineResult};
use crate::input::Source;
use crate::views::memory::MemoryOptions;
use crate::views::per_trace::{KernelsOptions, OpsOptions};
use crate::views::ranks::RanksOptions;
use crate::Engine;

/// The run id the offline page uses for its one input.
pub const OFFLINE_RUN_ID: &str = "offline";

/// Rows the web app asks for in its operator, kernel and memory tables.
pub const WEB_TABLE_ROWS: usize = 100;

/// Operator groupings the web app offers (the CLI's `--group-by` values).
pub const OP_GROUPINGS: [OpGroupBy; 4] = [
    OpGroupBy::Name,
    OpGroupBy::Shape,
    OpGroupBy::Stack,
    OpGroupBy::Module,
];

/// Kernel groupings the web app offers.
pub const KERNEL_GROUPINGS: [KernelGroupBy; 2] = [KernelGroupBy::Name, KernelGroupBy::Properties];

/// What to put in the bundle.
#[derive(Clone, Debug)]
pub struct BundleOptions {
    /// Most bytes of JSON the bundle may hold (views first, then timeline detail).
    pub budget_bytes: usize,
}

/// One run of the offline page's run list (the shape of `/api/v1/runs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunEntry {
    /// Stable id used in the API paths.
    pub id: String,
    /// Display name: the input path.
    pub name: String,
    /// `trace`, `rank_folder`, `run_folder`.
    pub kind: String,
    /// Workers of the run (the offline page selects traces inside each document).
    pub workers: Vec<NamedId>,
    /// Spans of the run.
    pub spans: Vec<NamedId>,
}

/// An id with its display name.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NamedId {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
}

/// The pre-answered API of one input.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OfflineBundle {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The input path.
    pub input: String,
    /// The budget the bundle was built for, bytes of JSON.
    pub budget_bytes: usize,
    /// Bytes of JSON the answers take.
    pub used_bytes: usize,
    /// API path and query → the answer (a document, or `{"error": …}`).
    pub responses: BTreeMap<String, Value>,
    /// Timeline path of each trace (`/api/v1/runs/offline/timeline?trace=I`, `I` its
    /// position among the traces read) → its embedded windows, coarsest first.
    pub timeline_windows: BTreeMap<String, Vec<Window>>,
    /// What each trace's timeline holds.
    pub timelines: Vec<TimelineSummary>,
}

/// How much of one trace's timeline the bundle holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimelineSummary {
    /// The trace.
    pub path: String,
    /// Levels of windows embedded (level k: windows of 1/2^k of the trace, overlapping
    /// by half); 0 when not even the whole range fitted.
    pub levels: u32,
    /// Windows embedded.
    pub windows: usize,
    /// Bytes of JSON they take.
    pub bytes: usize,
}

/// The API's error object for a view that does not apply (`{"error": {status, message}}`).
pub fn api_error(status: u16, message: &str) -> Value {
    serde_json::json!({ "error": { "status": status, "message": message } })
}

/// The path of a view's answer for `run`, with its query in the app's order.
pub fn view_path(run: &str, view: &str, query: &[(&str, String)]) -> String {
    let mut path = format!("/api/v1/runs/{run}/views/{view}");
    for (i, (k, v)) in query.iter().enumerate() {
        path.push(if i == 0 { '?' } else { '&' });
        path.push_str(k);
        path.push('=');
        path.push_str(v);
    }
    path
}

/// The CLI spelling of an enum option (its serde name).
fn option_name(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

impl Engine {
    /// Every API answer the web app's pages need for `src`, given its `report`
    /// document (computed first by the caller, so an input that cannot be read fails
    /// there), within `opts.budget_bytes` for the timeline's detail.
    pub fn offline_bundle(
        &self,
        src: &Source,
        report: &ReportDocument,
        opts: &BundleOptions,
    ) -> EngineResult<OfflineBundle> {
        let run = OFFLINE_RUN_ID;
        let mut responses = BTreeMap::new();
        let kind = match report.layout {
            crate::InputLayout::File => "trace",
            // An export's pages are its ranks' (the views of events need the traces).
            crate::InputLayout::RankFolder | crate::InputLayout::ParquetExport => "rank_folder",
            crate::InputLayout::RunFolder { .. } => "run_folder",
        };
        responses.insert(view_path(run, "report", &[]), to_value(report));
        responses.insert(view_path(run, "overview", &[]), answer(self.overview(src)));
        for g in OP_GROUPINGS {
            let o = OpsOptions {
                group_by: g,
                top: WEB_TABLE_ROWS,
                ..OpsOptions::default()
            };
            let q = [
                ("group_by", option_name(&g)),
                ("top", WEB_TABLE_ROWS.to_string()),
            ];
            responses.insert(view_path(run, "ops", &q), answer(self.ops(src, &o)));
        }
        for g in KERNEL_GROUPINGS {
            let o = KernelsOptions {
                group_by: g,
                top: WEB_TABLE_ROWS,
                ..KernelsOptions::default()
            };
            let q = [
                ("group_by", option_name(&g)),
                ("top", WEB_TABLE_ROWS.to_string()),
            ];
            responses.insert(view_path(run, "kernels", &q), answer(self.kernels(src, &o)));
        }
        let memory = MemoryOptions {
            points: 500,
            device: None,
            sort: None,
            top: WEB_TABLE_ROWS,
            timeline: None,
        };
        let q = [("top", WEB_TABLE_ROWS.to_string())];
        responses.insert(
            view_path(run, "memory", &q),
            answer(self.memory(src, &memory)),
        );
        let nvtx = NvtxOptions {
            filter: None,
            top: Some(WEB_TABLE_ROWS),
        };
        responses.insert(view_path(run, "nvtx", &q), answer(self.nvtx(src, &nvtx)));
        responses.insert(
            view_path(run, "comm", &[]),
            answer(self.comm(src, CommOptions::default())),
        );
        responses.insert(
            view_path(run, "ranks", &[]),
            answer(self.ranks(src, RanksOptions::default())),
        );
        let runs = serde_json::json!({ "runs": [RunEntry {
            id: run.to_owned(),
            name: report.input.clone(),
            kind: kind.to_owned(),
            workers: Vec::new(),
            spans: Vec::new(),
        }]});
        responses.insert("/api/v1/runs".to_owned(), runs);
        let views_bytes: usize = responses.values().map(json_len).sum();
        let room = opts.budget_bytes.saturating_sub(views_bytes) / report.traces.len().max(1);
        let mapped = self.map(src, |t| timeline::trace_timeline(t, room))?;
        let mut timeline_windows = BTreeMap::new();
        let mut timelines = Vec::new();
        let read = mapped
            .results
            .into_iter()
            .filter_map(|r| Some((r.path, r.result.ok()?)));
        for (i, (path, tl)) in read.enumerate() {
            let base = format!("/api/v1/runs/{run}/timeline");
            responses.insert(format!("{base}/tracks?trace={i}"), to_value(&tl.tracks));
            timelines.push(TimelineSummary {
                path: path.display().to_string(),
                levels: tl.levels,
                windows: tl.windows.len(),
                bytes: tl.bytes,
            });
            timeline_windows.insert(format!("{base}?trace={i}"), tl.windows);
        }
        let used_bytes = views_bytes + timelines.iter().map(|t| t.bytes).sum::<usize>();
        Ok(OfflineBundle {
            schema_version: SCHEMA_VERSION,
            input: report.input.clone(),
            budget_bytes: opts.budget_bytes,
            used_bytes,
            responses,
            timeline_windows,
            timelines,
        })
    }
}

/// A document as a JSON value.
fn to_value(doc: &impl Serialize) -> Value {
    serde_json::to_value(doc).unwrap_or_else(|e| api_error(500, &e.to_string()))
}

/// A view's answer: its document, or the API's error for a view that does not apply.
fn answer<T: Serialize>(result: EngineResult<T>) -> Value {
    match result {
        Ok(doc) => to_value(&doc),
        Err(e) => {
            let message = match e.hint() {
                Some(h) => format!("{e} ({h})"),
                None => e.to_string(),
            };
            let status = match e {
                EngineError::WrongInput { .. } => 400,
                _ => 422,
            };
            api_error(status, &message)
        }
    }
}

/// Bytes of a value's JSON text.
fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}
