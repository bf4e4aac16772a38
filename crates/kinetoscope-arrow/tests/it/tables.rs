//! Batches have the rows of the documents they come from, and the event table's rows.

use std::path::PathBuf;

use arrow_array::{Array, Int64Array, StringArray};
use kinetoscope_arrow::tables::{batch, spec};
use kinetoscope_arrow::value::Value;
use kinetoscope_engine::{Engine, KernelsOptions, OpsOptions, Source};
use kinetoscope_trace::read::{read_trace, ReadOptions};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-trace/tests/fixtures")
        .join(name)
}

const GPU: &str = "worker0.1623143089861.pt.trace.json.gz";

#[test]
fn ops_batch_has_the_documents_rows_in_order() {
    let src = Source::Path(fixture(GPU));
    let doc = Engine::default().ops(&src, &OpsOptions::default()).unwrap();
    let b = batch(&Value::of(&doc).unwrap(), spec("ops").unwrap()).unwrap();
    let rows = &doc.traces[0].rows;
    assert!(!rows.is_empty());
    assert_eq!(b.num_rows(), rows.len());
    let names = b.column_by_name("name").unwrap();
    let names = names.as_any().downcast_ref::<StringArray>().unwrap();
    let self_ns = b.column_by_name("device_self_ns").unwrap();
    let self_ns = self_ns.as_any().downcast_ref::<Int64Array>().unwrap();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(names.value(i), r.name);
        assert_eq!(self_ns.value(i), r.device_self_ns);
    }
}

#[test]
fn kernels_and_overview_batches_count_the_documents_rows() {
    let src = Source::Path(fixture(GPU));
    let engine = Engine::default();
    let kernels = engine.kernels(&src, &KernelsOptions::default()).unwrap();
    let b = batch(&Value::of(&kernels).unwrap(), spec("kernels").unwrap()).unwrap();
    assert_eq!(b.num_rows(), kernels.traces[0].rows.len());
    let overview = engine.overview(&src).unwrap();
    let b = batch(&Value::of(&overview).unwrap(), spec("overview").unwrap()).unwrap();
    assert_eq!(b.num_rows(), overview.traces[0].steps.len());
    assert!(b.column_by_name("breakdown_ns.kernel").is_some());
}

#[test]
fn ranks_folder_rows_carry_each_traces_path() {
    let src = Source::Path(fixture("ranks"));
    let doc = Engine::default().ops(&src, &OpsOptions::default()).unwrap();
    let b = batch(&Value::of(&doc).unwrap(), spec("ops").unwrap()).unwrap();
    let total: usize = doc.traces.iter().map(|t| t.rows.len()).sum();
    assert_eq!(b.num_rows(), total);
    let paths = b.column_by_name("path").unwrap();
    let paths = paths.as_any().downcast_ref::<StringArray>().unwrap();
    let first = doc.traces[0].rows.len();
    assert_eq!(paths.value(0), doc.traces[0].path);
    assert_eq!(paths.value(first), doc.traces[1].path);
}

#[test]
fn events_batch_has_every_event() {
    let trace = read_trace(&fixture(GPU), &ReadOptions::default()).unwrap();
    let b = kinetoscope_arrow::events::batch(&trace).unwrap();
    assert_eq!(b.num_rows(), trace.events.len());
    assert_eq!(b.schema(), kinetoscope_arrow::events::schema());
    let ts = b.column_by_name("ts_ns").unwrap();
    let ts = ts.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(ts.values().as_ref(), trace.events.ts_ns.as_slice());
    let names = b.column_by_name("name").unwrap();
    let names = names
        .as_any()
        .downcast_ref::<arrow_array::DictionaryArray<arrow_array::types::Int32Type>>()
        .unwrap();
    let values = names
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    for i in [0, trace.events.len() / 2, trace.events.len() - 1] {
        let key = names.keys().value(i) as usize;
        assert_eq!(values.value(key), trace.strings.get(trace.events.name[i]));
    }
}
