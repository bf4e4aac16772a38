//! TR001 `PageableMemcpy`.
//!
//! ## What it finds
//! Host–device copies from or to pageable (not pinned) host memory: `gpu_memcpy` events
//! named `Memcpy HtoD (Pageable -> Device)` / `Memcpy DtoH (Device -> Pageable)`, except
//! the copies of scalar reads (`.item()`: `aten::_local_scalar_dense`), whose cost is
//! the sync SY001 `HostDeviceSync` reports, not the staging.
//!
//! ## Why it matters
//! A pageable copy is staged through a pinned bounce buffer by the driver and may
//! synchronise: `non_blocking=True` does not overlap it with compute, and it runs at a
//! fraction of the PCIe bandwidth.
//!
//! ## Evidence
//! Copies and bytes per step, their GPU time, achieved bandwidth.
//!
//! ## Fix
//! `DataLoader(pin_memory=True)`, `tensor.pin_memory()` once for reused buffers, then
//! `.to(device, non_blocking=True)`. Pin at the source, not per transfer.
//!
//! ## Thresholds and sources
//! Presence in ≥ 2 steps (Nsight Systems' `cuda_memcpy_async` expert rule); a warning
//! when their GPU time reaches `transfers.pageable_warning_share_pct` (1 %) of the step
//! (proposal), else info.

use kinetoscope_trace::{CategoryKind, EventId};

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct PageableMemcpy;

/// Scalar reads: their device-to-host copy is a sync (SY001), not a pinning matter.
const SCALAR_READS: [&str; 2] = ["aten::_local_scalar_dense", "aten::item"];

static META: RuleMeta = RuleMeta {
    code: "TR001",
    name: "PageableMemcpy",
    family: "transfer",
    since: "0.1.0",
    summary: "Copies from/to pageable host memory",
};

impl Rule for PageableMemcpy {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let ev = facts.events(&[CategoryKind::GpuMemcpy], |n| n.contains("Pageable"));
        let mut in_scalar_read = facts.named_ancestor_search(|n| SCALAR_READS.contains(&n));
        let ev: Vec<usize> = ev
            .into_iter()
            .filter(|&i| facts.step_of_event(i).is_some())
            .filter(|&i| {
                !facts
                    .launcher_of(i)
                    .is_some_and(|call| in_scalar_read.any(call))
            })
            .collect();
        if ev.is_empty() {
            return Vec::new();
        }
        let t = facts.trace;
        let n = facts.n_steps() as f64;
        let per = facts.per_step_ns(&ev);
        let seen = per.iter().filter(|v| **v > 0).count();
        let time: i64 = per.iter().sum();
        let bytes: u64 = ev
            .iter()
            .filter_map(|&i| t.args.transfer_of(EventId(i as u32)))
            .map(|a| a.bytes)
            .sum();
        let gbps = if time > 0 {
            bytes as f64 / time as f64
        } else {
            0.0
        };
        let mut names: Vec<&str> = ev.iter().map(|&i| facts.name(i)).collect();
        names.sort_unstable();
        names.dedup();
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("{:.0} pageable memcpys per step", ev.len() as f64 / n),
                severity: if 100.0 * time as f64 / n
                    >= config.transfers.pageable_warning_share_pct * facts.mean_step_ns()
                {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: time as f64 / n,
                steps_seen: seen,
                evidence: vec![format!(
                    "{}: {:.1} per step, {:.1} KiB per step, {:.3} ms per step, {gbps:.1} GB/s",
                    names.join(", "),
                    ev.len() as f64 / n,
                    bytes as f64 / n / 1024.0,
                    ms(time as f64 / n)
                )],
                fix: "Pin host memory at the source: DataLoader(pin_memory=True), or \
                      buffer.pin_memory() once for reused buffers; then \
                      .to(device, non_blocking=True)."
                    .to_owned(),
                details: "Pageable copies in the steps (Nsight Systems \
                          cuda_memcpy_async rule). Impact: their GPU time (upper bound; pinned \
                          copies also take time, but overlap)."
                    .to_owned(),
            },
        )]
    }
}
