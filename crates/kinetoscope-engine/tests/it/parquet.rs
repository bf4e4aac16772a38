//! `export_parquet` and `ranks` from an export: the ranks document from the Parquet
//! tables equals the one from the traces, and every table's rows equal the engine's own
//! documents, on PARAM's real 8-rank DLRM job (8× V100, NCCL).

use std::path::{Path, PathBuf};

use kinetoscope_engine::{
    to_json, CommOptions, Engine, EngineError, OpsOptions, RanksOptions, Source,
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
fn other_views_name_ranks_for_an_export() {
    let (tmp, _) = round_trip(&param_ranks());
    let out = Source::Path(tmp.path().join("out"));
    let engine = Engine::default();
    let Err(err) = engine.overview(&out) else {
        panic!("an export is not traces")
    };
    assert!(matches!(err, EngineError::WrongInput { .. }), "{err:?}");
    assert!(err.to_string().contains("`ranks`"), "{err}");
    let Err(err) = engine.report(&out, &Default::default()) else {
        panic!("report needs the traces")
    };
    assert!(err.to_string().contains("`ranks`"), "{err}");
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
