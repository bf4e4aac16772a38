//! Per-GPU metrics over the step window `[first step start, last step end)`
//! (the TensorBoard plugin's GPU summary): utilization, estimated SM efficiency,
//! estimated achieved occupancy, and the share of kernel time on tensor cores.

use std::collections::{BTreeMap, HashMap};

use kinetoscope_trace::{sort_runs_by_key, StrId, Trace, TrackKind};

use super::classify::{Class, Classes};
use super::intervals::{intersect, merge, total};
use super::tensor_cores::uses_tensor_cores;
use super::GpuMetrics;

/// One kernel on one GPU (32 bytes: the launch values as the trace holds them).
#[derive(Clone, Copy)]
struct KernelRec {
    start: i64,
    end: i64,
    /// `blocks per SM`; NaN when absent.
    blocks_per_sm: f32,
    /// `est. achieved occupancy %`; NaN when absent.
    occupancy_pct: f32,
    tensor_cores: bool,
}

impl KernelRec {
    /// `blocks per SM`, when present and positive.
    fn blocks_per_sm(&self) -> Option<f64> {
        Some(f64::from(self.blocks_per_sm)).filter(|b| *b > 0.0)
    }

    /// `est. achieved occupancy %`, when present and not negative.
    fn occupancy_pct(&self) -> Option<f64> {
        Some(f64::from(self.occupancy_pct)).filter(|o| *o >= 0.0)
    }
}

/// Metrics of every GPU that ran a kernel, by device id. The GPU of a kernel is its
/// `device` arg, else the device of its stream's track.
pub(crate) fn gpu_metrics(
    trace: &Trace,
    classes: &Classes,
    window: Option<(i64, i64)>,
) -> Vec<GpuMetrics> {
    let e = &trace.events;
    let kargs = &trace.args.kernel;
    let mut ka = 0;
    let mut tc_cache: HashMap<StrId, bool> = HashMap::new();
    let mut per_gpu: BTreeMap<i64, Vec<KernelRec>> = BTreeMap::new();
    for i in 0..e.len() {
        if classes.of(trace, i) != Class::Kernel {
            continue;
        }
        while ka < kargs.len() && kargs.events()[ka].index() < i {
            ka += 1;
        }
        let args = kargs.get(ka).filter(|a| a.event.index() == i);
        let track_device = match trace.tracks.get(e.track[i]).kind {
            TrackKind::GpuStream { device, .. } => device,
            _ => -1,
        };
        let device = args.map_or(-1, |a| a.launch.device);
        let device = if device >= 0 { device } else { track_device };
        if device < 0 {
            continue;
        }
        let name = e.name[i];
        let tensor_cores = *tc_cache
            .entry(name)
            .or_insert_with(|| uses_tensor_cores(trace.strings.get(name)));
        per_gpu.entry(device).or_default().push(KernelRec {
            start: e.ts_ns[i],
            end: e.ts_ns[i] + e.dur_ns.at(i),
            blocks_per_sm: args
                .and_then(|a| a.launch.blocks_per_sm)
                .unwrap_or(f32::NAN),
            occupancy_pct: args
                .and_then(|a| a.launch.est_achieved_occupancy_pct)
                .unwrap_or(f32::NAN),
            tensor_cores,
        });
    }
    // The first device of each id, as a search from the start would find it.
    let mut devices: HashMap<i64, &kinetoscope_trace::DeviceInfo> = HashMap::new();
    for d in &trace.meta.devices {
        devices.entry(d.id).or_insert(d);
    }
    per_gpu
        .into_iter()
        .map(|(id, mut kernels)| {
            // Each stream's kernels come in start order: a merge of runs.
            sort_runs_by_key(&mut kernels, |k| k.start);
            let device = devices.get(&id).copied();
            let name = device.map(|d| d.display_name());
            let vendor = device.map_or(trace.meta.gpu_vendor.unwrap_or_default(), |d| d.vendor);
            let w = window.filter(|(s, e)| e > s);
            GpuMetrics {
                id,
                name,
                vendor,
                kernels: kernels.len() as u64,
                utilization: w.map(|w| utilization(&kernels, w)),
                sm_efficiency: w.and_then(|w| sm_efficiency(&kernels, w)),
                achieved_occupancy: w
                    .and_then(|w| occupancy_pct(&kernels, w))
                    .map(|p| p / 100.0),
                tensor_core_ratio: w.and_then(|w| tensor_core_ratio(&kernels, w)),
            }
        })
        .collect()
}

/// `|∪ kernels ∩ window| / |window|`.
fn utilization(kernels: &[KernelRec], (ws, we): (i64, i64)) -> f64 {
    let busy = merge(kernels.iter().map(|k| (k.start, k.end)).collect());
    total(&intersect(&busy, &[(ws, we)])) as f64 / (we - ws) as f64
}

/// Σ over elementary time slices of `min(Σ active blocks per SM, 1) × |slice ∩ window|`,
/// divided by `|window|`; `None` when no kernel with `blocks per SM` overlaps the window.
/// Endpoints are visited as the plugin does (time order, starts before ends at equal
/// times, kernels in start order), so the floating-point sums match it.
fn sm_efficiency(kernels: &[KernelRec], (ws, we): (i64, i64)) -> Option<f64> {
    // The kernels with `blocks per SM`: their starts come in time order (the kernels
    // are sorted by start) and their ends are sorted by (time, kernel), so merging the
    // two, a start first at equal times, visits the endpoints in the plugin's order
    // without sorting them all.
    let with_blocks: Vec<(i64, i64, f64)> = kernels
        .iter()
        .filter_map(|k| k.blocks_per_sm().map(|b| (k.start, k.end, b)))
        .collect();
    let mut ends: Vec<(i64, u32)> = with_blocks
        .iter()
        .enumerate()
        .map(|(k, &(_, end, _))| (end, k as u32))
        .collect();
    // Kernels in start order end in long rising runs: merged (the keys are distinct).
    sort_runs_by_key(&mut ends, |&x| x);
    let mut starts = with_blocks
        .iter()
        .map(|&(start, _, b)| (start, b))
        .peekable();
    let mut ends = ends
        .into_iter()
        .map(|(end, k)| (end, with_blocks[k as usize].2))
        .peekable();
    let mut next_point = || match (starts.peek(), ends.peek()) {
        (Some(&(s, _)), Some(&(e, _))) if s <= e => starts.next().map(|(t, b)| (t, false, b)),
        (_, Some(_)) => ends.next().map(|(t, b)| (t, true, b)),
        (Some(_), None) => starts.next().map(|(t, b)| (t, false, b)),
        (None, None) => None,
    };
    let mut sum = 0.0;
    let mut any = false;
    let (first, _, first_value) = next_point()?;
    let (mut last_t, mut active) = (first, first_value);
    while let Some((t, is_end, b)) = next_point() {
        if t > last_t && active > 0.0 {
            let (s, e) = (last_t.max(ws), t.min(we));
            if s < e {
                sum += active.min(1.0) * (e - s) as f64;
                any = true;
            }
        }
        last_t = t;
        if is_end {
            active -= b;
        } else {
            active += b;
        }
    }
    any.then(|| sum / (we - ws) as f64)
}

/// Kernel-time-weighted mean of `est. achieved occupancy %` over the window, in percent;
/// `None` when no such kernel time falls in the window.
fn occupancy_pct(kernels: &[KernelRec], (ws, we): (i64, i64)) -> Option<f64> {
    let (mut weighted, mut time) = (0.0, 0i64);
    for k in kernels {
        let Some(o) = k.occupancy_pct() else { continue };
        let d = k.end.min(we) - k.start.max(ws);
        if d > 0 {
            weighted += o * d as f64;
            time += d;
        }
    }
    (time > 0).then(|| weighted / time as f64)
}

/// Tensor-core kernel time / all kernel time, both clipped to the window; `None` when no
/// kernel time falls in the window.
fn tensor_core_ratio(kernels: &[KernelRec], (ws, we): (i64, i64)) -> Option<f64> {
    let (mut tc, mut all) = (0i64, 0i64);
    for k in kernels {
        let d = k.end.min(we) - k.start.max(ws);
        if d > 0 {
            all += d;
            if k.tensor_cores {
                tc += d;
            }
        }
    }
    (all > 0).then(|| tc as f64 / all as f64)
}
