//! The web UI's offline page (`report --html`) with hostile names: operator, thread and
//! file names that would close the data's `<script>` element, open a comment, inject an
//! element with a handler, or break a line in old JavaScript. The file must keep them
//! inside its JSON, and in Chromium every page must show them as text (no element made
//! from a trace's text, no script run).

use super::harness::run_measured;
use crate::browser::{browser, open_page, texts};

/// What every renamed name ends with.
const HOSTILE: &str =
    "</script><!--<script>&amp;<img src=x onerror=\"window.pwned=1\">\u{2028}\u{2029}\u{1b}[31m";

#[test]
fn report_html_keeps_hostile_names_as_text() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("run<!--<script>&amp;\u{2028}");
    std::fs::create_dir(&dir).expect("mkdir");
    for r in 0..2 {
        super::rendering::write_renamed(
            "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
            &dir.join(format!("rank{r}<!--<script>.json")),
            |s| format!("{s}{HOSTILE}"),
        );
    }
    let page = tmp.path().join("page.html");
    // A small budget: the file is read back here, in the process the suite measures.
    let args = [
        "report",
        dir.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
        "--html-budget",
        "512KB",
    ];
    let run = run_measured(tmp.path(), &args);
    run.assert_sane(512 << 20);
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.err());
    let html = std::fs::read_to_string(&page).expect("page");
    // The data element, the chart library and the app: nothing else opened or closed.
    assert_eq!(html.matches("<script").count(), 3, "an element was opened");
    assert_eq!(
        html.matches("</script>").count(),
        3,
        "an element was closed"
    );
    assert!(!html.contains("<!--"), "a comment was opened");
    assert!(!html.contains('\u{2028}') && !html.contains('\u{2029}'));

    let Some(mut b) = browser() else { return };
    let url = format!("file://{}", page.display());
    let ops = crate::common::json(
        tmp.path(),
        &[
            "ops",
            dir.to_str().unwrap(),
            "--format",
            "json",
            "--top",
            "100",
        ],
    );
    for p in [
        "overview",
        "ops",
        "kernels",
        "memory",
        "distributed",
        "trace",
    ] {
        open_page(&mut b, &url, p, &format!("hostile-{p}.png"));
        assert_eq!(
            b.eval("document.querySelectorAll('main img').length"),
            0,
            "{p}"
        );
        assert_eq!(
            b.eval("window.pwned === undefined"),
            true,
            "{p}: a handler ran"
        );
        if p == "ops" {
            let shown = texts(&mut b, "table.ops td[data-key=name]");
            let names: Vec<&str> = ops["traces"][0]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["name"].as_str().unwrap())
                .collect();
            assert_eq!(shown, names, "names shown exactly, as text");
            assert!(shown.iter().any(|n| n.ends_with(HOSTILE)));
        }
    }
}
