//! Arguments at their limits: no value of any numeric, size or path argument makes the
//! binary panic or hang; `-j` beyond the cores available is clamped with a note.

use std::path::Path;

use super::harness::{run_measured, Measured};
use crate::common::{fixtures, memory_snapshots, memory_timelines};

/// Bound on a run's peak RSS: the inputs are small fixtures.
const MAX_RSS: u64 = 512 << 20;

/// `usize::MAX` and `u32::MAX` as typed on a command line.
const USIZE_MAX: &str = "18446744073709551615";
const U32_MAX: &str = "4294967295";

/// Run `args` in the fixtures folder: see [`sane_in`].
fn sane(args: &[&str]) -> Measured {
    sane_in(&fixtures(), args)
}

/// Run `args` in `dir`: it must end by itself with 0, 1 or 2, print no raw control
/// byte, stay under the memory bound and never panic.
fn sane_in(dir: &Path, args: &[&str]) -> Measured {
    let run = run_measured(dir, args);
    run.assert_sane(MAX_RSS);
    assert!(
        !run.err().contains("panicked"),
        "{args:?} panicked: {}",
        run.err()
    );
    run
}

#[test]
fn threads_beyond_the_cores_are_clamped_with_a_note() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for view in ["summary", "report", "ranks", "memory", "ops"] {
        let run = sane(&[view, "ranks", "-j", "100000"]);
        assert_eq!(run.code, Some(0), "{view}: {}", run.err());
        assert!(
            run.err().contains(&format!(
                "note: -j 100000: using {cores} thread{}",
                if cores == 1 { "" } else { "s" }
            )),
            "{view}: {}",
            run.err()
        );
    }
    for j in ["0", USIZE_MAX] {
        let run = sane(&["summary", "ranks/sampled_rank-0.json.gz", "-j", j]);
        assert_eq!(run.code, Some(0), "-j {j}: {}", run.err());
        assert!(run.err().contains(&format!("note: -j {j}: using")));
    }
    // Within the cores: no note.
    let run = sane(&["summary", "ranks", "-j", "1"]);
    assert!(!run.err().contains("note: -j"), "{}", run.err());
}

#[test]
fn row_counts_and_points_at_their_limits() {
    let table_views = [
        "overview", "ops", "kernels", "temporal", "idle", "launches", "comm", "ranks", "memory",
    ];
    for view in table_views {
        for top in ["0", USIZE_MAX] {
            for format in ["table", "csv"] {
                let run = sane(&[view, "ranks", "--top", top, "--format", format]);
                assert_eq!(run.code, Some(0), "{view} --top {top}: {}", run.err());
            }
        }
    }
    let snapshot = memory_snapshots().join("v2_6_full.pickle");
    let timeline = memory_timelines().join("torch-2.2.2_mem_coalesced_memory_timeline.json");
    let memory_trace = "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz";
    for input in [
        memory_trace,
        snapshot.to_str().expect("UTF-8"),
        timeline.to_str().expect("UTF-8"),
    ] {
        for points in ["10", U32_MAX] {
            let run = sane(&["memory", input, "--points", points, "--top", USIZE_MAX]);
            assert_eq!(
                run.code,
                Some(0),
                "{input} --points {points}: {}",
                run.err()
            );
        }
        // Below the minimum, and not a number: clap's error.
        for points in ["9", "-1", "1e3", "4294967296", "99999999999"] {
            let run = sane(&["memory", input, "--points", points]);
            assert!(matches!(run.code, Some(0 | 2)), "{points}");
        }
    }
}

#[test]
fn times_and_lengths_at_their_limits() {
    let floats = ["NaN", "inf", "-inf", "-1", "0", "1e308", "-1e308", "1e-300"];
    for x in floats {
        sane(&["idle", "ranks", &format!("--kernel-wait-us={x}")]);
        sane(&[
            "launches",
            "ranks",
            "--format",
            "csv",
            &format!("--runtime-cutoff-us={x}"),
            &format!("--delay-cutoff-us={x}"),
        ]);
        let run = sane(&["report", "ranks", &format!("--peak-tflops={x}")]);
        if x.parse::<f64>().is_ok_and(|p| p.is_nan() || p <= 0.0) {
            assert_eq!(run.code, Some(2), "--peak-tflops {x}: {}", run.err());
        }
    }
    let lengths = [
        ("0", "0"),
        ("1", "1"),
        (USIZE_MAX, USIZE_MAX),
        ("1", USIZE_MAX),
        (USIZE_MAX, "1"),
    ];
    for (min, max) in lengths {
        for op in [None, Some("mm")] {
            let mut args = vec![
                "sequences",
                "ranks",
                "--min-len",
                min,
                "--max-len",
                max,
                "--top",
                USIZE_MAX,
            ];
            args.extend(op.map(|o| ["--op", o]).into_iter().flatten());
            let run = sane(&args);
            assert_eq!(run.code, Some(0), "{args:?}: {}", run.err());
        }
    }
    for step in [
        "-9223372036854775808",
        "9223372036854775807",
        "0",
        "-1",
        "3",
    ] {
        for input in ["ranks", "backward_thread.json"] {
            sane(&[
                "critical-path",
                input,
                &format!("--step={step}"),
                "--top",
                USIZE_MAX,
            ]);
        }
    }
    for device in [
        "gpu99999999999999999999",
        "cuda:-1",
        "",
        "cpu",
        "gpu4294967296",
    ] {
        sane(&["memory", "ranks", &format!("--device={device}")]);
    }
}

/// Every threshold key of the advisor's configuration, with whether it is an integer.
fn threshold_keys() -> Vec<(String, bool)> {
    let config = serde_json::to_value(kinetoscope_advisor::Config::default()).expect("config");
    let mut keys = Vec::new();
    for (section, table) in config.as_object().expect("sections") {
        let Some(table) = table.as_object() else {
            continue;
        };
        for (key, value) in table {
            keys.push((format!("{section}.{key}"), value.is_u64() || value.is_i64()));
        }
    }
    keys
}

#[test]
fn every_threshold_at_its_limits() {
    let keys = threshold_keys();
    assert!(keys.len() > 30, "{keys:?}");
    let floats = ["nan", "inf", "-inf", "1e308", "-1e308", "-1", "0"];
    let ints = ["0", "-1", "9223372036854775807", "-9223372036854775808"];
    for (values, integer) in [(&floats[..], false), (&ints[..], true)] {
        for value in values {
            let mut args = vec!["report".to_owned(), "ranks".to_owned()];
            for (key, is_int) in &keys {
                // Each key gets a value of its own type (or 0 for a negative count).
                let v = if *is_int == integer {
                    value
                } else if *is_int {
                    "0"
                } else {
                    "1.5"
                };
                args.extend(["--set".to_owned(), format!("{key}={v}")]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            sane(&args);
        }
    }
}

#[test]
fn path_arguments_that_are_not_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cwd = tmp.path();
    let trace = fixtures().join("backward_thread.json");
    let trace = trace.to_str().expect("UTF-8");
    let long = "a".repeat(5000);
    let folder = cwd.join("folder");
    std::fs::create_dir(&folder).expect("mkdir");
    let folder = folder.to_str().expect("UTF-8");
    for path in [folder, "/dev/null", "no/such/file.json", long.as_str(), ""] {
        sane_in(cwd, &["summary", path]);
        sane_in(cwd, &["report", trace, "--config", path]);
        sane_in(cwd, &["memory", trace, "--timeline", path]);
        sane_in(cwd, &["memory", trace, "--html", path]);
    }
    sane_in(cwd, &["memory", trace, "--html", "/"]);
    // No page and no temporary file was left in the working folder.
    let left: Vec<_> = std::fs::read_dir(cwd)
        .expect("read_dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["folder"], "{left:?}");
    // A configuration without end is refused at its cap, not read until memory runs out.
    let run = sane_in(cwd, &["report", trace, "--config", "/dev/zero"]);
    assert_eq!(run.code, Some(2));
    assert!(run.err().contains("larger than 1024 KiB"), "{}", run.err());
}
