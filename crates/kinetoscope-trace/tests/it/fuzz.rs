//! Property tests: truncations, byte mutations and arbitrary bytes never make the reader
//! panic, and truncations inside the event array are read leniently.

use std::sync::OnceLock;

use kinetoscope_trace::read::read_trace;
use kinetoscope_trace::DefectKind;
use proptest::prelude::*;

use crate::common::{fixture, json_text, lenient, strict, temp_file};

/// A small real trace (Python exporter, 2.15: one event per line) and its facts.
struct Sample {
    text: Vec<u8>,
    /// Byte just after the `[` of `traceEvents`.
    array_start: usize,
    /// Byte of the `]` that closes `traceEvents`.
    array_end: usize,
    events: usize,
    elements: u64,
}

fn sample_from(name: &str) -> Sample {
    let text = json_text(&fixture(name));
    let key = text
        .windows(13)
        .position(|w| w == b"\"traceEvents\"")
        .unwrap();
    let array_start = key + text[key..].iter().position(|&b| b == b'[').unwrap() + 1;
    // Kineto writes the array's closing bracket on a line of its own.
    let array_end = text
        .windows(2)
        .rposition(|w| w == b"\n]" || w == b" ]")
        .map(|p| p + 1)
        .unwrap();
    assert_eq!(text[array_end], b']');
    let full = read_trace(&fixture(name), &lenient(1)).unwrap();
    assert!(full.report.defects.is_empty());
    Sample {
        text,
        array_start,
        array_end,
        events: full.events.len(),
        elements: full.report.elements,
    }
}

fn small() -> &'static Sample {
    static S: OnceLock<Sample> = OnceLock::new();
    S.get_or_init(|| sample_from("torch-2.15.0_py_export.json.gz"))
}

fn pretty() -> &'static Sample {
    static S: OnceLock<Sample> = OnceLock::new();
    S.get_or_init(|| sample_from("backward_thread.json"))
}

fn check_truncation(s: &Sample, cut: usize) -> Result<(), TestCaseError> {
    let (_dir, path) = temp_file("cut.json", &s.text[..cut], false);
    let r = read_trace(&path, &lenient(2));
    // Strict mode must not panic either.
    let _ = read_trace(&path, &strict());
    if cut < s.array_start {
        // Cut before the event array opened: an error (or NotATrace for an empty file).
        prop_assert!(r.is_err(), "cut at {cut}: {:?}", r.map(|t| t.events.len()));
        return Ok(());
    }
    let t = r.map_err(|e| TestCaseError::fail(format!("cut at {cut}: {e}")))?;
    prop_assert!(t.events.len() <= s.events);
    prop_assert!(t.report.elements <= s.elements);
    let kinds: Vec<DefectKind> = t.report.defects.iter().map(|d| d.kind).collect();
    if cut <= s.array_end {
        prop_assert_eq!(kinds, vec![DefectKind::TruncatedTail], "cut at {}", cut);
    } else {
        // Cut in the trailer: every event is there, nothing is reported as lost.
        prop_assert_eq!(t.events.len(), s.events, "cut at {}", cut);
        prop_assert!(kinds.is_empty(), "cut at {}: {:?}", cut, kinds);
    }
    Ok(())
}

proptest! {
    // No regression files: a failure prints its minimal input instead.
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]

    fn truncation_of_a_real_trace(frac in 0.0f64..=1.0) {
        let s = small();
        let cut = ((s.text.len() as f64) * frac) as usize;
        check_truncation(s, cut.min(s.text.len()))?;
    }

    #[test]

    fn truncation_of_a_pretty_printed_trace(cut in 0usize..4369) {
        let s = pretty();
        check_truncation(s, cut.min(s.text.len()))?;
    }

    #[test]

    fn mutations_never_panic(
        edits in prop::collection::vec((0.0f64..1.0, 0u8..3, any::<u8>()), 1..6),
        threads in 1usize..4,
    ) {
        let mut text = small().text.clone();
        for (at, op, byte) in edits {
            let i = ((text.len() as f64) * at) as usize;
            match op {
                0 => {
                    if let Some(b) = text.get_mut(i) {
                        *b ^= byte | 1;
                    }
                }
                1 => text.insert(i.min(text.len()), byte),
                _ => {
                    if i < text.len() {
                        text.remove(i);
                    }
                }
            }
        }
        let (_dir, path) = temp_file("mutated.json", &text, false);
        let _ = read_trace(&path, &lenient(threads));
        let _ = read_trace(&path, &strict());
    }

    #[test]

    fn structural_mutations_never_panic(
        edits in prop::collection::vec(
            (0.0f64..1.0, prop::sample::select(b"{}[]\",:\\ 0-.eN/".to_vec())),
            1..6,
        ),
    ) {
        let mut text = small().text.clone();
        for (at, byte) in edits {
            let i = ((text.len() as f64) * at) as usize;
            if let Some(b) = text.get_mut(i) {
                *b = byte;
            }
        }
        let (_dir, path) = temp_file("mutated.json", &text, false);
        let _ = read_trace(&path, &lenient(2));
        let _ = read_trace(&path, &strict());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let (_dir, path) = temp_file("random.json", &bytes, false);
        let _ = read_trace(&path, &lenient(2));
    }

    #[test]

    fn arbitrary_event_arrays_never_panic(
        body in prop::collection::vec(
            prop::sample::select(
                b"{}[]\",:\\ \n0123456789.-eEN/Aphtsdurcatnamepidtidargs\x01\xc3\xa9".to_vec(),
            ),
            0..400,
        ),
        trailer in any::<bool>(),
    ) {
        let mut text = b"{\"traceEvents\": [{\"ph\": \"X\", ".to_vec();
        text.extend_from_slice(&body);
        if trailer {
            text.extend_from_slice(b"], \"baseTimeNanoseconds\": 17}");
        }
        let (_dir, path) = temp_file("random.json", &text, false);
        let _ = read_trace(&path, &lenient(2));
        let _ = read_trace(&path, &strict());
    }
}

/// Mutations of a file large enough (1.7 MB of JSON) to be split between worker threads,
/// so the speculative split and its verification see broken input too.
#[test]

fn mutations_of_a_parallel_sized_trace_never_panic() {
    let base = json_text(&fixture("ranks/sampled_rank-0.json.gz"));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &prop::collection::vec((0.0f64..1.0, any::<u8>()), 1..8),
            |edits| {
                let mut text = base.clone();
                for (at, byte) in edits {
                    let last = text.len() - 1;
                    let i = ((text.len() as f64) * at) as usize;
                    text[i.min(last)] = byte;
                }
                let (_dir, path) = temp_file("big.json", &text, false);
                let _ = read_trace(&path, &lenient(4));
                Ok(())
            },
        )
        .unwrap();
}
