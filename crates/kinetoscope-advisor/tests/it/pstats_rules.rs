//! The pstats rules (PY001–PY006), table-driven like `rule_table.rs`: for each code a
//! profile where a training step spends a share of its time in the culprit (`bad`) and
//! its clean twin, the same time in an innocent function; the finding is snapshotted
//! (`snapshots/<CODE>.snap`). Then the severity ladder, the no-double-count rule, and the
//! real cProfile fixtures (a synthetic workload with none of these bottlenecks).

use std::path::Path;

use kinetoscope_advisor::{advise_pstats, rules, Config, Finding, Severity};
use kinetoscope_analysis::pstats::Stats;
use kinetoscope_trace::{CallerEdge, EdgeStats, FuncKey, PstatsEntry, PstatsProfile};

use crate::common::render;

fn key(file: &str, line: i64, name: &str) -> FuncKey {
    FuncKey {
        file: file.to_owned(),
        line,
        name: name.to_owned(),
    }
}

fn entry(func: FuncKey, calls: i64, tt: f64, ct: f64, caller: Option<&FuncKey>) -> PstatsEntry {
    PstatsEntry {
        func,
        primitive_calls: calls,
        calls,
        tottime: tt,
        cumtime: ct,
        callers: caller
            .map(|c| CallerEdge {
                caller: c.clone(),
                stats: EdgeStats::Timed {
                    calls,
                    primitive_calls: calls,
                    tottime: tt,
                    cumtime: ct,
                },
            })
            .into_iter()
            .collect(),
    }
}

/// `train.py:10(train_step)` for 10 s, of which `share` in `culprit` (called 100 times)
/// and the rest in its own body.
fn profile(culprit: FuncKey, share: f64) -> Stats {
    let step = key("/app/train.py", 10, "train_step");
    let t = 10.0 * share;
    Stats::load([PstatsProfile {
        path: "prof.prof".into(),
        file_bytes: 0,
        entries: vec![
            entry(step.clone(), 1, 10.0 - t, 10.0, None),
            entry(culprit, 100, t, t, Some(&step)),
        ],
    }])
}

/// The culprit of each rule, and what its clean twin calls instead.
fn culprit(code: &str) -> (FuncKey, &'static str) {
    let torch = |m: &str| {
        key(
            "~",
            0,
            &format!("<method '{m}' of 'torch._C.TensorBase' objects>"),
        )
    };
    match code {
        "PY001" => (
            key(
                "/venv/torch/utils/data/dataloader.py",
                1479,
                "_shutdown_workers",
            ),
            "a DataLoader shutting its workers down",
        ),
        "PY002" => (
            key("/app/oumi/core/datasets.py", 88, "num_tokens"),
            "token counting per step",
        ),
        "PY003" => (torch("item"), "Tensor.item() per step"),
        "PY004" => (torch("to"), "Tensor.to() per step"),
        "PY005" => (
            key("/usr/lib/python3.11/logging/__init__.py", 1467, "info"),
            "logging.info per step",
        ),
        "PY006" => (
            key("~", 0, "<built-in method gc.collect>"),
            "gc.collect() per step",
        ),
        other => panic!("no culprit for {other}"),
    }
}

fn findings(stats: &Stats) -> Vec<Finding> {
    advise_pstats(stats, "prof.prof", &Config::default())
}

#[test]
fn every_pstats_rule_fires_on_its_culprit_and_not_on_the_clean_twin() {
    let codes: Vec<&str> = rules::pstats::all().iter().map(|r| r.meta().code).collect();
    assert_eq!(
        codes,
        ["PY001", "PY002", "PY003", "PY004", "PY005", "PY006"]
    );
    for code in codes {
        let (func, how) = culprit(code);
        let all = findings(&profile(func, 0.3));
        let fired: Vec<&Finding> = all.iter().filter(|f| f.id == code).collect();
        assert_eq!(fired.len(), 1, "{code}: {all:?}");
        let f = fired[0];
        assert_eq!(f.severity, Severity::Critical, "{code}: 30 % ≥ 20 %");
        assert!((f.impact_share - 0.3).abs() < 1e-12, "{code}");
        assert!((f.impact_ns_per_step - 3e9).abs() < 1.0, "{code}");
        assert!(!f.evidence.is_empty() && !f.fix.is_empty(), "{code}");
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_description(how);
        settings.set_omit_expression(true);
        settings.bind(|| insta::assert_snapshot!(code, render(&fired)));
        let clean = findings(&profile(key("/app/model.py", 5, "forward"), 0.3));
        assert!(clean.is_empty(), "{code}: clean twin {clean:?}");
    }
}

#[test]
fn severity_follows_the_share_thresholds() {
    let (gc, _) = culprit("PY006");
    let sev = |share: f64| {
        findings(&profile(gc.clone(), share))
            .first()
            .map(|f| f.severity)
    };
    assert_eq!(sev(0.005), None);
    assert_eq!(sev(0.02), Some(Severity::Info));
    assert_eq!(sev(0.08), Some(Severity::Warning));
    assert_eq!(sev(0.25), Some(Severity::Critical));
    let mut config = Config::default();
    config.pstats.warning_pct = 1.0;
    let f = advise_pstats(&profile(gc, 0.02), "p", &config);
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn a_matched_function_inside_another_is_counted_once() {
    // _shutdown_workers (4 s) calls poll (3.9 s): 4 s, not 7.9 s
    let step = key("/app/train.py", 10, "train_step");
    let shutdown = key(
        "/venv/torch/utils/data/dataloader.py",
        1479,
        "_shutdown_workers",
    );
    let poll = key(
        "/usr/lib/python3.11/multiprocessing/connection.py",
        253,
        "poll",
    );
    let stats = Stats::load([PstatsProfile {
        path: "p".into(),
        file_bytes: 0,
        entries: vec![
            entry(step.clone(), 1, 6.0, 10.0, None),
            entry(shutdown.clone(), 4, 0.1, 4.0, Some(&step)),
            entry(poll, 40, 3.9, 3.9, Some(&shutdown)),
        ],
    }]);
    let f = findings(&stats);
    assert_eq!(f.len(), 1);
    assert!(
        (f[0].impact_share - 0.4).abs() < 1e-12,
        "{}",
        f[0].impact_share
    );
}

#[test]
fn the_real_workload_profiles_raise_nothing() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../kinetoscope-trace/tests/fixtures/pstats");
    for name in [
        "cprofile-3.8.prof",
        "cprofile-3.13.prof",
        "profile-3.13.prof",
    ] {
        let p = kinetoscope_trace::read::read_pstats(&dir.join(name)).unwrap();
        let f = findings(&Stats::load([p]));
        assert!(f.is_empty(), "{name}: {f:?}");
    }
}
