//! Runs, workers and spans of a log dir; every view equal to the engine's document (what
//! the CLI prints with `--format json`); the diff.

use std::path::Path;

use kinetoscope_advisor::Config;
use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::launches::LaunchOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_analysis::sequences::SequenceOptions;
use kinetoscope_engine::{
    to_json, CommOptions, DiffOptions, Engine, IdleOptions, KernelsOptions, LaunchesOptions,
    MemoryOptions, OpsOptions, Source,
};

use crate::common::{copy, h100, hta, serve};

#[test]
fn a_logdir_lists_runs_workers_and_spans_and_new_files_appear() {
    let logdir = tempfile::tempdir().unwrap();
    let a = logdir.path().join("run_a");
    std::fs::create_dir(&a).unwrap();
    copy(&h100(), &a, "host_1.1700000000001.pt.trace.json.gz");
    copy(&hta(), &a, "host_2.1700000000001.pt.trace.json.gz");
    std::fs::create_dir(logdir.path().join("empty")).unwrap();
    let s = serve(&[logdir.path().to_owned()]);
    let runs = s.get_json("/api/v1/runs");
    let list = runs["runs"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{runs}");
    assert_eq!(list[0]["name"], "run_a");
    assert_eq!(list[0]["kind"], "logdir_run");
    let workers: Vec<&str> = list[0]["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(workers, ["host_1", "host_2"]);
    assert_eq!(list[0]["spans"][0]["id"], "1700000000001");

    // A new span of a worker and a new run appear without a restart; the run keeps its id.
    let id = list[0]["id"].clone();
    copy(&hta(), &a, "host_1.1700000000009.pt.trace.json.gz");
    let b = logdir.path().join("run_b");
    std::fs::create_dir(&b).unwrap();
    copy(&hta(), &b, "rank0.pt.trace.json.gz");
    let runs = s.get_json("/api/v1/runs");
    let list = runs["runs"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], id);
    assert_eq!(list[0]["spans"].as_array().unwrap().len(), 2);
    assert_eq!(list[1]["name"], "run_b");
    assert_eq!(list[1]["workers"][0]["id"], "rank0");

    // worker without span: its latest span (the HTA trace, not the H100 one).
    let run = list[0]["id"].as_str().unwrap();
    let tracks = s.get_json(&format!("/api/v1/runs/{run}/timeline/tracks?worker=host_1"));
    let latest = s.get_json(&format!(
        "/api/v1/runs/{run}/timeline/tracks?worker=host_2&span=1700000000001"
    ));
    assert_eq!(tracks, latest);
    // A timeline of a run of several traces needs a worker.
    assert_eq!(
        s.get(&format!("/api/v1/runs/{run}/timeline/tracks")).status,
        400
    );
    assert_eq!(
        s.get(&format!("/api/v1/runs/{run}/timeline/tracks?worker=nobody"))
            .status,
        404
    );
}

/// The engine's document for `view` on `path` with the CLI's default options, as JSON.
fn engine_doc(view: &str, path: &Path) -> serde_json::Value {
    let e = Engine::default();
    let src = Source::Path(path.to_owned());
    let text = match view {
        "summary" => to_json(&e.summary(&src).unwrap()),
        "overview" => to_json(&e.overview(&src).unwrap()),
        "ops" => to_json(
            &e.ops(
                &src,
                &OpsOptions {
                    top: 20,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        "kernels" => to_json(
            &e.kernels(
                &src,
                &KernelsOptions {
                    top: 20,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        "memory" => {
            let opts = MemoryOptions {
                points: 500,
                top: 20,
                ..Default::default()
            };
            to_json(&e.memory(&src, &opts).unwrap())
        }
        "comm" => to_json(&e.comm(&src, CommOptions { hta_compat: false }).unwrap()),
        "temporal" => to_json(&e.temporal(&src, Compat::Kinetoscope).unwrap()),
        "idle" => to_json(
            &e.idle(
                &src,
                IdleOptions {
                    compat: Compat::Kinetoscope,
                    kernel_wait_ns: 30_000,
                },
            )
            .unwrap(),
        ),
        "launches" => to_json(
            &e.launches(
                &src,
                LaunchesOptions {
                    compat: Compat::Kinetoscope,
                    launch: LaunchOptions {
                        runtime_cutoff_ns: 50_000,
                        delay_cutoff_ns: 100_000,
                        top: 20,
                        all: false,
                    },
                },
            )
            .unwrap(),
        ),
        "kernel_classes" => to_json(&e.kernel_classes(&src, Compat::Kinetoscope, 20).unwrap()),
        "sequences" => to_json(
            &e.sequences(
                &src,
                &SequenceOptions {
                    op: None,
                    min_len: 3,
                    max_len: 6,
                    top: 5,
                },
            )
            .unwrap(),
        ),
        "critical_path" => to_json(
            &e.critical_path(
                &src,
                CriticalPathOptions {
                    step: None,
                    top: 10,
                },
            )
            .unwrap(),
        ),
        "report" => to_json(
            &e.report(&src, &Config::from_toml("", &[]).unwrap())
                .unwrap(),
        ),
        _ => unreachable!("{view}"),
    };
    serde_json::from_str(&text.unwrap()).unwrap()
}

#[test]
fn every_view_equals_the_engine_document() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy(&h100(), dir.path(), "h100.pt.trace.json.gz")
        .canonicalize()
        .unwrap();
    let s = serve(std::slice::from_ref(&file));
    let run = s.run_id(None);
    for view in [
        "summary",
        "overview",
        "ops",
        "kernels",
        "memory",
        "comm",
        "temporal",
        "idle",
        "launches",
        "kernel_classes",
        "sequences",
        "critical_path",
        "report",
    ] {
        let got = s.get_json(&format!("/api/v1/runs/{run}/views/{view}"));
        assert_eq!(got, engine_doc(view, &file), "{view}");
        // A second time from the document cache: the same.
        assert_eq!(
            s.get_json(&format!("/api/v1/runs/{run}/views/{view}")),
            got,
            "{view}"
        );
    }
    // Options change the document as the CLI's flags do.
    let by_shape = s.get_json(&format!(
        "/api/v1/runs/{run}/views/ops?group_by=shape&top=3&sort=calls"
    ));
    let want = Engine::default()
        .ops(
            &Source::Path(file.clone()),
            &OpsOptions {
                group_by: kinetoscope_analysis::ops::OpGroupBy::Shape,
                sort: kinetoscope_analysis::ops::OpSortKey::Calls,
                top: 3,
            },
        )
        .unwrap();
    assert_eq!(
        by_shape,
        serde_json::from_str::<serde_json::Value>(&to_json(&want).unwrap()).unwrap()
    );
    // `ranks` needs a folder of ranks: 400 with the engine's words.
    let r = s.get(&format!("/api/v1/runs/{run}/views/ranks"));
    assert_eq!(r.status, 400);
    assert!(r.error().contains("at least two rank"));
}

#[test]
fn a_changed_file_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy(&h100(), dir.path(), "t.pt.trace.json.gz");
    let s = serve(&[dir.path().to_owned()]);
    let run = s.run_id(None);
    let before = s.get_json(&format!("/api/v1/runs/{run}/views/summary"));
    std::fs::copy(hta(), &file).unwrap();
    let after = s.get_json(&format!("/api/v1/runs/{run}/views/summary"));
    assert_ne!(before, after);
    assert_eq!(
        after,
        engine_doc("summary", &dir.path().canonicalize().unwrap())
    );
}

#[test]
fn the_diff_equals_the_engine_diff() {
    let logdir = tempfile::tempdir().unwrap();
    for (name, from) in [("base", h100()), ("new", hta())] {
        let d = logdir.path().join(name);
        std::fs::create_dir(&d).unwrap();
        copy(&from, &d, "w.pt.trace.json.gz");
    }
    let s = serve(&[logdir.path().to_owned()]);
    let (base, new) = (s.run_id(Some("base")), s.run_id(Some("new")));
    let got = s.get_json(&format!("/api/v1/diff?base={base}&new={new}"));
    let root = logdir.path().canonicalize().unwrap();
    let want = Engine::default()
        .diff(
            &Source::Path(root.join("base")),
            &Source::Path(root.join("new")),
            &Config::from_toml("", &[]).unwrap(),
            &DiffOptions::default(),
        )
        .unwrap();
    let want: serde_json::Value = serde_json::from_str(&to_json(&want).unwrap()).unwrap();
    assert_eq!(got, want);
    assert_eq!(s.get(&format!("/api/v1/diff?base={base}")).status, 400);
    assert_eq!(
        s.get(&format!("/api/v1/diff?base={base}&new=nope")).status,
        404
    );
}
