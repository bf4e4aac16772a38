//! `kinetoscope diff`: the gate's exit codes, the three formats, a saved baseline, and
//! refused expressions and inputs.

use std::path::Path;

use crate::common::{corpus, kinetoscope, pair, Run};

fn diff(base: &Path, new: &Path, extra: &[&str]) -> Run {
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let mut args = vec!["diff", b, n];
    args.extend_from_slice(extra);
    kinetoscope(Path::new("."), &args)
}

#[test]
fn a_tripped_gate_exits_1_with_expression_values_and_evidence() {
    let (b, n) = pair("pairs-h100", "slowdown");
    let r = diff(
        &b,
        &n,
        &[
            "--fail-if",
            "step_time.median > +5%",
            "--fail-if",
            "findings.new >= critical",
        ],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let fail = r
        .stdout
        .lines()
        .find(|l| l.starts_with("gate FAIL"))
        .expect(&r.stdout);
    assert!(
        fail.contains("step_time.median > +5%") && fail.contains("base 1.90 ms → new 2.43 ms"),
        "{fail}"
    );
    assert!(r.stdout.contains("95 % CI") && r.stdout.contains("significant"));
    assert!(r.stdout.contains("gate pass: findings.new >= critical"));
    assert!(r.stdout.contains("gate failed: 1 of 2 checks"));
    // The same pair the other way round passes.
    let back = diff(&n, &b, &["--fail-if", "step_time.median > +5%"]);
    assert_eq!(back.code, Some(0), "{}", back.stdout);
}

#[test]
fn noise_passes_and_says_so() {
    let (b, n) = pair("pairs", "repeat");
    let r = diff(
        &b,
        &n,
        &[
            "--fail-if",
            "step_time.median > +5%",
            "--fail-if",
            "ops.calls > 0",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(r.stdout.contains("gate passed"));
}

#[test]
fn json_has_the_documented_sections() {
    let (b, n) = pair("pairs", "item_sync");
    let r = diff(&b, &n, &["--format", "json", "--fail-if", "sync.calls > 0"]);
    let v = r.json();
    assert_eq!(v["schema_version"], 3);
    for key in ["delta_median_ns", "ci_low_ns", "ci_high_ns", "verdict"] {
        assert!(v["steps"].get(key).is_some(), "steps.{key}");
    }
    assert!(v["steps"]["base"]["median_ns"].is_number());
    for row in v["breakdown"].as_array().unwrap() {
        for key in ["category", "base_ns", "new_ns", "delta_ns"] {
            assert!(row.get(key).is_some(), "breakdown[].{key}");
        }
    }
    for key in ["key", "status", "base_ns", "new_ns", "delta_ns", "match"] {
        assert!(
            v["ops"][0].get(key).is_some() || key == "key",
            "ops[].{key}"
        );
    }
    assert!(
        ["added", "removed", "changed", "same"].contains(&v["ops"][0]["status"].as_str().unwrap())
    );
    assert!(v["memory"]["devices"].is_array() && v["memory"]["growth_bytes_per_step"].is_object());
    for key in ["new", "resolved", "changed"] {
        assert!(v["findings"][key].is_array(), "findings.{key}");
    }
    assert_eq!(v["gate"]["passed"], true);
    assert!(v["gate"]["failed"].as_array().unwrap().is_empty());
}

#[test]
fn html_is_one_offline_page_with_escaped_names() {
    let (b, n) = pair("pairs-h100", "tf32");
    let r = diff(&b, &n, &["--format", "html"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let h = &r.stdout;
    assert!(h.starts_with("<!DOCTYPE html>") && h.trim_end().ends_with("</html>"));
    assert!(!h.contains("http://") && !h.contains("https://") && !h.contains("<script"));
    assert!(h.contains("class=\"bar b\"") && h.contains("renamed"));
    // Kernel names hold `<` and `>`: escaped, never raw markup.
    assert!(h.contains("Kernel2&lt;cutlass") && !h.contains("Kernel2<cutlass"));
}

#[test]
fn a_saved_report_is_a_baseline() {
    let (b, n) = pair("pairs", "leak");
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("baseline.json");
    let report = kinetoscope(
        Path::new("."),
        &["report", b.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(report.code, Some(0));
    std::fs::write(&saved, &report.stdout).unwrap();
    let r = diff(&saved, &n, &["--fail-if", "memory.growth > +64KiB"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("saved report, schema 3"));
    assert!(r.stdout.contains("resolved  [warning] ME001"));
    // The leak put back into the new run trips the gate.
    let r = diff(&saved, &b, &["--fail-if", "memory.growth > +64KiB"]);
    assert_eq!(
        r.code,
        Some(0),
        "the same run: no growth change\n{}",
        r.stdout
    );
    let r = diff(&n, &saved, &["--fail-if", "memory.growth > +64KiB"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
}

#[test]
fn bad_expressions_and_inputs_are_errors() {
    let t = corpus().join("clean/trace.json.gz");
    let r = diff(&t, &t, &["--fail-if", "step_time.median >> 5%"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("--fail-if"), "{}", r.stderr);
    let r = diff(&t, &t, &["--fail-if", "memory.peak > +5ms"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("B, KB, MB"), "{}", r.stderr);
    let r = diff(&t, &t, &["--fail-if", "latency > 1"]);
    assert!(
        r.stderr.contains("unknown metric") && r.stderr.contains("step_time.median"),
        "{}",
        r.stderr
    );
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(&old, "{\"schema_version\": 2, \"input\": \"x\"}").unwrap();
    let r = diff(&old, &t, &[]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("schema 2") && r.stderr.contains("hint: save the baseline again"),
        "{}",
        r.stderr
    );
    let missing = dir.path().join("missing.json");
    let r = diff(&missing, &t, &[]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

#[test]
fn throughput_from_the_batch_size() {
    let (b, n) = pair("pairs", "dataloader");
    let r = diff(
        &b,
        &n,
        &[
            "--batch-size",
            "256",
            "--format",
            "json",
            "--fail-if",
            "throughput < -5%",
        ],
    );
    let v = r.json();
    let t = &v["gpu"]["throughput"];
    assert_eq!(t["unit"], "samples");
    let median = v["steps"]["base"]["median_ns"].as_f64().unwrap();
    assert!((t["base"].as_f64().unwrap() - 256.0 / (median / 1e9)).abs() < 1e-6);
    assert!(t["new"].as_f64().unwrap() > t["base"].as_f64().unwrap());
}

#[test]
fn report_shows_throughput_at_the_median_step() {
    let (b, _) = pair("pairs", "dataloader");
    let b = b.to_str().unwrap();
    let v = kinetoscope(
        Path::new("."),
        &["report", b, "--batch-size", "256", "--format", "json"],
    )
    .json();
    let t = &v["throughput"];
    let median = t["median_step_ns"].as_f64().unwrap();
    assert_eq!(
        median,
        v["traces"][0]["summary"]["step_stats"]["median_ns"]
            .as_f64()
            .unwrap()
    );
    assert!((t["items_per_s"].as_f64().unwrap() - 256.0 / (median / 1e9)).abs() < 1e-6);
    let table = kinetoscope(Path::new("."), &["report", b, "--tokens-per-step", "4096"]);
    assert!(
        table
            .stdout
            .contains("tokens/s at the median step (4096 tokens per step"),
        "{}",
        table.stdout
    );
    let bad = kinetoscope(Path::new("."), &["report", b, "--batch-size", "0"]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr
            .contains("--batch-size must be a positive number"),
        "{}",
        bad.stderr
    );
}
