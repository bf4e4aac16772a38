//! `kinetoscope pstats`: the table, CSV and JSON of real cProfile / profile files
//! (numbers checked against the reference JSON Python's pstats wrote), sums, callers,
//! the flame page and collapsed stacks, refused outputs and inputs, and the hint that
//! the generic commands give for a pstats file.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{fixtures, kinetoscope};

fn dir() -> PathBuf {
    fixtures().join("pstats")
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    kinetoscope(&dir(), args).into_parts()
}

fn reference(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(name)).unwrap()).unwrap()
}

fn secs(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn json_rows_follow_pythons_order_and_numbers() {
    let (code, out, err) = run(&[
        "pstats",
        "cprofile-3.11.prof",
        "--format",
        "json",
        "--top",
        "0",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let want = &reference("cprofile-3.11.json")["plain"];
    let v = &doc["pstats"];
    assert_eq!(v["total_calls"], want["total_calls"]);
    assert_eq!(v["total_tt"].as_f64().unwrap(), secs(&want["total_tt"]));
    let rows = v["rows"].as_array().unwrap();
    let order = want["order"]["cumulative"].as_array().unwrap();
    assert_eq!(rows.len(), order.len());
    for (r, k) in rows.iter().zip(order) {
        assert_eq!(&r["func"]["name"], &k[2]);
        assert_eq!(&r["func"]["line"], &k[1]);
        let e = want["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["func"] == *k)
            .unwrap();
        assert_eq!(r["cumtime"].as_f64().unwrap(), secs(&e["ct"]));
        assert_eq!(r["calls"], e["nc"]);
    }
}

#[test]
fn table_shows_pstats_header_and_recursive_calls() {
    let (code, out, err) = run(&[
        "pstats",
        "profile-3.13.prof",
        "--sort",
        "tottime",
        "--top",
        "5",
        "--strip-dirs",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let want = &reference("profile-3.13.json")["strip_dirs"];
    let header = format!(
        "{} function calls ({} primitive calls)",
        want["total_calls"], want["prim_calls"]
    );
    assert!(out.contains(&header), "{header} in\n{out}");
    assert!(out.contains("Ordered by: time"), "{out}");
    assert!(
        out.contains("1395/3") && out.contains("workload.py:12(fib)"),
        "{out}"
    );
    assert!(!out.contains("/home/user"), "strip_dirs: {out}");
}

#[test]
fn two_files_are_summed_like_pstats_stats_a_b() {
    let (code, out, err) = run(&[
        "pstats",
        "cprofile-3.12.prof",
        "cprofile-3.13.prof",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let want = &reference("sum-cprofile-3.12+3.13.json")["plain"];
    assert_eq!(doc["pstats"]["files"], 2);
    assert_eq!(doc["pstats"]["total_calls"], want["total_calls"]);
    assert_eq!(
        doc["pstats"]["total_tt"].as_f64().unwrap(),
        secs(&want["total_tt"])
    );
    assert_eq!(doc["inputs"].as_array().unwrap().len(), 2);
}

#[test]
fn callers_list_every_site_with_its_numbers() {
    let (code, out, err) = run(&[
        "pstats",
        "cprofile-3.13.prof",
        "--callers",
        r"workload\.py:8\(helper\)",
        "--strip-dirs",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let callers = doc["pstats"]["callers"].as_array().unwrap();
    assert_eq!(callers.len(), 1, "one helper once stripped");
    let edges = callers[0]["edges"].as_array().unwrap();
    let sites: Vec<&str> = edges
        .iter()
        .map(|e| e["func"]["name"].as_str().unwrap())
        .collect();
    for s in ["fib", "gen", "add", "stage_c", "f"] {
        assert!(sites.contains(&s), "{s} in {sites:?}");
    }
    let calls: i64 = edges
        .iter()
        .map(|e| e["stats"]["calls"].as_i64().unwrap())
        .sum();
    let row = doc["pstats"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["func"]["name"] == "helper");
    if let Some(row) = row {
        assert_eq!(
            row["calls"].as_i64().unwrap(),
            calls,
            "edges add up to the calls"
        );
    }
}

#[test]
fn flame_page_and_collapsed_stacks_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("flame.html");
    let txt = tmp.path().join("stacks.txt");
    let (code, _, err) = run(&[
        "pstats",
        "cprofile-3.13.prof",
        "--flame",
        html.to_str().unwrap(),
        "--collapsed",
        txt.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<script id=\"kinetoscope-data\" type=\"application/json\">"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no network"
    );
    assert!(!page.contains("innerHTML"), "names go in as text");
    let stacks = std::fs::read_to_string(&txt).unwrap();
    let mut total = 0u64;
    for line in stacks.lines() {
        let (path, n) = line.rsplit_once(' ').unwrap();
        let root = path.split(';').next().unwrap();
        assert!(
            root == "/home/user/project/run.py:1(run)"
                || root == "{method 'disable' of '_lsprof.Profiler' objects}",
            "{line}"
        );
        total += n.parse::<u64>().unwrap();
    }
    // the roots: the functions nobody calls
    let want = reference("cprofile-3.13.json");
    let roots_us: f64 = want["plain"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["callers"].as_array().unwrap().is_empty())
        .map(|e| secs(&e["ct"]) * 1e6)
        .sum();
    // each line is rounded to a microsecond
    let lines = stacks.lines().count() as f64;
    assert!(
        (total as f64 - roots_us).abs() <= lines,
        "{total} µs vs {roots_us}"
    );
}

#[test]
fn an_output_over_an_input_is_refused() {
    let (code, _, err) = run(&[
        "pstats",
        "cprofile-3.13.prof",
        "--collapsed",
        "cprofile-3.13.prof",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("refusing to write over"), "{err}");
    // a pstats file of a folder given is an input too
    let (code, _, err) = run(&["pstats", ".", "--flame", "profile-3.8.prof"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("refusing to write over"), "{err}");
}

#[test]
fn a_folder_is_its_pstats_files_summed() {
    let (code, out, err) = run(&["pstats", ".", "--format", "json", "--top", "1"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["pstats"]["files"], 11);
}

#[test]
fn wrong_inputs_and_options_are_errors_that_say_why() {
    let (code, _, err) = run(&["pstats", "workload.py"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("workload.py: not a cProfile/pstats file"),
        "{err}"
    );
    let (code, _, err) = run(&["pstats", "cprofile-3.13.prof", "--filter", "("]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--filter"), "{err}");
    let (code, _, err) = run(&["pstats", "cprofile-3.13.prof", "--sort", "c"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("ambiguous"), "{err}");
    let (code, _, err) = run(&["summary", "cprofile-3.13.prof"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("kinetoscope pstats FILE"), "{err}");
}

/// Seconds of `field` summed over the entries of a reference named `name` in a file
/// whose base name is `workload.py`.
fn workload_sum(reference: &Value, name: &str, field: &str) -> f64 {
    reference["plain"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["func"][2] == name && e["func"][0].as_str().unwrap().ends_with("/workload.py")
        })
        .map(|e| secs(&e[field]))
        .sum()
}

#[test]
fn diff_of_two_pstats_files_matches_functions_across_versions() {
    let (code, out, err) = run(&[
        "diff",
        "cprofile-3.8.prof",
        "cprofile-3.13.prof",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["kind"], "pstats_diff");
    let d = &doc["pstats"];
    let (b, n) = (
        reference("cprofile-3.8.json"),
        reference("cprofile-3.13.json"),
    );
    assert_eq!(
        d["base_total_tt"].as_f64().unwrap(),
        secs(&b["plain"]["total_tt"])
    );
    let f = d["functions"].as_array().unwrap();
    let fib = f.iter().find(|x| x["name"] == "fib").unwrap();
    assert_eq!(fib["status"], "both");
    let want = workload_sum(&n, "fib", "ct") - workload_sum(&b, "fib", "ct");
    assert!((fib["delta_cumtime"].as_f64().unwrap() - want).abs() < 1e-12);
    // CPython 3.12 inlined list comprehensions (PEP 709): gone in the new profile
    let lc = f.iter().find(|x| x["name"] == "<listcomp>").unwrap();
    assert_eq!(lc["status"], "removed");
    assert_eq!(lc["new"]["calls"], 0);
    let by_delta: Vec<f64> = f
        .iter()
        .map(|x| x["delta_cumtime"].as_f64().unwrap().abs())
        .collect();
    assert!(
        by_delta.windows(2).all(|w| w[0] >= w[1]),
        "ranked by |Δ cumtime|"
    );
    let (code, out, _) = run(&["diff", "cprofile-3.8.prof", "cprofile-3.13.prof"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("removed") && out.contains("workload.py:12(fib)"),
        "{out}"
    );
    let (code, _, err) = run(&[
        "diff",
        "cprofile-3.8.prof",
        "cprofile-3.13.prof",
        "--fail-if",
        "step_time.median > +5%",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--fail-if"), "{err}");
}

#[test]
fn report_of_a_pstats_file_gives_the_pstats_findings() {
    let (code, out, err) = run(&["report", "bottlenecks-3.11.prof", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert!(doc["traces"].as_array().unwrap().is_empty());
    let p = &doc["pstats"][0];
    let ids: Vec<&str> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        &ids[..3],
        ["PY006", "PY002", "PY001"],
        "ranked by impact: {ids:?}"
    );
    let gc = &p["findings"][0];
    let want = reference("bottlenecks-3.11.json");
    let gc_ct = want["plain"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["func"][2] == "<built-in method gc.collect>")
        .map(|e| secs(&e["ct"]))
        .unwrap();
    let share = gc_ct / secs(&want["plain"]["total_tt"]);
    assert!((gc["impact_share"].as_f64().unwrap() - share).abs() < 1e-12);
    let (code, out, _) = run(&["bottlenecks-3.11.prof"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("PY006 GarbageCollection") && out.contains("gc.collect"),
        "{out}"
    );
}

/// An oumi-style run folder: a Chrome trace and a cProfile file side by side.
fn oumi_folder(root: &std::path::Path, name: &str, prof: &str) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir(&d).unwrap();
    std::fs::copy(
        fixtures().join("rank_non_gpu.json.gz"),
        d.join("rank0_pt_trace.json.gz"),
    )
    .unwrap();
    std::fs::copy(dir().join(prof), d.join("train_rank0.prof")).unwrap();
    d
}

#[test]
fn a_run_folder_shows_its_traces_and_pstats_together_and_diffs_them() {
    let tmp = tempfile::tempdir().unwrap();
    let base = oumi_folder(tmp.path(), "base", "cprofile-3.12.prof");
    let new = oumi_folder(tmp.path(), "new", "bottlenecks-3.11.prof");
    let r = kinetoscope(tmp.path(), &["report", "new", "--format", "json"]);
    let doc = r.json();
    assert_eq!(doc["traces"].as_array().unwrap().len(), 1);
    assert_eq!(doc["pstats"].as_array().unwrap().len(), 1);
    assert_eq!(doc["pstats"][0]["findings"][0]["id"], "PY006");
    let r = kinetoscope(tmp.path(), &["diff", "base", "new", "--format", "json"]);
    let diff = r.json();
    let p = &diff["pstats"];
    assert!(p.is_object(), "a pstats section: {diff}");
    let gc = p["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "<built-in method gc.collect>")
        .unwrap();
    assert_eq!(gc["status"], "added");
    assert_eq!(
        p["base_total_calls"],
        reference("cprofile-3.12.json")["plain"]["total_calls"]
    );
    let table = kinetoscope(tmp.path(), &["diff", "base", "new"]).stdout;
    assert!(table.contains("Python functions (pstats)"), "{table}");
    assert!(base.is_dir() && new.is_dir());
}

/// Marshal bytes of one short str (`z`).
fn short_str(s: &str) -> Vec<u8> {
    let mut v = vec![b'z', s.len() as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

/// `(a, line, name)` as marshal bytes.
fn key_bytes(line: u32, name: &str) -> Vec<u8> {
    let mut v = b")\x03".to_vec();
    v.extend(short_str("a"));
    v.push(b'i');
    v.extend_from_slice(&line.to_le_bytes());
    v.extend(short_str(name));
    v
}

fn float(x: f64) -> Vec<u8> {
    let mut v = vec![b'g'];
    v.extend_from_slice(&x.to_le_bytes());
    v
}

#[test]
fn the_flame_page_renders_hostile_names_as_text() {
    use crate::memory_html_browser::{chromium, chromium_or_skip};
    let evil = "</script><img src=x onerror=alert(1)>";
    // root (1 s) calls EVIL (0.5 s)
    let mut data = b"{".to_vec();
    data.extend(key_bytes(1, "root"));
    data.extend(b")\x05i\x01\x00\x00\x00i\x01\x00\x00\x00");
    data.extend(float(0.5));
    data.extend(float(1.0));
    data.extend(b"{0");
    data.extend(key_bytes(2, evil));
    data.extend(b")\x05i\x01\x00\x00\x00i\x01\x00\x00\x00");
    data.extend(float(0.5));
    data.extend(float(0.5));
    data.push(b'{');
    data.extend(key_bytes(1, "root"));
    data.extend(b")\x04i\x01\x00\x00\x00i\x01\x00\x00\x00");
    data.extend(float(0.5));
    data.extend(float(0.5));
    data.extend(b"00");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("evil.prof"), &data).unwrap();
    let page = tmp.path().join("flame.html");
    let run = kinetoscope(
        tmp.path(),
        &["pstats", "evil.prof", "--flame", "flame.html"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains(evil),
        "the name is escaped in the embedded JSON"
    );
    let Some(exe) = chromium_or_skip() else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let dom = chromium(&exe, profile.path(), &["--dump-dom".to_owned()], &page);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom.matches("class=\"frame\"").count(), 2, "{dom}");
    assert!(dom.contains("a:1(root)"), "{dom}");
    assert!(
        dom.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "the name as text: {dom}"
    );
    // an element made from the name would serialise with quoted attributes
    assert!(
        !dom.contains("<img src=\"x\""),
        "no element made from a name: {dom}"
    );
}
