//! `merge`: a rank folder to one timeline in each format, read back independently
//! (serde_json, gzip); outputs refused before anything is read.

use std::io::Read;

use serde_json::Value;

use crate::common::{kinetoscope, rank_folder};

fn merged_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("the merged file is JSON")
}

#[test]
fn merge_writes_one_process_per_rank_in_each_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = rank_folder();
    let folder = folder.to_str().expect("utf-8 path");
    for out in ["job.json", "job.json.gz", "job.pftrace"] {
        let run = kinetoscope(dir.path(), &["merge", folder, "-o", out]);
        assert_eq!(run.code, Some(0), "{out}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("wrote {out}")),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("2 ranks"), "{}", run.stderr);
    }
    let plain = std::fs::read(dir.path().join("job.json")).expect("json");
    let mut inflated = Vec::new();
    let gz = std::fs::read(dir.path().join("job.json.gz")).expect("gz");
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut inflated)
        .expect("gzip");
    assert_eq!(inflated, plain, "the .gz is the JSON compressed");
    let doc = merged_json(&plain);
    let events = doc["traceEvents"].as_array().expect("events");
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["rank 0", "rank 1"]);
    // Each rank's spans are its file's `X` events, counted here from the raw JSON.
    for (pid, file) in [(1, "sampled_rank-0.json.gz"), (2, "sampled_rank-1.json.gz")] {
        let mut raw = Vec::new();
        let gz = std::fs::read(rank_folder().join(file)).expect("rank file");
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut raw)
            .expect("gzip");
        let raw = merged_json(&raw);
        let expected = raw["traceEvents"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["ph"] == "X")
            .count();
        let spans = events
            .iter()
            .filter(|e| e["pid"] == pid && e["ph"] == "X")
            .count();
        assert_eq!(spans, expected, "pid {pid} holds {file}'s spans");
    }
    let pf = std::fs::read(dir.path().join("job.pftrace")).expect("pftrace");
    assert!(
        pf.len() < plain.len() / 2,
        "{} vs {}",
        pf.len(),
        plain.len()
    );
}

#[test]
fn merge_refuses_an_unknown_extension_and_an_input_before_reading() {
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = rank_folder();
    let run = kinetoscope(
        dir.path(),
        &["merge", folder.to_str().unwrap(), "-o", "job.txt"],
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains(".json, .json.gz or .pftrace"),
        "{}",
        run.stderr
    );
    let input = std::fs::read_dir(&folder)
        .expect("folder")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.to_string_lossy().ends_with(".json.gz") || p.to_string_lossy().ends_with(".json")
        })
        .expect("a trace");
    let before = std::fs::read(&input).expect("input");
    let run = kinetoscope(
        dir.path(),
        &[
            "merge",
            folder.to_str().unwrap(),
            "-o",
            input.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("refusing to write over"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read(&input).expect("input"),
        before,
        "input unchanged"
    );
}

#[test]
fn merge_of_a_folder_without_traces_is_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let run = kinetoscope(dir.path(), &["merge", "empty", "-o", "job.json"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("no trace files"), "{}", run.stderr);
    assert!(!dir.path().join("job.json").exists());
}
