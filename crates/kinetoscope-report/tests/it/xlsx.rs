//! `report --xlsx`: the workbook of real traces, read back with `calamine`: every view's
//! sheet, its headers frozen, as many rows as its document, cells equal to the JSON
//! document's numbers, and untrusted names kept as text, never formulas.

use calamine::{Data, Reader};
use kinetoscope_engine::{to_json, WorkbookDocument};
use kinetoscope_report::xlsx::to_xlsx;
use serde_json::Value;

use crate::common::{cell, close, documents, h100_trace, number, rank_folder, text, Book};

/// The sheets of a workbook without collectives, in order.
const SHEETS: [&str; 10] = [
    "summary",
    "overview",
    "ops",
    "ops_by_shape",
    "kernels",
    "perf",
    "perf_families",
    "memory",
    "memory_operators",
    "findings",
];

/// The workbook of `doc`, opened.
fn book(doc: &WorkbookDocument) -> Book {
    Book::open(to_xlsx(doc).expect("a workbook"))
}

/// A document as its JSON value (what `--format json` of its view writes).
fn json<T: serde::Serialize>(doc: &T) -> Value {
    serde_json::from_str(&to_json(doc).expect("JSON")).expect("valid JSON")
}

/// Rows of each sheet in the documents (all traces together).
fn document_rows(doc: &WorkbookDocument, sheet: &str) -> usize {
    match sheet {
        "summary" => doc.report.traces.len(),
        "overview" => doc
            .overview
            .traces
            .iter()
            .map(|t| t.steps.len() + usize::from(t.average.is_some()))
            .sum(),
        "ops" => doc.ops.traces.iter().map(|t| t.rows.len()).sum(),
        "ops_by_shape" => doc.ops_by_shape.traces.iter().map(|t| t.rows.len()).sum(),
        "kernels" => doc.kernels.traces.iter().map(|t| t.rows.len()).sum(),
        "perf" => doc.perf.traces.iter().map(|t| t.rows.len()).sum(),
        "perf_families" => doc.perf.traces.iter().map(|t| t.families.len()).sum(),
        "memory" => doc.memory.traces.iter().map(|t| t.devices.len()).sum(),
        "memory_operators" => doc
            .memory
            .traces
            .iter()
            .flat_map(|t| &t.devices)
            .map(|d| d.operators.len())
            .sum(),
        "collectives" => doc.comm.traces.iter().map(|t| t.collectives.len()).sum(),
        "findings" => doc.report.findings.len(),
        other => panic!("unknown sheet {other}"),
    }
}

#[test]
fn every_view_has_a_sheet_with_frozen_headers_and_a_row_per_document_row() {
    let doc = documents(&h100_trace());
    assert!(doc.comm.traces.iter().all(|t| t.collectives.is_empty()));
    let mut b = book(&doc);
    assert_eq!(b.xlsx.sheet_names(), SHEETS);
    for (i, name) in SHEETS.iter().enumerate() {
        let rows = document_rows(&doc, name);
        assert_eq!(b.sheet(name).height(), rows + 1, "sheet {name}");
        let xml = b.part(&format!("xl/worksheets/sheet{}.xml", i + 1));
        assert!(
            xml.contains(r#"ySplit="1""#) && xml.contains(r#"state="frozen""#),
            "sheet {name}: header row not frozen"
        );
        assert!(xml.contains("<cols>"), "sheet {name}: no column widths");
        assert!(!xml.contains("<f>"), "sheet {name}: a formula");
        let headers = b.headers(name);
        assert_eq!(&headers[..2], ["trace", "rank"], "sheet {name}");
    }
    // The views this trace exercises are not empty.
    for name in [
        "overview",
        "ops",
        "ops_by_shape",
        "kernels",
        "perf",
        "perf_families",
    ] {
        assert!(document_rows(&doc, name) > 0, "{name} has no rows");
    }
    let styles = b.part("xl/styles.xml");
    for code in ["0.000", "0.00%"] {
        assert!(
            styles.contains(&format!(r#"formatCode="{code}""#)),
            "no {code} format"
        );
    }
}

#[test]
fn cells_equal_the_json_documents_numbers() {
    let doc = documents(&h100_trace());
    let mut b = book(&doc);

    let ops = json(&doc.ops);
    let sheet = b.sheet("ops");
    for (i, r) in ops["traces"][0]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .enumerate()
    {
        let row = i + 1;
        assert_eq!(
            text(cell(&sheet, row, "name")),
            r["name"].as_str().expect("name")
        );
        assert_eq!(
            number(cell(&sheet, row, "calls")),
            r["calls"].as_f64().expect("n")
        );
        let launching = r["launching_calls"].as_f64().expect("n");
        assert_eq!(number(cell(&sheet, row, "launching_calls")), launching);
        let device_self_us = r["device_self_ns"].as_f64().expect("ns") / 1e3;
        assert!(close(
            number(cell(&sheet, row, "device_self_us")),
            device_self_us
        ));
        let share = r["tc_total_share"].as_f64().expect("share");
        assert!(close(number(cell(&sheet, row, "tc_total_share")), share));
        let eligible = r["tc_eligible"].as_bool().expect("bool");
        assert_eq!(cell(&sheet, row, "tc_eligible"), &Data::Bool(eligible));
    }

    let shapes = json(&doc.ops_by_shape);
    let first = &shapes["traces"][0]["rows"][0];
    let sheet = b.sheet("ops_by_shape");
    assert_eq!(
        text(cell(&sheet, 1, "input_shape")),
        first["input_shape"].as_str().expect("s")
    );
    let host_total_us = first["host_total_ns"].as_f64().expect("ns") / 1e3;
    assert!(close(
        number(cell(&sheet, 1, "host_total_us")),
        host_total_us
    ));

    let kernels = json(&doc.kernels);
    let first = &kernels["traces"][0]["rows"][0];
    let sheet = b.sheet("kernels");
    assert_eq!(
        text(cell(&sheet, 1, "name")),
        first["name"].as_str().expect("s")
    );
    let total_us = first["total_ns"].as_f64().expect("ns") / 1e3;
    assert!(close(number(cell(&sheet, 1, "total_us")), total_us));

    let perf = json(&doc.perf);
    let sheet = b.sheet("perf");
    let rows = perf["traces"][0]["rows"].as_array().expect("rows");
    let modelled = rows
        .iter()
        .position(|r| r["lost_us"].is_number() && r["bytes_per_call"].is_number())
        .expect("a row with a roofline");
    let (row, r) = (modelled + 1, &rows[modelled]);
    assert_eq!(
        text(cell(&sheet, row, "family")),
        r["family"].as_str().expect("s")
    );
    assert_eq!(
        text(cell(&sheet, row, "input_dims")),
        r["input_dims"].as_str().expect("s")
    );
    for key in [
        "gflop_per_call",
        "bytes_per_call",
        "kernel_us",
        "lost_us",
        "roofline_fraction",
    ] {
        let want = r[key].as_f64().expect(key);
        assert!(close(number(cell(&sheet, row, key)), want), "perf {key}");
    }
    let families = &perf["traces"][0]["families"][0];
    let sheet = b.sheet("perf_families");
    assert_eq!(
        text(cell(&sheet, 1, "family")),
        families["family"].as_str().expect("s")
    );
    let kernel_us = families["kernel_us"].as_f64().expect("us");
    assert!(close(number(cell(&sheet, 1, "kernel_us")), kernel_us));

    let report = json(&doc.report);
    let sheet = b.sheet("findings");
    for (i, f) in report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .enumerate()
    {
        let row = i + 1;
        assert_eq!(text(cell(&sheet, row, "id")), f["id"].as_str().expect("id"));
        assert_eq!(
            text(cell(&sheet, row, "severity")),
            f["severity"].as_str().expect("s")
        );
        let impact_us = f["impact_ns_per_step"].as_f64().expect("ns") / 1e3;
        assert!(close(
            number(cell(&sheet, row, "impact_us_per_step")),
            impact_us
        ));
    }

    let overview = json(&doc.overview);
    let step = &overview["traces"][0]["steps"][0];
    let sheet = b.sheet("overview");
    assert_eq!(
        text(cell(&sheet, 1, "step")),
        step["name"].as_str().expect("s")
    );
    let kernel_us = step["breakdown_ns"]["kernel"].as_f64().expect("ns") / 1e3;
    assert!(close(number(cell(&sheet, 1, "kernel_us")), kernel_us));
}

#[test]
fn a_rank_folder_gets_the_collectives_sheet_and_a_row_per_trace() {
    let doc = documents(&rank_folder());
    assert_eq!(doc.report.traces.len(), 2);
    let mut b = book(&doc);
    let names = b.xlsx.sheet_names();
    assert_eq!(names.len(), SHEETS.len() + 1);
    assert_eq!(names[SHEETS.len() - 1], "collectives");
    for name in names {
        assert_eq!(
            b.sheet(&name).height(),
            document_rows(&doc, &name) + 1,
            "{name}"
        );
    }
    let comm = json(&doc.comm);
    let sheet = b.sheet("collectives");
    let mut row = 1;
    for t in comm["traces"].as_array().expect("traces") {
        for c in t["collectives"].as_array().expect("collectives") {
            assert_eq!(
                text(cell(&sheet, row, "trace")),
                t["path"].as_str().expect("s")
            );
            assert_eq!(
                text(cell(&sheet, row, "collective")),
                c["collective"].as_str().expect("s")
            );
            let latency_us = c["latency_ns"].as_f64().expect("ns") / 1e3;
            assert!(close(number(cell(&sheet, row, "latency_us")), latency_us));
            row += 1;
        }
    }
    assert!(row > 1, "no collectives in the rank folder");
    let summary = b.sheet("summary");
    let ranks: Vec<f64> = (1..=2).map(|r| number(cell(&summary, r, "rank"))).collect();
    let want: Vec<f64> = doc
        .report
        .traces
        .iter()
        .map(|t| t.rank.expect("rank") as f64)
        .collect();
    assert_eq!(ranks, want);
}

#[test]
fn formula_looking_and_control_character_names_stay_text() {
    let mut doc = documents(&h100_trace());
    let hostile = [
        "=1+1",
        "+SUM(A1:A2)",
        "@cmd",
        "-2+3",
        "=HYPERLINK(\"http://x\")",
        "a\u{1b}[31mb",
    ];
    let rows = &mut doc.ops.traces[0].rows;
    assert!(rows.len() >= hostile.len());
    for (r, name) in rows.iter_mut().zip(hostile) {
        r.name = name.to_owned();
    }
    let mut b = book(&doc);
    let sheet = b.sheet("ops");
    for (i, name) in hostile.iter().enumerate() {
        let want = name.replace('\u{1b}', "\\x1b");
        assert_eq!(cell(&sheet, i + 1, "name"), &Data::String(want));
    }
    let formulas = b.xlsx.worksheet_formula("ops").expect("ops formulas");
    assert_eq!(formulas.used_cells().count(), 0, "a formula in ops");
}
