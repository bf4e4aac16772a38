//! Who launched each GPU activity (as the TensorBoard plugin links them): a runtime (or
//! driver) call hangs on the host node whose `External id` equals its own, or on its
//! thread's root when that id is 0; a kernel, memcpy or memset hangs on the runtime call
//! with the same CUPTI `correlation`. Both links are lookups on integer ids ([`IdMap`]).

use kinetoscope_trace::{CategoryKind, Phase, Trace};

use super::idmap::IdMap;

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
/// [`UNMATCHED`]), built from every runtime call (the last call of a repeated id wins).
/// `on_runtime(event, launcher)` is called for each runtime call on the way.
pub(crate) fn runtime_launchers(
    trace: &Trace,
    ext_to_node: &IdMap,
    mut on_runtime: impl FnMut(usize, u32),
) -> IdMap {
    let e = &trace.events;
    let mut runtimes: Vec<(i64, u32)> = Vec::new();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || !is_runtime(trace.categories.kind(e.cat[i])) {
            continue;
        }
        let ext = e.external_id[i];
        let launcher = if ext == 0 {
            ROOT
        } else {
            ext_to_node.get(ext).unwrap_or(UNMATCHED)
        };
        on_runtime(i, launcher);
        let corr = e.correlation[i];
        if corr != 0 {
            runtimes.push((corr, launcher));
        }
    }
    IdMap::build(|| runtimes.iter().copied(), false)
}

/// The launcher of a device activity from the correlation map, or [`NO_RUNTIME`].
#[inline]
pub(crate) fn launcher_of(by_corr: &IdMap, correlation: i64) -> u32 {
    if correlation == 0 {
        return NO_RUNTIME;
    }
    by_corr.get(correlation).unwrap_or(NO_RUNTIME)
}
