//! Outputs never touch inputs: `memory … --html OUT` refuses an `OUT` that is, through
//! a hard or symbolic link or by name, a file it reads or would read (the input, a file
//! of an input folder, a run folder's snapshot or timeline, the timeline beside a
//! trace), and otherwise replaces only the name given, through a temporary file.

use std::path::{Path, PathBuf};

use super::harness::{fingerprint, run_measured, Measured};
use crate::common::{fixtures, memory_snapshots, memory_timelines};

/// Bound on a run's peak RSS: the inputs are small fixtures.
const MAX_RSS: u64 = 256 << 20;

/// A trace with memory records.
const MEMORY_TRACE: &str = "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz";

/// `kinetoscope memory INPUT --html OUT` in `dir`, sane whatever it decides.
fn html(dir: &Path, input: &Path, out: &Path) -> Measured {
    let run = run_measured(
        dir,
        &[
            "memory",
            input.to_str().expect("UTF-8"),
            "--html",
            out.to_str().expect("UTF-8"),
        ],
    );
    run.assert_sane(MAX_RSS);
    run
}

/// Assert `OUT` was refused: exit 2, a message naming the file it would have
/// overwritten, and every file under `inputs` unchanged.
fn assert_refused(dir: &Path, input: &Path, out: &Path, names: &Path, inputs: &[PathBuf]) {
    let before = fingerprint(inputs);
    let run = html(dir, input, out);
    assert_eq!(
        run.code,
        Some(2),
        "{} accepted: {}",
        out.display(),
        run.err()
    );
    let err = run.err();
    assert!(
        err.contains("refusing to write over") && err.contains(&*names.to_string_lossy()),
        "{err}"
    );
    assert_eq!(before, fingerprint(inputs), "an input changed");
}

/// Copy `from` to `dir/name`.
fn copy(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).expect("copy fixture");
    to
}

/// A hard link and a symbolic link to `target`, in a folder of their own.
fn links_to(target: &Path, dir: &Path, stem: &str) -> [PathBuf; 2] {
    let links = dir.join("links");
    std::fs::create_dir_all(&links).expect("mkdir");
    let hard = links.join(format!("{stem}-hard.html"));
    let soft = links.join(format!("{stem}-soft.html"));
    std::fs::hard_link(target, &hard).expect("hard link");
    std::os::unix::fs::symlink(target, &soft).expect("symlink");
    [hard, soft]
}

#[test]
fn an_output_linked_to_the_input_is_refused_for_every_kind_of_input() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let inputs = [
        copy(&fixtures().join(MEMORY_TRACE), dir, "trace.json.gz"),
        copy(
            &memory_snapshots().join("v2_6_full.pickle"),
            dir,
            "snap.pickle",
        ),
        copy(
            &memory_timelines().join("torch-2.2.2_mem_coalesced_memory_timeline.json"),
            dir,
            "timeline.json",
        ),
    ];
    for (i, input) in inputs.iter().enumerate() {
        // The input itself, then a hard and a symbolic link to it.
        assert_refused(dir, input, input, input, &inputs);
        for link in links_to(input, dir, &format!("input{i}")) {
            assert_refused(dir, input, &link, input, &inputs);
        }
    }
}

/// A run folder with one phase: its trace, CUDA memory snapshot and memory timeline.
fn run_folder(dir: &Path) -> (PathBuf, [PathBuf; 3]) {
    let run = dir.join("run");
    std::fs::create_dir(&run).expect("mkdir");
    let files = [
        copy(
            &fixtures().join(MEMORY_TRACE),
            &run,
            "stage1-train_trace.json.gz",
        ),
        copy(
            &memory_snapshots().join("v2_6_full.pickle"),
            &run,
            "stage1-train_mem.pickle",
        ),
        copy(
            &memory_timelines().join("torch-2.2.2_mem_coalesced_memory_timeline.json"),
            &run,
            "stage1-train_memory_timeline.json",
        ),
    ];
    (run, files)
}

#[test]
fn a_run_folders_files_are_never_written_over() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let (run, files) = run_folder(dir);
    let all = [run.clone()];
    for (i, f) in files.iter().enumerate() {
        // Named directly and through links.
        assert_refused(dir, &run, f, f, &all);
        for link in links_to(f, dir, &format!("phase{i}")) {
            assert_refused(dir, &run, &link, f, &all);
        }
    }
    // With the phase's trace alone as input, the timeline beside it is still read.
    assert_refused(dir, &files[0], &files[2], &files[2], &all);
    // A new file in the folder is fine, and is not mistaken for an input next time.
    let chart = run.join("chart.html");
    let first = html(dir, &run, &chart);
    assert_eq!(first.code, Some(0), "{}", first.err());
    let again = html(dir, &run, &chart);
    assert_eq!(again.code, Some(0), "{}", again.err());
}

#[test]
fn the_timeline_beside_a_trace_and_a_rank_folders_files_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    // A trace and, beside it, the memory timeline `memory` compares it with.
    let pair = dir.join("pair");
    std::fs::create_dir(&pair).expect("mkdir");
    let src = memory_timelines().join("torch-2.2.2");
    let trace = copy(
        &src.join("plain.pt.trace.json.gz"),
        &pair,
        "plain.pt.trace.json.gz",
    );
    let timeline = copy(&src.join("mem.raw.json.gz"), &pair, "mem.raw.json.gz");
    let both = [pair.clone()];
    assert_refused(dir, &trace, &timeline, &timeline, &both);
    for link in links_to(&timeline, dir, "beside") {
        assert_refused(dir, &trace, &link, &timeline, &both);
    }
    // Each trace of a rank folder.
    let ranks = dir.join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    for r in 0..2 {
        copy(
            &fixtures().join(format!("ranks/sampled_rank-{r}.json.gz")),
            &ranks,
            &format!("rank-{r}.json.gz"),
        );
    }
    let rank1 = ranks.join("rank-1.json.gz");
    assert_refused(dir, &ranks, &rank1, &rank1, std::slice::from_ref(&ranks));
    for link in links_to(&rank1, dir, "rank") {
        assert_refused(dir, &ranks, &link, &rank1, std::slice::from_ref(&ranks));
    }
}

/// The files of `dir` whose name starts with `.kinetoscope-` (temporary files).
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".kinetoscope-"))
        })
        .collect()
}

#[test]
fn only_the_name_given_is_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let input = copy(&fixtures().join(MEMORY_TRACE), dir, "trace.json.gz");
    let out_dir = dir.join("out");
    std::fs::create_dir(&out_dir).expect("mkdir");
    // OUT hard-linked to a file that is not an input: OUT gets the page, the other
    // name keeps its content.
    let keep = out_dir.join("keep.txt");
    std::fs::write(&keep, "keep me").expect("write");
    let out = out_dir.join("hard.html");
    std::fs::hard_link(&keep, &out).expect("hard link");
    let run = html(dir, &input, &out);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert_eq!(std::fs::read_to_string(&keep).expect("read"), "keep me");
    assert!(std::fs::read_to_string(&out)
        .expect("read")
        .starts_with("<!DOCTYPE html>"));
    // OUT a symbolic link to a file that is not an input: the link is replaced by the
    // page, its target left alone.
    let target = out_dir.join("target.txt");
    std::fs::write(&target, "target").expect("write");
    let link = out_dir.join("soft.html");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let run = html(dir, &input, &link);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "target");
    let meta = std::fs::symlink_metadata(&link).expect("stat");
    assert!(meta.is_file(), "the link was followed, not replaced");
    // Writing again over an existing OUT keeps its permissions.
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let run = html(dir, &input, &out);
    assert_eq!(run.code, Some(0), "{}", run.err());
    let mode = std::fs::metadata(&out).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert_eq!(leftovers(&out_dir), Vec::<PathBuf>::new());
    // A device is written in place, never replaced.
    let run = html(dir, &input, Path::new("/dev/null"));
    assert_eq!(run.code, Some(0), "{}", run.err());
    let null = std::fs::metadata("/dev/null").expect("stat").file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(&null));
}

#[test]
fn an_output_that_cannot_be_written_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let input = copy(&fixtures().join(MEMORY_TRACE), dir, "trace.json.gz");
    let run = html(dir, &input, dir);
    assert_eq!(run.code, Some(2));
    assert!(run.err().contains("is a folder"), "{}", run.err());
    let missing = dir.join("no/such/folder/chart.html");
    let run = html(dir, &input, &missing);
    assert_eq!(run.code, Some(2));
    assert!(run.err().contains("no/such/folder"), "{}", run.err());
    assert!(!missing.exists());
}

/// `kinetoscope report INPUT --html OUT` (plus `extra`) in `dir`, sane whatever it decides.
fn report_html(dir: &Path, input: &Path, out: &Path, extra: &[&str]) -> Measured {
    let mut args = vec![
        "report",
        input.to_str().expect("UTF-8"),
        "--html",
        out.to_str().expect("UTF-8"),
    ];
    args.extend_from_slice(extra);
    let run = run_measured(dir, &args);
    run.assert_sane(MAX_RSS);
    run
}

/// `kinetoscope report INPUT --xlsx OUT [extra]` in `dir`, sane whatever it decides.
fn xlsx(dir: &Path, input: &Path, out: &Path, extra: &[&str]) -> Measured {
    let mut args = vec![
        "report",
        input.to_str().expect("UTF-8"),
        "--xlsx",
        out.to_str().expect("UTF-8"),
    ];
    args.extend(extra);
    let run = run_measured(dir, &args);
    run.assert_sane(MAX_RSS);
    run
}

#[test]
fn report_html_never_writes_over_what_it_reads() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let ranks = dir.join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    let traces = [
        copy(
            &fixtures().join("ranks/sampled_rank-0.json.gz"),
            &ranks,
            "rank0.json.gz",
        ),
        copy(
            &fixtures().join("ranks/sampled_rank-1.json.gz"),
            &ranks,
            "rank1.json.gz",
        ),
    ];
    let config = dir.join("thresholds.toml");
    std::fs::write(&config, "").expect("config");
    let mut inputs = traces.to_vec();
    inputs.push(config.clone());
    let before = fingerprint(&inputs);
    let cfg = ["--config", config.to_str().unwrap()];
    // A rank file, a link to one, the --config file: each refused, naming it.
    let [hard, soft] = links_to(&traces[1], dir, "rank1");
    for (out, names) in [
        (&traces[0], &traces[0]),
        (&hard, &traces[1]),
        (&soft, &traces[1]),
        (&config, &config),
    ] {
        let run = report_html(dir, &ranks, out, &cfg);
        assert_eq!(
            run.code,
            Some(2),
            "{} accepted: {}",
            out.display(),
            run.err()
        );
        assert!(
            run.err().contains("refusing to write over")
                && run.err().contains(&*names.to_string_lossy()),
            "{}",
            run.err()
        );
    }
    assert_eq!(before, fingerprint(&inputs), "an input changed");
    // A new name is written, with the budget asked for.
    let page = dir.join("page.html");
    let run = report_html(dir, &ranks, &page, &["--html-budget", "300KB"]);
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.err());
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("\"budget_bytes\":300000"));
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

#[test]
fn a_workbook_never_overwrites_a_trace_a_rank_file_or_the_config() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let trace = copy(&fixtures().join(MEMORY_TRACE), dir, "trace.json.gz");
    let ranks = dir.join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    let rank0 = copy(
        &fixtures().join("ranks/sampled_rank-0.json.gz"),
        &ranks,
        "rank-0.json.gz",
    );
    copy(
        &fixtures().join("ranks/sampled_rank-1.json.gz"),
        &ranks,
        "rank-1.json.gz",
    );
    let config = dir.join("advisor.toml");
    std::fs::write(&config, "[dataloader_stall]\nwarning_pct = 10\n").expect("write");
    let inputs = [trace.clone(), ranks.clone(), config.clone()];
    let refused = |input: &Path, out: &Path, names: &Path, extra: &[&str]| {
        let before = fingerprint(&inputs);
        let run = xlsx(dir, input, out, extra);
        let err = run.err();
        assert_eq!(run.code, Some(2), "{} accepted: {err}", out.display());
        assert!(
            err.contains("refusing to write over") && err.contains(&*names.to_string_lossy()),
            "{err}"
        );
        assert_eq!(before, fingerprint(&inputs), "an input changed");
    };
    refused(&trace, &trace, &trace, &[]);
    for link in links_to(&trace, dir, "trace") {
        refused(&trace, &link, &trace, &[]);
    }
    refused(&ranks, &rank0, &rank0, &[]);
    let config_arg = config.to_str().expect("UTF-8");
    refused(&trace, &config, &config, &["--config", config_arg]);
    // A new file is written, and is a zip (an .xlsx).
    let out = dir.join("report.xlsx");
    let run = xlsx(dir, &ranks, &out, &[]);
    assert_eq!(run.code, Some(0), "{}", run.err());
    let bytes = std::fs::read(&out).expect("the workbook");
    assert!(bytes.starts_with(b"PK\x03\x04"), "not a zip");
}
