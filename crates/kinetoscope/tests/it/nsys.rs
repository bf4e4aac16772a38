//! Nsight Systems exports through the binary: every view reads them, numbers equal
//! plain SQL over the file, the traced processes' environment never appears in any
//! output (a canary planted in all three places nsys keeps it), inputs are never
//! changed, and a `.nsys-rep` gets the export command.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::common::{fixtures, kinetoscope};

const CANARY: &str = "KSCOPE_CANARY_7f3a9c";

fn export(name: &str) -> PathBuf {
    let dir = fixtures().join("nsys");
    let folder = match name {
        "a100" => "cs336-a100-2p7b-nvtx/result_2_7B_nvtx.sqlite",
        "h100x2" => "fastvideo-h100x2-infer-emit-nvtx/h100_2gpu_1s.sqlite",
        "graphs" => "cs336-a100-compile-cudagraph/result_2_7B_compile_ro.sqlite",
        "failed" => "cs336-failed-cuda-nonutf8/result.sqlite",
        _ => "centerformer-nvtx-only-2022/baseline.sqlite",
    };
    dir.join(folder)
}

fn stamp(p: &Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().modified().unwrap(),
    )
}

/// Every view command, each in every format it has.
fn every_command(file: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for view in [
        "summary",
        "overview",
        "ops",
        "kernels",
        "perf",
        "temporal",
        "idle",
        "launches",
        "comm",
        "sequences",
        "nvtx",
        "critical-path",
        "check",
    ] {
        let formats: &[&str] = if view == "summary" {
            &["table", "json"]
        } else {
            &["table", "json", "csv"]
        };
        for f in formats {
            out.push(vec![
                view.into(),
                file.into(),
                "--format".into(),
                (*f).into(),
            ]);
        }
    }
    for f in ["table", "json"] {
        out.push(vec![
            "report".into(),
            file.into(),
            "--format".into(),
            f.into(),
        ]);
    }
    out
}

#[test]
fn the_environment_never_appears() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("canary.sqlite");
    std::fs::copy(export("a100"), &file).unwrap();
    {
        let c = Connection::open(&file).unwrap();
        c.execute(
            "INSERT INTO META_DATA_CAPTURE (name, value) VALUES \
             ('PROCESS_0:ENVIRONMENT_VARIABLE', ?1)",
            [format!("HF_TOKEN={CANARY}")],
        )
        .unwrap();
        let n = c
            .execute(
                "UPDATE TARGET_INFO_SYSTEM_ENV SET value = ?1 WHERE name = 'DeviceEnvironment'",
                [format!("PATH=/bin\nAWS_SECRET={CANARY}")],
            )
            .unwrap();
        assert!(n > 0, "the export has a DeviceEnvironment row");
        c.execute(
            "INSERT INTO StringIds (id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), ?1)",
            [format!(
                "HOME=/root\nUSER=root\nSHELL=/bin/sh\nLANG=C\nTOKEN={CANARY}"
            )],
        )
        .unwrap();
    }
    let before = stamp(&file);
    let name = file.to_str().unwrap();
    for args in every_command(name) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = kinetoscope(dir.path(), &args).into_parts();
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!out.contains(CANARY) && !err.contains(CANARY), "{args:?}");
        assert_eq!(stamp(&file), before, "{args:?} changed the input");
    }
    let html = dir.path().join("report.html");
    let run = kinetoscope(
        dir.path(),
        &["report", name, "--html", html.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let page = std::fs::read(&html).unwrap();
    assert!(!String::from_utf8_lossy(&page).contains(CANARY));
    let diff = kinetoscope(dir.path(), &["diff", name, name, "--format", "json"]);
    assert!(!diff.stdout.contains(CANARY) && !diff.stderr.contains(CANARY));
    assert_eq!(stamp(&file), before);
}

#[test]
fn every_export_reads_in_every_view() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a100", "h100x2", "graphs", "failed", "centerformer"] {
        let file = export(name);
        let before = stamp(&file);
        for args in every_command(file.to_str().unwrap()) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = kinetoscope(dir.path(), &args);
            assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        }
        assert_eq!(stamp(&file), before, "{name}: the input changed");
    }
}

#[test]
fn failed_capture_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let file = export("failed");
    let run = kinetoscope(dir.path(), &["summary", file.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("this capture has no CUDA trace"), "{all}");
    assert!(all.contains("no NVTX ranges"), "{all}");
}

/// `name → (count, total ns)` from a query returning those three columns.
fn grouped(c: &Connection, query: &str) -> BTreeMap<String, (i64, i64)> {
    let mut stmt = c.prepare(query).unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// `name → (count, total ns)` summed over the traces of a view's JSON document.
fn from_doc(doc: &serde_json::Value, list: &str, count: &str) -> BTreeMap<String, (i64, i64)> {
    let mut out: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for t in doc["traces"].as_array().expect("traces") {
        for r in t[list].as_array().expect("rows") {
            let e = out
                .entry(r["name"].as_str().unwrap().to_owned())
                .or_default();
            e.0 += r[count].as_i64().unwrap();
            e.1 += r["total_ns"].as_i64().unwrap();
        }
    }
    out
}

fn open_ro(file: &Path) -> Connection {
    Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

#[test]
fn kernels_view_equals_sql() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a100", "h100x2", "graphs"] {
        let file = export(name);
        let doc = kinetoscope(
            dir.path(),
            &["kernels", file.to_str().unwrap(), "--format", "json"],
        )
        .json();
        let c = open_ro(&file);
        let mut want = grouped(
            &c,
            "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.shortName GROUP BY s.value",
        );
        if name == "graphs" {
            want.extend(grouped(
                &c,
                "SELECT 'CUDA graph ' || graphId, count(*), sum(end - start) \
                 FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE GROUP BY graphId",
            ));
        }
        assert_eq!(from_doc(&doc, "rows", "calls"), want, "{name}");
    }
    // The two-process file is two ranks, each with its own process's kernels.
    let file = export("h100x2");
    let doc = kinetoscope(
        dir.path(),
        &["kernels", file.to_str().unwrap(), "--format", "json"],
    )
    .json();
    let c = open_ro(&file);
    for t in doc["traces"].as_array().unwrap() {
        let path = t["path"].as_str().unwrap();
        let pid: i64 = path.rsplit_once("#pid").unwrap().1.parse().unwrap();
        let (n, ns): (i64, i64) = c
            .query_row(
                "SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL \
                 WHERE ((globalPid >> 24) & 16777215) = ?1",
                [pid],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let rows = t["rows"].as_array().unwrap();
        let got_n: i64 = rows.iter().map(|r| r["calls"].as_i64().unwrap()).sum();
        assert_eq!(
            (got_n, t["total_kernel_ns"].as_i64().unwrap()),
            (n, ns),
            "{path}"
        );
    }
}

#[test]
fn nvtx_view_equals_sql() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a100", "centerformer", "h100x2"] {
        let file = export(name);
        let doc = kinetoscope(
            dir.path(),
            &["nvtx", file.to_str().unwrap(), "--format", "json"],
        )
        .json();
        let want = grouped(
            &open_ro(&file),
            "WITH r AS (SELECT coalesce(n.text, s.value) AS t, n.end - n.start AS d \
             FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL) \
             SELECT CASE WHEN instr(t, ', op_id = ') > 0 THEN substr(t, 1, instr(t, ', ') - 1) \
             ELSE t END AS name, count(*), sum(d) FROM r GROUP BY name",
        );
        assert_eq!(from_doc(&doc, "ranges", "count"), want, "{name}");
    }
}

#[test]
fn processes_and_rank_files_are_ranks() {
    let dir = tempfile::tempdir().unwrap();
    // One file, two processes on two GPUs: two ranks.
    let file = export("h100x2");
    let doc = kinetoscope(
        dir.path(),
        &["ranks", file.to_str().unwrap(), "--format", "json"],
    )
    .json();
    let ranks: Vec<i64> = doc["report"]["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| r["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(ranks, vec![0, 1]);
    // A folder of per-rank exports (`--output=…%q{RANK}`): a rank folder.
    let folder = dir.path().join("run");
    std::fs::create_dir(&folder).unwrap();
    for r in 0..2 {
        std::fs::copy(
            export("a100"),
            folder.join(format!("profile_rank{r}.sqlite")),
        )
        .unwrap();
    }
    let doc = kinetoscope(dir.path(), &["summary", "run", "--format", "json"]).json();
    let got: Vec<i64> = doc["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(got, vec![0, 1]);
}

/// The outputs name each process of a multi-GPU export `FILE#pidN`; given that path, a
/// command reads that process alone, the same rank as in the whole file's document.
#[test]
fn one_process_of_an_export_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = export("h100x2");
    let whole = kinetoscope(
        dir.path(),
        &["kernels", file.to_str().unwrap(), "--format", "json"],
    )
    .json();
    let traces = whole["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    for t in traces {
        let path = t["path"].as_str().unwrap();
        assert!(path.contains("#pid"), "{path}");
        let one = kinetoscope(dir.path(), &["kernels", path, "--format", "json"]).json();
        let only = &one["traces"].as_array().unwrap()[..];
        assert_eq!(only.len(), 1, "{path}");
        assert_eq!(only[0]["rows"], t["rows"], "{path}");
        assert_eq!(only[0]["path"], t["path"], "{path}");
    }
}

/// nsys's expert rules are the advisor's rules on the same rows: pageable copies
/// (`cuda_memcpy_async`) are TR001, synchronising calls (`cuda_api_sync`,
/// `cuda_memcpy_sync`) SY001, low GPU use (`gpu_time_util`) GP001.
#[test]
fn nsys_expert_rules_are_findings() {
    let dir = tempfile::tempdir().unwrap();
    let file = export("a100");
    let doc = kinetoscope(
        dir.path(),
        &["report", file.to_str().unwrap(), "--format", "json"],
    )
    .json();
    let ids: Vec<&str> = doc["traces"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    for id in ["GP001", "TR001", "SY001"] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    let pageable: i64 = open_ro(&file)
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE srcKind = 0 OR dstKind = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let tr001 = doc["traces"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "TR001")
        .unwrap()
        .to_string();
    assert!(tr001.contains(&format!("{pageable} pageable")), "{tr001}");
}

#[test]
fn nsys_report_gets_the_export_command() {
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("profile.nsys-rep");
    std::fs::write(&rep, b"\x00\x00not exported").unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["summary", "profile.nsys-rep"])
        .current_dir(dir.path())
        .env("KINETOSCOPE_CACHE_DIR", crate::common::cache_dir())
        .env("PATH", without_nsys(&path))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nsys export --type sqlite --output profile.sqlite profile.nsys-rep"),
        "{err}"
    );
    assert!(!dir.path().join("profile.sqlite").exists());
}

/// `PATH` without the folders that hold an `nsys`.
fn without_nsys(path: &std::ffi::OsStr) -> std::ffi::OsString {
    let kept: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|d| !d.join("nsys").exists())
        .collect();
    std::env::join_paths(kept).unwrap()
}

/// With an `nsys` on `PATH` (here a stand-in that copies an export to `--output`), a
/// `.nsys-rep` is exported into the cache folder, never beside the report, and read.
#[test]
fn nsys_report_is_exported_into_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("nsys");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nwhile [ \"$1\" != --output ]; do shift; done\ncp '{}' \"$2\"\n",
            export("a100").display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("run.nsys-rep"), b"\x00report").unwrap();
    let cache = dir.path().join("cache");
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(["summary", "run.nsys-rep"])
        .current_dir(&work)
        .env("KINETOSCOPE_CACHE_DIR", crate::common::cache_dir())
        .env("PATH", path)
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert_eq!(run.status.code(), Some(0), "{err}");
    assert!(
        out.contains("exported with nsys to") || err.contains("exported with nsys to"),
        "{out}{err}"
    );
    assert!(out.contains("NVIDIA A100-SXM4-80GB"), "{out}");
    let exports: Vec<_> = std::fs::read_dir(cache.join("kinetoscope/nsys"))
        .unwrap()
        .collect();
    assert_eq!(exports.len(), 1);
    let beside: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
    assert_eq!(beside.len(), 1, "nothing written beside the report");
}

/// `--nvtx-step NAME`: the instances of that range are the steps.
#[test]
fn a_named_range_gives_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    let file = export("centerformer");
    let f = file.to_str().unwrap();
    let plain = kinetoscope(dir.path(), &["summary", f, "--format", "json"]).json();
    assert_eq!(plain["traces"][0]["step_source"], "whole_trace");
    let doc = kinetoscope(
        dir.path(),
        &["summary", f, "--format", "json", "--nvtx-step", "reader"],
    )
    .json();
    let t = &doc["traces"][0];
    assert_eq!(t["step_source"], "profiler_step");
    let want: i64 = open_ro(&file)
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId \
             WHERE s.value = 'reader' AND n.eventType = 59",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(t["steps"].as_array().unwrap().len() as i64, want);
    assert_eq!(t["steps"][0]["name"], "ProfilerStep#0");
}
