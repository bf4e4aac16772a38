//! The recorded columns of tables without rows (`src/columns.json`) are the columns each
//! table has on its fixture; `KINETOSCOPE_BLESS=1` records them again.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::integrity::CheckOptions;
use kinetoscope_analysis::nvtx::NvtxOptions;
use kinetoscope_analysis::perf::PerfOptions;
use kinetoscope_analysis::ranks::RanksOptions;
use kinetoscope_analysis::sequences::SequenceOptions;
use kinetoscope_arrow::empty::{self, ColumnRecord};
use kinetoscope_arrow::tables::{self, TABLES};
use kinetoscope_arrow::value::Value;
use kinetoscope_engine::{
    CommOptions, Engine, IdleOptions, KernelsOptions, LaunchesOptions, OpsOptions, Source,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-trace/tests/fixtures")
        .join(name)
}

/// The fixture on which each table has rows (the Python tests use the same ones).
fn fixture_of(table: &str) -> &'static str {
    match table {
        "comm" | "comm_steps" | "ranks" | "rank_steps" | "stragglers" => "ranks",
        "nvtx" | "check" => "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz",
        _ => "worker0.1623143089861.pt.trace.json.gz",
    }
}

/// The document of `view` with every row kept.
fn document(view: &str, src: &Source) -> Value {
    let e = Engine::default();
    macro_rules! v {
        ($doc:expr) => {
            Value::of(&$doc.unwrap()).unwrap()
        };
    }
    match view {
        "summary" => v!(e.summary(src)),
        "overview" => v!(e.overview(src)),
        "ops" => v!(e.ops(
            src,
            &OpsOptions {
                top: 0,
                ..OpsOptions::default()
            }
        )),
        "kernels" => v!(e.kernels(
            src,
            &KernelsOptions {
                top: 0,
                ..KernelsOptions::default()
            }
        )),
        "kernel_classes" => v!(e.kernel_classes(src, Compat::Kinetoscope, 0)),
        "perf" => v!(e.perf(
            src,
            &PerfOptions {
                peak_tflops: None,
                peak_tbps: None,
                top: 0
            }
        )),
        "temporal" => v!(e.temporal(src, Compat::Kinetoscope)),
        "idle" => v!(e.idle(
            src,
            IdleOptions {
                compat: Compat::Kinetoscope,
                kernel_wait_ns: 30_000,
            }
        )),
        "launches" => v!(e.launches(
            src,
            LaunchesOptions {
                compat: Compat::Kinetoscope,
                launch: Default::default(),
            }
        )),
        "comm" => v!(e.comm(src, CommOptions::default())),
        "ranks" => v!(e.ranks(
            src,
            RanksOptions {
                top_collectives: usize::MAX,
                ..RanksOptions::default()
            }
        )),
        "nvtx" => v!(e.nvtx(
            src,
            &NvtxOptions {
                filter: None,
                top: None
            }
        )),
        "sequences" => v!(e.sequences(src, &SequenceOptions::default())),
        "critical_path" => v!(e.critical_path(src, CriticalPathOptions::default())),
        "check" => v!(e.check(src, &CheckOptions::default())),
        "report" => v!(e.report(src, &kinetoscope_advisor::Config::default())),
        other => panic!("no view {other}"),
    }
}

#[test]
fn empty_tables_have_the_fixture_columns() {
    let mut seen = ColumnRecord::new();
    let mut documents: BTreeMap<(&str, &str), Value> = BTreeMap::new();
    for spec in TABLES {
        let path = fixture_of(spec.name);
        let doc = documents
            .entry((spec.view, path))
            .or_insert_with(|| document(spec.view, &Source::Path(fixture(path))));
        let batch = tables::batch(doc, spec).unwrap();
        assert!(batch.num_rows() > 0, "{}: no rows on {path}", spec.name);
        let columns = batch
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), empty::type_name(f.data_type()).to_owned()))
            .collect();
        seen.insert(spec.name.to_owned(), columns);
    }
    // One line per column, so that a change reads as a one-line diff.
    let tables: Vec<String> = seen
        .iter()
        .map(|(table, columns)| {
            let cols: Vec<String> = columns
                .iter()
                .map(|c| format!("    {}", serde_json::to_string(c).unwrap()))
                .collect();
            format!("  {:?}: [\n{}\n  ]", table, cols.join(",\n"))
        })
        .collect();
    let text = format!("{{\n{}\n}}\n", tables.join(",\n"));
    if std::env::var_os("KINETOSCOPE_BLESS").is_some() {
        let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/columns.json");
        std::fs::write(file, &text).unwrap();
        return;
    }
    let recorded: ColumnRecord = serde_json::from_str(empty::COLUMNS_JSON).unwrap();
    for (table, columns) in &seen {
        assert_eq!(
            recorded.get(table),
            Some(columns),
            "{table}: the columns differ from src/columns.json \
             (KINETOSCOPE_BLESS=1 cargo test -p kinetoscope-arrow records them)"
        );
    }
    assert_eq!(
        recorded.len(),
        seen.len(),
        "src/columns.json names other tables"
    );
}

#[test]
fn a_table_without_rows_has_the_recorded_columns() {
    // The GPU fixture's `check` finds no defect: no rows, yet the recorded columns.
    let src = Source::Path(fixture("worker0.1623143089861.pt.trace.json.gz"));
    let doc = document("check", &src);
    let spec = tables::spec("check").unwrap();
    assert!(tables::rows(&doc, spec).is_empty());
    let batch = tables::batch(&doc, spec).unwrap();
    assert_eq!(batch.num_rows(), 0);
    assert_eq!(batch.schema(), empty::schema("check"));
    assert!(batch.num_columns() > 3, "{:?}", batch.schema());
    assert!(batch.schema().field_with_name("count").is_ok());
}
