//! Grows every seed of the corpus (pretty and minified) and checks that the copies keep
//! the seed's features. Needs the reference data: `cargo test -p kinetoscope-bench --
//! --ignored` (fails, does not skip, without it).

use std::borrow::Cow;
use std::io::Read;
use std::path::PathBuf;

use kinetoscope_synth::{LoadOptions, Source, Target, WriteOptions};
use serde::Deserialize;

use super::sources::seeds;

#[derive(Deserialize)]
struct Lite<'a> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    ts: Option<f64>,
}

#[derive(Deserialize)]
struct TopLite<'a> {
    #[serde(rename = "baseTimeNanoseconds")]
    base_time: Option<u64>,
    #[serde(borrow, rename = "traceEvents")]
    events: Vec<Lite<'a>>,
}

/// What a grown trace must keep of its seed, per copy.
#[derive(Debug, PartialEq)]
struct Features {
    base_time: Option<u64>,
    python_functions: usize,
    memory_instants: usize,
    profiler_steps: usize,
    /// Events other than metadata.
    events: usize,
    /// The earliest `ts` (µs, relative to `baseTimeNanoseconds` where there is one).
    min_ts: f64,
}

fn features(text: &str) -> Features {
    let top: TopLite = serde_json::from_str(text).expect("valid Kineto JSON");
    let count = |f: &dyn Fn(&Lite) -> bool| top.events.iter().filter(|e| f(e)).count();
    Features {
        base_time: top.base_time,
        python_functions: count(&|e| e.cat.as_deref() == Some("python_function")),
        memory_instants: count(&|e| e.name.as_deref() == Some("[memory]")),
        profiler_steps: count(&|e| {
            e.name
                .as_deref()
                .is_some_and(|n| n.starts_with("ProfilerStep#"))
        }),
        events: count(&|e| e.ph.as_deref() != Some("M")),
        min_ts: top
            .events
            .iter()
            .filter(|e| e.ph.as_deref() != Some("M"))
            .filter_map(|e| e.ts)
            .fold(f64::INFINITY, f64::min),
    }
}

fn seeds_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/external")
}

fn grow(src: &Source, copies: u64) -> String {
    let mut out = Vec::new();
    let opts = WriteOptions {
        target: Target::Copies(copies),
        ..WriteOptions::default()
    };
    src.write_to(&mut out, &opts).expect("written");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
#[ignore = "needs the project's reference data beside the repository"]
fn every_seed_grows_with_its_features_in_both_layouts() {
    for seed in seeds() {
        let path = seeds_root().join(seed);
        let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut text = String::new();
        if raw.starts_with(&[0x1f, 0x8b]) {
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_string(&mut text)
                .expect("gzip");
        } else {
            text = String::from_utf8(raw).expect("UTF-8");
        }
        let seed_features = features(&text);
        for one_line in [false, true] {
            let opts = LoadOptions {
                one_line,
                ..LoadOptions::default()
            };
            let src = Source::parse(&text, &opts).expect("parsed");
            let once = features(&grow(&src, 1));
            let twice_text = grow(&src, 2);
            let twice = features(&twice_text);
            let ctx = format!("{seed} one_line={one_line}");
            // One copy is the seed.
            assert_eq!(
                once.python_functions, seed_features.python_functions,
                "{ctx}"
            );
            assert_eq!(once.memory_instants, seed_features.memory_instants, "{ctx}");
            assert_eq!(once.profiler_steps, seed_features.profiler_steps, "{ctx}");
            assert_eq!(once.base_time, seed_features.base_time, "{ctx}");
            assert_eq!(once.min_ts, seed_features.min_ts, "{ctx}");
            // Two copies: twice the events of each kind, the time base kept, the first
            // copy where the seed was.
            assert_eq!(twice.python_functions, 2 * once.python_functions, "{ctx}");
            assert_eq!(twice.memory_instants, 2 * once.memory_instants, "{ctx}");
            assert_eq!(twice.profiler_steps, 2 * once.profiler_steps, "{ctx}");
            assert!(twice.events >= 2 * once.events - 1, "{ctx}");
            assert_eq!(twice.base_time, seed_features.base_time, "{ctx}");
            assert_eq!(twice.min_ts, seed_features.min_ts, "{ctx}");
            assert_eq!(twice_text.lines().count() == 1, one_line, "{ctx}");
        }
    }
}
