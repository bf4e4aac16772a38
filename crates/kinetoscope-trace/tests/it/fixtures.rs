//! Every fixture reads without error and without defects, and agrees with the oracle
//! (an independent `serde_json` reading): element counts per category, events, flows,
//! steps to the nanosecond, time base, devices, rank and world size.

use kinetoscope_trace::read::{read_trace, read_trace_bytes, read_trace_from, ReadOptions};
use kinetoscope_trace::{CategoryKind, Phase, Rank, RankSource, Trace, TrackKind};

use crate::common::{
    assert_matches_oracle, categories, fixture, fixtures_dir, gzip, json_text, lenient, step_spans,
    temp_file,
};

macro_rules! agrees_with_oracle {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                assert_matches_oracle(&fixture($file));
            }
        )*

        /// Every file in the fixtures folder has a test above.
        #[test]
        fn every_fixture_is_listed() {
            let listed: &[&str] = &[$($file),*];
            let mut missing = Vec::new();
            for dir in [fixtures_dir(), fixtures_dir().join("ranks")] {
                for entry in std::fs::read_dir(&dir).unwrap() {
                    let path = entry.unwrap().path();
                    let name = path.file_name().unwrap().to_string_lossy().into_owned();
                    if !(name.ends_with(".json") || name.ends_with(".json.gz")) {
                        continue;
                    }
                    let rel = path.strip_prefix(fixtures_dir()).unwrap();
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    if !listed.contains(&rel.as_str()) {
                        missing.push(rel);
                    }
                }
            }
            assert!(missing.is_empty(), "fixtures without a test: {missing:?}");
        }

        /// Every entry reads every fixture into the same model: the text as a plain
        /// file (mapped, and through `read()`), as bytes in memory and as a stream, and
        /// the same for its gzip.
        #[test]
        fn every_entry_reads_every_fixture_the_same() {
            for name in [$($file),*] {
                entries_agree(name);
            }
        }
    };
}

/// The model as text, with what differs between plain and gzip input (and between
/// temporary folders) left out.
fn fingerprint(mut t: Trace) -> String {
    t.path = Default::default();
    t.report.file_bytes = 0;
    t.report.gzip = false;
    format!("{t:?}")
}

fn entries_agree(name: &str) {
    let text = json_text(&fixture(name));
    let opts = lenient(3);
    let no_mmap = ReadOptions {
        mmap: false,
        ..opts.clone()
    };
    let mut first: Option<(String, String)> = None;
    for gz in [false, true] {
        let bytes = if gz { gzip(&text) } else { text.clone() };
        let (_dir, path) = temp_file("t.json", &bytes, false);
        let reads = [
            ("file", read_trace(&path, &opts)),
            ("file without mmap", read_trace(&path, &no_mmap)),
            ("bytes", read_trace_bytes(&path, &bytes, &opts)),
            ("reader", read_trace_from(&path, bytes.as_slice(), &opts)),
        ];
        for (entry, r) in reads {
            let what = format!("{name} as {entry}, gz={gz}");
            let t = r.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(t.report.gzip, gz, "{what}");
            assert_eq!(t.report.file_bytes, bytes.len() as u64, "{what}");
            let f = fingerprint(t);
            match &first {
                None => first = Some((what, f)),
                Some((w0, f0)) => assert!(*f0 == f, "{what} differs from {w0}"),
            }
        }
    }
}

agrees_with_oracle! {
    torch_1_13_1 => "torch-1.13.1_tb_w0.1795238235109.pt.trace.json.gz",
    torch_2_0_1 => "torch-2.0.1_tb_w0.1795238493691.pt.trace.json.gz",
    torch_2_1_2 => "torch-2.1.2_tb_w0.1795240275336601962.pt.trace.json.gz",
    torch_2_4_1 => "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
    torch_2_9_1 => "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz",
    torch_2_15_0 => "torch-2.15.0_w0.1795238009077499329.pt.trace.json.gz",
    torch_2_15_0_py_export => "torch-2.15.0_py_export.json.gz",
    hta_amd_mi250 => "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    hta_triton => "triton_example.json.gz",
    hta_cpu_only => "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    hta_old_categories => "inference_rank_1.json.gz",
    hta_plain_json => "backward_thread.json",
    hta_rank0 => "ranks/sampled_rank-0.json.gz",
    hta_rank1 => "ranks/sampled_rank-1.json.gz",
    hta_event_sync => "event_sync_trace.json.gz",
    hta_gpu_user_annotation => "step_based_trace_2543932.json.gz",
    hta_rank_non_gpu => "rank_non_gpu.json.gz",
    tb_plugin_compute_properties => "gpu_metrics_input.json",
    tb_plugin_torch_1_9 => "worker0.1623143089861.pt.trace.json.gz",
}

fn read(name: &str) -> kinetoscope_trace::Trace {
    read_trace(&fixture(name), &lenient(2)).unwrap()
}

/// The era each fixture is recognised as, from its format features.
#[test]
fn eras() {
    let cases = [
        (
            "torch-1.13.1_tb_w0.1795238235109.pt.trace.json.gz",
            "PyTorch 1.11–1.13",
        ),
        (
            "torch-2.0.1_tb_w0.1795238493691.pt.trace.json.gz",
            "PyTorch 2.0–2.3",
        ),
        (
            "torch-2.1.2_tb_w0.1795240275336601962.pt.trace.json.gz",
            "PyTorch 2.1–2.3",
        ),
        (
            "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
            "PyTorch 2.4–2.6",
        ),
        (
            "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz",
            "PyTorch 2.7+",
        ),
        (
            "torch-2.15.0_w0.1795238009077499329.pt.trace.json.gz",
            "PyTorch 2.10+",
        ),
        ("gpu_metrics_input.json", "PyTorch 1.8–1.9"),
        ("worker0.1623143089861.pt.trace.json.gz", "PyTorch 1.8–1.9"),
        ("inference_rank_1.json.gz", "PyTorch 1.10"),
    ];
    let mut bad = Vec::new();
    for (name, era) in cases {
        let got = read(name).meta.pytorch_era();
        if got != era {
            bad.push(format!("{name}: {got:?}, expected {era:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `baseTimeNanoseconds` after the event array (2.4–2.6) and before it (2.7+) are both
/// applied, and seen in the right place.
#[test]
fn time_base_position() {
    let t = read("torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz");
    assert!(t.meta.base_time_ns.is_some());
    assert!(!t.meta.features.base_time_before_events);
    assert!(t.meta.features.fractional_ts);
    let t = read("torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz");
    assert!(t.meta.base_time_ns.is_some());
    assert!(t.meta.features.base_time_before_events);
    // Epoch nanoseconds: all events after 2020 once the base is added.
    let min = *t.events.ts_ns.iter().min().unwrap();
    assert!(min > 1_577_836_800_000_000_000, "min ts {min}");
}

/// A few facts stated in `shared/external/hta/SOURCE.md`.
#[test]
fn hta_inventory_facts() {
    let rank = |value| {
        Some(Rank {
            value,
            source: RankSource::DistributedInfo,
        })
    };
    let t = read("ranks/sampled_rank-1.json.gz");
    let d = t.meta.distributed.as_ref().unwrap();
    assert_eq!((t.meta.rank, d.world_size), (rank(1), Some(128)));
    assert_eq!(d.backend.as_deref(), Some("nccl"));
    assert_eq!(t.report.elements, 4720);
    assert_eq!(categories(&t)["kernel"], 1104);
    assert_eq!(step_spans(&t).len(), 2);

    let t = read("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    let d = t.meta.distributed.as_ref().unwrap();
    assert_eq!((t.meta.rank, d.world_size), (rank(34), Some(300)));
    assert_eq!(d.backend.as_deref(), Some("gloo"));
    assert!(t.meta.devices.is_empty());

    let t = read("mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_eq!(t.meta.devices.len(), 4);
    // The GPU-side `ProfilerStep#1` is a `gpu_user_annotation`, not a host step span.
    assert_eq!(
        step_spans(&t)
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["ProfilerStep#1", "ProfilerStep#2"]
    );

    let t = read("inference_rank_1.json.gz");
    let c = categories(&t);
    assert_eq!(c["kernel"], 4);
    assert_eq!(c["cuda_runtime"], 8);
    assert_eq!(c["ac2g"], 8);
    assert!(!c.contains_key("Kernel"));
}

/// The rank comes from `distributedInfo.rank`, else from the file name.
#[test]
fn rank_from_the_file_name() {
    let text = json_text(&fixture("backward_thread.json"));
    let t = read_trace_bytes("run/rank_5.pt.trace.json".as_ref(), &text, &lenient(1)).unwrap();
    let from_info = t.meta.distributed.as_ref().and_then(|d| d.rank).unwrap();
    assert_eq!(
        t.meta.rank,
        Some(Rank {
            value: from_info,
            source: RankSource::DistributedInfo
        })
    );
    let text = json_text(&fixture("gpu_metrics_input.json"));
    let t = read_trace_bytes("run/rank_5.pt.trace.json".as_ref(), &text, &lenient(1)).unwrap();
    assert!(t.meta.distributed.is_none());
    assert_eq!(
        t.meta.rank,
        Some(Rank {
            value: 5,
            source: RankSource::FileName
        })
    );
    let t = read_trace_bytes("run/worker0.json".as_ref(), &text, &lenient(1)).unwrap();
    assert_eq!(t.meta.rank, None);
}

/// 1.9-era files: string tids, GPU streams named `stream N`, `[memory]` instants without
/// `cat` counted as `cpu_instant_event`, 6 steps #5–#10.
#[test]
fn torch_1_9_specifics() {
    let t = read("worker0.1623143089861.pt.trace.json.gz");
    assert!(t.meta.features.string_tids);
    assert!(t.meta.features.operator_category);
    assert_eq!(categories(&t)["cpu_instant_event"], 12_838);
    assert_eq!(t.report.elements, 75_718);
    let steps = step_spans(&t);
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ProfilerStep#5",
            "ProfilerStep#6",
            "ProfilerStep#7",
            "ProfilerStep#8",
            "ProfilerStep#9",
            "ProfilerStep#10"
        ]
    );
    // Kernels run on GPU-stream tracks with a numeric device and stream.
    let mut gpu_tracks = 0;
    for i in 0..t.events.len() {
        if t.categories.kind(t.events.cat[i]) == CategoryKind::Kernel {
            match t.tracks.get(t.events.track[i]).kind {
                TrackKind::GpuStream { device, stream } => {
                    assert!(device >= 0 && stream >= 0, "{device} {stream}");
                    gpu_tracks += 1;
                }
                other => panic!("kernel on a {other:?} track"),
            }
        }
    }
    assert_eq!(gpu_tracks, 8772);
    assert_eq!(t.meta.devices.len(), 4);
    assert_eq!(t.meta.devices[0].num_sms, 80);
}

/// Parsing with many threads gives exactly the same columns as parsing with one, on
/// files large enough (> 1 MB of JSON) to be split between workers, and on the 35 MB
/// one that also spans several of the reader's read blocks.
#[test]
fn threads_do_not_change_the_result() {
    for name in [
        "ranks/sampled_rank-0.json.gz",
        "worker0.1623143089861.pt.trace.json.gz",
    ] {
        let one = read_trace(&fixture(name), &lenient(1)).unwrap();
        let many = read_trace(&fixture(name), &lenient(5)).unwrap();
        assert_eq!(one.events.len(), many.events.len(), "{name}");
        assert_eq!(one.events.ts_ns, many.events.ts_ns, "{name}");
        assert_eq!(one.events.dur_ns, many.events.dur_ns, "{name}");
        assert_eq!(one.events.phase, many.events.phase, "{name}");
        assert_eq!(one.events.external_id, many.events.external_id, "{name}");
        assert_eq!(one.events.correlation, many.events.correlation, "{name}");
        let names = |t: &kinetoscope_trace::Trace| -> Vec<String> {
            t.events.ids().map(|e| t.name(e).to_owned()).collect()
        };
        assert_eq!(names(&one), names(&many), "{name}");
        let cats = |t: &kinetoscope_trace::Trace| -> Vec<String> {
            t.events
                .cat
                .iter()
                .map(|&c| t.categories.get(c).raw.clone())
                .collect()
        };
        assert_eq!(cats(&one), cats(&many), "{name}");
        assert_eq!(one.flows.id, many.flows.id, "{name}");
        assert_eq!(one.flows.ts_ns, many.flows.ts_ns, "{name}");
        // Op args hold string ids: compare them through their texts.
        let ops = |t: &kinetoscope_trace::Trace| -> Vec<(u32, String, String, i64, i64)> {
            let a = &t.args;
            (0..a.op.len())
                .map(|i| {
                    (
                        a.op[i].event.0,
                        t.strings.get(a.op[i].input_dims).to_owned(),
                        t.strings.get(a.op[i].call_stack).to_owned(),
                        a.op_sequence_number.at(i),
                        a.op_fwd_thread_id.at(i),
                    )
                })
                .collect()
        };
        assert_eq!(ops(&one), ops(&many), "{name}");
        assert_eq!(one.args.kernel, many.args.kernel, "{name}");
        assert_eq!(one.args.memory, many.args.memory, "{name}");
        assert_eq!(one.tracks.len(), many.tracks.len(), "{name}");
        assert_eq!(one.report.elements, many.report.elements, "{name}");
        assert_eq!(one.report.json_bytes, many.report.json_bytes, "{name}");
        assert!(many.report.defects.is_empty(), "{name}");
    }
}

/// Durations are never negative and every `X` event ends at or after its start.
#[test]
fn complete_events_are_well_formed() {
    let t = read("torch-2.15.0_w0.1795238009077499329.pt.trace.json.gz");
    for i in 0..t.events.len() {
        assert!(t.events.dur_ns.at(i) >= 0);
        if t.events.phase[i] != Phase::Complete {
            assert_eq!(t.events.dur_ns.at(i), 0);
        }
    }
}
