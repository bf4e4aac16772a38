//! Memory by module at the peak: which `nn.Module`s hold the bytes that are live when a
//! device's allocated memory first reaches its peak.
//!
//! Each allocation is attributed to the innermost `nn.Module: X` frame around it on the
//! same thread (recorded with `with_stack=True` or `with_modules=True`), as a path from
//! the outermost module in (`GPT/Block_0/MLP_0`). The records up to the peak are replayed
//! by address; what is still allocated at the peak is summed per path. Bytes allocated
//! before profiling started cannot be attributed: they are the difference between the
//! peak and [`ModulesAtPeak::traced_bytes`]. Allocations made outside every module
//! (gradients in backward, optimizer state, inputs) form the row without a module.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::MemoryRecord;

/// The bytes live at a device's peak, by module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModulesAtPeak {
    /// Allocated bytes at the peak (the curve's value).
    pub peak_bytes: i64,
    /// Of those, bytes whose allocation the trace recorded (the rest was allocated before
    /// profiling started).
    pub traced_bytes: i64,
    /// Per module path, most bytes first.
    pub rows: Vec<ModuleBytes>,
}

/// One module path's share of the peak.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModuleBytes {
    /// The module path (`GPT/Block_0/MLP_0`); `None` for allocations made outside every
    /// module.
    pub module: Option<String>,
    /// Bytes live at the peak.
    pub bytes: i64,
    /// Live allocations.
    pub allocations: u64,
    /// `bytes` over the peak (0–1).
    pub share_of_peak: f64,
}

/// The live bytes at record `peak` (an index of `records`, time-ordered records of one
/// device) by module; `None` when the records have no addresses or no record was made
/// inside a module.
pub fn at_peak(
    records: &[&MemoryRecord],
    peak: usize,
    peak_bytes: i64,
    modules: &[String],
) -> Option<ModulesAtPeak> {
    if records
        .iter()
        .all(|r| r.module.is_none() || r.addr.is_none())
    {
        return None;
    }
    let mut live: HashMap<u64, (i64, Option<u32>)> = HashMap::new();
    for r in records.iter().take(peak.saturating_add(1)) {
        let Some(addr) = r.addr else { continue };
        if r.bytes > 0 {
            live.insert(addr, (r.bytes, r.module));
        } else if r.bytes < 0 {
            live.remove(&addr);
        }
    }
    let mut by_module: HashMap<Option<u32>, (i64, u64)> = HashMap::new();
    for (bytes, module) in live.into_values() {
        let row = by_module.entry(module).or_default();
        row.0 = row.0.saturating_add(bytes);
        row.1 += 1;
    }
    let traced_bytes = by_module
        .values()
        .map(|r| r.0)
        .fold(0i64, i64::saturating_add);
    let mut rows: Vec<ModuleBytes> = by_module
        .into_iter()
        .map(|(m, (bytes, allocations))| ModuleBytes {
            module: m.and_then(|m| modules.get(m as usize).cloned()),
            bytes,
            allocations,
            share_of_peak: if peak_bytes > 0 {
                bytes as f64 / peak_bytes as f64
            } else {
                0.0
            },
        })
        .collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.module.cmp(&b.module)));
    Some(ModulesAtPeak {
        peak_bytes,
        traced_bytes,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Device;

    fn rec(addr: u64, bytes: i64, module: Option<u32>) -> MemoryRecord {
        MemoryRecord {
            ts_ns: 0,
            device: Device::CPU,
            addr: Some(addr),
            bytes,
            total_allocated: None,
            total_reserved: None,
            op: None,
            module,
        }
    }

    #[test]
    fn replays_allocations_and_frees_up_to_the_peak() {
        let modules = vec!["M/A".to_owned(), "M/B".to_owned()];
        let r = [
            rec(1, 100, Some(0)),
            rec(2, 50, Some(1)),
            rec(3, 30, None),
            rec(2, -50, Some(0)), // freed elsewhere: gone at the peak
            rec(9, -70, None),    // a free of memory allocated before profiling
            rec(4, 20, Some(0)),  // the peak
            rec(5, 999, Some(1)), // after the peak: not counted
        ];
        let refs: Vec<&MemoryRecord> = r.iter().collect();
        let m = at_peak(&refs, 5, 200, &modules).unwrap();
        assert_eq!(m.traced_bytes, 150);
        let rows: Vec<(Option<&str>, i64, u64)> = m
            .rows
            .iter()
            .map(|r| (r.module.as_deref(), r.bytes, r.allocations))
            .collect();
        assert_eq!(rows, vec![(Some("M/A"), 120, 2), (None, 30, 1)]);
        assert!((m.rows[0].share_of_peak - 0.6).abs() < 1e-12);
    }

    #[test]
    fn nothing_to_say_without_module_frames() {
        let r = [rec(1, 100, None)];
        let refs: Vec<&MemoryRecord> = r.iter().collect();
        assert!(at_peak(&refs, 0, 100, &[]).is_none());
    }
}
