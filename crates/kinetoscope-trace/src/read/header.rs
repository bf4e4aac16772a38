//! Top-level keys of a trace object other than `traceEvents`: read with `serde_json`
//! from the spans the lexer found, leniently (a key of the wrong type is ignored).

use serde_json::Value;

use crate::model::{DeviceInfo, DistributedInfo, GpuVendor, TraceMeta};

/// The top-level keys whose values the reader keeps (each up to the element cap); the
/// values of all others are streamed past.
pub(crate) const KNOWN_KEYS: &[&str] = &[
    "schemaVersion",
    "baseTimeNanoseconds",
    "displayTimeUnit",
    "trace_id",
    "host_name",
    "traceName",
    "deviceProperties",
    "computeProperties",
    "distributedInfo",
    "roctracer_version",
    "hip_runtime_version",
    "hip_driver_version",
    "record_shapes",
    "profile_memory",
    "with_stack",
    "with_modules",
    "with_flops",
];

/// Apply one top-level key's raw JSON value to the metadata (one of [`KNOWN_KEYS`]).
pub(crate) fn apply_key(meta: &mut TraceMeta, key: &str, raw: &[u8], before_events: bool) {
    let Ok(v) = serde_json::from_slice::<Value>(raw) else {
        return;
    };
    match key {
        "schemaVersion" => meta.schema_version = v.as_i64(),
        "baseTimeNanoseconds" => {
            meta.base_time_ns = v
                .as_i64()
                .or_else(|| v.as_u64().map(|u| u as i64))
                .map(|b| b.clamp(-(1 << 61), 1 << 61));
            meta.features.base_time_before_events = before_events;
        }
        "displayTimeUnit" => meta.display_time_unit = v.as_str().map(str::to_owned),
        "trace_id" => meta.trace_id = v.as_str().map(str::to_owned),
        "host_name" => meta.host_name = v.as_str().map(str::to_owned),
        "traceName" => meta.trace_name = v.as_str().map(str::to_owned),
        "deviceProperties" | "computeProperties" => {
            if let Some(list) = v.as_array() {
                meta.devices = list.iter().enumerate().map(|(i, d)| device(i, d)).collect();
            }
        }
        "distributedInfo" => {
            let g = |k: &str| v.get(k).and_then(Value::as_i64);
            let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            meta.distributed = Some(DistributedInfo {
                backend: s("backend"),
                rank: g("rank"),
                world_size: g("world_size"),
                pg_count: g("pg_count"),
                nccl_version: s("nccl_version"),
            });
        }
        "roctracer_version" | "hip_runtime_version" | "hip_driver_version" => {
            meta.gpu_vendor = Some(GpuVendor::Amd);
        }
        "record_shapes" | "profile_memory" | "with_stack" | "with_modules" | "with_flops"
            if v.as_i64().unwrap_or(0) != 0 || v.as_bool() == Some(true) =>
        {
            meta.profiler_options.push(key.to_owned());
        }
        _ => {}
    }
}

fn device(index: usize, d: &Value) -> DeviceInfo {
    let g = |k: &str| d.get(k).and_then(Value::as_i64);
    let u = |k: &str| d.get(k).and_then(Value::as_u64).unwrap_or(0);
    DeviceInfo {
        id: g("id").unwrap_or(index as i64),
        name: d
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        total_memory_bytes: u("totalGlobalMem"),
        num_sms: d
            .get("numSms")
            .or_else(|| d.get("multiProcessorCount"))
            .or_else(|| d.get("maxComputeUnits"))
            .and_then(Value::as_u64)
            .unwrap_or(0),
        compute_major: g("computeMajor").or_else(|| g("major")).unwrap_or(0),
        compute_minor: g("computeMinor").or_else(|| g("minor")).unwrap_or(0),
        max_threads_per_sm: u("maxThreadsPerMultiprocessor"),
        // Decided when the whole trace has been read (`read::devices`).
        vendor: GpuVendor::default(),
        arch: String::new(),
    }
}
