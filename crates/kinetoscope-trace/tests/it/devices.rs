//! The GPU vendor, architecture names and (ROCm) the renumbering of HSA agents to
//! `deviceProperties` ids, as the reader decides them.

use std::path::Path;

use kinetoscope_trace::read::{read_trace, read_trace_bytes, ReadOptions};
use kinetoscope_trace::{GpuAgent, GpuVendor, Trace, TrackKind};

use crate::common::fixture;

/// A `deviceProperties` entry.
fn device(id: u32, name: &str, major: u32, minor: u32) -> String {
    format!(
        r#"{{"id": {id}, "name": "{name}", "totalGlobalMem": 1000, "computeMajor": {major}, "computeMinor": {minor}, "numSms": 304}}"#
    )
}

/// A kernel on `device` (its `device` arg and its track's pid).
fn kernel(device: u32, ts: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": {device}, "tid": 1, "ts": {ts}, "dur": 5, "args": {{"device": {device}, "stream": 1, "correlation": {ts}}}}}"#
    )
}

fn read(top: &str, devices: &[String], events: &[String]) -> Trace {
    let json = format!(
        "{{{top}\"deviceProperties\": [{}], \"traceEvents\": [\n{}\n]}}",
        devices.join(", "),
        events.join(",\n")
    );
    read_trace_bytes(
        Path::new("inline.json"),
        json.as_bytes(),
        &ReadOptions::default(),
    )
    .unwrap()
}

/// The devices of the kernel args and of the GPU tracks.
fn kernel_devices(t: &Trace) -> Vec<i64> {
    let mut v: Vec<i64> = t.args.kernel.iter().map(|k| k.launch.device).collect();
    for track in &t.tracks.list {
        if let TrackKind::GpuStream { device, .. } = track.kind {
            v.push(device);
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

const ROCM: &str = r#""roctracer_version": 4.1, "#;

/// HTA's MI250 trace: kernels on agent 2, four devices listed from 0, no rank.
#[test]
fn mi250_agent_2_is_device_0() {
    let t = read_trace(
        &fixture("mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(t.meta.gpu_vendor, Some(GpuVendor::Amd));
    assert_eq!(
        t.meta.gpu_agents,
        [GpuAgent {
            agent: 2,
            device: 0
        }]
    );
    assert_eq!(kernel_devices(&t), [0]);
    assert_eq!(t.meta.devices[0].vendor, GpuVendor::Amd);
    // HIP says 9.0 for gfx908 and gfx90a alike, and the name does not say which.
    assert_eq!(t.meta.devices[0].arch, "gfx9.0");
}

#[test]
fn agents_map_in_order_or_by_rank() {
    let mi300 = |id| device(id, "AMD Instinct MI300X", 9, 4);
    // Two processes' worth of agents in one trace: in order.
    let t = read(ROCM, &[mi300(0), mi300(1)], &[kernel(3, 10), kernel(2, 20)]);
    assert_eq!(
        t.meta.gpu_agents,
        [
            GpuAgent {
                agent: 2,
                device: 0
            },
            GpuAgent {
                agent: 3,
                device: 1
            }
        ]
    );
    assert_eq!(kernel_devices(&t), [0, 1]);
    // One agent, rank 5, four devices listed: device 5 mod 4 = 1 (one process per GPU).
    let rank = r#""distributedInfo": {"rank": 5, "world_size": 8}, "#;
    let devices = [mi300(0), mi300(1), mi300(2), mi300(3)];
    let t = read(&format!("{ROCM}{rank}"), &devices, &[kernel(3, 10)]);
    assert_eq!(
        t.meta.gpu_agents,
        [GpuAgent {
            agent: 3,
            device: 1
        }]
    );
}

#[test]
fn hip_memory_ids_name_the_devices() {
    let mi300 = |id| device(id, "AMD Instinct MI300X", 9, 4);
    let memory = r#"{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 9, "tid": 9, "ts": 1, "args": {"Device Type": 6, "Device Id": 2, "Addr": 1, "Bytes": 8, "Total Allocated": 8, "Total Reserved": 8}}"#;
    let t = read(
        ROCM,
        &[mi300(0), mi300(1), mi300(2), mi300(3)],
        &[kernel(4, 10), memory.to_owned()],
    );
    assert_eq!(
        t.meta.gpu_agents,
        [GpuAgent {
            agent: 4,
            device: 2
        }]
    );
}

/// Device numbers left as written: CUDA traces, ROCm traces that already write device 0
/// (agent 0 is always a CPU), and more devices in the events than listed.
#[test]
fn nothing_to_renumber() {
    let h100 = device(0, "NVIDIA H100 80GB HBM3", 9, 0);
    let t = read("", &[h100], &[kernel(2, 10)]);
    assert_eq!(t.meta.gpu_vendor, Some(GpuVendor::Nvidia));
    assert_eq!(t.meta.devices[0].arch, "sm_90");
    assert!(t.meta.gpu_agents.is_empty());
    assert_eq!(kernel_devices(&t), [2]);

    let mi300 = |id| device(id, "AMD Instinct MI300X", 9, 4);
    let t = read(ROCM, &[mi300(0), mi300(1)], &[kernel(0, 10), kernel(1, 20)]);
    assert!(t.meta.gpu_agents.is_empty());
    let t = read(ROCM, &[mi300(0)], &[kernel(2, 10), kernel(3, 20)]);
    assert!(t.meta.gpu_agents.is_empty());

    // No header keys: an AMD name or hip* runtime calls say ROCm.
    let t = read("", &[device(0, "", 9, 4)], &[kernel(2, 10), r#"{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": 9, "ts": 9, "dur": 1, "args": {"correlation": 10}}"#.to_owned()]);
    assert_eq!(t.meta.gpu_vendor, Some(GpuVendor::Amd));
    assert_eq!(t.meta.devices[0].display_name(), "AMD gfx942");
    assert_eq!(kernel_devices(&t), [0]);

    // A CPU-only trace has no vendor.
    let t = read("", &[], &[]);
    assert_eq!(t.meta.gpu_vendor, None);
}
