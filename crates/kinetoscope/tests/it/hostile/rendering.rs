//! Hostile names: operator, kernel, thread, process and device names and file names that
//! carry terminal escapes (ANSI CSI, OSC 52, BEL, NUL, CR, a C1 CSI, DEL, a right-to-left
//! override), spreadsheet formulas, and HTML that would break the memory chart's page.
//! Every view in every format must show them without one raw control byte; JSON keeps
//! them exactly (escaped); CSV defuses formulas; the HTML page renders in Chromium.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::harness::{fingerprint, run_measured, Measured};
use crate::common::fixtures;

/// What every injected name ends with: CSI colour, OSC 52 (clipboard) ended by BEL,
/// NUL, CR, a C1 CSI, DEL and a right-to-left override.
const INJECTED: &str = "\u{1b}[31mRED\u{1b}]52;c;aGk=\u{7}\0\r\u{9b}\u{7f}\u{202e}evil";

/// The same, as the sanitiser shows it.
const SHOWN: &str = r"\x1b[31mRED\x1b]52;c;aGk=\x07\x00\x0d\x9b\x7f\u202eevil";

/// How the escapes start when shown (file names lack the NUL, so views that show only
/// paths hold this much of [`SHOWN`]).
const SHOWN_START: &str = r"\x1b[31mRED\x1b]52;c;aGk=\x07";

/// Bound on a run's peak RSS: the inputs are a few MB.
const MAX_RSS: u64 = 512 << 20;

/// A fixture's JSON (plain or gzip).
fn load(name: &str) -> Value {
    let bytes = std::fs::read(fixtures().join(name)).expect("fixture");
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .expect("gzip fixture");
    } else {
        text = String::from_utf8(bytes).expect("UTF-8 fixture");
    }
    serde_json::from_str(&text).expect("JSON fixture")
}

/// Rewrite every `"name"` string (events, threads, processes, devices) with `f`, but
/// step markers and memory records, whose names the analyses match exactly.
fn rename(v: &mut Value, f: &impl Fn(&str) -> String) {
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                match x {
                    Value::String(s)
                        if k == "name" && !s.starts_with("ProfilerStep") && s != "[memory]" =>
                    {
                        *s = f(s);
                    }
                    _ => rename(x, f),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|x| rename(x, f)),
        _ => {}
    }
}

/// Write fixture `name` to `out` with every name passed through `f`.
pub(super) fn write_renamed(name: &str, out: &Path, f: impl Fn(&str) -> String) {
    let mut trace = load(name);
    rename(&mut trace, &f);
    std::fs::write(out, serde_json::to_vec(&trace).expect("serialise")).expect("write trace");
}

/// In `dir`: a two-rank folder and a trace with memory records, every name (and every
/// file and folder name) ending with [`INJECTED`] (NUL excepted in file names).
fn injected_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let in_path = INJECTED.replace('\0', "");
    let ranks = dir.join(format!("ranks{in_path}"));
    std::fs::create_dir(&ranks).expect("mkdir");
    for r in 0..2 {
        write_renamed(
            &format!("ranks/sampled_rank-{r}.json.gz"),
            &ranks.join(format!("rank-{r}{in_path}.json")),
            |s| format!("{s}{INJECTED}"),
        );
    }
    let memory = dir.join(format!("memory{in_path}.json"));
    write_renamed(
        "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
        &memory,
        |s| format!("{s}{INJECTED}"),
    );
    (ranks, memory)
}

/// Every view with the formats it has (`report` and `summary` have no CSV).
const VIEWS: &[(&str, &[&str])] = &[
    ("report", &["table", "json"]),
    ("summary", &["table", "json"]),
    ("overview", &["table", "json", "csv"]),
    ("ops", &["table", "json", "csv"]),
    ("kernels", &["table", "json", "csv"]),
    ("temporal", &["table", "json", "csv"]),
    ("idle", &["table", "json", "csv"]),
    ("launches", &["table", "json", "csv"]),
    ("comm", &["table", "json", "csv"]),
    ("ranks", &["table", "json", "csv"]),
    ("sequences", &["table", "json", "csv"]),
    ("critical-path", &["table", "json", "csv"]),
    ("memory", &["table", "json", "csv"]),
    ("check", &["table", "json", "csv"]),
];

/// Run `view input --format format` (plus `extra`), which must be sane (exit 0–2, no
/// raw control byte on stdout or stderr, under the memory bound).
fn run_view(dir: &Path, view: &str, input: &Path, format: &str, extra: &[&str]) -> Measured {
    let input = input.to_str().expect("UTF-8 path");
    let mut args = vec![view, input, "--format", format];
    args.extend_from_slice(extra);
    let run = run_measured(dir, &args);
    run.assert_sane(MAX_RSS);
    run
}

/// Every string anywhere in a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|x| strings(x, out)),
        Value::Object(map) => {
            for (k, x) in map {
                out.push(k.clone());
                strings(x, out);
            }
        }
        _ => {}
    }
}

#[test]
fn injected_names_reach_no_view_raw_in_any_format() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (ranks, memory) = injected_inputs(tmp.path());
    let before = fingerprint(&[ranks.clone(), memory.clone()]);
    for (view, formats) in VIEWS {
        let input = if *view == "memory" { &memory } else { &ranks };
        for format in *formats {
            let run = run_view(tmp.path(), view, input, format, &[]);
            assert_eq!(run.code, Some(0), "{view} {format}: {}", run.err());
            let out = run.out();
            if *format == "json" {
                // JSON keeps the names exactly, escaped.
                let doc: Value = serde_json::from_slice(&run.stdout).expect("JSON");
                let mut all = Vec::new();
                strings(&doc, &mut all);
                assert!(
                    all.iter().any(|s| s.contains("\u{1b}[31mRED\u{1b}]52")),
                    "{view} json lost the names"
                );
            } else if *format == "table" || !["idle", "launches", "ranks"].contains(view) {
                // (Those three CSVs have rank and stream columns, no name.)
                assert!(
                    out.contains(SHOWN_START),
                    "{view} {format} shows no name:\n{out}"
                );
            }
            if ["ops", "kernels", "memory"].contains(view) && *format != "json" {
                assert!(
                    out.contains(SHOWN),
                    "{view} {format} shows no op name:\n{out}"
                );
            }
        }
    }
    // A single trace of the folder (the file name alone carries the escapes).
    let one = std::fs::read_dir(&ranks)
        .expect("read_dir")
        .next()
        .expect("a rank")
        .expect("entry")
        .path();
    for view in ["summary", "overview", "ops", "kernels"] {
        let run = run_view(tmp.path(), view, &one, "table", &[]);
        assert_eq!(run.code, Some(0), "{view}: {}", run.err());
    }
    assert_eq!(before, fingerprint(&[ranks, memory]));
}

#[test]
fn errors_hints_and_notes_on_stderr_are_sanitised() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (ranks, memory) = injected_inputs(tmp.path());
    // A file that is not a trace, named with escapes: the error names it visibly.
    let bad = tmp
        .path()
        .join(format!("bad{}.json", INJECTED.replace('\0', "")));
    std::fs::write(&bad, b"\x80\x04\x95 pickle-ish").expect("write");
    let run = run_view(tmp.path(), "summary", &bad, "table", &[]);
    assert_eq!(run.code, Some(2));
    assert!(run.err().contains(r"bad\x1b[31mRED"), "{}", run.err());
    // A note on stderr (CSV of a view with notes) and a missing path.
    let run = run_view(tmp.path(), "memory", &ranks, "csv", &[]);
    assert!(run.err().contains(SHOWN_START), "{}", run.err());
    let missing = tmp.path().join("missing\u{1b}[2J.json");
    let run = run_view(tmp.path(), "ops", &missing, "table", &[]);
    assert_eq!(run.code, Some(2));
    assert!(run.err().contains(r"missing\x1b[2J.json"), "{}", run.err());
    let run = run_view(tmp.path(), "ranks", &memory, "table", &[]);
    assert_eq!(run.code, Some(2));
    assert!(run.err().contains(r"memory\x1b[31mRED"), "{}", run.err());
}

/// The cell of column `column` in each CSV record of `text`.
fn column(text: &str, column: &str) -> Vec<String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let headers = r.headers().expect("CSV header").clone();
    let i = headers
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column} in {headers:?}"));
    r.records()
        .map(|rec| rec.expect("CSV record")[i].to_owned())
        .collect()
}

#[test]
fn csv_cells_that_spreadsheets_would_run_are_prefixed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let trace = tmp.path().join("formulas.json");
    // Each name gets one of the formula starts, in turn by its length.
    const STARTS: [&str; 6] = ["=1+2*", "+cmd|", "-2+3", "@SUM(1)", "\t=x", "\r=x"];
    write_renamed("gpu_metrics_input.json", &trace, |s| {
        format!("{}{s}", STARTS[s.len() % STARTS.len()])
    });
    for (view, col) in [("ops", "name"), ("kernels", "name")] {
        let run = run_view(tmp.path(), view, &trace, "csv", &["--top", "0"]);
        assert_eq!(run.code, Some(0), "{}", run.err());
        let names = column(&run.out(), col);
        assert!(names.len() >= 5, "{view}: {names:?}");
        for n in &names {
            assert!(
                n.starts_with('\''),
                "{view}: {n:?} is not defused ({names:?})"
            );
            assert!(!n.contains(['\t', '\r']), "{view}: raw tab or CR in {n:?}");
        }
    }
    // Numbers stay numbers, negative ones included.
    let run = run_view(tmp.path(), "overview", &trace, "csv", &[]);
    for line in run.out().lines().skip(1) {
        assert!(!line.contains('\''), "a number was prefixed: {line}");
    }
}

#[test]
fn the_html_page_renders_with_injected_paths_in_chromium() {
    let Some(exe) = crate::memory_html_browser::chromium_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    // A folder whose name opens an HTML comment and a script, with ampersands, line
    // separators and escapes; two traces with memory records in it.
    let hostile = "run<!--<script>&amp;\u{2028}\u{2029}\u{1b}[31m";
    let dir = tmp.path().join(hostile);
    std::fs::create_dir(&dir).expect("mkdir");
    for r in 0..2 {
        write_renamed(
            "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
            &dir.join(format!("rank{r}<!--<script>.json")),
            |s| format!("{s}</script><!--<script>{INJECTED}"),
        );
    }
    let page = tmp.path().join("chart.html");
    let run = run_measured(
        tmp.path(),
        &[
            "memory",
            dir.to_str().expect("UTF-8"),
            "--html",
            page.to_str().expect("UTF-8"),
        ],
    );
    run.assert_sane(MAX_RSS);
    assert_eq!(run.code, Some(0), "{}", run.err());
    let html = std::fs::read_to_string(&page).expect("page");
    assert_eq!(html.matches("<script").count(), 2, "an element was opened");
    assert!(!html.contains("<!--"), "a comment was opened");
    let profile = tempfile::tempdir().expect("tempdir");
    let dom = crate::memory_html_browser::chromium(
        &exe,
        profile.path(),
        &["--dump-dom".to_owned()],
        &page,
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("data-rendered=\"yes\""),
        "the page's script did not finish: {}",
        &dom[..dom.len().min(2000)]
    );
    // Both charts, titled with the hostile path as text, not markup.
    assert_eq!(dom.matches("class=\"chart-title\"").count(), 2, "{dom}");
    assert!(dom.contains("rank0&lt;!--&lt;script&gt;.json"), "{dom}");
    assert!(
        dom.matches("class=\"area\"").count() >= 2,
        "no stacked areas"
    );
}
