//! `Engine::offline_bundle`: the API answers of `report --html` are the engine's own
//! documents, the views that do not apply are the API's errors, and the timeline's
//! windows stay within the budget, coarse first, finer while it lasts.

use kinetoscope_advisor::Config;
use kinetoscope_analysis::timeline::Window;
use kinetoscope_engine::bundle::{view_path, OFFLINE_RUN_ID, WEB_TABLE_ROWS};
use kinetoscope_engine::{BundleOptions, Engine, OfflineBundle, OpsOptions, Source};
use serde_json::Value;

use crate::common::{corpus, fixture, lenient};

/// The bundle of `src` within `budget` bytes.
fn bundle(src: &Source, budget: usize) -> OfflineBundle {
    let engine = Engine::new(lenient(2));
    let report = engine.report(src, &Config::default()).expect("report");
    engine
        .offline_bundle(
            src,
            &report,
            &BundleOptions {
                budget_bytes: budget,
            },
        )
        .expect("bundle")
}

/// Bytes of a window's JSON.
fn bytes(w: &Window) -> usize {
    serde_json::to_string(w).unwrap().len()
}

#[test]
fn answers_are_the_engines_documents() {
    let src = Source::Path(fixture(
        "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
    ));
    let b = bundle(&src, 2 << 20);
    let engine = Engine::new(lenient(2));
    let opts = OpsOptions {
        top: WEB_TABLE_ROWS,
        ..OpsOptions::default()
    };
    let ops = serde_json::to_value(engine.ops(&src, &opts).unwrap()).unwrap();
    let path = view_path(
        OFFLINE_RUN_ID,
        "ops",
        &[("group_by", "name".into()), ("top", "100".into())],
    );
    assert_eq!(b.responses[&path], ops);
    let overview = serde_json::to_value(engine.overview(&src).unwrap()).unwrap();
    assert_eq!(
        b.responses[&view_path(OFFLINE_RUN_ID, "overview", &[])],
        overview
    );
    // One trace: `ranks` does not apply, and says why as the API would.
    let ranks = &b.responses[&view_path(OFFLINE_RUN_ID, "ranks", &[])];
    assert_eq!(ranks["error"]["status"], 400);
    assert!(ranks["error"]["message"]
        .as_str()
        .unwrap()
        .contains("two rank trace files"));
    let runs = &b.responses["/api/v1/runs"]["runs"];
    assert_eq!(runs[0]["id"], OFFLINE_RUN_ID);
    assert_eq!(runs[0]["kind"], "trace");
}

#[test]
fn timeline_windows_fit_the_budget_and_refine_with_it() {
    let src = Source::Path(corpus().join("straggler"));
    let small = bundle(&src, 600 << 10);
    let large = bundle(&src, 8 << 20);
    for b in [&small, &large] {
        assert!(
            b.used_bytes <= b.budget_bytes,
            "{} > {}",
            b.used_bytes,
            b.budget_bytes
        );
        assert_eq!(b.timelines.len(), 2, "one timeline per rank");
        for (i, t) in b.timelines.iter().enumerate() {
            let windows =
                &b.timeline_windows[&format!("/api/v1/runs/{OFFLINE_RUN_ID}/timeline?trace={i}")];
            assert_eq!(windows.len(), t.windows);
            assert_eq!(windows.iter().map(bytes).sum::<usize>(), t.bytes);
            // Level 0 first: the whole trace, as its tracks give it.
            let tracks =
                &b.responses[&format!("/api/v1/runs/{OFFLINE_RUN_ID}/timeline/tracks?trace={i}")];
            assert_eq!(windows[0].start_ns, 0);
            assert_eq!(Value::from(windows[0].end_ns), tracks["t1_ns"]);
            // Coarsest first: no window is wider than one before it.
            let widths: Vec<i64> = windows.iter().map(|w| w.end_ns - w.start_ns).collect();
            assert!(widths.windows(2).all(|p| p[1] <= p[0]), "{widths:?}");
            assert!(t.levels >= 1);
        }
    }
    assert!(large.timelines[0].levels > small.timelines[0].levels);
}

#[test]
fn a_budget_too_small_for_the_whole_range_embeds_no_window() {
    let src = Source::Path(corpus().join("clean/trace.json.gz"));
    let b = bundle(&src, 1);
    assert_eq!(b.timelines[0].levels, 0);
    assert!(b.timeline_windows.values().all(Vec::is_empty));
    // The views are there all the same.
    assert!(b
        .responses
        .contains_key(&view_path(OFFLINE_RUN_ID, "report", &[])));
}
