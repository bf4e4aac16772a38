//! Tampered baselines for `kinetoscope diff`: a saved report is input like a trace. Each
//! is made at test time from a real report of the corpus; every run must end with 0, 1
//! or 2 (an error naming the file), in bounded memory, with the inputs unchanged.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::harness::{fingerprint, run_measured};
use crate::common::{corpus, kinetoscope};

/// A real saved report of the clean corpus trace, as JSON.
fn saved_report() -> Value {
    let t = corpus().join("clean/trace.json.gz");
    let r = kinetoscope(
        Path::new("."),
        &["report", t.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// Run `diff BASE clean-trace` on the tampered `base` text; returns the exit code and
/// stderr after the harness's checks.
fn diff_against(dir: &Path, name: &str, text: &str) -> (Option<i32>, String) {
    let base = dir.join(name);
    std::fs::write(&base, text).unwrap();
    let trace = corpus().join("clean/trace.json.gz");
    let inputs: Vec<PathBuf> = vec![base.clone(), trace.clone()];
    let before = fingerprint(&inputs);
    let run = run_measured(
        dir,
        &[
            "diff",
            base.to_str().unwrap(),
            trace.to_str().unwrap(),
            "--fail-if",
            "step_time.median > +5%",
            "--fail-if",
            "memory.peak > +1GiB",
        ],
    );
    run.assert_sane(512 << 20);
    assert_eq!(before, fingerprint(&inputs));
    (run.code, run.err())
}

#[test]
fn absurd_numbers_in_a_saved_report_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = saved_report();
    let t = &mut v["traces"][0];
    let step = serde_json::json!({"dur_ns": i64::MIN, "breakdown_ns": {
        "kernel": i64::MAX, "memcpy": i64::MIN, "memset": 0, "communication": -1,
        "runtime": i64::MAX, "dataloader": 0, "cpu_exec": 0, "other": 0}});
    t["profile"]["steps"] = Value::Array(vec![step; 20_000]);
    t["profile"]["ops"][0]["host_self_ns"] = Value::from(i64::MAX);
    t["profile"]["ops"][0]["calls"] = Value::from(u64::MAX);
    t["summary"]["memory"][0]["peak_allocated_bytes"] = Value::from(i64::MIN);
    t["profile"]["memory"][0]["growth_per_step_bytes"] = Value::from(1e308);
    let (code, err) = diff_against(dir.path(), "absurd.json", &v.to_string());
    assert!(matches!(code, Some(0 | 1)), "{err}");
}

#[test]
fn broken_saved_reports_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = saved_report().to_string();
    let cases = [
        ("truncated.json", text[..text.len() / 2].to_owned()),
        (
            "future.json",
            text.replacen("\"schema_version\":3", "\"schema_version\":999", 1),
        ),
        (
            "wrong_shape.json",
            "{\"schema_version\": 3, \"traces\": 7}".to_owned(),
        ),
        (
            "huge_version.json",
            "{\"schema_version\": 99999999999999999999}".to_owned(),
        ),
    ];
    for (name, text) in cases {
        let (code, err) = diff_against(dir.path(), name, &text);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
    }
}
