//! Who launched each GPU activity: a kernel, memcpy or memset hangs on the runtime call
//! with the same CUPTI `correlation`, and that call on its operator as the trace's launch
//! link decides ([`kinetoscope_trace::Trace::launch_links`]: the `External id` where the
//! call lies inside that operator on its thread, else the innermost operator around it).
//! The TensorBoard plugin links by `External id` alone; on traces whose ids agree with
//! time the two are the same.

use kinetoscope_trace::{CategoryKind, Launcher};

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
