//! `export_parquet` and `ranks` from an export: the ranks document from the Parquet
//! tables equals the one from the traces, and every table's rows equal the engine's own
//! documents, on PARAM's real 8-rank DLRM job (8× V100, NCCL).

use std::path::{Path, PathBuf};

use kinetoscope_engine::{
    to_json, CommOptions, Engine, EngineError, InputLayout, OpsOptions, RanksOptions,
    ReportDocument, Source,
};
use kinetoscope_parquet::read::{read_table, table_file};
use kinetoscope_parquet::{Manifest, Table};

use crate::common::{lenient, require_shared};

/// PARAM's 8-rank DLRM job, gzipped, in the analysis crate's fixtures.
fn param_ranks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto")
}

/// The ranks document's JSON with its `input` left out.
fn ranks_json(engine: &Engine, src: &Path) -> serde_json::Value {
    let doc = engine
        .ranks(&Source::Path(src.to_owned()), RanksOptions::default())
        .expect("ranks");
    let mut v: serde_json::Value = serde_json::from_str(&to_json(&doc).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("input");
    v
}

/// Export `traces` and check that `ranks` gives the same document from the export.
fn round_trip(traces: &Path) -> (tempfile::TempDir, Manifest) {
    let engine = Engine::new(lenient(4));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let doc = engine
        .export_parquet(&Source::Path(traces.to_owned()), &out)
        .expect("export");
    assert_eq!(doc.manifest, Manifest::read(&out).unwrap());
    let from_traces = ranks_json(&engine, traces);
    let from_parquet = ranks_json(&engine, &out);
    assert!(
        from_traces["report"]["ranks"].as_array().unwrap().len() >= 2,
        "a multi-rank job"
    );
    assert_eq!(from_parquet, from_traces);
    (tmp, doc.manifest)
}

#[test]
fn ranks_from_parquet_equal_ranks_from_traces_and_rows_equal_the_views() {
    let traces = param_ranks();
    let (tmp, manifest) = round_trip(&traces);
    let out = tmp.path().join("out");
    let engine = Engine::new(lenient(4));
    let src = Source::Path(traces.clone());
    let overview = engine.overview(&src).unwrap();
    let comm = engine.comm(&src, CommOptions::default()).unwrap();
    let ops = engine
        .ops(
            &src,
            &OpsOptions {
                top: 0,
                ..OpsOptions::default()
            },
        )
        .unwrap();
    assert_eq!(manifest.ranks.len(), 8);
    for (i, entry) in manifest.ranks.iter().enumerate() {
        assert_eq!(entry.file, format!("rank-{:05}", entry.rank.unwrap()));
        // Every file holds the rows the manifest says, and they are the views' rows.
        for t in Table::ALL {
            let batch = read_table(&table_file(&out, t, entry)).unwrap();
            assert_eq!(
                batch.num_rows() as u64,
                entry.rows[t.name()],
                "{}",
                t.name()
            );
            assert_eq!(batch.schema().fields().len(), t.columns().len());
        }
        let instances: u64 = comm.traces[i].collectives.iter().map(|c| c.count).sum();
        assert!(instances > 0, "NCCL collectives on every rank");
        assert_eq!(entry.rows["steps"], overview.traces[i].steps.len() as u64);
        assert_eq!(entry.rows["collectives"], instances);
        assert_eq!(entry.rows["ops"], ops.traces[i].rows.len() as u64);
        assert_eq!(entry.rows["ranks"], 1);
        let trace = kinetoscope_trace::read::read_trace(
            Path::new(&entry.source),
            &kinetoscope_trace::read::ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(entry.rows["events"], trace.events.len() as u64);
        assert!(entry.rows["kernels_per_step"] > 0);
    }
}

#[test]
fn other_views_name_ranks_and_report_for_an_export() {
    let (tmp, _) = round_trip(&param_ranks());
    let out = Source::Path(tmp.path().join("out"));
    let engine = Engine::default();
    let Err(err) = engine.overview(&out) else {
        panic!("an export is not traces")
    };
    assert!(matches!(err, EngineError::WrongInput { .. }), "{err:?}");
    assert!(err.to_string().contains("`ranks`"), "{err}");
    assert!(err.to_string().contains("`report`"), "{err}");
}

/// The cross-rank findings of a report as JSON, without the input they name.
fn cross_rank_json(doc: &ReportDocument) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&to_json(doc).unwrap()).unwrap();
    let mut findings = v["cross_rank_findings"].take();
    for f in findings.as_array_mut().unwrap() {
        assert_eq!(f["trace"], v["input"]);
        f.as_object_mut().unwrap().remove("trace");
    }
    findings
}

/// A rank trace of four 10 ms steps on an 80 GiB GPU, each launching a 5 ms kernel and
/// allocating up to `gib` GiB.
fn memory_rank(rank: i64, gib: u64) -> String {
    const GIB: u64 = 1 << 30;
    let mut ev = Vec::new();
    for n in 0..4u64 {
        let t = 1_000_000 + n * 10_000;
        let (ext, corr) = (10 + 2 * n, 11 + 2 * n);
        ev.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{t},"dur":10000}}"#
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":40,"args":{{"External id":{ext}}}}}"#,
            t + 100
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":10,"args":{{"External id":{ext},"correlation":{corr}}}}}"#,
            t + 110
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":5000,"args":{{"External id":{ext},"correlation":{corr},"device":0,"stream":7}}}}"#,
            t + 200
        ));
        ev.push(format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{},"Bytes":1024,"Total Allocated":{},"Total Reserved":{}}}}}"#,
            t + 120,
            4096 + n,
            gib * GIB,
            gib * GIB
        ));
    }
    format!(
        r#"{{"schemaVersion":1,"distributedInfo":{{"backend":"nccl","rank":{rank},"world_size":4}},"deviceProperties":[{{"id":0,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":{}}}],"traceEvents":[{}]}}"#,
        80 * GIB,
        ev.join(",\n")
    )
}

#[test]
fn report_of_an_export_has_the_cross_rank_findings_of_the_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = tmp.path().join("job");
    std::fs::create_dir(&traces).unwrap();
    // Rank 0 at 76 GiB of 80, the others at 50: DI004 (memory imbalance under pressure).
    for (rank, gib) in [(0, 76), (1, 50), (2, 50), (3, 52)] {
        std::fs::write(
            traces.join(format!("rank{rank}.pt.trace.json")),
            memory_rank(rank, gib),
        )
        .unwrap();
    }
    let engine = Engine::new(lenient(2));
    let out = tmp.path().join("out");
    engine
        .export_parquet(&Source::Path(traces.clone()), &out)
        .expect("export");
    let config = Default::default();
    let from_traces = engine.report(&Source::Path(traces), &config).unwrap();
    let from_parquet = engine.report(&Source::Path(out), &config).unwrap();
    assert!(
        from_traces
            .cross_rank_findings
            .iter()
            .any(|f| f.id == "DI004" && f.rank == Some(0)),
        "{:?}",
        from_traces.cross_rank_findings
    );
    assert_eq!(
        cross_rank_json(&from_parquet),
        cross_rank_json(&from_traces)
    );
    assert!(matches!(from_parquet.layout, InputLayout::ParquetExport));
    assert!(from_parquet.traces.is_empty());
    // Only the cross-rank findings: the rules of single traces need their events.
    assert_eq!(
        serde_json::to_value(&from_parquet.findings).unwrap(),
        serde_json::to_value(&from_parquet.cross_rank_findings).unwrap()
    );
    // The same on PARAM's real 8-rank job (no cross-rank finding fires there).
    let (tmp, _) = round_trip(&param_ranks());
    let from_traces = engine
        .report(&Source::Path(param_ranks()), &config)
        .unwrap();
    let from_parquet = engine
        .report(&Source::Path(tmp.path().join("out")), &config)
        .unwrap();
    assert_eq!(
        cross_rank_json(&from_parquet),
        cross_rank_json(&from_traces)
    );
}

#[test]
fn an_output_holding_other_files_is_refused_and_a_previous_export_replaced() {
    let engine = Engine::new(lenient(2));
    let traces = param_ranks();
    let src = Source::Path(traces.clone());
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("notes.txt");
    std::fs::write(&other, "mine").unwrap();
    let err = engine.export_parquet(&src, tmp.path()).unwrap_err();
    assert!(err.to_string().contains("notes.txt"), "{err}");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "mine");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    // The input folder itself is refused.
    assert!(engine.export_parquet(&src, &traces).is_err());

    let out = tmp.path().join("out");
    engine.export_parquet(&src, &out).unwrap();
    // A second export of one rank replaces the first: one file per table left.
    let one = traces.join("worker3_step_12.1694128201557.pt.trace.json.gz");
    let m = engine
        .export_parquet(&Source::Path(one), &out)
        .unwrap()
        .manifest;
    assert_eq!(m.ranks.len(), 1);
    for t in Table::ALL {
        let files: Vec<_> = std::fs::read_dir(out.join(t.name())).unwrap().collect();
        assert_eq!(files.len(), 1, "{}", t.name());
    }
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with('.')), "{names:?}");
    // One rank is not a comparison.
    let err = engine
        .ranks(&Source::Path(out), RanksOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("at least two"), "{err}");
}

#[test]
fn a_damaged_rank_file_is_an_error_naming_it() {
    let (tmp, manifest) = round_trip(&param_ranks());
    let out = tmp.path().join("out");
    let file = table_file(&out, Table::Collectives, &manifest.ranks[2]);
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let doc = Engine::default()
        .ranks(&Source::Path(out), RanksOptions::default())
        .unwrap();
    assert_eq!(doc.errors.len(), 1);
    assert_eq!(doc.errors[0].path, manifest.ranks[2].source);
    assert!(
        doc.errors[0].error.contains("rank-00002.parquet"),
        "{:?}",
        doc.errors
    );
    assert_eq!(doc.report.ranks.len(), 7);
}

#[test]
#[ignore = "needs the shared reference folder"]
fn shared_param_job_round_trips() {
    let traces = require_shared().join("external/param/dlrm_kineto");
    assert!(traces.is_dir(), "missing {}", traces.display());
    let (_tmp, manifest) = round_trip(&traces);
    assert_eq!(manifest.ranks.len(), 8);
}
