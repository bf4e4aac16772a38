//! key_averages tables printed by CPU PyTorch 2.15 (`fixtures/key_averages/record.py`),
//! checked against the numbers the same `key_averages()` objects dumped as JSON; and
//! hostile tables.

use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{
    key_averages_from_bytes, read_key_averages, sniff_path, ContentKind,
};
use kinetoscope_trace::{Cell, KeyAveragesTable, TraceError};
use serde_json::Value;

use crate::common::{fixtures_dir, lenient, strict};

fn tables() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join("key_averages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    out.sort();
    out
}

/// Within the precision PyTorch printed: 3 decimals of the unit for times (a value of
/// at least 1 unit), 2 decimals of KB/MB for memory.
fn close(parsed: f64, reference: f64, relative: f64) -> bool {
    (parsed - reference).abs() <= reference.abs() * relative + 1.0
}

fn reference_rows(txt: &Path) -> (Value, Vec<Value>) {
    let name = txt.with_extension("json");
    let reference = txt
        .parent()
        .unwrap()
        .join("reference")
        .join(name.file_name().unwrap());
    let json: Value = serde_json::from_slice(&std::fs::read(reference).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap().clone();
    (json, rows)
}

/// Whether a printed name is the reference key (PyTorch cuts long names to 52
/// characters and "...").
fn same_name(printed: &str, key: &str) -> bool {
    printed == key
        || printed
            .strip_suffix("...")
            .is_some_and(|p| key.starts_with(p))
}

fn matches(table: &KeyAveragesTable, row: usize, reference: &Value) -> bool {
    let cells = &table.rows[row].cells;
    let get = |h: &str| table.column(h).map(|i| &cells[i]);
    let f = |k: &str| reference[k].as_f64().unwrap();
    let time_ok = |h: &str, k: &str| match get(h) {
        Some(Cell::Duration(ns)) => close(*ns as f64, f(k) * 1000.0, 0.0005),
        Some(other) => panic!("{h}: {other:?}"),
        None => true,
    };
    let mem_ok = |h: &str, k: &str| match get(h) {
        Some(Cell::Bytes(b)) => close(*b as f64, f(k), 0.005),
        Some(other) => panic!("{h}: {other:?}"),
        None => true,
    };
    let shapes_ok = match get("Input Shapes") {
        Some(Cell::Text(t)) => reference["input_shapes"].as_str().unwrap_or("[]") == t,
        _ => true,
    };
    same_name(table.rows[row].name(), reference["key"].as_str().unwrap())
        && get("# of Calls").and_then(Cell::count) == reference["count"].as_u64()
        && time_ok("Self CPU", "self_cpu_time_total")
        && time_ok("CPU total", "cpu_time_total")
        && mem_ok("CPU Mem", "cpu_memory_usage")
        && mem_ok("Self CPU Mem", "self_cpu_memory_usage")
        && shapes_ok
}

#[test]
fn every_recorded_table_equals_the_reference_numbers() {
    let files = tables();
    assert!(files.len() >= 10, "{files:?}");
    for txt in files {
        let table = read_key_averages(&txt, &strict()).unwrap();
        let (json, reference) = reference_rows(&txt);
        let limit = json["row_limit"].as_u64().unwrap() as usize;
        assert_eq!(table.rows.len(), limit.min(reference.len()), "{txt:?}");
        assert_eq!(table.skipped_rows, 0);
        for row in 0..table.rows.len() {
            assert!(
                reference.iter().any(|r| matches(&table, row, r)),
                "{txt:?} row {row}: {:?}",
                table.rows[row]
            );
        }
        let self_total: f64 = reference
            .iter()
            .map(|r| r["self_cpu_time_total"].as_f64().unwrap() * 1000.0)
            .sum();
        let footer = table
            .totals
            .iter()
            .find(|t| t.label == "Self CPU time total")
            .unwrap();
        assert!(close(footer.ns as f64, self_total, 0.0005), "{txt:?}");
    }
}

#[test]
fn sorted_column_is_in_order_and_variants_have_their_columns() {
    let dir = fixtures_dir().join("key_averages");
    for (file, column) in [
        ("prof_0_local_0_cpu_time_total.txt", "CPU total"),
        ("prof_0_local_0_self_cpu_time_total.txt", "Self CPU"),
        ("prof_0_local_0_cpu_memory_usage.txt", "CPU Mem"),
        ("prof_0_local_0_self_cpu_memory_usage.txt", "Self CPU Mem"),
    ] {
        let table = read_key_averages(&dir.join(file), &strict()).unwrap();
        let i = table.column(column).unwrap();
        let values: Vec<i64> = table
            .rows
            .iter()
            .map(|r| match r.cells[i] {
                Cell::Duration(v) | Cell::Bytes(v) => v,
                ref other => panic!("{other:?}"),
            })
            .collect();
        assert!(
            values.windows(2).all(|w| w[0] >= w[1]),
            "{file}: {values:?}"
        );
    }
    let shapes = read_key_averages(&dir.join("variant_input_shapes.txt"), &strict()).unwrap();
    assert!(shapes.column("Input Shapes").is_some());
    let flops =
        read_key_averages(&dir.join("prof_0_local_0_cpu_time_total.txt"), &strict()).unwrap();
    let mm = flops.rows.iter().find(|r| r.name() == "aten::mm").unwrap();
    let i = flops.column("Total KFLOPs").unwrap();
    assert!(matches!(mm.cells[i], Cell::Flops(f) if f > 1e3));
    let titled = read_key_averages(&dir.join("variant_header.txt"), &strict()).unwrap();
    assert_eq!(titled.title.as_deref(), Some("TRAIN STEP PROFILE"));
    let plain = read_key_averages(&dir.join("variant_no_memory.txt"), &strict()).unwrap();
    assert!(plain.column("CPU Mem").is_none() && plain.column("# of Calls").is_some());
    assert_eq!(
        sniff_path(&dir.join("variant_header.txt")).unwrap().kind(),
        ContentKind::KeyAveragesTable
    );
}

const HEADER: &str = "----------  ------------  ------------\n      Name      Self CPU    # of Calls\n----------  ------------  ------------\n";

fn parse(text: &str, strict_mode: bool) -> Result<KeyAveragesTable, TraceError> {
    let opts = if strict_mode { strict() } else { lenient(1) };
    key_averages_from_bytes(Path::new("hostile.txt"), text.as_bytes(), &opts)
}

#[test]
fn hostile_tables_are_errors_or_counted_never_panics() {
    let garbage = format!(
        "{HEADER}    aten::mm     12.0parsecs            3\n    aten::t     1.000us            2\n"
    );
    let lenient_table = parse(&garbage, false).unwrap();
    assert_eq!(
        (lenient_table.rows.len(), lenient_table.skipped_rows),
        (1, 1)
    );
    assert_eq!(lenient_table.first_skipped_line, Some(4));
    let err = parse(&garbage, true).unwrap_err().to_string();
    assert!(
        err.contains("hostile.txt") && err.contains("line 4"),
        "{err}"
    );

    let huge = format!("{HEADER}{}\n", "x".repeat(100_000));
    let err = parse(&huge, false).unwrap_err().to_string();
    assert!(
        err.contains("line 4") && err.contains("longer than"),
        "{err}"
    );

    let ragged = format!(
        "{HEADER}a\n  é€  1.0us\nname with spaces  -1.5ms  7 extra columns here\nzz  nan%  NaN\n"
    );
    let table = parse(&ragged, false).unwrap();
    assert!(
        table.rows.len() + table.skipped_rows as usize == 4,
        "{table:?}"
    );
    assert!(parse("hello\n", false).is_err());
    let many_columns = format!("{}\nName  Self CPU\n", "-  ".repeat(100));
    assert!(parse(&many_columns, false).is_err());
    for cut in 0..HEADER.len() {
        let _ = parse(&HEADER[..cut], false);
    }
}

/// Tables with device columns printed by CUDA PyTorch 2.11 on an H100, where the
/// `CUDA time avg` header overflows its column: every column is named as printed, no row
/// is skipped, and each row's numbers agree with each other (average × calls = total,
/// within the printed precision), which they would not if the headers were shifted.
#[test]
fn h100_tables_with_an_overflowing_header_read_every_row() {
    let dir = fixtures_dir().join("key_averages/h100-torch2.11");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 6);
    for path in files {
        let table = read_key_averages(&path, &strict()).unwrap();
        let headers: Vec<&str> = table.columns.iter().map(|c| c.header.as_str()).collect();
        for h in [
            "Name",
            "Self CUDA",
            "Self CUDA %",
            "CUDA total",
            "CUDA time avg",
            "CPU Mem",
            "Self CUDA Mem",
            "# of Calls",
        ] {
            assert!(headers.contains(&h), "{}: {headers:?}", path.display());
        }
        assert_eq!(table.skipped_rows, 0, "{}", path.display());
        assert!(table.rows.len() >= 10, "{}", path.display());
        let ns = |row: &kinetoscope_trace::TableRow, h: &str| match &row.cells
            [table.column(h).unwrap()]
        {
            Cell::Duration(ns) => *ns as f64,
            other => panic!("{}: {h}: {other:?}", path.display()),
        };
        for row in &table.rows {
            let calls = row.cells[table.column("# of Calls").unwrap()]
                .count()
                .unwrap() as f64;
            for (avg, total) in [
                ("CPU time avg", "CPU total"),
                ("CUDA time avg", "CUDA total"),
            ] {
                let (a, t) = (ns(row, avg), ns(row, total));
                // Each is printed to 3 decimals of its own unit: allow 1 ns per call
                // plus the rounding of the total.
                assert!(
                    (a * calls - t).abs() <= t * 0.0005 + calls + 1.0,
                    "{}: {}: {avg} {a} × {calls} vs {total} {t}",
                    path.display(),
                    row.name()
                );
            }
        }
    }
}
