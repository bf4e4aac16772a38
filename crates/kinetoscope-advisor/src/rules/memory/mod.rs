//! Memory rules, over `[memory]` events (`profile_memory=True`).
pub mod allocator_churn;
pub mod memory_leak;
pub mod memory_pressure;
pub mod memory_spike;
pub mod memory_underused;
pub mod reserved_overhang;

use std::collections::BTreeMap;

use crate::facts::Facts;

/// Allocated / reserved extremes of one device in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StepMemory {
    pub min_allocated: i64,
    pub max_allocated: i64,
    pub max_reserved: i64,
}

/// Per device (`(device type, device id)`), per step: allocated min/max and reserved max
/// from `Total Allocated` / `Total Reserved`; `None` for steps without records.
pub(crate) fn per_step_memory(facts: &Facts) -> BTreeMap<(i64, i64), Vec<Option<StepMemory>>> {
    let t = facts.trace;
    let mut out: BTreeMap<(i64, i64), Vec<Option<StepMemory>>> = BTreeMap::new();
    for m in &t.args.memory {
        if m.total_allocated < 0 {
            continue;
        }
        let Some(s) = facts.step_of(t.events.ts_ns[m.event.index()]) else {
            continue;
        };
        let v = out
            .entry((m.device_type, m.device_id))
            .or_insert_with(|| vec![None; facts.n_steps()]);
        let cur = v[s].get_or_insert(StepMemory {
            min_allocated: i64::MAX,
            max_allocated: i64::MIN,
            max_reserved: -1,
        });
        cur.min_allocated = cur.min_allocated.min(m.total_allocated);
        cur.max_allocated = cur.max_allocated.max(m.total_allocated);
        cur.max_reserved = cur.max_reserved.max(m.total_reserved);
    }
    out
}

/// Device display name (`CPU`, `GPU0`).
pub(crate) fn device_name(d: (i64, i64)) -> String {
    match d.0 {
        0 => "CPU".to_owned(),
        1 => format!("GPU{}", d.1),
        t => format!("device{t}:{}", d.1),
    }
}

/// Whole-trace peak allocated and reserved bytes per CUDA device, with its capacity
/// from `deviceProperties`.
pub(crate) fn gpu_peaks(facts: &Facts) -> Vec<(i64, i64, i64, Option<u64>)> {
    let t = facts.trace;
    let mut peaks: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for m in &t.args.memory {
        if m.device_type != 1 || m.total_allocated < 0 {
            continue;
        }
        let p = peaks.entry(m.device_id).or_insert((0, 0));
        p.0 = p.0.max(m.total_allocated);
        p.1 = p.1.max(m.total_reserved);
    }
    peaks
        .into_iter()
        .map(|(id, (a, r))| {
            let cap = t
                .meta
                .devices
                .iter()
                .find(|d| d.id == id)
                .map(|d| d.total_memory_bytes)
                .filter(|c| *c > 0);
            (id, a, r, cap)
        })
        .collect()
}

/// MiB from bytes.
pub(crate) fn mib(b: f64) -> f64 {
    b / (1024.0 * 1024.0)
}
