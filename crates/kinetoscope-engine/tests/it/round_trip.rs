//! Results are data: every view's document, computed on committed fixtures, is written
//! as JSON, read back into its type and written again, and the two texts must be
//! identical (what a saved `--format json` baseline and a `diff` rely on).

use std::path::{Path, PathBuf};

use kinetoscope_advisor::Config;
use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::launches::LaunchOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::kernels::{KernelGroupBy, KernelSortKey};
use kinetoscope_analysis::nvtx::NvtxOptions;
use kinetoscope_analysis::ops::{OpGroupBy, OpSortKey};
use kinetoscope_analysis::perf::PerfOptions;
use kinetoscope_analysis::sequences::SequenceOptions;
use kinetoscope_engine::{
    from_json, to_json, CommOptions, Engine, IdleOptions, KernelsOptions, LaunchesOptions,
    MemoryOptions, MemoryResult, OpsOptions, RanksOptions, Source, TablesOptions,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::common::{fixture, fixtures_dir, lenient};

/// Write `doc`, read it back as `D`, write it again: the texts must be equal. Returns
/// the document read back.
fn round_trip<D: Serialize + DeserializeOwned>(what: &str, doc: &D) -> D {
    let first = to_json(doc).unwrap();
    let back: D = from_json(&first).unwrap_or_else(|e| panic!("{what}: read back: {e}"));
    let second = to_json(&back).unwrap();
    assert!(
        first == second,
        "{what}: the JSON read back writes differently\n{}",
        first_difference(&first, &second)
    );
    back
}

/// The first differing line of two texts, with its number.
fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map(|(i, (x, y))| format!("line {}:\n  - {x}\n  + {y}", i + 1))
        .unwrap_or_else(|| format!("lengths {} and {}", a.len(), b.len()))
}

fn engine() -> Engine {
    Engine::new(lenient(2))
}

fn path(p: PathBuf) -> Source {
    Source::Path(p)
}

/// Committed traces covering every era, a GPU training trace, a CPU-only one, a rank
/// folder and the planted-problem corpus.
fn traces() -> Vec<PathBuf> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/traces");
    vec![
        fixture("torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz"),
        fixture("torch-1.13.1_tb_w0.1795238235109.pt.trace.json.gz"),
        fixture("step_based_trace_2543932.json.gz"),
        fixture("rank_non_gpu.json.gz"),
        fixture("backward_thread.json"),
        fixtures_dir().join("ranks"),
        corpus.join("leak/trace.json.gz"),
        corpus.join("straggler"),
    ]
}

fn name(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn summary_overview_and_critical_path_round_trip() {
    let e = engine();
    for p in traces() {
        let n = name(&p);
        round_trip(
            &format!("summary {n}"),
            &e.summary(&path(p.clone())).unwrap(),
        );
        round_trip(
            &format!("overview {n}"),
            &e.overview(&path(p.clone())).unwrap(),
        );
        let cp = e
            .critical_path(&path(p.clone()), CriticalPathOptions { step: None, top: 0 })
            .unwrap();
        round_trip(&format!("critical-path {n}"), &cp);
    }
}

#[test]
fn ops_and_kernels_round_trip_in_every_grouping() {
    let e = engine();
    for p in traces() {
        for group_by in [
            OpGroupBy::Name,
            OpGroupBy::Shape,
            OpGroupBy::Stack,
            OpGroupBy::Module,
        ] {
            let opts = OpsOptions {
                group_by,
                sort: OpSortKey::DeviceSelf,
                top: 0,
            };
            let doc = e.ops(&path(p.clone()), &opts).unwrap();
            round_trip(&format!("ops {group_by:?} {}", name(&p)), &doc);
        }
        let perf = e.perf(&path(p.clone()), &PerfOptions::default()).unwrap();
        round_trip(&format!("perf {}", name(&p)), &perf);
        for group_by in [KernelGroupBy::Name, KernelGroupBy::Properties] {
            let opts = KernelsOptions {
                group_by,
                sort: KernelSortKey::Total,
                top: 0,
            };
            let doc = e.kernels(&path(p.clone()), &opts).unwrap();
            let back = round_trip(&format!("kernels {group_by:?} {}", name(&p)), &doc);
            // The flattened properties come back with their rows.
            for row in back.traces.iter().flat_map(|t| &t.rows) {
                assert_eq!(
                    row.properties.is_some(),
                    group_by == KernelGroupBy::Properties
                );
            }
        }
    }
}

#[test]
fn comm_sequences_and_gpu_time_round_trip_in_both_modes() {
    let e = engine();
    for p in traces() {
        let n = name(&p);
        for compat in [Compat::Kinetoscope, Compat::Hta] {
            let hta_compat = compat == Compat::Hta;
            let comm = e
                .comm(&path(p.clone()), CommOptions { hta_compat })
                .unwrap();
            round_trip(&format!("comm {compat:?} {n}"), &comm);
            let doc = e.temporal(&path(p.clone()), compat).unwrap();
            round_trip(&format!("temporal {compat:?} {n}"), &doc);
            let idle = IdleOptions {
                compat,
                kernel_wait_ns: 50_000,
            };
            round_trip(
                &format!("idle {compat:?} {n}"),
                &e.idle(&path(p.clone()), idle).unwrap(),
            );
            let launches = LaunchesOptions {
                compat,
                launch: LaunchOptions {
                    all: true,
                    ..LaunchOptions::default()
                },
            };
            round_trip(
                &format!("launches {compat:?} {n}"),
                &e.launches(&path(p.clone()), launches).unwrap(),
            );
            round_trip(
                &format!("kernel classes {compat:?} {n}"),
                &e.kernel_classes(&path(p.clone()), compat, 5).unwrap(),
            );
        }
        let steps = e
            .sequences(&path(p.clone()), &SequenceOptions::default())
            .unwrap();
        round_trip(&format!("sequences (steps) {n}"), &steps);
        let op = SequenceOptions {
            op: Some("aten::".to_owned()),
            ..SequenceOptions::default()
        };
        let ops = e.sequences(&path(p.clone()), &op).unwrap();
        round_trip(&format!("sequences (operator) {n}"), &ops);
    }
}

/// Nsight Systems exports: the views whose documents carry what only an export has
/// (the summary's `nsys`, the NVTX view, the nsys notes), one file per case: a single
/// process, two processes as ranks, a failed capture.
#[test]
fn nsys_documents_round_trip() {
    let e = engine();
    for f in [
        "nsys/cs336-a100-2p7b-nvtx/result_2_7B_nvtx.sqlite",
        "nsys/fastvideo-h100x2-infer-emit-nvtx/h100_2gpu_1s.sqlite",
        "nsys/cs336-failed-cuda-nonutf8/result.sqlite",
    ] {
        let p = fixture(f);
        let summary = round_trip(
            &format!("summary {f}"),
            &e.summary(&path(p.clone())).unwrap(),
        );
        assert!(summary.traces.iter().all(|t| t.nsys.is_some()), "{f}");
        round_trip(
            &format!("nvtx {f}"),
            &e.nvtx(&path(p.clone()), &NvtxOptions::default()).unwrap(),
        );
        round_trip(
            &format!("report {f}"),
            &e.report(&path(p), &Config::default()).unwrap(),
        );
    }
}

#[test]
fn report_round_trips_with_findings_and_subjects() {
    let e = engine();
    let config = Config::default();
    let mut findings = 0;
    for p in traces() {
        let doc = e.report(&path(p.clone()), &config).unwrap();
        let back = round_trip(&format!("report {}", name(&p)), &doc);
        findings += back.findings.len();
        for f in &back.findings {
            assert!(f.subject.starts_with(&format!("{}:", f.id)), "{f:?}");
        }
    }
    assert!(findings > 0, "no fixture produced a finding");
}

#[test]
fn tables_and_their_report_round_trip() {
    let dir = fixtures_dir().join("key_averages");
    let opts = TablesOptions {
        sort: Some("Self CPU".into()),
        top: Some(5),
    };
    let doc = engine().tables(&[path(dir.clone())], &opts).unwrap();
    let back = round_trip("tables", &doc);
    assert_eq!(back.tables.len(), 11);
    assert!(back.tables.iter().any(|t| t.comparison.is_some()));
    let report = engine().report(&path(dir), &Config::default()).unwrap();
    assert_eq!(round_trip("report of tables", &report).tables.len(), 11);
}

#[test]
fn ranks_round_trips() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/traces");
    for dir in [fixtures_dir().join("ranks"), corpus.join("straggler")] {
        let doc = engine()
            .ranks(&path(dir.clone()), RanksOptions::default())
            .unwrap();
        round_trip(&format!("ranks {}", name(&dir)), &doc);
    }
}

#[test]
fn check_round_trips() {
    let opts = kinetoscope_analysis::integrity::CheckOptions { examples: 5 };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/traces");
    for p in traces().into_iter().chain([corpus.join("straggler")]) {
        let doc = engine().check(&path(p.clone()), &opts).unwrap();
        round_trip(&format!("check {}", name(&p)), &doc);
    }
}

fn memory_options() -> MemoryOptions {
    MemoryOptions {
        points: 60,
        top: 0,
        ..MemoryOptions::default()
    }
}

/// The memory document of `p`, round-tripped, read back as the same kind.
fn memory_round_trip(p: PathBuf) -> MemoryResult {
    let doc = engine()
        .memory(&path(p.clone()), &memory_options())
        .unwrap();
    let back = round_trip(&format!("memory {}", name(&p)), &doc);
    assert_eq!(
        std::mem::discriminant(&doc),
        std::mem::discriminant(&back),
        "memory {}: read back as another kind of document",
        name(&p)
    );
    back
}

#[test]
fn memory_of_traces_snapshots_and_timelines_round_trips() {
    let timelines = fixtures_dir().join("memory_timelines");
    for p in traces() {
        assert!(matches!(memory_round_trip(p), MemoryResult::Traces(_)));
    }
    // A trace with its memory timeline beside it: the comparison is attached.
    let back = memory_round_trip(timelines.join("torch-2.2.2/plain.pt.trace.json.gz"));
    let MemoryResult::Traces(doc) = back else {
        panic!("not a trace document")
    };
    assert!(doc.traces[0].timeline_comparison.is_some());
    for p in [
        timelines.join("torch-2.2.2/mem.raw.json.gz"),
        timelines.join("torch-2.2.2_mem_coalesced_memory_timeline.json"),
    ] {
        assert!(matches!(memory_round_trip(p), MemoryResult::Timeline(_)));
    }
    let mut snapshots: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join("snapshots"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pickle"))
        .collect();
    snapshots.sort();
    assert!(snapshots.len() >= 4);
    for p in snapshots {
        assert!(matches!(memory_round_trip(p), MemoryResult::Snapshot(_)));
    }
}

#[test]
fn run_folder_documents_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let timelines = fixtures_dir().join("memory_timelines");
    let copies = [
        (
            timelines.join("torch-2.2.2/plain.pt.trace.json.gz"),
            "stage1-training_trace.json.gz",
        ),
        (
            timelines.join("torch-2.2.2_mem_coalesced_memory_timeline.json"),
            "stage1-training_memory_timeline.json",
        ),
        (
            fixtures_dir().join("snapshots/v2_6_full.pickle"),
            "stage1-training_mem.pickle",
        ),
        (fixture("backward_thread.json"), "stage2-eval_trace.json"),
    ];
    for (from, to) in copies {
        std::fs::copy(&from, dir.join(to)).unwrap();
    }
    let e = engine();
    let summary = round_trip(
        "summary (run folder)",
        &e.summary(&path(dir.into())).unwrap(),
    );
    assert!(!summary.phase_memory.is_empty());
    let MemoryResult::Traces(doc) = memory_round_trip(dir.into()) else {
        panic!("not a trace document")
    };
    assert!(!doc.phase_memory.is_empty());
    assert!(doc.traces[0].timeline_comparison.is_some());
    let report = round_trip(
        "report (run folder)",
        &e.report(&path(dir.into()), &Config::default()).unwrap(),
    );
    let run = report.run.expect("a run view");
    let phases: Vec<(u32, &str, bool)> = run
        .phases
        .iter()
        .map(|p| (p.stage, p.phase.as_str(), p.top_ops.is_some()))
        .collect();
    assert_eq!(phases, [(1, "training", true), (2, "eval", true)]);
}
