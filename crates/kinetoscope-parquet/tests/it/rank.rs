//! One real rank (PARAM's DLRM worker 1: 8× V100, NCCL) written and read back.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::Array;
use kinetoscope_analysis::ranks::RankSummary;
use kinetoscope_parquet::read::{rank_summary, read_table, table_file};
use kinetoscope_parquet::{Export, Manifest, Table, MANIFEST, SCHEMA_VERSION};
use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::Trace;
use parquet::file::reader::{FileReader, SerializedFileReader};

fn worker1() -> Trace {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto/\
         worker1_step_12.1694128201556.pt.trace.json.gz",
    );
    read_trace(&p, &ReadOptions::default()).unwrap()
}

/// An export of `trace` alone into a new folder under `tmp`.
fn export(trace: &Trace, tmp: &Path) -> (PathBuf, Manifest) {
    let out = tmp.join("out");
    let export = Export::create(&out).unwrap();
    let staged = export.write_trace(trace).unwrap();
    let m = export
        .finish("worker1".into(), vec![staged], Vec::new())
        .unwrap();
    (out, m)
}

#[test]
fn the_summary_read_back_equals_the_traces() {
    let trace = worker1();
    let tmp = tempfile::tempdir().unwrap();
    let (out, m) = export(&trace, tmp.path());
    let expected = RankSummary::from_trace(&trace);
    assert_eq!((expected.collectives.len(), expected.steps.len()), (8, 1));
    assert_eq!(m.ranks[0].file, "rank-00001");
    assert_eq!(rank_summary(&out, &m.ranks[0]).unwrap(), expected);
    // Shifting a time in the files changes what is read back: the test can fail.
    assert_ne!(expected.clone().shifted(1), expected);
}

#[test]
fn every_file_has_its_schema_metadata_and_events_name_the_trace() {
    let trace = worker1();
    let tmp = tempfile::tempdir().unwrap();
    let (out, m) = export(&trace, tmp.path());
    let entry = &m.ranks[0];
    for t in Table::ALL {
        let path = table_file(&out, t, entry);
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let kv = reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .unwrap();
        let get = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
        assert_eq!(get("kinetoscope.table").as_deref(), Some(t.name()));
        assert_eq!(
            get("kinetoscope.schema_version"),
            Some(SCHEMA_VERSION.to_string())
        );
        let batch = read_table(&path).unwrap();
        assert_eq!(batch.schema().fields(), t.schema().fields(), "{}", t.name());
        let rank = batch.column(0).as_primitive::<Int64Type>();
        assert!(rank.iter().all(|r| r == Some(1)), "{}", t.name());
    }
    let events = read_table(&table_file(&out, Table::Events, entry)).unwrap();
    let strings = read_table(&table_file(&out, Table::Strings, entry)).unwrap();
    assert_eq!(events.num_rows(), trace.events.len());
    let ts = events
        .column_by_name("ts_ns")
        .unwrap()
        .as_primitive::<Int64Type>();
    let ids = events
        .column_by_name("name_id")
        .unwrap()
        .as_primitive::<Int32Type>();
    let text = strings.column_by_name("string").unwrap().as_string::<i32>();
    for i in 0..trace.events.len() {
        assert_eq!(ts.value(i), trace.events.ts_ns[i]);
        let id = kinetoscope_trace::EventId(i as u32);
        assert_eq!(text.value(ids.value(i) as usize), trace.name(id));
    }
}

#[test]
fn damaged_exports_are_errors_naming_the_file() {
    let trace = worker1();
    let tmp = tempfile::tempdir().unwrap();
    let (out, m) = export(&trace, tmp.path());
    let entry = &m.ranks[0];
    // A table's file replaced by another table's (one row too): the missing column is
    // named.
    let ranks = table_file(&out, Table::Ranks, entry);
    std::fs::copy(table_file(&out, Table::Steps, entry), &ranks).unwrap();
    let err = rank_summary(&out, entry).unwrap_err().to_string();
    assert!(
        err.contains("rank-00001.parquet") && err.contains("no column"),
        "{err}"
    );
    // Not Parquet at all.
    std::fs::write(&ranks, b"{}").unwrap();
    let err = rank_summary(&out, entry).unwrap_err().to_string();
    assert!(err.contains("rank-00001.parquet"), "{err}");
    // A manifest of another schema version is refused.
    let manifest = out.join(MANIFEST);
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("\"schema_version\": 1", "\"schema_version\": 99"),
    )
    .unwrap();
    let err = Manifest::read(&out).unwrap_err().to_string();
    assert!(err.contains("schema version 99"), "{err}");
}

#[test]
fn memory_per_step_holds_the_memory_views_peaks_and_records() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../kinetoscope-trace/tests/fixtures/memory_timelines/torch-2.2.2/plain.pt.trace.json.gz",
    );
    let trace = read_trace(&p, &ReadOptions::default()).unwrap();
    let view = kinetoscope_analysis::memory::analyze_trace(&trace, &Default::default());
    assert!(!view.devices.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let (out, m) = export(&trace, tmp.path());
    let rows = read_table(&table_file(&out, Table::MemoryPerStep, &m.ranks[0])).unwrap();
    let col = |n: &str| {
        rows.column_by_name(n)
            .unwrap()
            .as_primitive::<Int64Type>()
            .clone()
    };
    let (ty, id, records, alloc, reserved) = (
        col("device_type"),
        col("device_id"),
        col("records"),
        col("peak_allocated_bytes"),
        col("peak_reserved_bytes"),
    );
    for d in &view.devices {
        let mine: Vec<usize> = (0..rows.num_rows())
            .filter(|&i| ty.value(i) == d.device_type && id.value(i) == d.device_id)
            .collect();
        let sum: i64 = mine.iter().map(|&i| records.value(i)).sum();
        assert_eq!(sum as u64, d.records, "{}", d.device);
        let peak = |a: &arrow_array::Int64Array| {
            mine.iter()
                .filter(|&&i| a.is_valid(i))
                .map(|&i| a.value(i))
                .max()
        };
        assert_eq!(
            peak(&alloc),
            d.peak_allocated.as_ref().map(|p| p.bytes),
            "{}",
            d.device
        );
        assert_eq!(
            peak(&reserved),
            d.peak_reserved.as_ref().map(|p| p.bytes),
            "{}",
            d.device
        );
    }
}
