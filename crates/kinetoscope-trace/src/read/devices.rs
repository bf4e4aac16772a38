//! Whose GPUs ran a trace, each device's architecture name, and (ROCm) the device
//! numbers of the events matched to the `deviceProperties` ids.
//!
//! ROCm's Kineto writes a kernel's HSA agent index as its `device` and its track's `pid`.
//! HSA counts the CPU agents first (one per NUMA node), so on a two-socket host the first
//! GPU is agent 2, while `deviceProperties` numbers the GPUs from 0 as HIP does. The
//! reader renumbers the events so that every analysis sees `deviceProperties` ids:
//!
//! 1. nothing is renumbered when the events already name device 0 (agent 0 is always a
//!    CPU) or name more devices than `deviceProperties` lists;
//! 2. when the HIP `[memory]` records (which carry HIP device ordinals) name as many
//!    devices as the events, in `deviceProperties`, the agents map to them in order;
//! 3. one agent in a trace of a known rank with several devices is device
//!    `rank mod devices` (one process per GPU, as `torchrun` starts them);
//! 4. otherwise the agents map to the `deviceProperties` ids in order (lowest agent to
//!    lowest id).

use std::collections::BTreeSet;

use crate::model::{DeviceInfo, GpuAgent, GpuVendor, Trace, TrackKind};

/// `c10::DeviceType` of HIP devices in `[memory]` records.
const HIP_DEVICE_TYPE: i64 = 6;

/// Decide [`crate::model::TraceMeta::gpu_vendor`], each device's vendor and `arch`, and
/// renumber ROCm agents (see the module documentation). Runs after track kinds are
/// decided.
pub(crate) fn decide_devices(t: &mut Trace) {
    let vendor = t.meta.gpu_vendor.or_else(|| vendor_from_content(t));
    t.meta.gpu_vendor = vendor;
    for d in &mut t.meta.devices {
        d.vendor = vendor.unwrap_or_default();
        d.arch = DeviceInfo::arch_of(d.vendor, d.compute_major, d.compute_minor, &d.name);
    }
    if vendor == Some(GpuVendor::Amd) {
        let map = agent_map(t);
        apply(t, &map);
        t.meta.gpu_agents = map;
    }
}

/// HIP runtime calls that launch or move GPU work: a trace that names one ran on ROCm.
const HIP_CALLS: [&str; 8] = [
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipGraphLaunch",
    "hipMemcpyAsync",
    "hipMemcpyWithStream",
    "hipMemsetAsync",
];

/// The vendor when the header did not say: AMD names or HIP runtime calls; else NVIDIA
/// when there are devices or GPU activities; else none. Looks at the string and category
/// tables only, not at every event.
fn vendor_from_content(t: &Trace) -> Option<GpuVendor> {
    let amd_name = |n: &str| n.contains("AMD") || n.contains("Radeon") || n.contains("Instinct");
    if t.meta.devices.iter().any(|d| amd_name(&d.name))
        || HIP_CALLS.iter().any(|n| t.strings.find(n).is_some())
    {
        return Some(GpuVendor::Amd);
    }
    let gpu_events = t
        .categories
        .iter()
        .any(|(_, c)| c.kind.is_gpu() && c.count > 0);
    (gpu_events || !t.meta.devices.is_empty()).then_some(GpuVendor::Nvidia)
}

/// The agents the events name, matched to `deviceProperties` ids.
fn agent_map(t: &Trace) -> Vec<GpuAgent> {
    let ids: Vec<i64> = t
        .meta
        .devices
        .iter()
        .map(|d| d.id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut agents: BTreeSet<i64> = BTreeSet::new();
    for track in &t.tracks.list {
        if let TrackKind::GpuStream { device, .. } = track.kind {
            agents.insert(device);
        }
    }
    agents.extend(t.args.kernel.launches().iter().map(|k| k.device));
    agents.extend(t.args.transfer.iter().map(|k| k.device));
    agents.retain(|&a| a >= 0);
    if agents.is_empty() || agents.contains(&0) || agents.len() > ids.len() {
        return Vec::new();
    }
    let hip: BTreeSet<i64> = t
        .args
        .memory
        .iter()
        .filter(|m| m.device_type == HIP_DEVICE_TYPE && m.device_id >= 0)
        .map(|m| m.device_id)
        .collect();
    let targets: Vec<i64> = if hip.len() == agents.len() && hip.iter().all(|h| ids.contains(h)) {
        hip.into_iter().collect()
    } else if let (1, Some(rank)) = (agents.len(), t.meta.rank.filter(|_| ids.len() > 1)) {
        vec![ids[rank.value.rem_euclid(ids.len() as i64) as usize]]
    } else {
        ids
    };
    agents
        .into_iter()
        .zip(targets)
        .filter(|(agent, device)| agent != device)
        .map(|(agent, device)| GpuAgent { agent, device })
        .collect()
}

/// Renumber the devices of GPU tracks, kernels and transfers.
fn apply(t: &mut Trace, map: &[GpuAgent]) {
    if map.is_empty() {
        return;
    }
    let renumber = |d: &mut i64| {
        if let Some(m) = map.iter().find(|m| m.agent == *d) {
            *d = m.device;
        }
    };
    for track in &mut t.tracks.list {
        if let TrackKind::GpuStream { device, .. } = &mut track.kind {
            renumber(device);
        }
    }
    t.args.kernel.map_launches(|k| renumber(&mut k.device));
    for x in &mut t.args.transfer {
        renumber(&mut x.device);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names() {
        let amd = |maj, min, name| DeviceInfo::arch_of(GpuVendor::Amd, maj, min, name);
        assert_eq!(amd(9, 4, "AMD Instinct MI300X"), "gfx942");
        assert_eq!(amd(9, 4, ""), "gfx942");
        assert_eq!(amd(9, 5, "AMD Instinct MI355X"), "gfx950");
        assert_eq!(amd(9, 0, "AMD Instinct MI210"), "gfx90a");
        assert_eq!(amd(9, 0, "AMD Instinct MI100"), "gfx908");
        assert_eq!(amd(9, 0, "AMD Radeon Graphics"), "gfx9.0");
        assert_eq!(
            DeviceInfo::arch_of(GpuVendor::Nvidia, 9, 0, "H100"),
            "sm_90"
        );
        assert_eq!(DeviceInfo::arch_of(GpuVendor::Nvidia, 0, 0, ""), "");
    }
}
