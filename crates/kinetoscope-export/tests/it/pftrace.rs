//! The `.pftrace` decoded as `perfetto.protos.Trace` with the published schema: a
//! process per rank, every span (a begin and an end) and instant of each rank's model,
//! names through the interning tables, times the model's minus the offset, slices that
//! nest on every track, flows paired.

use std::collections::BTreeMap;

use kinetoscope_engine::Align;
use kinetoscope_export::merge::{write_merged, Format};
use prost_reflect::DynamicMessage;

use crate::common::{inputs, list, merge_set, param_folder, sub, uint, uints, written, Written};

/// A decoded file: per pid, what it holds, plus the flows.
#[derive(Default)]
struct Decoded {
    /// pid → (name, spans and instants as the model's [`Written`]).
    ranks: BTreeMap<i64, (String, Written)>,
    flow_starts: Vec<u64>,
    flow_ends: Vec<u64>,
}

/// The track tree and interned names, then each event placed on its rank.
fn decode(bytes: &[u8]) -> Decoded {
    let trace = crate::common::decode_trace(bytes);
    let packets = list(&trace, "packet");
    assert!(
        uint(&packets[0], "sequence_flags") & 1 == 1,
        "the first packet clears the incremental state"
    );
    // uuid → (parent uuid, pid, process name)
    let mut tracks: BTreeMap<u64, (u64, Option<i64>, Option<String>)> = BTreeMap::new();
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    for p in &packets {
        assert_eq!(uint(p, "trusted_packet_sequence_id"), 1);
        if p.has_field_by_name("track_descriptor") {
            let d = sub(p, "track_descriptor");
            let (pid, pname) = if d.has_field_by_name("process") {
                let pr = sub(&d, "process");
                let name = sub_str(&pr, "process_name");
                (Some(uint(&pr, "pid") as i64), Some(name))
            } else if d.has_field_by_name("thread") {
                (Some(uint(&sub(&d, "thread"), "pid") as i64), None)
            } else {
                (None, None)
            };
            tracks.insert(uint(&d, "uuid"), (uint(&d, "parent_uuid"), pid, pname));
        }
        if p.has_field_by_name("interned_data") {
            for n in list(&sub(p, "interned_data"), "event_names") {
                let iid = uint(&n, "iid");
                assert!(
                    names.insert(iid, sub_str(&n, "name")).is_none(),
                    "iid {iid} once"
                );
            }
        }
    }
    let pid_of = |mut uuid: u64| loop {
        let (parent, pid, _) = tracks.get(&uuid).expect("event on a described track");
        if let Some(pid) = pid {
            return *pid;
        }
        uuid = *parent;
    };
    let mut out = Decoded::default();
    for (_, pid, pname) in tracks.values() {
        if let (Some(pid), Some(name)) = (pid, pname) {
            out.ranks.insert(*pid, (name.clone(), Written::default()));
        }
    }
    // Open slices per track: (name, start).
    let mut open: BTreeMap<u64, Vec<(String, i64)>> = BTreeMap::new();
    for p in packets
        .iter()
        .filter(|p| p.has_field_by_name("track_event"))
    {
        let ev = sub(p, "track_event");
        let ts = uint(p, "timestamp") as i64;
        let uuid = uint(&ev, "track_uuid");
        let w = &mut out.ranks.get_mut(&pid_of(uuid)).expect("a rank").1;
        let name = || names[&uint(&ev, "name_iid")].clone();
        match uint(&ev, "type") {
            1 => open.entry(uuid).or_default().push((name(), ts)),
            2 => {
                let (name, start) = open
                    .get_mut(&uuid)
                    .and_then(Vec::pop)
                    .expect("an end closes an open slice");
                assert!(ts >= start, "{name}: ends before it starts");
                w.spans.push((name, start, ts - start));
            }
            3 => w.instants.push((name(), ts)),
            t => panic!("unexpected type {t}"),
        }
        out.flow_starts.extend(uints(&ev, "flow_ids"));
        out.flow_ends.extend(uints(&ev, "terminating_flow_ids"));
    }
    assert!(open.values().all(Vec::is_empty), "every slice ends");
    for (_, w) in out.ranks.values_mut() {
        w.spans.sort();
        w.instants.sort();
    }
    out
}

fn sub_str(m: &DynamicMessage, name: &str) -> String {
    crate::common::field(m, name)
        .as_str()
        .expect("a string")
        .to_owned()
}

#[test]
fn every_rank_and_event_of_the_models_decodes_from_the_published_schema() {
    let set = merge_set(&param_folder(), Align::Collectives);
    let mut out = Vec::new();
    let stats = write_merged(&inputs(&set), Format::Pftrace, &mut out).expect("writes");
    let decoded = decode(&out);
    assert_eq!(decoded.ranks.len(), set.ranks.len(), "one process per rank");
    let mut total = 0;
    for r in &set.ranks {
        let (name, got) = &decoded.ranks[&(r.rank + 1)];
        assert_eq!(name, &format!("rank {}", r.rank));
        let model = written(&r.trace, r.offset_ns);
        assert_eq!(got.spans.len(), model.spans.len(), "rank {}: spans", r.rank);
        // Names resolved through interning, start minus offset and duration, all equal.
        assert_eq!(got, &model, "rank {}", r.rank);
        total += model.spans.len() + model.instants.len();
    }
    assert_eq!(stats.events as usize, total);
    let mut starts = decoded.flow_starts.clone();
    let mut ends = decoded.flow_ends.clone();
    starts.sort_unstable();
    ends.sort_unstable();
    assert_eq!(starts, ends, "every flow starts and ends once");
    assert_eq!(starts.len() as u64, stats.flows);
    assert!(stats.flows > 1000, "{}", stats.flows);
    starts.dedup();
    assert_eq!(starts.len(), ends.len(), "flow ids unique across ranks");
}

#[test]
fn interning_makes_the_file_smaller_than_the_json() {
    let set = merge_set(&param_folder(), Align::None);
    let (mut pf, mut json) = (Vec::new(), Vec::new());
    write_merged(&inputs(&set), Format::Pftrace, &mut pf).expect("writes");
    write_merged(&inputs(&set), Format::Json, &mut json).expect("writes");
    assert!(pf.len() * 2 < json.len(), "{} vs {}", pf.len(), json.len());
}

/// A one-thread model whose spans straddle each other: `n` spans of 100 ns starting
/// every 60 ns (each overlaps the next without containing it), with distinct names.
fn straddling_trace(n: i64) -> kinetoscope_trace::Trace {
    use kinetoscope_trace::{CategoryTable, Phase, RawId, StrId, Track, TrackId, TrackKind};
    let mut t = kinetoscope_trace::Trace::default();
    // As the reader does: id 0 is the empty text, "no name".
    assert_eq!(t.strings.intern(""), StrId(0));
    let cat = t.categories.intern("cpu_op");
    assert_ne!(cat, CategoryTable::NONE);
    t.tracks.list.push(Track {
        pid: RawId::Int(7),
        tid: RawId::Int(8),
        kind: TrackKind::CpuThread,
        thread_name: StrId(0),
        process_name: StrId(0),
        process_label: StrId(0),
    });
    for i in 0..n {
        let name = t.strings.intern(&format!("op{i}"));
        let ev = &mut t.events;
        ev.ts_ns.push(1_000 + 60 * i);
        ev.dur_ns.push(100);
        ev.name.push(name);
        ev.cat.push(cat);
        ev.phase.push(Phase::Complete);
        ev.track.push(TrackId(0));
        ev.external_id.push(0);
        ev.correlation.push(0);
    }
    t
}

#[test]
fn spans_that_do_not_nest_go_to_lanes_and_keep_their_times() {
    let trace = straddling_trace(50);
    let input = kinetoscope_export::MergeInput {
        rank: 0,
        trace: &trace,
        offset_ns: 0,
    };
    let mut out = Vec::new();
    write_merged(&[input], Format::Pftrace, &mut out).expect("writes");
    // `decode` checks that every end closes an open slice of its own track.
    let decoded = decode(&out);
    assert_eq!(decoded.ranks[&1].1, written(&trace, 0));
    let lanes = crate::common::decode_trace(&out);
    let named: Vec<String> = list(&lanes, "packet")
        .iter()
        .filter(|p| p.has_field_by_name("track_descriptor"))
        .map(|p| sub(p, "track_descriptor"))
        .filter(|d| d.has_field_by_name("name"))
        .map(|d| sub_str(&d, "name"))
        .collect();
    assert_eq!(
        named,
        ["thread 8 (overlap 1)"],
        "alternate spans beside the thread"
    );
}

/// `trim -o x.pftrace`: steps 6 and 7 of a real ResNet-50 trace (PyTorch 1.9, V100)
/// trimmed to protobuf decode, with the published schema, to exactly the spans and
/// instants of the same trim written as JSON and read back by kinetoscope's reader —
/// and to fewer events than the whole trace has.
#[test]
fn a_trim_written_as_protobuf_decodes_to_the_trimmed_json() {
    use kinetoscope_export::trim::{TrimInput, TrimOptions};
    use kinetoscope_trace::read::{read_trace, read_trace_bytes, ReadOptions};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-trace/tests/fixtures/worker0.1623143089861.pt.trace.json.gz");
    let input = TrimInput::open(&kinetoscope_engine::Engine::default(), &path).expect("opens");
    let opts = TrimOptions {
        steps: Some((6, 7)),
        ..TrimOptions::default()
    };
    let read = ReadOptions::default();
    let mut json = Vec::new();
    input.write(&opts, &mut json).expect("JSON trim");
    let mut pf = Vec::new();
    let report = input
        .write_pftrace(&opts, &read, &mut pf)
        .expect("protobuf trim");
    assert_eq!(report.bytes_written, pf.len() as u64);
    assert!(pf.len() < json.len(), "{} vs {}", pf.len(), json.len());

    let trimmed = read_trace_bytes(std::path::Path::new("trim.json"), &json, &read).unwrap();
    let want = written(&trimmed, 0);
    let decoded = decode(&pf);
    assert_eq!(decoded.ranks.len(), 1, "one process");
    let (_, got) = decoded.ranks.values().next().unwrap();
    assert_eq!(got, &want);
    let whole = written(&read_trace(&path, &read).unwrap(), 0);
    assert!(
        !want.spans.is_empty() && want.spans.len() * 2 < whole.spans.len(),
        "{} of {} spans",
        want.spans.len(),
        whole.spans.len()
    );
}
