//! `kinetoscope temporal`, `idle`, `launches` and `kernels --by-class`: GPU time as HTA
//! defines it. Each trace is reduced on the thread that read it; with `--hta-compat` a
//! rank with a single step keeps both its filtered and unfiltered result until HTA's
//! cross-rank decision (two or more distinct steps over all ranks) can be made.

use std::process::ExitCode;

use kinetoscope_analysis::gpu_time::classes::class_breakdown;
use kinetoscope_analysis::gpu_time::idle::idle_breakdown;
use kinetoscope_analysis::gpu_time::launches::{launch_stats, LaunchOptions};
use kinetoscope_analysis::gpu_time::temporal::temporal as temporal_of;
use kinetoscope_analysis::gpu_time::{filter_all, Compat, PerRank};
use kinetoscope_report::gpu_time::{self as render, GpuTimeDocument, TemporalRow};
use kinetoscope_trace::Trace;

use super::common::{eprint_errors, finish, layout_of, map_input, read_options, split_results};
use crate::args::{GpuTimeArgs, IdleArgs, LaunchesArgs, ViewArgs, ViewFormat};

/// The three renderers of one document type (table, CSV, JSON).
pub(super) struct Renderers<R> {
    pub table: fn(&GpuTimeDocument<R>) -> String,
    pub csv: fn(&GpuTimeDocument<R>) -> String,
    pub json: fn(&GpuTimeDocument<R>) -> String,
}

fn compat_of(hta: bool) -> Compat {
    if hta {
        Compat::Hta
    } else {
        Compat::Kinetoscope
    }
}

/// Read every trace of `view.path`, run `f` (trace, compat, filter) on each, apply HTA's
/// cross-rank filter decision, convert with `row`, render and write.
pub(super) fn run_doc<T: Send, R>(
    analysis: &'static str,
    view: &ViewArgs,
    hta: bool,
    f: impl Fn(&Trace, Compat, bool) -> T + Sync,
    row: impl Fn(T) -> R,
    renderers: Renderers<R>,
) -> anyhow::Result<ExitCode> {
    let compat = compat_of(hta);
    let (input, results) = map_input(&view.path, &read_options(&view.read), |trace| {
        PerRank::compute(trace, compat, |filter| f(trace, compat, filter))
    })?;
    let filter = compat == Compat::Hta
        && filter_all(
            results
                .iter()
                .filter_map(|r| r.result.as_ref().ok())
                .map(|p| &p.step_names),
        );
    let mut doc = GpuTimeDocument::new(
        analysis,
        view.path.display().to_string(),
        layout_of(input),
        compat,
    );
    doc.step_filter = filter;
    doc.errors = split_results(results, |_, p| doc.traces.push(row(p.pick(filter))));
    let text = match view.format {
        ViewFormat::Table => (renderers.table)(&doc),
        ViewFormat::Json => (renderers.json)(&doc) + "\n",
        ViewFormat::Csv => {
            eprint_errors(&doc.errors);
            (renderers.csv)(&doc)
        }
    };
    finish(&text, doc.traces.len(), &doc.errors)
}

fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

/// `kinetoscope temporal`.
pub fn temporal(args: GpuTimeArgs) -> anyhow::Result<ExitCode> {
    run_doc(
        "temporal",
        &args.view,
        args.hta_compat,
        temporal_of,
        TemporalRow::from,
        Renderers {
            table: render::temporal_table,
            csv: render::temporal_csv,
            json: render::to_json,
        },
    )
}

/// `kinetoscope idle`.
pub fn idle(args: IdleArgs) -> anyhow::Result<ExitCode> {
    let wait = ns(args.kernel_wait_us);
    run_doc(
        "idle",
        &args.common.view,
        args.common.hta_compat,
        |t, c, f| idle_breakdown(t, c, f, wait),
        |b| b,
        Renderers {
            table: render::idle_table,
            csv: render::idle_csv,
            json: render::to_json,
        },
    )
}

/// `kinetoscope launches`.
pub fn launches(args: LaunchesArgs) -> anyhow::Result<ExitCode> {
    let view = &args.common.view;
    let opts = LaunchOptions {
        runtime_cutoff_ns: ns(args.runtime_cutoff_us),
        delay_cutoff_ns: ns(args.delay_cutoff_us),
        top: view.top,
        all: view.format == ViewFormat::Csv,
    };
    run_doc(
        "launches",
        view,
        args.common.hta_compat,
        |t, c, f| launch_stats(t, c, f, opts),
        |s| s,
        Renderers {
            table: render::launches_table,
            csv: render::launches_csv,
            json: render::to_json,
        },
    )
}

/// `kinetoscope kernels --by-class`.
pub fn by_class(view: &ViewArgs, hta: bool) -> anyhow::Result<ExitCode> {
    let top = view.top;
    run_doc(
        "kernel_classes",
        view,
        hta,
        |t, c, f| class_breakdown(t, c, f, top),
        |b| b,
        Renderers {
            table: render::classes_table,
            csv: render::classes_csv,
            json: render::to_json,
        },
    )
}
