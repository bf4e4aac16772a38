//! End-to-end tests of `kinetoscope comm`, `kinetoscope ranks` and `kinetoscope
//! sequences`: the real two-rank folder (HTA's `trace_filter`), a folder made by
//! `kinetoscope-synth` with a planted slow rank, JSON and CSV output, and errors.

use std::path::Path;

use kinetoscope_synth::decimal::Factor;
use kinetoscope_synth::{load_source, write_ranks, LoadOptions, RankOptions, Target};

use crate::common::{corpus, json, kinetoscope, rank_folder};

/// 4 ranks, rank 2 slowed down 1.3× by the generator.
fn slow_folder(dir: &Path) {
    let src_path = rank_folder().join("sampled_rank-0.json.gz");
    let src = load_source(&src_path, &LoadOptions::default()).unwrap();
    write_ranks(
        &src,
        Some(&src_path),
        dir,
        &RankOptions {
            ranks: 4,
            gzip: true,
            slow: Some((2, Factor::parse("1.3").unwrap())),
            target: Target::Copies(1),
            jobs: 2,
        },
    )
    .unwrap();
}

#[test]
fn ranks_names_the_planted_slow_rank() {
    let dir = tempfile::tempdir().unwrap();
    slow_folder(dir.path());
    let p = dir.path().to_str().unwrap();
    let v = json(&rank_folder(), &["ranks", p, "--format", "json"]);
    assert_eq!(v["schema_version"], 3);
    let report = &v["report"];
    assert_eq!(report["ranks"].as_array().unwrap().len(), 4);
    assert_eq!(report["stragglers"][0]["rank"], 2);
    assert!(report["skew"]["matched"].as_u64().unwrap() > 0);

    let t = kinetoscope(&rank_folder(), &["ranks", p]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert!(t.stdout.contains("Stragglers"));
    assert!(t.stdout.contains("  1. rank 2"), "{}", t.stdout);
    assert!(t.stdout.contains("arrived last at"));

    let csv = kinetoscope(&rank_folder(), &["ranks", p, "--format", "csv"]);
    assert_eq!(csv.code, Some(0));
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert!(lines[0].starts_with("rank,steps,mean_step_us"));
    assert_eq!(lines.len(), 5);
}

#[test]
fn ranks_on_the_real_folder() {
    let p = rank_folder();
    let v = json(
        &rank_folder(),
        &["ranks", p.to_str().unwrap(), "--format", "json"],
    );
    let ranks = v["report"]["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    assert_eq!(ranks[0]["collectives"], 10);
    assert_eq!(v["report"]["clock"]["mode"], "auto");
}

/// `ranks` and `report` name the same straggler on the corpus's Gloo run (rank 1 sleeps
/// 30 ms per step before its all-reduces), from the same collectives; `report` over a
/// Parquet export of the ranks gives the same finding.
#[test]
fn ranks_and_report_agree_on_the_gloo_straggler() {
    let folder = corpus().join("straggler");
    let p = folder.to_str().unwrap();
    let v = json(&rank_folder(), &["ranks", p, "--format", "json"]);
    let r = &v["report"];
    assert_eq!(r["straggler_basis"], "caused_wait");
    assert_eq!(r["skew"]["matched"], 60);
    assert_eq!(r["skew"]["matched_by"]["order"], 60);
    let stragglers = r["stragglers"].as_array().unwrap();
    assert_eq!(stragglers.len(), 1, "{stragglers:#?}");
    assert_eq!(stragglers[0]["rank"], 1);
    let report = json(&rank_folder(), &["report", p, "--format", "json"]);
    let di001 = di001_findings(&report);
    assert_eq!(di001.len(), 1);
    assert_eq!(di001[0]["rank"], 1);
    let what_if = stragglers[0]["what_if_saving_per_step_ns"]
        .as_f64()
        .unwrap();
    let caused = stragglers[0]["caused_wait_per_step_ns"].as_f64().unwrap();
    assert!(what_if > 0.0 && what_if <= caused, "{what_if} vs {caused}");
    let impact = di001[0]["impact_ns_per_step"].as_f64().unwrap();
    assert!((impact - what_if).abs() < 1.0, "{impact} vs {what_if}");

    // The same finding from a Parquet export of the ranks, as a user on a cluster runs it.
    let dir = tempfile::tempdir().unwrap();
    export_gives_the_same_di001(p, &dir.path().join("export"), di001[0]);
}

#[test]
fn ranks_needs_a_folder_of_two() {
    let f = rank_folder().join("sampled_rank-0.json.gz");
    let r = kinetoscope(&rank_folder(), &["ranks", f.to_str().unwrap()]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("at least two rank trace files"),
        "{}",
        r.stderr
    );
}

#[test]
fn comm_hta_compat_matches_reference() {
    let p = rank_folder();
    let v = json(
        &rank_folder(),
        &[
            "comm",
            p.to_str().unwrap(),
            "--hta-compat",
            "--format",
            "json",
        ],
    );
    let traces = v["traces"].as_array().unwrap();
    let pct: Vec<f64> = traces
        .iter()
        .map(|t| 100.0 * t["overlap"]["overlap_share"].as_f64().unwrap())
        .collect();
    // reference/hta/trace_filter/comm_comp_overlap.csv
    assert!((pct[0] - 11.81).abs() < 0.005, "{pct:?}");
    assert!((pct[1] - 20.05).abs() < 0.005, "{pct:?}");
    assert_eq!(traces[0]["overlap"]["definition"], "hta");
}

#[test]
fn comm_table_and_csv() {
    let f = rank_folder().join("sampled_rank-0.json.gz");
    let t = kinetoscope(&rank_folder(), &["comm", f.to_str().unwrap()]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert!(t.stdout.contains("communication/computation overlap"));
    // The kernels are all `ncclKernel_SendRecv_…`; the calls name the collectives.
    assert!(t.stdout.contains("all_to_all"), "{}", t.stdout);
    assert!(!t.stdout.contains("SendRecv"), "{}", t.stdout);
    assert!(t.stdout.contains("ProfilerStep#551"));
    let csv = kinetoscope(
        &rank_folder(),
        &["comm", f.to_str().unwrap(), "--format", "csv"],
    );
    assert!(csv
        .stdout
        .starts_with("trace,rank,collective,process_group,algorithm"));
    assert!(
        csv.stdout.contains(",all_to_all,,RING_SIMPLE,"),
        "{}",
        csv.stdout
    );
}

#[test]
fn sequences_step_and_operator_modes() {
    let f = rank_folder().join("sampled_rank-0.json.gz");
    let v = json(
        &rank_folder(),
        &[
            "sequences",
            f.to_str().unwrap(),
            "--format",
            "json",
            "--top",
            "3",
        ],
    );
    let t = &v["traces"][0];
    assert_eq!(t["scope"]["kind"], "step");
    let seqs = t["sequences"].as_array().unwrap();
    assert!(!seqs.is_empty() && seqs.len() <= 3);
    for s in seqs {
        assert!(s["kernels"].as_array().unwrap().len() >= 3);
        assert!(s["count"].as_u64().unwrap() >= 2);
    }
    let v = json(
        &rank_folder(),
        &[
            "sequences",
            f.to_str().unwrap(),
            "--op",
            "ProfilerStep",
            "--min-len",
            "3",
            "--format",
            "json",
        ],
    );
    let t = &v["traces"][0];
    assert_eq!(t["scope"]["name"], "ProfilerStep");
    assert!(t["roots"].as_u64().unwrap() >= 1);
    let csv = kinetoscope(
        &rank_folder(),
        &["sequences", f.to_str().unwrap(), "--format", "csv"],
    );
    assert!(csv
        .stdout
        .starts_with("trace,rank_by_count,operator,length,count"));
}

#[test]
fn critical_path_command() {
    let f = rank_folder().join("sampled_rank-0.json.gz");
    let t = kinetoscope(
        &rank_folder(),
        &["critical-path", f.to_str().unwrap(), "--step", "551"],
    );
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert!(t.stdout.contains("critical path of ProfilerStep#551"));
    assert!(t.stdout.contains("Time on the critical path"));
    let v = json(
        &rank_folder(),
        &["critical-path", f.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(v["traces"][0]["step"], "ProfilerStep#552");
    let csv = kinetoscope(
        &rank_folder(),
        &["critical-path", f.to_str().unwrap(), "--format", "csv"],
    );
    assert!(csv.stdout.starts_with("trace,step,category,time_us,pct"));
}

/// 16 ranks of the real 8-rank DLRM job's rank 0 (NCCL all-reduces and all-to-alls, two
/// steps), rank 5 computing 1.3× longer before each collective while the others wait
/// in it (`kinetoscope-synth --slow-rank 5 --slowdown 1.3`): `ranks` names rank 5 with
/// a what-if of the order of 0.3 × its compute before the collectives, and `report`'s
/// DI001 takes that what-if as its impact.
#[test]
fn what_if_on_sixteen_generated_ranks() {
    let src_path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto/\
         worker0_step_12.1694128201545.pt.trace.json.gz",
    );
    let src = load_source(&src_path, &LoadOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_ranks(
        &src,
        Some(&src_path),
        dir.path(),
        &RankOptions {
            ranks: 16,
            gzip: true,
            slow: Some((5, Factor::parse("1.3").unwrap())),
            target: Target::Copies(2),
            jobs: 2,
        },
    )
    .unwrap();
    let p = dir.path().to_str().unwrap();
    let v = json(&rank_folder(), &["ranks", p, "--format", "json"]);
    let r = &v["report"];
    assert_eq!(r["straggler_basis"], "caused_wait");
    let stragglers = r["stragglers"].as_array().unwrap();
    assert_eq!(stragglers.len(), 1, "{stragglers:#?}");
    let s = &stragglers[0];
    assert_eq!(s["rank"], 5);
    // Last at most collectives (at a few, calls follow each other with nothing between
    // them on any rank: a tie, the lowest rank counts as last).
    let (last, matched) = (
        s["arrived_last"].as_u64().unwrap(),
        s["matched"].as_u64().unwrap(),
    );
    assert!(2 * last > matched, "{last} of {matched}");
    let what_if = s["what_if_saving_per_step_ns"].as_f64().unwrap();
    let caused = s["caused_wait_per_step_ns"].as_f64().unwrap();
    let excess = s["outside_excess_ns"].as_f64().unwrap();
    // Never more than the others waited; nearly all of it, since every other rank
    // waits for it alike (where it is not last, a few collectives follow others with
    // no compute between them).
    assert!(
        what_if <= caused && what_if > 0.9 * caused,
        "{what_if} vs {caused}"
    );
    // The 0.3 × of its compute before the collectives: nearly all its extra time
    // outside them (a few ms per step), never more.
    assert!(
        what_if > 0.8 * excess && what_if <= excess * 1.001,
        "{what_if} vs {excess}"
    );
    assert!(what_if > 1e6 && what_if < 5e6, "{what_if}");
    // Per kind: the all-to-alls and all-reduces, rank 5 last most often at both.
    let kinds = r["skew"]["by_collective"].as_array().unwrap();
    assert_eq!(kinds.len(), 2, "{kinds:#?}");
    for k in kinds {
        assert_eq!(k["most_often_last_rank"], 5, "{k:#?}");
    }

    let t = kinetoscope(&rank_folder(), &["ranks", p]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert!(t.stdout.contains("what-if: computing like the median rank"));
    assert!(
        t.stdout.contains("Start skew per collective"),
        "{}",
        t.stdout
    );

    let report = json(&rank_folder(), &["report", p, "--format", "json"]);
    let di001 = di001_findings(&report);
    assert_eq!(di001.len(), 1);
    assert_eq!(di001[0]["rank"], 5);
    let impact = di001[0]["impact_ns_per_step"].as_f64().unwrap();
    assert!((impact - what_if).abs() < 1.0, "{impact} vs {what_if}");

    // The same finding from a Parquet export of the ranks, as a user on a cluster runs it.
    export_gives_the_same_di001(p, &dir.path().join("export"), di001[0]);
}

/// Export the rank folder `p` to Parquet in `out` and check that `report` over the
/// export gives `di001` (the finding over the traces) but for the input it names.
fn export_gives_the_same_di001(p: &str, out: &Path, di001: &serde_json::Value) {
    let o = out.to_str().unwrap();
    let e = kinetoscope(&rank_folder(), &["export", p, "--parquet", o]);
    assert_eq!(e.code, Some(0), "{}", e.stderr);
    let from_parquet = json(&rank_folder(), &["report", o, "--format", "json"]);
    assert_eq!(from_parquet["layout"], "parquet_export");
    assert_eq!(from_parquet["traces"].as_array().unwrap().len(), 0);
    let mut a = di001.clone();
    let mut b = di001_findings(&from_parquet)[0].clone();
    a.as_object_mut().unwrap().remove("trace");
    b.as_object_mut().unwrap().remove("trace");
    assert_eq!(a, b);
    let t = kinetoscope(&rank_folder(), &["report", o]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert!(t.stdout.contains("DI001"), "{}", t.stdout);
}

/// The report's DI001 (straggler rank) findings.
fn di001_findings(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    report["cross_rank_findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "DI001")
        .collect()
}
