//! `report --xlsx`: every document a workbook shows — the report, the overview, the
//! operators by name and by name + input shapes, the kernels, the perf model, memory and
//! communication — from one read of the input: each trace is reduced to all of them on
//! the thread that read it.

use kinetoscope_advisor::Config;
use kinetoscope_analysis::comm::{comm, CommOptions, TraceComm};
use kinetoscope_analysis::kernels::{analyze_kernels, KernelsTable};
use kinetoscope_analysis::memory::{analyze_trace, sort, MemoryView};
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy, OpsTable};
use kinetoscope_analysis::overview::{overview, TraceOverview};
use kinetoscope_analysis::perf::{analyze_perf, PerfOptions, PerfTable};
use kinetoscope_trace::Trace;
use serde::{Deserialize, Serialize};

use crate::document::{Document, ReportDocument};
use crate::error::EngineResult;
use crate::input::Source;
use crate::views::memory::{MemoryDocument, MemoryOptions};
use crate::views::{KernelsOptions, OpsOptions};
use crate::Engine;

/// Curve points kept per device: a workbook shows peaks and operators, not curves.
const CURVE_POINTS: usize = 10;

/// The documents of a workbook, each as its own view would return it (every row, the
/// views' default sort keys).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkbookDocument {
    /// `report`: the advisor's summary and ranked findings.
    pub report: ReportDocument,
    /// `overview`: the per-step breakdown.
    pub overview: Document<TraceOverview>,
    /// `ops`: operators by name.
    pub ops: Document<OpsTable, OpsOptions>,
    /// `ops --group-by shape`: operators by name and input shapes.
    pub ops_by_shape: Document<OpsTable, OpsOptions>,
    /// `kernels`: kernels by name.
    pub kernels: Document<KernelsTable, KernelsOptions>,
    /// `perf`: the performance model.
    pub perf: Document<PerfTable, PerfOptions>,
    /// `memory`: per-device peaks and operators of each trace.
    pub memory: MemoryDocument,
    /// `comm`: overlap and collectives.
    pub comm: Document<TraceComm>,
}

/// One trace's views.
struct Views {
    overview: TraceOverview,
    ops: OpsTable,
    ops_by_shape: OpsTable,
    kernels: KernelsTable,
    perf: PerfTable,
    memory: MemoryView,
    comm: TraceComm,
}

impl Views {
    /// Every view of `trace` but the report.
    fn of(trace: &Trace, perf: &PerfOptions) -> Self {
        let memory_opts = kinetoscope_analysis::memory::MemoryOptions {
            points: CURVE_POINTS,
            device: None,
        };
        let mut memory = analyze_trace(trace, &memory_opts);
        sort::sort_and_limit(&mut memory, None, 0);
        Self {
            overview: overview(trace),
            ops: sorted_ops(trace, OpGroupBy::Name),
            ops_by_shape: sorted_ops(trace, OpGroupBy::Shape),
            kernels: {
                let opts = KernelsOptions::default();
                let mut t = analyze_kernels(trace, opts.group_by);
                t.sort_by(opts.sort);
                t
            },
            perf: analyze_perf(trace, perf),
            memory,
            comm: comm(trace, CommOptions::default()),
        }
    }
}

/// The operator table grouped by `group_by`, in the view's default order.
fn sorted_ops(trace: &Trace, group_by: OpGroupBy) -> OpsTable {
    let mut t = analyze_ops(trace, group_by);
    t.sort_by(OpsOptions::default().sort);
    t
}

impl Engine {
    /// The documents of a workbook (`report --xlsx`) from one read of `src`: the report
    /// with `config`, the perf model with `perf`, the other views with their defaults.
    pub fn workbook(
        &self,
        src: &Source,
        config: &Config,
        perf: &PerfOptions,
    ) -> EngineResult<WorkbookDocument> {
        let (report, views) = self.report_with(src, config, |t| Views::of(t, perf))?;
        let by_shape = OpsOptions {
            group_by: OpGroupBy::Shape,
            ..OpsOptions::default()
        };
        let mut wb = WorkbookDocument {
            overview: empty(&report, ()),
            ops: empty(&report, OpsOptions::default()),
            ops_by_shape: empty(&report, by_shape),
            kernels: empty(&report, KernelsOptions::default()),
            perf: empty(&report, perf.clone()),
            memory: empty(&report, MemoryOptions::default()),
            comm: empty(&report, ()),
            report,
        };
        for v in views {
            wb.overview.traces.push(v.overview);
            wb.ops.traces.push(v.ops);
            wb.ops_by_shape.traces.push(v.ops_by_shape);
            wb.kernels.traces.push(v.kernels);
            wb.perf.traces.push(v.perf);
            wb.memory.traces.push(v.memory);
            wb.comm.traces.push(v.comm);
        }
        Ok(wb)
    }
}

/// A document of the same input as `report` (its layout, read failures and skipped
/// files) with `options` and no traces yet.
fn empty<T, X>(report: &ReportDocument, options: X) -> Document<T, X> {
    let mut d = Document::with_options(report.input.clone(), report.layout.clone(), options);
    d.errors = report.errors.clone();
    d.skipped = report.skipped.clone();
    d
}
