//! The span API (`read::spans`) on every Kineto fixture: each element's span is exactly
//! the text `serde_json` finds for it, the text around the array is the rest of the
//! file, and the element count is the normal read's.

use kinetoscope_trace::read::read_trace;
use kinetoscope_trace::read::spans::{value_range, SpanItem, TraceText};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::common::{fixture, json_text, lenient};

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(borrow, rename = "traceEvents")]
    events: Vec<&'a RawValue>,
}

const FIXTURES: [&str; 5] = [
    "worker0.1623143089861.pt.trace.json.gz",
    "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz",
    "torch-2.15.0_w0.1795238009077499329.pt.trace.json.gz",
    "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "ranks/sampled_rank-0.json.gz",
];

#[test]
fn spans_are_the_elements_serde_json_finds() {
    for name in FIXTURES {
        let path = fixture(name);
        let text = json_text(&path);
        let t = TraceText::open(&path).unwrap();
        assert_eq!(t.bytes(), &text[..], "{name}: inflated text");
        let mut spans = t.spans().unwrap();
        let mut got = Vec::new();
        for item in spans.by_ref() {
            match item {
                SpanItem::Event(e) => got.push((e.start, e.end)),
                SpanItem::Malformed { start, .. } => panic!("{name}: malformed at {start}"),
            }
        }
        let raw: Raw<'_> = serde_json::from_slice(&text).unwrap();
        assert_eq!(got.len(), raw.events.len(), "{name}");
        for ((s, e), r) in got.iter().zip(&raw.events) {
            assert_eq!(&text[*s..*e], r.get().as_bytes(), "{name} at {s}");
        }
        // The prefix ends with the array's `[`, the suffix starts with its `]`.
        assert!(spans.prefix().ends_with(b"["), "{name}");
        let suffix = spans.suffix().unwrap();
        assert!(suffix.starts_with(b"]"), "{name}");
        assert!(spans.prefix().len() + suffix.len() <= text.len());
        // The same element count as the normal read.
        let trace = read_trace(&path, &lenient(2)).unwrap();
        assert_eq!(trace.report.elements, got.len() as u64, "{name}");
        // value_range finds each event's `ph` as serde_json reads it.
        let (s, e) = got[0];
        let ev = &text[s..e];
        let (a, b) = value_range(ev, "ph").unwrap();
        let first: serde_json::Value = serde_json::from_str(raw.events[0].get()).unwrap();
        assert_eq!(
            std::str::from_utf8(&ev[a..b]).unwrap(),
            first["ph"].to_string()
        );
    }
}
