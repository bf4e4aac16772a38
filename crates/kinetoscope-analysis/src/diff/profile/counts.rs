//! Counts that do not depend on timing: the same code gives the same counts, so they
//! make noise-free CI gates.

use kinetoscope_trace::{CategoryKind, Phase, Trace};
use serde::{Deserialize, Serialize};

use crate::ops::names::NameFlags;

/// Deterministic counts over a window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Operator calls (every `cpu_op` span).
    pub op_calls: u64,
    /// GPU kernels.
    pub kernels: u64,
    /// GPU memory copies.
    pub memcpy_calls: u64,
    /// Bytes they copied.
    pub memcpy_bytes: u64,
    /// GPU memory sets.
    pub memset_calls: u64,
    /// Potential host-device sync points: scalar reads (`aten::_local_scalar_dense`,
    /// what `.item()` runs) and explicit synchronize calls (`*Synchronize`).
    pub sync_calls: u64,
    /// Device allocator calls (`cudaMalloc*`, `cudaFree*`, `hipMalloc*`, `hipFree*`,
    /// `cuMemAlloc*`, `cuMemFree*`, `cuMemCreate`, `cuMemMap`, ...).
    pub allocator_calls: u64,
    /// `[memory]` allocation records (positive bytes).
    pub allocations: u64,
}

/// Whether a host call may block on the device.
fn is_sync(name: &str) -> bool {
    name == "aten::_local_scalar_dense" || name.contains("Synchronize")
}

/// Whether a runtime or driver call goes to the device allocator.
fn is_allocator(name: &str) -> bool {
    const PREFIXES: [&str; 10] = [
        "cudaMalloc",
        "cudaFree",
        "hipMalloc",
        "hipFree",
        "cuMemAlloc",
        "cuMemFree",
        "cuMemCreate",
        "cuMemRelease",
        "cuMemMap",
        "cuMemUnmap",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Count events starting in `[lo, hi)`.
pub(super) fn count(trace: &Trace, lo: i64, hi: i64) -> Counts {
    let e = &trace.events;
    let mut c = Counts::default();
    let mut sync = NameFlags::new(&trace.strings, is_sync);
    let mut alloc = NameFlags::new(&trace.strings, is_allocator);
    let inside = |i: usize| e.ts_ns[i] >= lo && e.ts_ns[i] < hi;
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || !inside(i) {
            continue;
        }
        match trace.categories.kind(e.cat[i]) {
            CategoryKind::CpuOp => {
                c.op_calls += 1;
                c.sync_calls += u64::from(sync.get(&trace.strings, e.name[i]));
            }
            kind if kind.is_launch_call() => {
                c.sync_calls += u64::from(sync.get(&trace.strings, e.name[i]));
                c.allocator_calls += u64::from(alloc.get(&trace.strings, e.name[i]));
            }
            CategoryKind::Kernel => c.kernels += 1,
            CategoryKind::GpuMemcpy => c.memcpy_calls += 1,
            CategoryKind::GpuMemset => c.memset_calls += 1,
            _ => {}
        }
    }
    for t in &trace.args.transfer {
        let i = t.event.index();
        if inside(i) && trace.categories.kind(e.cat[i]) == CategoryKind::GpuMemcpy {
            c.memcpy_bytes = c.memcpy_bytes.saturating_add(t.bytes);
        }
    }
    c.allocations = trace
        .args
        .memory
        .iter()
        .filter(|m| m.bytes > 0 && inside(m.event.index()))
        .count() as u64;
    c
}
