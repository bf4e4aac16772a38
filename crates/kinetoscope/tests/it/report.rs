//! End-to-end checks of `kinetoscope report` on the advisor corpus (corpus/traces):
//! exit codes with `--fail-on`, the JSON document's findings, thresholds from
//! `--config` and `--set`, and a rank folder's cross-rank findings.

use crate::common::{corpus, kinetoscope};

/// `kinetoscope args` in `corpus/traces`: exit code, stdout, stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    kinetoscope(&corpus(), args).into_parts()
}

#[test]
fn fail_on_sets_exit_code_1() {
    let (code, out, err) = run(&["report", "dataloader/trace.json.gz", "--fail-on", "warning"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains("IN001 DataloaderStall"), "{out}");
    // Six steps: the critical threshold is crossed but gated to a warning.
    let (code, _, err) = run(&[
        "report",
        "dataloader/trace.json.gz",
        "--fail-on",
        "critical",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(&[
        "dataloader/trace.json.gz",
        "--fail-on",
        "critical",
        "--set",
        "gating.min_steps_critical=2",
    ]);
    assert_eq!(code, Some(1), "{err}");
    let (code, _, err) = run(&["report", "clean/trace.json.gz", "--fail-on", "warning"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn json_findings_have_the_documented_fields() {
    let (code, out, err) = run(&["report", "item_sync/trace.json.gz", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["schema_version"], 3);
    let f = &v["findings"][0];
    assert_eq!(f["id"], "SY001");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["subject"], "SY001:trace");
    for key in ["impact_ns_per_step", "impact_share"] {
        assert!(f[key].is_number(), "{key}: {f}");
    }
    assert!(f["evidence"].as_array().is_some_and(|e| !e.is_empty()));
    assert!(f["fix"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(f["confidence"]["steps"].is_number());
    assert!(v["traces"][0]["summary"]["step_stats"]["mean_ns"].is_number());
    assert!(v["traces"][0]["flops"]["flops_per_step"].is_number());
}

#[test]
fn config_file_changes_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("advisor.toml");
    std::fs::write(&cfg, "[dataloader_stall]\nwarning_pct = 99.0\n").unwrap();
    let cfg = cfg.display().to_string();
    let (code, out, err) = run(&[
        "report",
        "dataloader/trace.json.gz",
        "--config",
        &cfg,
        "--fail-on",
        "warning",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("IN001"), "{out}");
    std::fs::write(dir.path().join("bad.toml"), "[no_such_rule]\nx = 1\n").unwrap();
    let bad = dir.path().join("bad.toml").display().to_string();
    let (code, _, err) = run(&["report", "clean/trace.json.gz", "--config", &bad]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no_such_rule"), "{err}");
}

#[test]
fn rank_folder_reports_the_straggler() {
    let (code, out, err) = run(&["report", "straggler", "--fail-on", "warning"]);
    assert_eq!(code, Some(1), "{err}");
    let job = out
        .find("Findings of the job (straggler, 2 ranks read)")
        .expect(&out);
    let straggler = out
        .find("DI001 StragglerRank: Rank 1 is a straggler")
        .expect(&out);
    assert!(job < straggler, "{out}");
    // Each rank's summary, then each problem once for the job, with its ranks.
    assert_eq!(out.matches("kinetoscope report: straggler/").count(), 2);
    assert!(
        out.contains("    ranks       seen on 1 · per step least"),
        "{out}"
    );
    assert!(!out.contains("Findings ("), "no per-rank lists: {out}");
}

/// Past eight ranks, the terminal shows one line per rank (PARAM's eight ranks and a
/// copy of rank 0: nine traces) and the job's findings once, each over its ranks.
#[test]
fn many_ranks_take_one_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let param = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto");
    let mut names = Vec::new();
    for f in std::fs::read_dir(&param).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_str().unwrap().to_owned();
        std::fs::copy(&f, dir.path().join(&name)).unwrap();
        names.push(name);
    }
    names.sort();
    std::fs::copy(
        param.join(&names[0]),
        dir.path().join(names[0].replace("worker0", "worker8")),
    )
    .unwrap();
    let out = kinetoscope(dir.path(), &["report", "."]);
    let (code, out, err) = out.into_parts();
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("rank folder .: 9 ranks"), "{out}");
    assert!(
        !out.contains("kinetoscope report: "),
        "no per-rank sections: {out}"
    );
    let (table, job) = out
        .split_once("Findings of the job (., 9 ranks read)")
        .expect(&out);
    // One row per trace, each naming its file.
    names.push(names[0].replace("worker0", "worker8"));
    for n in &names {
        assert_eq!(table.matches(n.as_str()).count(), 1, "{n}: {table}");
    }
    let json = kinetoscope(dir.path(), &["report", ".", "--format", "json"]).json();
    let findings = json["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert_eq!(
        job.matches("    ranks       seen on ").count(),
        findings.len()
    );
    for f in findings {
        assert_eq!(f["confidence"]["of_ranks"], 9);
        // Rank 0 twice is one rank.
        assert!(f["confidence"]["ranks"].as_u64().unwrap() <= 8);
    }
}

/// `report --format json` over a rank folder is written trace by trace as it is made:
/// the same document as the terminal run reports (the straggler among the cross-rank
/// findings), and a reader that stops early (`| head`) is not an error.
#[test]
fn streamed_json_is_whole_and_a_closed_pipe_is_no_error() {
    let v = kinetoscope(&corpus(), &["report", "straggler", "--format", "json"]).json();
    assert_eq!(v["layout"], "rank_folder");
    let traces = v["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    assert!(traces.iter().all(|t| t["profile"]["ops"]
        .as_array()
        .is_some_and(|o| !o.is_empty())));
    assert_eq!(v["cross_rank_findings"][0]["id"], "DI001");

    // PARAM's 8 ranks: 2.4 MB of JSON, far more than a pipe holds.
    let param = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["report", "dlrm_kineto", "--format", "json"])
        .current_dir(param.parent().unwrap())
        .env("KINETOSCOPE_CACHE_DIR", crate::common::cache_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut head).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(&head[..1], b"{");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A run folder: one table of the phases side by side, and no phase the traces lack is
/// printed as 0 (no DataLoader in this run; model construction and the optimizer step
/// run no forward pass).
#[test]
fn run_folder_report_has_the_phases_side_by_side() {
    let (code, out, err) = run(&["report", "run_folder"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("run folder run_folder: 4 phases"), "{out}");
    assert!(!out.contains("DataLoader"), "{out}");
    assert!(!out.contains(" 0 ns"), "{out}");
    assert!(out.contains("forward"), "{out}");
    let v = kinetoscope(&corpus(), &["report", "run_folder", "--format", "json"]).json();
    let phases = v["run"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    assert_eq!(phases[2]["phase"], "training_microsteps");
    assert_eq!(phases[2]["phases"]["forward_source"], "module_spans");
    assert!(phases[2]["phases"]["dataloader_ns"].is_null());
    assert_eq!(phases[3]["findings"][0]["id"], "OP001");
}

#[test]
fn peak_tflops_gives_mfu() {
    let (code, out, err) = run(&["report", "clean/trace.json.gz", "--peak-tflops", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("against --peak-tflops 1"), "{out}");
}

#[test]
fn xlsx_writes_the_workbook_and_prints_the_same_report() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("dataloader.xlsx");
    let out_arg = out.to_str().expect("UTF-8");
    let (code, plain, err) = run(&["report", "dataloader/trace.json.gz"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, with_xlsx, err) = run(&["report", "dataloader/trace.json.gz", "--xlsx", out_arg]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(plain, with_xlsx);
    assert!(err.contains(out_arg), "{err}");
    let bytes = std::fs::read(&out).expect("the workbook");
    assert!(bytes.starts_with(b"PK\x03\x04"), "not a zip");
    // The gate still applies.
    let (code, _, err) = run(&[
        "report",
        "dataloader/trace.json.gz",
        "--xlsx",
        out_arg,
        "--fail-on",
        "warning",
    ]);
    assert_eq!(code, Some(1), "{err}");
}
