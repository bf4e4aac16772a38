//! The loaded-trace session: traces kept while unchanged, dropped least recently used
//! first beyond the byte budget, read again when the file changes; documents cached per
//! key and recomputed when a file changes; views through the session equal the plain
//! engine's.

use kinetoscope_engine::{to_json, Engine, Session, Source};

use crate::common::fixture;

#[test]
fn traces_are_kept_within_the_budget_and_read_again_when_changed() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json.gz");
    let b = dir.path().join("b.json.gz");
    std::fs::copy(fixture("ranks/sampled_rank-0.json.gz"), &a).unwrap();
    std::fs::copy(fixture("ranks/sampled_rank-1.json.gz"), &b).unwrap();

    // A budget for about one trace: loading the second drops the first.
    let probe = Session::new(Engine::default(), u64::MAX, 0);
    let one = probe.load(&a).unwrap();
    let size = probe.held()[0].1;
    assert!(size >= one.trace.model_bytes() && size > 0);
    let s = Session::new(Engine::default(), size + size / 2, 1 << 20);
    let first = s.load(&a).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &s.load(&a).unwrap()), "kept");
    s.load(&b).unwrap();
    let held: Vec<_> = s.held().into_iter().map(|(p, _)| p).collect();
    assert_eq!(held, std::slice::from_ref(&b));

    // A changed file is read again.
    let before = s.load(&b).unwrap();
    std::fs::copy(fixture("ranks/sampled_rank-0.json.gz"), &b).unwrap();
    let after = s.load(&b).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&before, &after));
    assert_eq!(after.trace.events.len(), first.trace.events.len());
}

#[test]
fn views_through_the_session_equal_the_engine_and_documents_are_cached() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json.gz");
    std::fs::copy(fixture("ranks/sampled_rank-0.json.gz"), &a).unwrap();
    let src = Source::Path(a.clone());
    let s = Session::new(Engine::default(), 1 << 30, 1 << 20);
    let plain = to_json(&Engine::default().overview(&src).unwrap()).unwrap();
    let mut computed = 0;
    for _ in 0..2 {
        let text = s
            .document::<kinetoscope_engine::EngineError>(
                "a/overview",
                std::slice::from_ref(&a),
                |e| {
                    computed += 1;
                    Ok(to_json(&e.overview(&src)?).unwrap())
                },
            )
            .unwrap();
        assert_eq!(&*text, plain);
    }
    assert_eq!(computed, 1, "the second call is cached");
    // Memory goes through the cache too, and equals the engine's.
    let mem_opts = kinetoscope_engine::MemoryOptions {
        points: 100,
        ..Default::default()
    };
    let via_session = to_json(&s.engine().memory(&src, &mem_opts).unwrap()).unwrap();
    assert_eq!(
        via_session,
        to_json(&Engine::default().memory(&src, &mem_opts).unwrap()).unwrap()
    );
    // A change of the file recomputes.
    std::fs::copy(fixture("ranks/sampled_rank-1.json.gz"), &a).unwrap();
    let text = s
        .document::<kinetoscope_engine::EngineError>("a/overview", std::slice::from_ref(&a), |e| {
            computed += 1;
            Ok(to_json(&e.overview(&src)?).unwrap())
        })
        .unwrap();
    assert_eq!(computed, 2);
    assert_ne!(&*text, plain);
}

#[test]
fn requests_at_the_same_time_read_a_trace_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json.gz");
    std::fs::copy(fixture("ranks/sampled_rank-0.json.gz"), &a).unwrap();
    let s = Session::new(Engine::default(), 1 << 30, 0);
    let loaded: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| s.load(&a).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(loaded
        .windows(2)
        .all(|w| std::sync::Arc::ptr_eq(&w[0], &w[1])));
    // A file that cannot be read is an error each time, and nothing is kept of it.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, b"\x00\x01 not json").unwrap();
    assert!(s.load(&bad).is_err());
    assert!(s.load(&bad).is_err());
    assert_eq!(s.held().len(), 1);
}
