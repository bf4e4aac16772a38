//! `kinetoscope memory --html` rendered by a real headless browser (Chromium): the DOM
//! after the page's script ran must hold the peak label with its value, a legend entry
//! per category and the stacked areas; a screenshot is kept under
//! `target/tmp/memory_html/` for people to look at.
//!
//! Chromium is looked for at `/usr/bin/chromium`, then on `PATH`. Without it the test
//! prints why and passes, unless `KINETOSCOPE_REQUIRE_BROWSER` is set (CI sets it).

// Printing the skip reason and the screenshot path is this test's job.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{kinetoscope, memory_snapshots, memory_timelines};

fn find_chromium() -> Option<PathBuf> {
    let fixed = PathBuf::from("/usr/bin/chromium");
    if fixed.is_file() {
        return Some(fixed);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

/// Chromium, or `None` after saying why the test is skipped (a failure when
/// `KINETOSCOPE_REQUIRE_BROWSER` is set).
pub(crate) fn chromium_or_skip() -> Option<PathBuf> {
    match find_chromium() {
        Some(c) => Some(c),
        None if std::env::var_os("KINETOSCOPE_REQUIRE_BROWSER").is_some() => {
            panic!("KINETOSCOPE_REQUIRE_BROWSER is set but chromium was not found")
        }
        None => {
            println!(
                "SKIPPED memory_html_browser: chromium not found (/usr/bin/chromium or PATH); \
                 install it (apt-get install chromium) or set KINETOSCOPE_REQUIRE_BROWSER=1 \
                 to make this a failure"
            );
            None
        }
    }
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory_html");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run chromium headless with the flags that keep it off the network.
pub(crate) fn chromium(
    exe: &Path,
    profile: &Path,
    extra: &[String],
    page: &Path,
) -> std::process::Output {
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    args.extend(extra.iter().cloned());
    args.push(format!("file://{}", page.display()));
    Command::new(exe)
        .args(&args)
        .output()
        .expect("run chromium")
}

/// `kinetoscope memory INPUT --html OUT`, which must succeed.
fn write_html(input: &Path, out: &Path) {
    let run = kinetoscope(
        &memory_timelines(),
        &[
            "memory",
            input.to_str().unwrap(),
            "--html",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// Render `page`, check the DOM, keep a screenshot; returns the DOM.
fn render_and_check(exe: &Path, page: &Path, shot_name: &str, expect: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let dom = chromium(exe, profile.path(), &["--dump-dom".to_owned()], page);
    let dom_text = String::from_utf8_lossy(&dom.stdout).into_owned();
    assert!(
        dom_text.contains("data-rendered=\"yes\""),
        "the page's script did not finish: {}\n{}",
        &dom_text[..dom_text.len().min(2000)],
        String::from_utf8_lossy(&dom.stderr)
    );
    for e in expect {
        assert!(dom_text.contains(e.as_str()), "rendered DOM lacks {e:?}");
    }
    // The stacked areas and the peak marker are in the SVG.
    assert!(
        dom_text.matches("class=\"area\"").count() >= 2,
        "no stacked areas"
    );
    assert!(dom_text.contains("class=\"peak-text\""), "no peak marker");
    let shot = out_dir().join(shot_name);
    let _ = std::fs::remove_file(&shot);
    let profile2 = tempfile::tempdir().unwrap();
    let run = chromium(
        exe,
        profile2.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,800".to_owned(),
        ],
        page,
    );
    let meta = std::fs::metadata(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {}: {e}\n{}",
            shot.display(),
            String::from_utf8_lossy(&run.stderr)
        )
    });
    assert!(meta.len() > 10_000, "screenshot too small to hold a chart");
    println!("screenshot: {}", shot.display());
    dom_text
}

fn legend(name: &str) -> String {
    format!("<span class=\"legend-name\">{name}</span>")
}

#[test]
fn timeline_chart_renders_in_chromium() {
    let Some(exe) = chromium_or_skip() else {
        return;
    };
    let page = out_dir().join("timeline.html");
    write_html(
        &memory_timelines().join("torch-2.2.2/mem.raw.json.gz"),
        &page,
    );
    let mut expect = vec![
        "id=\"peak-label-0\">Peak: 229.2 KiB at +2.324 ms<".to_owned(),
        ">peak 229.2 KiB<".to_owned(),
        ">69.5 KiB at peak<".to_owned(),
    ];
    for c in [
        "parameter",
        "optimizer_state",
        "input",
        "temporary",
        "activation",
        "gradient",
        "autograd_detail",
        "unknown",
    ] {
        expect.push(legend(c));
    }
    render_and_check(&exe, &page, "timeline.png", &expect);
}

#[test]
fn trace_chart_renders_in_chromium() {
    let Some(exe) = chromium_or_skip() else {
        return;
    };
    let page = out_dir().join("trace.html");
    write_html(
        &memory_timelines().join("torch-2.2.2/plain.pt.trace.json.gz"),
        &page,
    );
    let mut expect = vec!["id=\"peak-label-0\">Peak: 140.3 KiB at +2.833 ms<".to_owned()];
    for c in ["temporary", "activation", "gradient", "untracked"] {
        expect.push(legend(c));
    }
    render_and_check(&exe, &page, "trace.png", &expect);
}

#[test]
fn snapshot_chart_renders_in_chromium() {
    let Some(exe) = chromium_or_skip() else {
        return;
    };
    let page = out_dir().join("snapshot.html");
    write_html(&memory_snapshots().join("v2_6_full.pickle"), &page);
    let expect = vec![
        "id=\"peak-label-0\">Peak: 14.5 MiB at +3.100 ms<".to_owned(),
        legend("active"),
        legend("reserved_unused"),
    ];
    let dom = render_and_check(&exe, &page, "snapshot.png", &expect);
    assert!(dom.contains("GPU0 (CUDA memory snapshot)"));
}
