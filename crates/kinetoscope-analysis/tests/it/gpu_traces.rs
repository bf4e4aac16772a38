//! Real GPU traces whose quirks the analyses must survive (`tests/fixtures/gpu_traces/`,
//! see `SOURCE.md` there).
//!
//! * `linear_kineto_3steps.json.gz` (param, RTX 2080 Ti): its operators' `External id`s
//!   and its runtime calls' are different numberings, so the ids link kernels to the
//!   wrong operators (`aten::view`, `aten::transpose`) or to none. The expected numbers
//!   were computed independently (Python: innermost `cpu_op`/`user_annotation` around
//!   each runtime call on its thread, kernel and memset time summed per name).
//! * TraceLens's ROCm traces (MI300X, MI210): kernels on the HSA agent index (2, 9, 1)
//!   while `deviceProperties` numbers the GPU 0; HIP `[memory]` records (device type 6);
//!   MFMA kernel names (hipBLASLt `Cijk_…_MI16x16x1_…`, MIOpen `igemm_…_gtcx2_…`, CK,
//!   `…_mfma16_…`, Triton `attn_fwd` / `_matmul_ogs_`).
//! * TraceLens's B200 trace (kernels only): MX block-scaled TensorRT-LLM GEMMs
//!   (`bmm_MxE4m3_…_sm100f`) on tensor cores, a MoE `finalize` kernel templated on
//!   `cutlass::bfloat16_t` not.
//!
//! Expected matrix-core times were summed in Python over the kernels a person classified
//! by name (the families above), not with kinetoscope's patterns.

use kinetoscope_analysis::kernels::{analyze_kernels, KernelGroupBy};
use kinetoscope_analysis::memory::{analyze_trace, MemoryOptions};
use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy};
use kinetoscope_analysis::overview::overview;
use kinetoscope_analysis::summary::summarize;
use kinetoscope_trace::{GpuAgent, GpuVendor, Trace};

use crate::common::{fixtures, read};

fn gpu_trace(name: &str) -> Trace {
    read(&fixtures().join("gpu_traces").join(name))
}

/// Operator ids and runtime ids numbered apart: device time goes to the operator each
/// kernel was launched inside, host self time is never negative, and the repair is
/// reported.
#[test]
fn launch_links_follow_time_when_ids_disagree() {
    let t = gpu_trace("linear_kineto_3steps.json.gz");
    let repaired = Note::RepairedLaunchLinks {
        relinked: 62,
        unlinked: 0,
        nested: 984,
    };
    assert!(summarize(&t).warnings.contains(&repaired));

    let ops = analyze_ops(&t, OpGroupBy::Name);
    assert!(ops.warnings.contains(&repaired));
    let device_self = |name: &str| {
        ops.rows
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name}"))
            .device_self_ns
    };
    let expected = [
        ("aten::mm", 14_019_000),
        ("aten::addmm", 8_607_000),
        ("aten::_foreach_add_", 1_525_000),
        ("aten::sum", 1_236_000),
        ("aten::add_", 1_051_000),
        ("aten::threshold_backward", 860_000),
    ];
    let top: Vec<(&str, i64)> = ops
        .rows
        .iter()
        .take(6)
        .map(|r| (r.name.as_str(), r.device_self_ns))
        .collect();
    assert_eq!(top, expected);
    // Views and shape queries launch nothing (the ids put kernels on them).
    for name in [
        "aten::view",
        "aten::result_type",
        "aten::transpose",
        "aten::as_strided",
    ] {
        assert_eq!(device_self(name), 0, "{name}");
    }
    // Every kernel and memset (28,320 µs) is in some operator's row.
    let all: i64 = ops.rows.iter().map(|r| r.device_self_ns).sum();
    assert_eq!(all, 28_320_000);
    assert!(ops.rows.iter().all(|r| r.host_self_ns >= 0));
    assert!(!ops
        .warnings
        .iter()
        .any(|w| matches!(w, Note::UnmatchedRuntimeCalls { .. })));

    // The kernel view names the same operators.
    let kernels = analyze_kernels(&t, KernelGroupBy::Properties);
    for row in kernels.rows.iter().filter(|r| r.name.contains("sgemm")) {
        let op = &row.properties.as_ref().unwrap().operator;
        assert!(
            op == "aten::mm" || op == "aten::addmm",
            "{} ← {op}",
            row.name
        );
    }
}

/// ROCm: the GPU of every kernel is the `deviceProperties` device, named, with its
/// architecture, whatever HSA agent the events wrote.
#[test]
fn rocm_agents_are_the_listed_devices() {
    // (file, agent in the events, name shown, arch)
    let cases = [
        (
            "sglang_decode_mi300x.json.gz",
            9,
            "AMD Instinct MI300X",
            "gfx942",
        ),
        (
            "vllm_decode_graph_mi300x.json.gz",
            2,
            "AMD gfx942",
            "gfx942",
        ),
        ("mi210_gpu_only.json.gz", 1, "AMD Instinct MI210", "gfx90a"),
        (
            "mi300x_qwen_gpu_and_memory.json.gz",
            2,
            "AMD Instinct MI300X VF",
            "gfx942",
        ),
    ];
    for (file, agent, name, arch) in cases {
        let t = gpu_trace(file);
        assert_eq!(t.meta.gpu_vendor, Some(GpuVendor::Amd), "{file}");
        assert_eq!(t.meta.gpu_agents, [GpuAgent { agent, device: 0 }], "{file}");
        assert_eq!(t.meta.devices[0].arch, arch, "{file}");
        let o = overview(&t);
        let gpus: Vec<(i64, Option<&str>, GpuVendor)> = o
            .gpus
            .iter()
            .map(|g| (g.id, g.name.as_deref(), g.vendor))
            .collect();
        assert_eq!(gpus, [(0, Some(name), GpuVendor::Amd)], "{file}");
    }
}

/// ROCm: HIP `[memory]` records are GPU memory, measured against the device's capacity.
#[test]
fn hip_memory_is_gpu_memory() {
    let t = gpu_trace("mi300x_qwen_gpu_and_memory.json.gz");
    let view = analyze_trace(&t, &MemoryOptions::default());
    let gpu = view.devices.iter().find(|d| d.device == "GPU0").unwrap();
    assert_eq!((gpu.device_type, gpu.device_id), (6, 0));
    assert_eq!(gpu.capacity_bytes, Some(205_571_227_648));
    assert_eq!(gpu.peak_allocated.as_ref().unwrap().bytes, 2_219_047_936);
    assert_eq!(gpu.peak_reserved.as_ref().unwrap().bytes, 2_533_359_616);
    let share = gpu.peak_reserved_share_of_capacity.unwrap();
    assert!((share - 2_533_359_616.0 / 205_571_227_648.0).abs() < 1e-12);
}

/// Matrix cores on AMD and Blackwell tensor cores, against sums of hand-classified
/// kernels (ns).
#[test]
fn matrix_and_tensor_core_time() {
    let cases = [
        (
            "sglang_decode_mi300x.json.gz",
            9_765_437,
            7_731_813,
            GpuVendor::Amd,
        ),
        (
            "vllm_decode_graph_mi300x.json.gz",
            10_674_517,
            8_265_155,
            GpuVendor::Amd,
        ),
        (
            "mi210_gpu_only.json.gz",
            5_343_422,
            1_710_492,
            GpuVendor::Amd,
        ),
        (
            "mi300x_qwen_gpu_and_memory.json.gz",
            43_062_042,
            22_583_105,
            GpuVendor::Amd,
        ),
        (
            "b200_eager_gpu_only.json.gz",
            10_862_916,
            6_485_420,
            GpuVendor::Nvidia,
        ),
    ];
    for (file, total, matrix, vendor) in cases {
        let k = analyze_kernels(&gpu_trace(file), KernelGroupBy::Name);
        assert_eq!(
            (k.total_kernel_ns, k.tensor_core_kernel_ns, k.vendor),
            (total, matrix, vendor),
            "{file}"
        );
    }
    // The MoE finalize kernel is templated on cutlass::bfloat16_t but runs no MMA.
    let k = analyze_kernels(
        &gpu_trace("b200_eager_gpu_only.json.gz"),
        KernelGroupBy::Name,
    );
    let finalize = k
        .rows
        .iter()
        .find(|r| r.name.contains("finalizeKernel"))
        .unwrap();
    assert!(!finalize.tensor_cores);
    let mx = k
        .rows
        .iter()
        .find(|r| r.name.starts_with("bmm_MxE4m3"))
        .unwrap();
    assert!(mx.tensor_cores);
}
