//! The project's own GPU recordings (`corpus/gpu-h200`, one H200, PyTorch 2.11): every
//! expected count comes from the recorder's `manifest.json`, which Python wrote on the GPU
//! machine by reading each file back with `json` and `pickle` — code independent of
//! kinetoscope's readers — never from numbers typed in here.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::kinetoscope;

fn recordings() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/gpu-h200")
}

/// The facts the recorder read back from `scenario/rel`.
fn manifest_facts(scenario: &str, rel: &str) -> Value {
    manifest_facts_in("manifest.json", scenario, rel)
}

/// The facts of `scenario/rel` in the manifest `manifest` (relative to the recordings).
fn manifest_facts_in(manifest: &str, scenario: &str, rel: &str) -> Value {
    let text = std::fs::read_to_string(recordings().join(manifest)).unwrap();
    let m: Value = serde_json::from_str(&text).unwrap();
    let facts = m["scenarios"][scenario]["files"][rel].clone();
    assert!(facts.is_object(), "no facts for {scenario}/{rel}");
    facts
}

fn json(args: &[&str]) -> Value {
    kinetoscope(&recordings(), args).json()
}

/// Every trace the recorder wrote: `(scenario, path relative to the scenario)`.
const TRACES: [(&str, &str); 11] = [
    (
        "transformer",
        "train/gpu0.1795783248659907630.pt.trace.json.gz",
    ),
    ("transformer", "memory_timeline/trace.json.gz"),
    ("cuda_graph", "trace.json.gz"),
    ("compile_default", "trace.json.gz"),
    ("compile_reduce_overhead", "trace.json.gz"),
    ("oom", "oom_trace.json.gz"),
    ("corpus", "clean/trace.json.gz"),
    ("corpus", "dataloader/trace.json.gz"),
    ("corpus", "leak/trace.json.gz"),
    ("corpus", "item_sync/trace.json.gz"),
    ("corpus", "unfused_optimizer/trace.json.gz"),
];

#[test]
fn every_trace_reads_with_the_recorders_event_counts_and_device() {
    for (scenario, rel) in TRACES {
        let facts = manifest_facts(scenario, rel);
        let path = format!("{scenario}/{rel}");
        let d = json(&["summary", &path, "--format", "json"]);
        let t = &d["traces"][0];
        for (cat, n) in facts["categories"].as_object().unwrap() {
            assert_eq!(&t["events_by_category"][cat], n, "{path}: {cat}");
        }
        assert_eq!(t["devices"][0]["name"], facts["devices"][0], "{path}");
        assert_eq!(t["devices"][0]["num_sms"], 132, "{path}");
        // No read defect: the only warnings are about what the profiler window held
        // (GPU work of the warm-up step that ran after it ended; no step markers).
        for w in t["warnings"].as_array().unwrap() {
            let kind = w["kind"].as_str().unwrap();
            assert!(
                ["gpu_without_launch", "no_step_markers"].contains(&kind),
                "{path}: {w}"
            );
        }
    }
}

#[test]
fn graph_replay_counts_the_graph_launches_the_recorder_counted() {
    // Every `cudaGraphLaunch` of these recordings is inside a profiler step (3 active
    // steps; 8 replays a step for `cuda_graph`, 2 for `reduce-overhead`).
    for scenario in ["cuda_graph", "compile_reduce_overhead"] {
        let facts = manifest_facts(scenario, "trace.json.gz");
        let path = format!("{scenario}/trace.json.gz");
        let d = json(&["report", &path, "--format", "json"]);
        let g = &d["traces"][0]["summary"]["graphs"];
        assert_eq!(g["launches"], facts["cudaGraphLaunch"], "{path}");
        let replayed = g["kernels"].as_u64().unwrap();
        assert!(replayed > 0 && replayed < facts["kernels"].as_u64().unwrap());
        assert!(g["kernel_share"].as_f64().unwrap() > 0.5, "{path}: {g}");
    }
}

#[test]
fn real_snapshot_state_and_history_equal_what_pickle_read() {
    // The default allocator, and the same run with `expandable_segments:True`.
    for (manifest, path, expandable) in [
        ("manifest.json", "transformer/snapshot/snapshot.pickle", 0),
        (
            "expandable_segments/manifest.json",
            "expandable_segments/transformer/snapshot/snapshot.pickle",
            2,
        ),
    ] {
        let facts = manifest_facts_in(manifest, "transformer", "snapshot/snapshot.pickle");
        let d = json(&["memory", path, "--format", "json"]);
        let dev = &d["snapshot"]["devices"][0];
        assert_eq!(dev["state"]["segments"], facts["segments"], "{path}");
        assert_eq!(dev["state"]["expandable_segments"], expandable, "{path}");
        assert_eq!(
            dev["state"]["reserved_bytes"], facts["reserved_bytes"],
            "{path}"
        );
        assert_eq!(
            dev["state"]["allocated_bytes"], facts["allocated_bytes"],
            "{path}"
        );
        assert_eq!(dev["history"]["entries"], facts["trace_entries"], "{path}");
        for (action, n) in facts["actions"].as_object().unwrap() {
            assert_eq!(&dev["history"]["actions"][action], n, "{path}: {action}");
        }
        // The replayed history ends at the snapshot's own active bytes.
        assert_eq!(
            dev["history"]["end_active_bytes"], dev["state"]["active_bytes"],
            "{path}"
        );
    }
}

#[test]
fn expandable_segments_oom_maps_segments_and_is_read() {
    let facts = manifest_facts_in(
        "expandable_segments/manifest.json",
        "oom",
        "oom_snapshot.pickle",
    );
    assert_eq!(facts["actions"]["segment_map"], 8);
    let d = json(&[
        "memory",
        "expandable_segments/oom/oom_snapshot.pickle",
        "--format",
        "json",
    ]);
    let dev = &d["snapshot"]["devices"][0];
    assert_eq!(dev["history"]["actions"]["segment_map"], 8);
    assert_eq!(dev["ooms_total"], 1);
    let o = &dev["ooms"][0];
    assert_eq!(o["requested_bytes"], 256u64 << 20);
    assert_eq!(o["device_free_covers_request"], true);
    // Mapped memory counts as reserved: 8 blocks of 256 MiB are live.
    assert!(o["reserved_bytes"].as_u64().unwrap() >= 8 * (256u64 << 20));
}

#[test]
fn single_rank_ddp_over_nccl_has_its_collectives_on_the_host_only() {
    // With one rank NCCL launches no kernel: the 12 bucket all-reduces per profile are
    // host spans only, and the view says there is no communication kernel.
    let path = "ddp_nccl/rank0.trace.json.gz";
    let raw = std::fs::read(recordings().join(path)).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut text).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let allreduces = events
        .iter()
        .filter(|e| e["name"] == "nccl:all_reduce")
        .count() as u64;
    let nccl_kernels = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["name"].as_str().unwrap().contains("nccl"))
        .count();
    assert_eq!(nccl_kernels, 0);
    let s = json(&["summary", path, "--format", "json"]);
    let t = &s["traces"][0];
    assert_eq!(t["rank"], doc["distributedInfo"]["rank"]);
    assert_eq!(t["world_size"], doc["distributedInfo"]["world_size"]);
    assert_eq!(t["backend"], "nccl");
    let c = json(&["comm", path, "--format", "json"]);
    let coll = &c["traces"][0]["collectives"][0];
    assert_eq!(coll["collective"], "allreduce");
    assert_eq!(coll["count"], allreduces);
    assert_eq!(coll["on_gpu"], false);
}

#[test]
fn autograd_thread_allocations_are_named_by_operator_and_node() {
    // Backward allocations are recorded on the autograd engine's thread, whose stacks
    // hold C++ frames only: the site is the operator and the node, never the
    // allocator's own `malloc` frame.
    let d = json(&[
        "memory",
        "transformer/snapshot/snapshot.pickle",
        "--format",
        "json",
        "--top",
        "100",
    ]);
    let sites = d["snapshot"]["devices"][0]["top_sites"]["sites"]
        .as_array()
        .unwrap();
    let native: Vec<&str> = sites
        .iter()
        .filter(|s| s["user_frame"].is_null() && s["frames"].as_array().unwrap().len() > 1)
        .map(|s| {
            s["op_site"]
                .as_str()
                .expect("a C++-only stack has an op_site")
        })
        .collect();
    assert!(!native.is_empty());
    assert!(native.iter().all(|s| s.starts_with("aten::")), "{native:?}");
    assert!(native.iter().any(|s| s.contains("Backward0")), "{native:?}");
    assert!(sites
        .iter()
        .all(|s| s["user_frame"].is_null() || s["op_site"].is_null()));
    let table = kinetoscope(
        &recordings(),
        &["memory", "transformer/snapshot/snapshot.pickle"],
    );
    assert!(
        !table.stdout.contains("│ CUDACachingAllocator"),
        "{}",
        table.stdout
    );
}

#[test]
fn real_oom_is_read_as_a_memory_fraction_cap() {
    let facts = manifest_facts("oom", "oom_snapshot.pickle");
    assert_eq!(facts["actions"]["oom"], 1);
    let d = json(&["memory", "oom/oom_snapshot.pickle", "--format", "json"]);
    let dev = &d["snapshot"]["devices"][0];
    assert_eq!(dev["ooms_total"], 1);
    let o = &dev["ooms"][0];
    // The recorder asked for 256 MiB blocks (manifest params) under a 2 GiB cap.
    assert_eq!(o["requested_bytes"], 256u64 << 20);
    assert_eq!(o["device_free_covers_request"], true);
    assert_eq!(o["state_is_at_oom"], true);
    assert_eq!(o["user_frame"], "record_gpu.py:557:scenario_oom");
    let trace = manifest_facts("oom", "oom_trace.json.gz");
    assert_eq!(trace["out_of_memory_events"], 1);
}

#[test]
fn both_memory_timeline_files_give_the_rows_and_one_peak() {
    let mut peaks = Vec::new();
    for f in ["memory_timeline.json", "memory_timeline.raw.json.gz"] {
        let facts = manifest_facts("transformer", &format!("memory_timeline/{f}"));
        let d = json(&[
            "memory",
            &format!("transformer/memory_timeline/{f}"),
            "--format",
            "json",
        ]);
        assert_eq!(d["rows"], facts["rows"], "{f}");
        peaks.push(d["series"]["peak"]["total_bytes"].clone());
    }
    assert_eq!(peaks[0], peaks[1]);
    assert!(peaks[0].as_u64().unwrap() > 0);
}

#[test]
fn the_html_memory_timeline_is_a_picture_and_says_so() {
    let r = kinetoscope(
        &recordings(),
        &["memory", "transformer/memory_timeline/memory_timeline.html"],
    );
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("is a picture"), "{}", r.stderr);
    assert!(r.stderr.contains("export_memory_timeline"), "{}", r.stderr);
    let run = kinetoscope(&recordings(), &["memory", "run_folder/2026-11-27_124053"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.matches("MemoryTimelineHtml").count(), 4);
    assert_eq!(run.stdout.matches("no numbers to read").count(), 4);
}

#[test]
fn fp32_xmma_gemms_on_fused_multiply_adds_are_not_tensor_core_kernels() {
    // torch.compile's MLP trains in FP32 without TF32: cuBLAS runs its GEMMs as
    // `sm80_xmma_gemm_f32f32_…_ffma_…`, on CUDA cores.
    let d = json(&[
        "kernels",
        "compile_default/trace.json.gz",
        "--format",
        "json",
    ]);
    let t = &d["traces"][0];
    let rows = t["rows"].as_array().unwrap();
    let ffma: Vec<&Value> = rows
        .iter()
        .filter(|r| r["name"].as_str().unwrap().contains("_ffma"))
        .collect();
    assert!(!ffma.is_empty());
    assert!(ffma.iter().all(|r| r["tensor_cores"] == false), "{ffma:?}");
    let ffma_ns: i64 = ffma.iter().map(|r| r["total_ns"].as_i64().unwrap()).sum();
    assert!(ffma_ns * 2 > t["total_kernel_ns"].as_i64().unwrap());
    let report = json(&[
        "report",
        "compile_default/trace.json.gz",
        "--format",
        "json",
    ]);
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"GP003"), "{ids:?}");
    // The bf16 transformer's cuBLAS GEMMs (nvjet) do run on tensor cores.
    let bf16 = json(&["kernels", "transformer/train", "--format", "json"]);
    let nvjet: Vec<&Value> = bf16["traces"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"].as_str().unwrap().starts_with("nvjet_"))
        .collect();
    assert!(!nvjet.is_empty());
    assert!(nvjet.iter().all(|r| r["tensor_cores"] == true));
}

/// The fixes of a report's findings, by rule id.
fn fixes(path: &str) -> Vec<(String, String)> {
    json(&["report", path, "--format", "json"])["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_owned(),
                f["fix"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn advice_does_not_ask_for_what_the_trace_already_does() {
    // Compiled by torch.compile (Triton kernels), with a fused AdamW.
    let compiled = fixes("compile_default/trace.json.gz");
    for (id, fix) in &compiled {
        if ["GP001", "GP002", "GP005"].contains(&id.as_str()) {
            assert!(
                !fix.contains("fuse small kernels (torch.compile)"),
                "{id}: {fix}"
            );
            assert!(!fix.contains("Cut launches: torch.compile"), "{id}: {fix}");
            assert!(fix.contains("reduce-overhead"), "{id}: {fix}");
        }
    }
    assert!(compiled.iter().any(|(id, _)| id == "GP002"));
    // Eager, fused AdamW: LaunchBound does not suggest a fused optimizer.
    let eager = fixes("transformer/train");
    let launch = eager.iter().find(|(id, _)| id == "GP002").unwrap();
    assert!(launch.1.contains("torch.compile"), "{}", launch.1);
    assert!(!launch.1.contains("fused optimizers"), "{}", launch.1);
    // The for-loop AdamW of the corpus does get it.
    let unfused = fixes("corpus/unfused_optimizer/trace.json.gz");
    let launch = unfused.iter().find(|(id, _)| id == "GP002").unwrap();
    assert!(
        launch.1.contains("foreach/fused optimizers"),
        "{}",
        launch.1
    );
}

#[test]
fn planted_problems_are_found_on_the_gpu_too() {
    for (trace, rule) in [
        ("corpus/dataloader/trace.json.gz", "IN001"),
        ("corpus/item_sync/trace.json.gz", "SY001"),
        ("corpus/unfused_optimizer/trace.json.gz", "OP001"),
        ("corpus/leak/trace.json.gz", "ME001"),
    ] {
        let ids: Vec<String> = fixes(trace).into_iter().map(|(id, _)| id).collect();
        assert!(ids.iter().any(|i| i == rule), "{trace}: {ids:?}");
    }
    let clean: Vec<String> = fixes("corpus/clean/trace.json.gz")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    for rule in ["IN001", "SY001", "OP001", "ME001"] {
        assert!(!clean.iter().any(|i| i == rule), "clean: {clean:?}");
    }
}

#[test]
fn a_planted_cause_of_the_host_wait_is_ranked_first() {
    // The GPU waits for the host almost all of each step; the stalled input pipeline and
    // the for-loop optimizer are what cause it, and what to fix.
    for (trace, rule) in [
        ("corpus/dataloader/trace.json.gz", "IN001"),
        ("corpus/unfused_optimizer/trace.json.gz", "OP001"),
    ] {
        let ids: Vec<String> = fixes(trace).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids[0], rule, "{trace}: {ids:?}");
        assert_eq!(ids[1], "GP001", "{trace}: {ids:?}");
    }
}
