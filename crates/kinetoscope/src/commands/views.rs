//! The view commands: arguments → options → engine → render. Each is a few lines; the
//! pipeline lives in `kinetoscope-engine`.

use std::process::ExitCode;

use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::launches::LaunchOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::nvtx::NvtxOptions;
use kinetoscope_analysis::ranks::ClockMode;
use kinetoscope_analysis::sequences::SequenceOptions;
use kinetoscope_engine::{
    CommOptions, IdleOptions, KernelsOptions, LaunchesOptions, OpsOptions, RanksOptions, Source,
};
use kinetoscope_report as render;

use super::output::{emit, emit_document, note_skipped};
use super::{engine, source};
use crate::args::{
    ClockArg, CommArgs, CriticalPathArgs, GpuTimeArgs, IdleArgs, KernelsArgs, KernelsGroupBy,
    LaunchesArgs, NvtxArgs, OpsArgs, OpsGroupBy, OverviewArgs, PerfArgs, RanksArgs, SequencesArgs,
    ViewArgs,
};

fn src(view: &ViewArgs) -> Source {
    Source::Path(view.path.clone())
}

fn compat(hta: bool) -> Compat {
    if hta {
        Compat::Hta
    } else {
        Compat::Kinetoscope
    }
}

fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

/// `kinetoscope overview`.
pub fn overview(args: OverviewArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    let doc = engine(&v.read).overview(&src(v))?;
    let order = args.sort.unwrap_or_default();
    emit_document(
        &doc,
        v.format,
        |d| render::overview::to_table(d, order, v.top),
        Some(&|d| render::overview::to_csv(d, order, v.top)),
    )
}

/// `kinetoscope ops`.
pub fn ops(args: OpsArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    let opts = OpsOptions {
        group_by: match args.group_by {
            OpsGroupBy::Name => kinetoscope_analysis::ops::OpGroupBy::Name,
            OpsGroupBy::Shape => kinetoscope_analysis::ops::OpGroupBy::Shape,
            OpsGroupBy::Stack => kinetoscope_analysis::ops::OpGroupBy::Stack,
            OpsGroupBy::Module => kinetoscope_analysis::ops::OpGroupBy::Module,
        },
        sort: args.sort.unwrap_or_default(),
        top: v.top,
    };
    let doc = engine(&v.read).ops(&src(v), &opts)?;
    emit_document(
        &doc,
        v.format,
        render::ops::to_table,
        Some(&render::ops::to_csv),
    )
}

/// `kinetoscope perf`.
pub fn perf(args: PerfArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    for (flag, value) in [
        ("--peak-tflops", args.peak_tflops),
        ("--peak-tbps", args.peak_tbps),
    ] {
        if let Some(p) = value {
            anyhow::ensure!(p.is_finite() && p > 0.0, "{flag} must be a positive number");
        }
    }
    let opts = kinetoscope_analysis::perf::PerfOptions {
        peak_tflops: args.peak_tflops,
        peak_tbps: args.peak_tbps,
        top: v.top,
    };
    let doc = engine(&v.read).perf(&src(v), &opts)?;
    emit_document(
        &doc,
        v.format,
        render::perf::to_table,
        Some(&render::perf::to_csv),
    )
}

/// `kinetoscope kernels` (`--by-class`: the GPU-time view of kernel classes).
pub fn kernels(args: KernelsArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    if args.by_class {
        let doc = engine(&v.read).kernel_classes(&src(v), compat(args.hta_compat), v.top)?;
        return emit_document(
            &doc,
            v.format,
            render::gpu_time::classes_table,
            Some(&render::gpu_time::classes_csv),
        );
    }
    let opts = KernelsOptions {
        group_by: match args.group_by {
            KernelsGroupBy::Name => kinetoscope_analysis::kernels::KernelGroupBy::Name,
            KernelsGroupBy::Properties => kinetoscope_analysis::kernels::KernelGroupBy::Properties,
        },
        sort: args.sort.unwrap_or_default(),
        top: v.top,
    };
    let doc = engine(&v.read).kernels(&src(v), &opts)?;
    emit_document(
        &doc,
        v.format,
        render::kernels::to_table,
        Some(&render::kernels::to_csv),
    )
}

/// `kinetoscope temporal`.
pub fn temporal(args: GpuTimeArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    let doc = engine(&v.read).temporal(&src(v), compat(args.hta_compat))?;
    emit_document(
        &doc,
        v.format,
        render::gpu_time::temporal_table,
        Some(&render::gpu_time::temporal_csv),
    )
}

/// `kinetoscope idle`.
pub fn idle(args: IdleArgs) -> anyhow::Result<ExitCode> {
    let v = &args.common.view;
    let opts = IdleOptions {
        compat: compat(args.common.hta_compat),
        kernel_wait_ns: ns(args.kernel_wait_us),
    };
    let doc = engine(&v.read).idle(&src(v), opts)?;
    emit_document(
        &doc,
        v.format,
        render::gpu_time::idle_table,
        Some(&render::gpu_time::idle_csv),
    )
}

/// `kinetoscope launches`.
pub fn launches(args: LaunchesArgs) -> anyhow::Result<ExitCode> {
    let v = &args.common.view;
    let opts = LaunchesOptions {
        compat: compat(args.common.hta_compat),
        launch: LaunchOptions {
            runtime_cutoff_ns: ns(args.runtime_cutoff_us),
            delay_cutoff_ns: ns(args.delay_cutoff_us),
            top: v.top,
            all: v.format == crate::args::ViewFormat::Csv,
        },
    };
    let doc = engine(&v.read).launches(&src(v), opts)?;
    emit_document(
        &doc,
        v.format,
        render::gpu_time::launches_table,
        Some(&render::gpu_time::launches_csv),
    )
}

/// `kinetoscope comm`.
pub fn comm(args: CommArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    let opts = CommOptions {
        hta_compat: args.hta_compat,
    };
    let doc = engine(&v.read).comm(&src(v), opts)?;
    let top = v.top;
    emit_document(
        &doc,
        v.format,
        |d| render::comm::to_table(d, top),
        Some(&|d| render::comm::to_csv(d, top)),
    )
}

/// `kinetoscope ranks`.
pub fn ranks(args: RanksArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    let opts = RanksOptions {
        clock: match args.clock {
            ClockArg::Auto => ClockMode::Auto,
            ClockArg::None => ClockMode::None,
            ClockArg::CollectiveEnd => ClockMode::CollectiveEnd,
        },
        top_collectives: if v.top == 0 { usize::MAX } else { v.top },
    };
    let doc = engine(&v.read).ranks(&src(v), opts)?;
    let top = v.top;
    note_skipped(&doc.skipped);
    emit(
        &doc,
        &doc.errors,
        v.format,
        |d| render::ranks::to_table(d, top),
        Some(&render::ranks::to_csv),
    )
}

/// `kinetoscope sequences`.
pub fn sequences(args: SequencesArgs) -> anyhow::Result<ExitCode> {
    let opts = SequenceOptions {
        op: args.op.clone(),
        min_len: args.min_len.max(1),
        max_len: args.max_len.max(args.min_len),
        top: args.top,
    };
    let doc = engine(&args.read).sequences(&source(Some(&args.path)), &opts)?;
    emit_document(
        &doc,
        args.format,
        render::sequences::to_table,
        Some(&render::sequences::to_csv),
    )
}

/// `kinetoscope nvtx`.
pub fn nvtx(args: NvtxArgs) -> anyhow::Result<ExitCode> {
    let opts = NvtxOptions {
        filter: args.filter.clone(),
        top: args.top,
    };
    let doc = engine(&args.read).nvtx(&source(Some(&args.path)), &opts)?;
    emit_document(
        &doc,
        args.format,
        render::nvtx::to_table,
        Some(&render::nvtx::to_csv),
    )
}

/// `kinetoscope critical-path`.
pub fn critical_path(args: CriticalPathArgs) -> anyhow::Result<ExitCode> {
    let opts = CriticalPathOptions {
        step: args.step,
        top: args.top,
    };
    let doc = engine(&args.read).critical_path(&source(Some(&args.path)), opts)?;
    emit_document(
        &doc,
        args.format,
        render::critical_path::to_table,
        Some(&render::critical_path::to_csv),
    )
}
