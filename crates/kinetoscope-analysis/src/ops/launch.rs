//! Who launched each GPU activity: a kernel, memcpy or memset hangs on the runtime call
//! with the same CUPTI `correlation`, and that call on its operator as the trace's launch
//! link decides ([`kinetoscope_trace::Trace::launch_links`]: the `External id` where the
//! call lies inside that operator on its thread, else the innermost operator around it).
//! The TensorBoard plugin links by `External id` alone; on traces whose ids agree with
//! time the two are the same.

use kinetoscope_trace::{CategoryKind, EventId, Launcher, Phase, Trace};

/// Launched outside any operator (`External id` 0, or no runtime call: the plugin's
/// `CallTreeRoot`).
pub(crate) const ROOT: u32 = u32::MAX - 2;
/// Launched by a runtime call whose operator is unknown.
pub(crate) const UNMATCHED: u32 = u32::MAX - 1;

/// Whether events of this kind are device work counted as device time (kernels, memcpy,
/// memset).
pub(crate) fn is_device_work(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
    )
}

/// A launcher as a `u32` key: `op(event)` for an operator, else [`ROOT`] (outside any
/// operator, or no launcher at all) or [`UNMATCHED`].
pub(crate) fn launcher_key(
    launcher: Option<Launcher>,
    op: impl FnOnce(kinetoscope_trace::EventId) -> u32,
) -> u32 {
    match launcher {
        Some(Launcher::Span(ev)) => op(ev),
        Some(Launcher::Unknown) => UNMATCHED,
        Some(Launcher::Outside) | None => ROOT,
    }
}

/// A GPU activity and who launched it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceLaunch {
    /// The activity's event.
    pub event: u32,
    /// Its launcher as a [`launcher_key`]: a node of the operator tree (`u32::MAX` for an
    /// operator that is no node), [`ROOT`] or [`UNMATCHED`].
    pub node: u32,
}

/// Every complete kernel, memcpy and memset of `trace` in file order, each with its
/// launcher's key (`node` maps a launching operator's event to its node).
pub(crate) fn device_launches(trace: &Trace, node: impl Fn(usize) -> u32) -> Vec<DeviceLaunch> {
    let e = &trace.events;
    let links = trace.launch_links();
    (0..e.len())
        .filter(|&i| {
            e.phase[i] == Phase::Complete && is_device_work(trace.categories.kind(e.cat[i]))
        })
        .map(|i| {
            let launcher = links.of_activity(trace, EventId(i as u32));
            DeviceLaunch {
                event: i as u32,
                node: launcher_key(launcher, |op| node(op.index())),
            }
        })
        .collect()
}
