//! Nsight Systems exports against plain SQL over the same file: every kernel name's
//! count and time, each device's kernel count and time, graph executions, NVTX ranges
//! by name, emit_nvtx operators, the launch link within a process, and the input left
//! untouched. Five real exports are fixtures (`fixtures/nsys/`); the sixth, larger one
//! is checked in the ignored shared-corpus test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{read_trace, sniff_path, ContentKind, ReadOptions};
use kinetoscope_trace::{CategoryKind, NsysFeature, NsysInfo, Phase, Trace, TraceError};
use rusqlite::{Connection, OpenFlags};

use super::common::{fixture, require_shared};

/// The five exports kept as fixtures.
pub const FIXTURES: [&str; 5] = [
    "nsys/fastvideo-h100x2-infer-emit-nvtx/h100_2gpu_1s.sqlite",
    "nsys/cs336-a100-2p7b-nvtx/result_2_7B_nvtx.sqlite",
    "nsys/cs336-a100-compile-cudagraph/result_2_7B_compile_ro.sqlite",
    "nsys/cs336-failed-cuda-nonutf8/result.sqlite",
    "nsys/centerformer-nvtx-only-2022/baseline.sqlite",
];

fn sql(path: &Path) -> Connection {
    Connection::open_with_flags(
        format!("file:{}?mode=ro&immutable=1", path.display()),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap()
}

fn has_table(c: &Connection, t: &str) -> bool {
    c.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [t],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

/// `name → (count, total ns)` from a query returning those three columns.
fn grouped(c: &Connection, query: &str) -> BTreeMap<String, (u64, i64)> {
    let mut stmt = c.prepare(query).unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)?),
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// `name → (count, total ns)` of the model's complete events of the kinds given.
fn model_grouped(
    t: &Trace,
    keep: impl Fn(CategoryKind, &str) -> bool,
) -> BTreeMap<String, (u64, i64)> {
    let mut out: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for e in t.events.ids() {
        let i = e.index();
        if t.events.phase[i] != Phase::Complete || !keep(t.kind(e), t.name(e)) {
            continue;
        }
        let s = out.entry(t.name(e).to_owned()).or_default();
        s.0 += 1;
        s.1 += t.events.dur_ns.at(i);
    }
    out
}

fn stamp(p: &Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().modified().unwrap(),
    )
}

/// Every check of one export against SQL over it.
pub fn check_against_sql(path: &Path) {
    let before = stamp(path);
    let sniffed = sniff_path(path).unwrap();
    assert_eq!(
        sniffed.kind(),
        ContentKind::NsysExport,
        "{}",
        path.display()
    );
    let t = read_trace(path, &ReadOptions::default()).unwrap();
    let info = t.meta.nsys.as_ref().expect("nsys info");
    let c = sql(path);
    let name = path.display().to_string();

    let kernel_table = has_table(&c, "CUPTI_ACTIVITY_KIND_KERNEL");
    check_kernels_by_name(&c, &t, kernel_table, &name);
    check_kernels_by_device(&c, &t, &name);
    check_graph_executions(&c, &t, info, &name);
    check_nvtx_ranges(&c, &t, info, &name);
    if kernel_table && has_table(&c, "CUPTI_ACTIVITY_KIND_RUNTIME") {
        check_launch_links(&c, &t, &name);
    }
    check_gpu_rows_without_call(&c, info, &name);
    drop(c);
    assert_eq!(stamp(path), before, "{name}: the input changed");
}

/// Kernels by name: count and total time.
fn check_kernels_by_name(c: &Connection, t: &Trace, kernel_table: bool, name: &str) {
    let want = if kernel_table {
        grouped(
            c,
            "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.shortName GROUP BY s.value",
        )
    } else {
        BTreeMap::new()
    };
    let got = model_grouped(t, |k, n| {
        k == CategoryKind::Kernel && !n.starts_with("CUDA graph ")
    });
    assert_eq!(got, want, "{name}: kernels by name");
}

/// Kernels and graph executions by device: count and time.
fn check_kernels_by_device(c: &Connection, t: &Trace, name: &str) {
    let mut want_dev: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
    for table in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    ] {
        if !has_table(c, table) {
            continue;
        }
        let q = format!("SELECT deviceId, count(*), sum(end - start) FROM {table} GROUP BY 1");
        let mut stmt = c.prepare(&q).unwrap();
        for r in stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .unwrap()
        {
            let (d, n, ns) = r.unwrap();
            let s = want_dev.entry(d).or_default();
            s.0 += n as u64;
            s.1 += ns;
        }
    }
    let mut got_dev: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
    for k in t.args.kernel.iter() {
        let s = got_dev.entry(k.launch.device).or_default();
        s.0 += 1;
        s.1 += t.events.dur_ns.at(k.event.index());
    }
    assert_eq!(got_dev, want_dev, "{name}: kernels by device");
}

/// Graph executions: count and total time, when the export has them.
fn check_graph_executions(c: &Connection, t: &Trace, info: &NsysInfo, name: &str) {
    if !has_table(c, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE") {
        return;
    }
    let (n, ns): (i64, i64) = c
        .query_row(
            "SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let got = model_grouped(t, |k, n| {
        k == CategoryKind::Kernel && n.starts_with("CUDA graph ")
    });
    assert_eq!(got.values().map(|v| v.0).sum::<u64>(), n as u64, "{name}");
    assert_eq!(got.values().map(|v| v.1).sum::<i64>(), ns, "{name}");
    assert_eq!(info.graph_executions, n as u64);
}

/// NVTX ranges by name: emit_nvtx ranges under their operator, others by text
/// (`domain:text` outside the default domain); without NVTX, the feature noted missing.
fn check_nvtx_ranges(c: &Connection, t: &Trace, info: &NsysInfo, name: &str) {
    if !has_table(c, "NVTX_EVENTS") {
        assert!(info.missing.contains(&NsysFeature::Nvtx), "{name}");
        return;
    }
    let want = grouped(
        c,
        "WITH dom AS (SELECT domainId AS id, text AS name FROM NVTX_EVENTS \
         WHERE eventType = 75 AND domainId != 0), \
         r AS (SELECT coalesce(dom.name || ':', '') || coalesce(n.text, s.value) AS t, \
         n.end - n.start AS d FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
         LEFT JOIN dom ON dom.id = n.domainId \
         WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL) \
         SELECT CASE WHEN instr(t, ', op_id = ') > 0 OR instr(t, ', seq = ') > 0 \
         THEN substr(t, 1, instr(t, ', ') - 1) ELSE t END AS name, count(*), sum(d) \
         FROM r GROUP BY name",
    );
    let got = model_grouped(t, |k, _| {
        matches!(k, CategoryKind::CpuOp | CategoryKind::UserAnnotation)
    });
    assert_eq!(got, want, "{name}: NVTX ranges by name");
    let open: i64 = c
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(info.ranges_open_at_end, open as u64);
}

/// The launch link stays within the process: a kernel links to a runtime call only
/// where SQL finds one in the same process with the same correlation id.
fn check_launch_links(c: &Connection, t: &Trace, name: &str) {
    let linked: i64 = c
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS \
             (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = \
             k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24))",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let idx = t.correlation_index();
    let got = t
        .args
        .kernel
        .iter()
        .filter(|k| !t.name(k.event).starts_with("CUDA graph "))
        .filter(|k| {
            idx.launch(t.events.correlation.at(k.event.index()))
                .is_some()
        })
        .count();
    assert_eq!(got as i64, linked, "{name}: kernels with a launch call");
}

/// GPU rows without a runtime or driver call of their process and correlation id.
fn check_gpu_rows_without_call(c: &Connection, info: &NsysInfo, name: &str) {
    let mut without = 0i64;
    for gpu in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        if !has_table(c, gpu) {
            continue;
        }
        let calls: Vec<String> = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"]
            .into_iter()
            .filter(|t| has_table(c, t))
            .map(|t| {
                format!(
                    "EXISTS (SELECT 1 FROM {t} r WHERE r.correlationId = g.correlationId \
                     AND (r.globalTid >> 24) = (g.globalPid >> 24))"
                )
            })
            .collect();
        let linked = if calls.is_empty() {
            "0".to_owned()
        } else {
            calls.join(" OR ")
        };
        let q = format!("SELECT count(*) FROM {gpu} g WHERE g.correlationId = 0 OR NOT ({linked})");
        without += c.query_row(&q, [], |r| r.get::<_, i64>(0)).unwrap();
    }
    assert_eq!(
        info.gpu_without_runtime_call, without as u64,
        "{name}: GPU rows without a call"
    );
}

#[test]
fn exports_equal_sql() {
    for f in FIXTURES {
        check_against_sql(&fixture(f));
    }
}

#[test]
fn two_processes_on_two_devices() {
    let t = read_trace(&fixture(FIXTURES[0]), &ReadOptions::default()).unwrap();
    let info = t.meta.nsys.as_ref().unwrap();
    let devices: Vec<Vec<i64>> = info
        .gpu_processes
        .iter()
        .map(|p| p.devices.clone())
        .collect();
    assert_eq!(devices, vec![vec![0], vec![1]]);
    assert!(info.missing.contains(&NsysFeature::GpuInfo));
    // Every op range is an operator (`cpu_op`), under its name before the first ", ".
    let ops = t
        .events
        .ids()
        .filter(|&e| t.kind(e) == CategoryKind::CpuOp)
        .count();
    assert_eq!(ops, 16_782);
    assert!(t.strings.find("aten::view").is_some());
}

#[test]
fn metadata_table_names_and_devices() {
    let old = read_trace(&fixture(FIXTURES[4]), &ReadOptions::default()).unwrap();
    let info = old.meta.nsys.as_ref().unwrap();
    assert_eq!(info.metadata_table, "EXPORT_META_DATA");
    assert!(
        info.nsys_version.starts_with("2022.4"),
        "{}",
        info.nsys_version
    );
    assert!(info.missing.contains(&NsysFeature::CudaTrace));
    assert_eq!(old.meta.devices[0].name, "NVIDIA TITAN RTX");
    let new = read_trace(&fixture(FIXTURES[1]), &ReadOptions::default()).unwrap();
    let info = new.meta.nsys.as_ref().unwrap();
    assert_eq!(info.metadata_table, "META_DATA_EXPORT");
    assert_eq!(info.schema_version, "3.16.1");
    let d = &new.meta.devices[0];
    assert_eq!(
        (d.name.as_str(), d.num_sms, d.arch.as_str()),
        ("NVIDIA A100-SXM4-80GB", 108, "sm_80")
    );
}

#[test]
fn failed_capture_reads_with_what_is_missing() {
    let t = read_trace(&fixture(FIXTURES[3]), &ReadOptions::default()).unwrap();
    let info = t.meta.nsys.as_ref().unwrap();
    assert_eq!(
        info.missing,
        vec![NsysFeature::CudaTrace, NsysFeature::Nvtx]
    );
    assert_eq!(t.events.len(), 0);
    assert_eq!(t.meta.devices[0].name, "NVIDIA GeForce RTX 4070 Ti");
}

#[test]
fn not_nsys_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("other.db");
    Connection::open(&plain)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    let err = read_trace(&plain, &ReadOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("not a Nsight Systems export"),
        "{err}"
    );
    let rep = dir.path().join("run.nsys-rep");
    std::fs::write(&rep, b"\x00\x01binary report").unwrap();
    let err = read_trace(&rep, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, TraceError::NsysReport { .. }));
    let want = format!(
        "nsys export --type sqlite --output {} {}",
        dir.path().join("run.sqlite").display(),
        rep.display()
    );
    assert!(err.to_string().contains(&want), "{err}");
}

#[test]
fn hostile_exports_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.sqlite");
    // nsys tables with the wrong columns: an error naming the file and the table.
    Connection::open(&p)
        .unwrap()
        .execute_batch(
            "CREATE TABLE StringIds (id INTEGER, value TEXT); \
             CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER); \
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER);",
        )
        .unwrap();
    let err = read_trace(&p, &ReadOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("bad.sqlite") && text.contains("CUPTI_ACTIVITY_KIND_KERNEL"),
        "{text}"
    );
    // A 1 MiB range text and a range without an end: the name is cut, the range kept.
    let big = dir.path().join("big.sqlite");
    let c = Connection::open(&big).unwrap();
    c.execute_batch(
        "CREATE TABLE StringIds (id INTEGER, value TEXT); \
         CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER); \
         INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1000); \
         CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, \
         text TEXT, globalTid INTEGER);",
    )
    .unwrap();
    c.execute(
        "INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, ?1, 5), (15, NULL, 59, 'open', 5)",
        ["x".repeat(1 << 20)],
    )
    .unwrap();
    drop(c);
    let t = read_trace(&big, &ReadOptions::default()).unwrap();
    assert_eq!(t.events.len(), 2);
    assert!(t.name(kinetoscope_trace::EventId(0)).len() <= 64 << 10);
    assert_eq!(t.events.ts_ns[1], 1015);
    assert_eq!(t.events.dur_ns.at(1), 5, "cut at the capture's last time");
    assert_eq!(t.meta.nsys.as_ref().unwrap().ranges_open_at_end, 1);
    // Truncated database: an error, never a panic.
    let good = std::fs::read(fixture(FIXTURES[2])).unwrap();
    let cut = dir.path().join("cut.sqlite");
    std::fs::write(&cut, &good[..good.len() / 3]).unwrap();
    let _ = read_trace(&cut, &ReadOptions::default());
}

/// The sixth export, too large for the fixtures, and every shared export.
#[test]
#[ignore = "needs the shared reference folder"]
fn shared_exports_equal_sql() {
    let dir = require_shared().join("external/nsys");
    let mut files: Vec<PathBuf> = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap() {
        let d = d.unwrap().path();
        if !d.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "sqlite") {
                files.push(f);
            }
        }
    }
    assert_eq!(files.len(), 6, "{}", dir.display());
    for f in files {
        check_against_sql(&f);
    }
}

/// Without a range named as a step, the outermost range that repeats is offered: on
/// the CS336 export, `scaled dot product attention` (inside `warmup` and
/// `benchmark_loop`, which run once, and around the three ranges nested in it), which
/// `--nvtx-step` then makes the step; on the CenterFormer export six names repeat side
/// by side at the top, and all six are offered. Nothing is renamed unless asked.
#[test]
fn outermost_repeating_range_is_offered_as_the_step() {
    let steps = |t: &Trace| {
        (0..t.events.len())
            .filter(|&i| t.strings.get(t.events.name[i]).starts_with("ProfilerStep#"))
            .collect::<Vec<usize>>()
    };
    let path = fixture(FIXTURES[1]);
    let t = read_trace(&path, &ReadOptions::default()).unwrap();
    let info = t.meta.nsys.as_ref().unwrap();
    assert_eq!(info.step_range_candidates, ["scaled dot product attention"]);
    assert!(steps(&t).is_empty());
    let c = sql(&path);
    let (n, first_start, first_end): (i64, i64, i64) = c
        .query_row(
            "SELECT count(*), min(n.start), (SELECT m.end FROM NVTX_EVENTS m \
             LEFT JOIN StringIds s2 ON s2.id = m.textId \
             WHERE coalesce(m.text, s2.value) = 'scaled dot product attention' \
             ORDER BY m.start LIMIT 1) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE coalesce(n.text, s.value) = 'scaled dot product attention'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let opts = ReadOptions {
        nvtx_step: Some("scaled dot product attention".into()),
        ..ReadOptions::default()
    };
    let t = read_trace(&path, &opts).unwrap();
    assert!(t
        .meta
        .nsys
        .as_ref()
        .unwrap()
        .step_range_candidates
        .is_empty());
    let s = steps(&t);
    assert_eq!(s.len() as i64, n);
    let step0 = s
        .iter()
        .copied()
        .find(|&i| t.strings.get(t.events.name[i]) == "ProfilerStep#0")
        .unwrap();
    assert_eq!(t.events.dur_ns.at(step0), first_end - first_start);

    let path = fixture(FIXTURES[4]);
    let t = read_trace(&path, &ReadOptions::default()).unwrap();
    let info = t.meta.nsys.as_ref().unwrap();
    let c = sql(&path);
    let mut want: Vec<String> = c
        .prepare(
            "SELECT coalesce(n.text, s.value) AS t FROM NVTX_EVENTS n \
             LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) \
             GROUP BY t HAVING count(*) >= 2",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut got = info.step_range_candidates.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);

    // A name given with `--nvtx-step` is the step (a range read through `StringIds`
    // gets a new number each time), and nothing is offered.
    let opts = ReadOptions {
        nvtx_step: Some("reader".into()),
        ..ReadOptions::default()
    };
    let t = read_trace(&path, &opts).unwrap();
    let info = t.meta.nsys.as_ref().unwrap();
    assert!(info.step_range_candidates.is_empty());
    assert_eq!(info.step_ranges_renamed, 304);
    assert_eq!(steps(&t).len(), 304);
}
