//! The pstats analyses against Python's own `pstats` on real files (recorded with
//! CPython 3.6–3.13, `cProfile` and `profile`; the reference JSON is written by
//! `reference.py` beside them): totals, the order of nine sort keys, `strip_dirs()` with
//! its merges, and `pstats.Stats(a, b)` sums, every number equal. Then callers and
//! callees, restrictions, and the estimated call tree's invariants.

use std::path::PathBuf;

use kinetoscope_analysis::pstats::{self, SortKey, Stats, TableOptions};
use kinetoscope_trace::read::read_pstats;
use kinetoscope_trace::{EdgeStats, FuncKey, PstatsProfile};
use serde_json::Value;

use crate::common::trace_fixture;

fn dir() -> PathBuf {
    trace_fixture("pstats")
}

fn load(name: &str) -> PstatsProfile {
    read_pstats(&dir().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn reference(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(name)).unwrap()).unwrap()
}

fn secs(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

fn key(v: &Value) -> FuncKey {
    FuncKey {
        file: v[0].as_str().unwrap().to_owned(),
        line: v[1].as_i64().unwrap(),
        name: v[2].as_str().unwrap().to_owned(),
    }
}

/// `stats` equals one side (`plain` or `strip_dirs`) of a reference: totals, every entry
/// and edge in order, and the order of every sort key.
fn check(stats: &Stats, want: &Value, ctx: &str) {
    assert_eq!(
        stats.total_calls,
        want["total_calls"].as_i64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        stats.prim_calls,
        want["prim_calls"].as_i64().unwrap(),
        "{ctx}"
    );
    assert_eq!(stats.total_tt, secs(&want["total_tt"]), "{ctx}");
    let entries = want["entries"].as_array().unwrap();
    assert_eq!(stats.entries.len(), entries.len(), "{ctx}");
    for (got, w) in stats.entries.iter().zip(entries) {
        let ctx = format!("{ctx}: {}", got.func.std_string());
        assert_eq!(got.func, key(&w["func"]), "{ctx}");
        assert_eq!(
            (got.primitive_calls, got.calls, got.tottime, got.cumtime),
            (
                w["cc"].as_i64().unwrap(),
                w["nc"].as_i64().unwrap(),
                secs(&w["tt"]),
                secs(&w["ct"])
            ),
            "{ctx}"
        );
        let callers = w["callers"].as_array().unwrap();
        assert_eq!(got.callers.len(), callers.len(), "{ctx}");
        for (edge, c) in got.callers.iter().zip(callers) {
            assert_eq!(edge.caller, key(&c[0]), "{ctx}");
            let expected = match &c[1] {
                Value::Array(a) => EdgeStats::Timed {
                    calls: a[0].as_i64().unwrap(),
                    primitive_calls: a[1].as_i64().unwrap(),
                    tottime: secs(&a[2]),
                    cumtime: secs(&a[3]),
                },
                n => EdgeStats::Count {
                    calls: n.as_i64().unwrap(),
                },
            };
            assert_eq!(
                edge.stats,
                expected,
                "{ctx} <- {}",
                edge.caller.std_string()
            );
        }
    }
    for (name, order) in want["order"].as_object().unwrap() {
        let sort = vec![SortKey::parse(name).unwrap_or_else(|| panic!("{name}"))];
        let got: Vec<&FuncKey> = pstats::table::select(
            stats,
            &TableOptions {
                sort,
                ..Default::default()
            },
        )
        .into_iter()
        .map(|e| &e.func)
        .collect();
        let want: Vec<FuncKey> = order.as_array().unwrap().iter().map(key).collect();
        assert_eq!(got, want.iter().collect::<Vec<_>>(), "{ctx}: sort {name}");
    }
}

fn check_both(mut stats: Stats, reference: &Value, ctx: &str) {
    check(&stats, &reference["plain"], ctx);
    stats.strip_dirs();
    check(
        &stats,
        &reference["strip_dirs"],
        &format!("{ctx} strip_dirs"),
    );
}

const FIXTURES: [&str; 11] = [
    "bottlenecks-3.11",
    "cprofile-3.6",
    "cprofile-3.7",
    "cprofile-3.8",
    "cprofile-3.9",
    "cprofile-3.10",
    "cprofile-3.11",
    "cprofile-3.12",
    "cprofile-3.13",
    "profile-3.8",
    "profile-3.13",
];

#[test]
fn one_file_equals_pythons_pstats_with_and_without_strip_dirs() {
    for name in FIXTURES {
        let p = load(&format!("{name}.prof"));
        let stats = Stats::load([p]);
        assert!(stats.entries.len() > 20, "{name}: a few dozen functions");
        check_both(stats, &reference(&format!("{name}.json")), name);
    }
}

#[test]
fn strip_dirs_merges_the_colliding_functions() {
    let p = load("cprofile-3.13.prof");
    let mut stats = Stats::load([p]);
    let before = stats.entries.len();
    stats.strip_dirs();
    assert!(
        stats.entries.len() < before,
        "two copies of workload.py merge"
    );
    assert!(stats.entries.iter().all(|e| !e.func.file.contains('/')));
}

#[test]
fn sums_equal_pstats_stats_of_two_files() {
    for (a, b, r) in [
        ("cprofile-3.12", "cprofile-3.13", "sum-cprofile-3.12+3.13"),
        ("profile-3.8", "profile-3.13", "sum-profile-3.8+3.13"),
    ] {
        let (pa, pb) = (load(&format!("{a}.prof")), load(&format!("{b}.prof")));
        let stats = Stats::load([pa, pb]);
        assert_eq!(stats.files, 2);
        check_both(stats, &reference(&format!("{r}.json")), r);
    }
}

#[test]
fn sort_keys_parse_as_pstats_spells_them() {
    assert_eq!(SortKey::parse("cumtime"), Some(SortKey::Cumulative));
    assert_eq!(SortKey::parse("cum"), Some(SortKey::Cumulative));
    assert_eq!(SortKey::parse("tottime"), Some(SortKey::Time));
    assert_eq!(SortKey::parse("calls"), Some(SortKey::Calls));
    assert_eq!(SortKey::parse("percall"), Some(SortKey::Percall));
    assert_eq!(SortKey::parse("c"), None, "calls, cumulative: ambiguous");
    assert_eq!(
        SortKey::parse("cumper"),
        None,
        "kinetoscope's keys are spelled out"
    );
    assert_eq!(SortKey::parse("bogus"), None);
}

fn opts(sort: SortKey) -> pstats::PstatsOptions {
    pstats::PstatsOptions {
        table: TableOptions {
            sort: vec![sort],
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn restriction_then_top_n_and_per_call_numbers() {
    let p = load("cprofile-3.13.prof");
    let mut o = opts(SortKey::Cumulative);
    o.table.filter = Some(regex::Regex::new("workload").unwrap());
    o.table.top = Some(5);
    let v = pstats::view(Stats::load([p]), &o);
    assert_eq!(v.rows.len(), 5);
    assert!(v.rows.iter().all(|r| r.std_name.contains("workload")));
    assert!(v.rows.windows(2).all(|w| w[0].cumtime >= w[1].cumtime));
    let fib = v
        .rows
        .iter()
        .find(|r| r.func.name == "fib")
        .expect("fib in the top 5");
    assert!(
        fib.calls > fib.primitive_calls,
        "recursion: {} / {}",
        fib.calls,
        fib.primitive_calls
    );
    assert_eq!(fib.tottime_per_call, Some(fib.tottime / fib.calls as f64));
    assert_eq!(
        fib.cumtime_per_call,
        Some(fib.cumtime / fib.primitive_calls as f64)
    );
    assert!(v.functions > 20);
}

#[test]
fn callers_and_callees_mirror_each_other() {
    let helper = regex::Regex::new(r"\(helper\)").unwrap();
    let any = regex::Regex::new(".").unwrap();
    for name in ["cprofile-3.13", "profile-3.13"] {
        let p = load(&format!("{name}.prof"));
        let stats = Stats::load([p]);
        let mut o = opts(SortKey::Stdname);
        o.callers = Some(helper.clone());
        o.callees = Some(any.clone());
        let v = pstats::view(stats.clone(), &o);
        let callers = v.callers.unwrap();
        let helpers: Vec<_> = stats
            .entries
            .iter()
            .filter(|e| e.func.name == "helper")
            .collect();
        assert_eq!(callers.len(), helpers.len(), "{name}");
        let callees = v.callees.unwrap();
        assert_eq!(callees.len(), stats.entries.len());
        let app = callers
            .iter()
            .find(|l| l.func.file == "/home/user/project/workload.py");
        assert!(
            app.unwrap().edges.len() >= 4,
            "{name}: helper is called from several sites"
        );
        for l in &callers {
            assert!(
                l.edges.windows(2).all(|w| w[0].func < w[1].func),
                "sorted by key"
            );
            for e in &l.edges {
                let of_caller = callees.iter().find(|c| c.func == e.func).unwrap();
                let back = of_caller.edges.iter().find(|x| x.func == l.func).unwrap();
                assert_eq!(back.stats, e.stats, "{name}: {}", e.std_name);
            }
        }
    }
}

#[test]
fn the_call_tree_adds_up_and_does_not_descend_into_recursion() {
    for name in ["cprofile-3.13", "profile-3.8"] {
        let p = load(&format!("{name}.prof"));
        let stats = Stats::load([p]);
        let tree = pstats::tree::call_tree(&stats);
        assert!(!tree.truncated);
        let roots: f64 = tree
            .nodes
            .iter()
            .filter(|n| n.parent.is_none())
            .map(|n| n.total)
            .sum();
        assert!((roots - tree.total).abs() <= 1e-12, "{name}");
        let selfs: f64 = tree.nodes.iter().map(|n| n.self_time).sum();
        assert!(
            (selfs - tree.total).abs() <= 1e-9 * tree.total.max(1.0),
            "{name}: {selfs} vs {}",
            tree.total
        );
        for (i, n) in tree.nodes.iter().enumerate() {
            let kids: f64 = tree
                .nodes
                .iter()
                .filter(|c| c.parent == Some(i as u32))
                .map(|c| c.total)
                .sum();
            assert!(kids <= n.total * (1.0 + 1e-12) + 1e-15, "{name}: node {i}");
            assert!(
                (n.self_time - (n.total - kids).max(0.0)).abs() <= 1e-12,
                "{name}: node {i}"
            );
            let mut at = n.parent;
            while let Some(p) = at {
                assert_ne!(
                    tree.nodes[p as usize].func, n.func,
                    "{name}: recursion descended"
                );
                at = tree.nodes[p as usize].parent;
            }
        }
        let fib = tree
            .functions
            .iter()
            .position(|f| f.ends_with("(fib)"))
            .unwrap() as u32;
        assert!(
            tree.nodes.iter().any(|n| n.func == fib),
            "{name}: fib is in the tree"
        );
    }
}
