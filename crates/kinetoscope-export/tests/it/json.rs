//! The merged Chrome JSON read back with `serde_json`: one process per rank, every span
//! and instant of each rank's model, exact times with the offsets, flows paired.

use std::collections::BTreeMap;
use std::io::Read;

use kinetoscope_analysis::ranks::{ClockMode, RanksOptions};
use kinetoscope_engine::{Align, Engine, Source};
use kinetoscope_export::merge::{write_merged, Format};
use serde_json::Value;

use crate::common::{counts, inputs, merge_set, param_folder, written};

fn merged(align: Align, format: Format) -> (kinetoscope_engine::MergeSet, Vec<u8>) {
    let set = merge_set(&param_folder(), align);
    let mut out = Vec::new();
    write_merged(&inputs(&set), format, &mut out).expect("writes");
    (set, out)
}

fn events(doc: &Value) -> &Vec<Value> {
    doc["traceEvents"].as_array().expect("traceEvents")
}

/// `ns` as µs with three decimals, written here by hand for comparison.
fn us(ns: i64) -> String {
    format!("{}.{:03}", ns.div_euclid(1000), ns.rem_euclid(1000))
}

#[test]
fn every_rank_is_one_process_with_every_event_of_its_model() {
    let (set, out) = merged(Align::Auto, Format::Json);
    assert_eq!(set.ranks.len(), 8, "the PARAM job has eight ranks");
    let doc: Value = serde_json::from_slice(&out).expect("valid JSON");
    let text = String::from_utf8(out).expect("utf-8");
    let evs = events(&doc);
    let pids: Vec<i64> = evs.iter().filter_map(|e| e["pid"].as_i64()).collect();
    let expected: Vec<i64> = set.ranks.iter().map(|r| r.rank + 1).collect();
    assert_eq!(
        counts(pids).keys().copied().collect::<Vec<_>>(),
        expected,
        "one pid per rank, nothing else"
    );
    for r in &set.ranks {
        let pid = r.rank + 1;
        let of = |ph: &str| -> Vec<&Value> {
            evs.iter()
                .filter(|e| e["pid"] == pid && e["ph"] == ph)
                .collect()
        };
        let name = of("M")
            .into_iter()
            .find(|e| e["name"] == "process_name")
            .expect("process_name");
        assert_eq!(name["args"]["name"], format!("rank {}", r.rank));
        let model = written(&r.trace, r.offset_ns);
        let spans = of("X");
        assert_eq!(spans.len(), model.spans.len(), "rank {}: spans", r.rank);
        assert_eq!(
            of("i").len(),
            model.instants.len(),
            "rank {}: instants",
            r.rank
        );
        let mut names: Vec<&str> = spans.iter().map(|e| e["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        let model_names: Vec<&str> = model.spans.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, model_names, "rank {}: names", r.rank);
        // Exact times: the longest span's start and duration as decimal text.
        let (_, ts, dur) = model.spans.iter().max_by_key(|s| s.2).expect("spans");
        let needle = format!("\"ts\":{},\"dur\":{}", us(*ts), us(*dur));
        assert!(text.contains(&needle), "rank {}: {needle} written", r.rank);
    }
}

#[test]
fn launch_flows_pair_up_with_ids_unique_across_ranks() {
    let (_, out) = merged(Align::Auto, Format::Json);
    let doc: Value = serde_json::from_slice(&out).expect("valid JSON");
    let mut ends: BTreeMap<u64, Vec<(String, i64)>> = BTreeMap::new();
    for e in events(&doc) {
        if let Some(ph @ ("s" | "f")) = e["ph"].as_str() {
            let id = e["id"].as_u64().expect("flow id");
            ends.entry(id)
                .or_default()
                .push((ph.to_owned(), e["pid"].as_i64().unwrap()));
        }
    }
    assert!(
        ends.len() > 1000,
        "the job launches kernels: {}",
        ends.len()
    );
    for (id, pair) in &ends {
        assert_eq!(pair.len(), 2, "flow {id}: one start and one finish");
        assert_eq!(pair[0].0, "s");
        assert_eq!(pair[1].0, "f");
        assert_eq!(pair[0].1, pair[1].1, "flow {id} stays in its rank");
    }
}

#[test]
fn offsets_are_the_rank_comparisons_and_start_alignment_lines_up_first_spans() {
    let engine = Engine::default();
    let src = Source::Path(param_folder());
    for (align, clock) in [
        (Align::Auto, ClockMode::Auto),
        (Align::Collectives, ClockMode::CollectiveEnd),
    ] {
        let set = merge_set(&param_folder(), align);
        let opts = RanksOptions {
            clock,
            ..RanksOptions::default()
        };
        let ranks = engine.ranks(&src, opts).expect("ranks");
        for row in &ranks.report.ranks {
            let r = set.ranks.iter().find(|r| r.rank == row.rank).expect("rank");
            let applied = if row.clock_offset_applied {
                row.clock_offset_ns
            } else {
                0
            };
            assert_eq!(r.offset_ns, applied, "{align:?}: rank {}", row.rank);
        }
        if align == Align::Collectives {
            assert!(
                set.ranks.iter().any(|r| r.offset_ns != 0),
                "offsets estimated"
            );
        }
    }
    let (set, out) = merged(Align::Start, Format::Json);
    let doc: Value = serde_json::from_slice(&out).expect("valid JSON");
    let first: Vec<f64> = set
        .ranks
        .iter()
        .map(|r| {
            events(&doc)
                .iter()
                .filter(|e| e["pid"] == r.rank + 1 && e["ph"] == "X")
                .map(|e| e["ts"].as_f64().unwrap())
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    assert!(first.windows(2).all(|w| w[0] == w[1]), "{first:?}");
}

#[test]
fn gzip_output_is_the_same_json_compressed() {
    let (_, plain) = merged(Align::None, Format::Json);
    let (_, gz) = merged(Align::None, Format::JsonGz);
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut inflated)
        .expect("gzip");
    assert_eq!(inflated, plain);
    assert!(
        gz.len() * 4 < plain.len(),
        "{} vs {}",
        gz.len(),
        plain.len()
    );
}
