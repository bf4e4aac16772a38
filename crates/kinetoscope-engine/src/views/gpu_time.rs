//! GPU time as HTA defines it: `temporal`, `idle`, `launches` and `kernels --by-class`.
//! Each trace is reduced on the thread that read it; in HTA mode a rank with a single
//! step keeps both its filtered and unfiltered result until HTA's cross-rank decision
//! (two or more distinct steps over all ranks) can be made.

use kinetoscope_analysis::gpu_time::classes::{class_breakdown, ClassBreakdown};
use kinetoscope_analysis::gpu_time::idle::{idle_breakdown, IdleBreakdown};
use kinetoscope_analysis::gpu_time::launches::{launch_stats, LaunchOptions, LaunchStats};
use kinetoscope_analysis::gpu_time::temporal::{temporal, Temporal};
use kinetoscope_analysis::gpu_time::{filter_all, Compat, PerRank};
use kinetoscope_trace::Trace;

use crate::document::{Document, GpuTimeAnalysis, GpuTimeDocument, GpuTimeOptions};
use crate::error::EngineResult;
use crate::input::{split_results, Source};
use crate::views::ensure_any_read;
use crate::Engine;

/// Options of `idle`.
#[derive(Clone, Copy, Debug)]
pub struct IdleOptions {
    /// Definitions to follow.
    pub compat: Compat,
    /// A gap shorter than this after a kernel counts as kernel wait (ns).
    pub kernel_wait_ns: i64,
}

/// Options of `launches`.
#[derive(Clone, Copy, Debug)]
pub struct LaunchesOptions {
    /// Definitions to follow.
    pub compat: Compat,
    /// Cut-offs and list lengths.
    pub launch: LaunchOptions,
}

impl Engine {
    /// Read every trace, run `f` (trace, compat, filter) on each, apply HTA's
    /// cross-rank step-filter decision.
    fn gpu_time<T: Send>(
        &self,
        src: &Source,
        analysis: GpuTimeAnalysis,
        compat: Compat,
        f: impl Fn(&Trace, Compat, bool) -> T + Sync,
    ) -> EngineResult<GpuTimeDocument<T>> {
        let mapped = self.map(src, |trace| {
            PerRank::compute(trace, compat, |filter| f(trace, compat, filter))
        })?;
        let results = ensure_any_read(mapped.results)?;
        let step_filter = compat == Compat::Hta
            && filter_all(
                results
                    .iter()
                    .filter_map(|r| r.result.as_ref().ok())
                    .map(|p| &p.step_names),
            );
        let options = GpuTimeOptions {
            analysis,
            compat,
            step_filter,
        };
        let mut doc = Document::with_options(src.name(), mapped.layout, options);
        doc.errors = split_results(results, |_, p| doc.traces.push(p.pick(step_filter)));
        doc.skipped = mapped.skipped;
        Ok(doc)
    }

    /// `temporal`: idle, compute and non-compute GPU time per trace.
    pub fn temporal(
        &self,
        src: &Source,
        compat: Compat,
    ) -> EngineResult<GpuTimeDocument<Temporal>> {
        self.gpu_time(src, GpuTimeAnalysis::Temporal, compat, temporal)
    }

    /// `idle`: GPU idle time split into host wait, kernel wait and other.
    pub fn idle(
        &self,
        src: &Source,
        opts: IdleOptions,
    ) -> EngineResult<GpuTimeDocument<IdleBreakdown>> {
        self.gpu_time(src, GpuTimeAnalysis::Idle, opts.compat, |t, c, f| {
            idle_breakdown(t, c, f, opts.kernel_wait_ns)
        })
    }

    /// `launches`: launch delays, short kernels and runtime outliers.
    pub fn launches(
        &self,
        src: &Source,
        opts: LaunchesOptions,
    ) -> EngineResult<GpuTimeDocument<LaunchStats>> {
        self.gpu_time(src, GpuTimeAnalysis::Launches, opts.compat, |t, c, f| {
            launch_stats(t, c, f, opts.launch)
        })
    }

    /// `kernels --by-class`: compute, communication and memory kernels.
    pub fn kernel_classes(
        &self,
        src: &Source,
        compat: Compat,
        top: usize,
    ) -> EngineResult<GpuTimeDocument<ClassBreakdown>> {
        self.gpu_time(src, GpuTimeAnalysis::KernelClasses, compat, |t, c, f| {
            class_breakdown(t, c, f, top)
        })
    }
}
