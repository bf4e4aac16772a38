//! `kinetoscope trim`: the kept events checked against an independent reading of the
//! input with `serde_json` (which events a step window keeps, by the documented rule),
//! the output read back by both `serde_json` and kinetoscope's reader, every kept event
//! not repaired found byte for byte in the input, repairs on a synthetic defective trace
//! (`tests/fixtures/trim/README.md`), rank folders, and refused or unreadable inputs.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use kinetoscope_analysis::steps::find_steps;
use kinetoscope_trace::read::{read_trace, ReadOptions};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::common::{fixtures, kinetoscope, rank_folder};

/// ResNet-50 on a V100, PyTorch 1.9: six steps (5 to 10), kernels, `async` flows.
fn multi_step() -> PathBuf {
    fixtures().join("worker0.1623143089861.pt.trace.json.gz")
}

/// The synthetic trace with one of each defect.
fn defective() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trim/defective.json")
}

/// A file's text, inflated when gzip.
fn text(path: &Path) -> String {
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(raw).unwrap()
    }
}

#[derive(Deserialize)]
struct RawTrace<'a> {
    #[serde(borrow, rename = "traceEvents")]
    events: Vec<&'a RawValue>,
}

/// Each element of `traceEvents` as its exact text.
fn raw_events(text: &str) -> Vec<&str> {
    let t: RawTrace<'_> = serde_json::from_str(text).expect("valid JSON");
    t.events.into_iter().map(RawValue::get).collect()
}

/// Run `trim` with `args` into `out` under `dir`, with `--format json`; its reports.
fn trim(dir: &Path, input: &Path, out: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec![
        "trim",
        input.to_str().unwrap(),
        "-o",
        out,
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    let run = kinetoscope(dir, &all);
    run.json().as_array().expect("an array of reports").clone()
}

fn cat(e: &Value) -> &str {
    e["cat"].as_str().unwrap_or("")
}

fn ph(e: &Value) -> &str {
    e["ph"].as_str().unwrap_or("")
}

fn is_gpu(c: &str) -> bool {
    matches!(
        c,
        "Kernel" | "kernel" | "Memcpy" | "gpu_memcpy" | "Memset" | "gpu_memset"
    )
}

/// The events that the step-window rule keeps from `events` (ts in µs): host events
/// starting in `[lo, hi)`, GPU activities whose runtime call (by correlation) does.
fn expected_kept(events: &[Value], lo: f64, hi: f64) -> Vec<&Value> {
    let inside = |e: &Value| e["ts"].as_f64().is_some_and(|t| lo <= t && t < hi);
    let mut launches: HashMap<i64, bool> = HashMap::new();
    for e in events
        .iter()
        .filter(|e| matches!(cat(e), "Runtime" | "cuda_runtime"))
    {
        if let Some(c) = e["args"]["correlation"].as_i64() {
            launches.insert(c, inside(e));
        }
    }
    events
        .iter()
        .filter(|e| match ph(e) {
            "M" => true,
            "s" | "f" | "t" => false,
            _ if is_gpu(cat(e)) => match e["args"]["correlation"].as_i64() {
                Some(c) if launches.contains_key(&c) => launches[&c],
                _ => inside(e),
            },
            _ => inside(e),
        })
        .collect()
}

#[test]
fn steps_keep_exactly_the_events_of_those_steps() {
    let dir = tempfile::tempdir().unwrap();
    let reports = trim(dir.path(), &multi_step(), "out.json", &["--steps", "6..7"]);
    assert_eq!(
        reports[0]["steps"],
        serde_json::json!(["ProfilerStep#6", "ProfilerStep#7"])
    );
    let input = text(&multi_step());
    let output = text(&dir.path().join("out.json"));
    assert!(
        output.len() * 2 < input.len(),
        "{} vs {}",
        output.len(),
        input.len()
    );

    // Independent: the window from the input's ProfilerStep#6 and #7, then the rule.
    let events: Vec<Value> = raw_events(&input)
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    let steps: Vec<&Value> = events
        .iter()
        .filter(|e| {
            matches!(
                e["name"].as_str(),
                Some("ProfilerStep#6" | "ProfilerStep#7")
            )
        })
        .collect();
    let lo = steps
        .iter()
        .map(|e| e["ts"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    let hi = steps
        .iter()
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    let expected = expected_kept(&events, lo, hi);
    let kept: Vec<Value> = raw_events(&output)
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    let non_flow: Vec<&Value> = kept
        .iter()
        .filter(|e| !matches!(ph(e), "s" | "f"))
        .collect();
    assert_eq!(non_flow.len(), expected.len());
    let names = |v: &[&Value]| {
        let mut n: Vec<String> = v
            .iter()
            .map(|e| format!("{}|{}|{}", e["name"], e["ts"], e["tid"]))
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&non_flow), names(&expected));
    // GPU work launched in step 7 and running past its end is kept.
    assert!(kept
        .iter()
        .any(|e| is_gpu(cat(e)) && e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap() > hi));
    // Flows: both ends kept, or neither.
    let mut ends: HashMap<(String, i64), usize> = HashMap::new();
    for e in kept.iter().filter(|e| matches!(ph(e), "s" | "f")) {
        *ends
            .entry((cat(e).to_owned(), e["id"].as_i64().unwrap()))
            .or_default() += 1;
    }
    assert!(!ends.is_empty());
    assert!(ends.values().all(|&n| n == 2));

    // Every kept event is the input's bytes (nothing was repaired here).
    assert_eq!(reports[0]["elements_rewritten"], 0);
    let originals: HashSet<&str> = raw_events(&input).into_iter().collect();
    assert!(raw_events(&output).iter().all(|e| originals.contains(e)));
    // The top-level keys are the input's, byte for byte.
    let head = &input[..input.find("\"traceEvents\"").unwrap()];
    assert!(output.starts_with(head));

    // kinetoscope's reader agrees: the two steps, no defect.
    let trace = read_trace(&dir.path().join("out.json"), &ReadOptions::default()).unwrap();
    let (read_steps, _) = find_steps(&trace);
    let numbers: Vec<_> = read_steps.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [Some(6), Some(7)]);
    assert!(
        trace.report.defects.is_empty(),
        "{:?}",
        trace.report.defects
    );
}

#[test]
fn repairs_are_the_only_rewritten_events() {
    let dir = tempfile::tempdir().unwrap();
    let reports = trim(dir.path(), &defective(), "out.json.gz", &[]);
    let r = &reports[0];
    let json = &r["repairs"]["json"];
    assert_eq!(json["unescaped_quotes"], 2);
    assert_eq!(json["invalid_escapes"], 2);
    assert_eq!(json["control_chars"], 1);
    assert_eq!(json["bare_values"], 1);
    assert_eq!(r["repairs"]["moved_to_overlap_threads"], 1);
    assert_eq!(r["repairs"]["overlap_threads_added"], 1);
    assert_eq!(r["repairs"]["clipped_durations"], 1);
    let input = text(&defective());
    let output = text(&dir.path().join("out.json.gz"));
    let events = raw_events(&output);
    let parsed: Vec<Value> = events
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let by_name = |n: &str| parsed.iter().find(|e| e["name"] == n).unwrap();
    assert_eq!(by_name("aten::f(\"x\")")["ts"], 1002);
    assert_eq!(by_name("load")["args"]["File"], "C:\\Users\\me");
    assert_eq!(by_name("tab\there")["dur"], 2);
    assert_eq!(by_name("b")["tid"], 11);
    assert_eq!(by_name("k1")["dur"], 20);
    let added = parsed
        .iter()
        .find(|e| e["tid"] == 11 && ph(e) == "M")
        .unwrap();
    assert_eq!(added["args"]["name"], "main (overlap)");
    // Every other event is a substring of the input; the rewritten ones are not.
    let unchanged = events.iter().filter(|e| input.contains(*e)).count();
    assert_eq!(r["elements_rewritten"], 6);
    assert_eq!(events.len() - unchanged, 6 + 1);
    assert!(output.ends_with("], \"baseTimeNanoseconds\": 0, \"traceName\": \"defective.json\"}\n"));
}

#[test]
fn step_of_the_defective_trace_keeps_late_gpu_work_it_launched() {
    let dir = tempfile::tempdir().unwrap();
    trim(dir.path(), &defective(), "one.json", &["--steps", "1"]);
    let output = text(&dir.path().join("one.json"));
    let names: Vec<String> = raw_events(&output)
        .iter()
        .map(|e| serde_json::from_str::<Value>(e).unwrap()["name"].to_string())
        .collect();
    assert!(names.contains(&"\"k1\"".to_owned()), "{names:?}");
    assert!(!names.contains(&"\"k2\"".to_owned()), "{names:?}");
}

#[test]
fn ranks_of_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let reports = trim(
        dir.path(),
        &rank_folder(),
        "out",
        &["--ranks", "1", "--steps", "552"],
    );
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["rank"], 1);
    let files: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["sampled_rank-1.json.gz"]);
    let trace = read_trace(
        &dir.path().join("out/sampled_rank-1.json.gz"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(trace.meta.rank.as_ref().map(|r| r.value), Some(1));
    let (steps, _) = find_steps(&trace);
    assert_eq!(
        steps.iter().map(|s| s.number).collect::<Vec<_>>(),
        [Some(552)]
    );
}

#[test]
fn kernels_only_keeps_gpu_activities_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let input_path = rank_folder().join("sampled_rank-0.json.gz");
    trim(dir.path(), &input_path, "k.json", &["--kernels-only"]);
    let input: Vec<Value> = raw_events(&text(&input_path))
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let output: Vec<Value> = raw_events(&text(&dir.path().join("k.json")))
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let gpu = |v: &[Value]| v.iter().filter(|e| is_gpu(cat(e)) || ph(e) == "M").count();
    assert!(gpu(&input) > 100);
    assert_eq!(output.len(), gpu(&input));
    assert_eq!(gpu(&output), output.len());
}

#[test]
fn drop_stacks_drops_python_frames_only() {
    let dir = tempfile::tempdir().unwrap();
    let input_path = fixtures().join("torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz");
    trim(dir.path(), &input_path, "s.json", &["--drop-stacks"]);
    let count = |path: &Path| {
        let events: Vec<Value> = raw_events(&text(path))
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        let python = events
            .iter()
            .filter(|e| cat(e) == "python_function")
            .count();
        let other = events
            .iter()
            .filter(|e| cat(e) != "python_function" && !matches!(ph(e), "s" | "f"))
            .count();
        (python, other)
    };
    let (python_in, other_in) = count(&input_path);
    let (python_out, other_out) = count(&dir.path().join("s.json"));
    assert!(python_in > 500);
    assert_eq!(python_out, 0);
    assert_eq!(other_out, other_in);
    assert!(
        std::fs::metadata(dir.path().join("s.json")).unwrap().len() * 2
            < text(&input_path).len() as u64
    );
}

#[test]
fn refuses_to_overwrite_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("t.json");
    std::fs::copy(defective(), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let run = kinetoscope(dir.path(), &["trim", "t.json", "-o", "t.json"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("refusing to write over"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // A new file beside the input is fine (trim reads no other file of the folder).
    let run = kinetoscope(dir.path(), &["trim", "t.json", "-o", "t2.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run = kinetoscope(dir.path(), &["trim", "t.json", "-o", "t2.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run = kinetoscope(
        dir.path(),
        &[
            "trim",
            &rank_folder().to_string_lossy(),
            "-o",
            &rank_folder().to_string_lossy(),
        ],
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("refusing to write into the input folder"),
        "{}",
        run.stderr
    );
}

/// A rank folder's `-o` is a folder: a name that reads as one file is refused (one file
/// of all ranks is `merge`), and a folder made for a trim that wrote nothing is removed.
#[test]
fn a_rank_folders_output_is_a_folder_left_only_when_written() {
    let dir = tempfile::tempdir().unwrap();
    let folder = rank_folder();
    let folder = folder.to_string_lossy();
    for name in ["all.json", "all.json.gz", "all.pftrace"] {
        let run = kinetoscope(dir.path(), &["trim", &folder, "-o", name]);
        assert_eq!(run.code, Some(2), "{name}: {}", run.stderr);
        assert!(run.stderr.contains("kinetoscope merge"), "{}", run.stderr);
        assert!(!dir.path().join(name).exists(), "{name}");
    }
    let run = kinetoscope(
        dir.path(),
        &["trim", &folder, "-o", "out", "--steps", "9000"],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("no ProfilerStep#9000"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("out").exists());
    // A folder that was there before stays, even when nothing was written into it.
    std::fs::create_dir(dir.path().join("kept")).unwrap();
    let run = kinetoscope(
        dir.path(),
        &["trim", &folder, "-o", "kept", "--steps", "9000"],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(dir.path().join("kept").is_dir());
}

/// A file cut short after its event array closed (a profiler killed while it wrote the
/// trailer), just after the `]` and around the start, middle and end of each member of
/// PyTorch 2.4's trailer (`traceName`, `displayTimeUnit`, `baseTimeNanoseconds`): the
/// trim is valid JSON with the events of the whole file's trim, and keeps exactly the
/// trailer's members that were whole, a member being whole once the `,` or `}` after it
/// is in the file (a number at the very end may be cut short). Found by the `writers`
/// fuzz target: the trailer was copied as it was.
#[test]
fn a_trailer_cut_short_keeps_its_whole_members() {
    let full = text(&fixtures().join("torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz"));
    let whole: Value = serde_json::from_str(&full).unwrap();
    let close = full.rfind(']').unwrap();
    // Each trailer member: where its key starts and where the `,` or `}` after it is.
    let members: Vec<(&str, usize, usize)> =
        ["traceName", "displayTimeUnit", "baseTimeNanoseconds"]
            .into_iter()
            .map(|k| {
                let start = close + full[close..].find(&format!("\"{k}\"")).unwrap();
                let end = start + full[start..].find([',', '}']).unwrap();
                (k, start, end)
            })
            .collect();
    let dir = tempfile::tempdir().unwrap();
    let written = trim(
        dir.path(),
        &fixtures().join("torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz"),
        "whole.json",
        &[],
    );
    let events = written[0]["elements_written"].as_u64().unwrap() as usize;
    // The cuts: just after the `]`, and around each member's start, middle and end.
    let mut cuts = vec![close + 1, full.len()];
    for &(_, start, end) in &members {
        cuts.extend([start, start + 1, (start + end) / 2, end - 1, end, end + 1]);
    }
    let input = dir.path().join("cut.json");
    for cut in cuts {
        std::fs::write(&input, &full[..cut]).unwrap();
        let reports = trim(dir.path(), &input, "out.json", &[]);
        let out = text(&dir.path().join("out.json"));
        let doc: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("cut at {cut}: invalid JSON ({e}): {out}"));
        assert_eq!(
            doc["traceEvents"].as_array().unwrap().len(),
            events,
            "cut at {cut}"
        );
        let mut kept: Vec<&str> = doc
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| members.iter().any(|m| m.0 == *k))
            .collect();
        kept.sort_unstable();
        let mut want: Vec<&str> = members
            .iter()
            .filter(|(_, _, end)| cut > *end)
            .map(|m| m.0)
            .collect();
        want.sort_unstable();
        assert_eq!(kept, want, "cut at {cut}");
        for k in kept {
            assert_eq!(doc[k], whole[k], "cut at {cut}: {k}");
        }
        let cut_inside = members.iter().any(|(_, s, e)| cut > *s && cut <= *e);
        assert_eq!(
            reports[0]["repairs"]["members_dropped"],
            u64::from(cut_inside),
            "cut at {cut}"
        );
    }
}

/// An event the reader reads but that stays invalid JSON after every repair (stray
/// bytes or a missing comma inside a nested value, which the reader skips over) is
/// dropped and counted, and the output stays valid JSON. Found by the `writers` fuzz
/// target: such events were copied as they were.
#[test]
fn events_still_invalid_after_the_repairs_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("stray.json");
    let mut t = b"{\"traceEvents\": [\n".to_vec();
    t.extend_from_slice(b"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5, \"args\": {\"x\": [[128\xff\xff, 1]]}},\n");
    t.extend_from_slice(b"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5, \"args\": {\"y\": [1 2]}},\n");
    t.extend_from_slice(b"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 30, \"dur\": 5}\n]}\n");
    std::fs::write(&input, &t).unwrap();
    let reports = trim(dir.path(), &input, "out.json", &[]);
    let out = std::fs::read(dir.path().join("out.json")).unwrap();
    let doc: Value = serde_json::from_slice(&out).expect("valid JSON");
    let names: Vec<&str> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c"]);
    assert_eq!(reports[0]["invalid_dropped"], 2);
    assert_eq!(
        reports[0]["malformed_dropped"], 0,
        "the reader read all three"
    );
}

#[test]
fn unreadable_input_and_missing_steps_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), b"{\"traceEvents\": 7}").unwrap();
    let run = kinetoscope(dir.path(), &["trim", "bad.json", "-o", "out.json"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("bad.json"), "{}", run.stderr);
    assert!(!dir.path().join("out.json").exists());
    let run = kinetoscope(
        dir.path(),
        &[
            "trim",
            &multi_step().to_string_lossy(),
            "-o",
            "out.json",
            "--steps",
            "50..60",
        ],
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("worker0.1623143089861.pt.trace.json.gz: no ProfilerStep#50..#60"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("out.json").exists());
}

/// `-o x.pftrace` writes what the export crate's protobuf trim writes (whose decoding
/// with the published schema the export crate's tests check), smaller than the JSON.
#[test]
fn pftrace_output_is_the_export_crates_protobuf_trim() {
    use kinetoscope_export::trim::{TrimInput, TrimOptions};
    let dir = tempfile::tempdir().unwrap();
    let reports = trim(
        dir.path(),
        &multi_step(),
        "out.pftrace",
        &["--steps", "6..7"],
    );
    let written = std::fs::read(dir.path().join("out.pftrace")).unwrap();
    assert_eq!(reports[0]["bytes_written"], written.len() as u64);
    let input = TrimInput::open(&kinetoscope_engine::Engine::default(), &multi_step()).unwrap();
    let opts = TrimOptions {
        steps: Some((6, 7)),
        ..TrimOptions::default()
    };
    let mut want = Vec::new();
    input
        .write_pftrace(&opts, &ReadOptions::default(), &mut want)
        .unwrap();
    assert_eq!(written, want);
    trim(dir.path(), &multi_step(), "out.json", &["--steps", "6..7"]);
    let json = std::fs::metadata(dir.path().join("out.json"))
        .unwrap()
        .len();
    assert!((written.len() as u64) < json, "{} vs {json}", written.len());
}
