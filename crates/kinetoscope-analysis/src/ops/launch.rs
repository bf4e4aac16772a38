//! Who launched each GPU activity (`docs/metrics.md` A.3): a runtime (or driver) call hangs
//! on the host node whose `External id` equals its own, or on its thread's root when that
//! id is 0; a kernel, memcpy or memset hangs on the runtime call with the same CUPTI
//! `correlation`. Both links are hash lookups on integer ids.

use kinetoscope_trace::{CategoryKind, Phase, Trace};
use rustc_hash::FxHashMap;

/// Launched by a runtime call with `External id` 0: outside any operator (the plugin's
/// `CallTreeRoot`).
pub(crate) const ROOT: u32 = u32::MAX - 2;
/// Launched by a runtime call whose `External id` matches no host node.
pub(crate) const UNMATCHED: u32 = u32::MAX - 1;
/// No runtime call has the activity's correlation id.
pub(crate) const NO_RUNTIME: u32 = u32::MAX;

/// Whether events of this kind are host-side launch calls.
pub(crate) fn is_runtime(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::CudaRuntime | CategoryKind::CudaDriver | CategoryKind::OtherRuntime
    )
}

/// Whether events of this kind are device work counted as device time (kernels, memcpy,
/// memset).
pub(crate) fn is_device_work(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
    )
}

/// Correlation id → launcher (a node value from `ext_to_node`, [`ROOT`] or
/// [`UNMATCHED`]), built from every runtime call. `on_runtime(event, launcher)` is called
/// for each runtime call on the way.
pub(crate) fn runtime_launchers(
    trace: &Trace,
    ext_to_node: &FxHashMap<i64, u32>,
    mut on_runtime: impl FnMut(usize, u32),
) -> FxHashMap<i64, u32> {
    let e = &trace.events;
    let mut by_corr = FxHashMap::default();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || !is_runtime(trace.categories.kind(e.cat[i])) {
            continue;
        }
        let ext = e.external_id[i];
        let launcher = if ext == 0 {
            ROOT
        } else {
            ext_to_node.get(&ext).copied().unwrap_or(UNMATCHED)
        };
        on_runtime(i, launcher);
        let corr = e.correlation[i];
        if corr != 0 {
            by_corr.insert(corr, launcher);
        }
    }
    by_corr
}

/// The launcher of a device activity from the correlation map, or [`NO_RUNTIME`].
pub(crate) fn launcher_of(by_corr: &FxHashMap<i64, u32>, correlation: i64) -> u32 {
    if correlation == 0 {
        return NO_RUNTIME;
    }
    by_corr.get(&correlation).copied().unwrap_or(NO_RUNTIME)
}
