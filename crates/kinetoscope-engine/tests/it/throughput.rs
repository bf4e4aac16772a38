//! Throughput without `--batch-size`: the batch read from input shapes, on real traces.

use kinetoscope_advisor::Config;
use kinetoscope_engine::diff::document::{ItemsSource, ThroughputUnit};
use kinetoscope_engine::{DiffOptions, Engine, Source};

use crate::common::{corpus, lenient};

fn engine() -> Engine {
    Engine::new(lenient(2))
}

/// The run folder's training phase: a small language model fed `[8, 64]` token ids.
fn training() -> Source {
    Source::Path(
        corpus().join("run_folder/20261124_215816/stage3-training_microsteps_trace.json.gz"),
    )
}

#[test]
fn a_language_model_trace_counts_the_tokens_of_its_embedding_input() {
    let doc = engine().report(&training(), &Config::default()).unwrap();
    let t = doc.throughput.as_ref().expect("throughput from shapes");
    assert_eq!(t.unit, ThroughputUnit::Tokens);
    assert_eq!(t.per_step, 512.0);
    assert_eq!(
        t.source,
        ItemsSource::Shapes {
            op: "aten::embedding".into(),
            dims: vec![8, 64]
        }
    );
    let median = t.median_step_ns.unwrap();
    assert!((t.items_per_s.unwrap() - 512.0 / (median / 1e9)).abs() < 1e-6);
    // The same numbers when given: only the source differs.
    let given = doc.clone().with_throughput(ThroughputUnit::Tokens, 512.0);
    let g = given.throughput.unwrap();
    assert_eq!(g.source, ItemsSource::Given);
    assert_eq!(g.items_per_s, t.items_per_s);
}

#[test]
fn no_throughput_is_guessed_without_an_input_operator_or_for_a_run_folder() {
    // An MLP fed dense tensors: no embedding, no convolution.
    let mlp = Source::Path(corpus().join("clean/trace.json.gz"));
    assert!(engine()
        .report(&mlp, &Config::default())
        .unwrap()
        .throughput
        .is_none());
    // A run folder's phases process different things.
    let run = Source::Path(corpus().join("run_folder"));
    assert!(engine()
        .report(&run, &Config::default())
        .unwrap()
        .throughput
        .is_none());
}

#[test]
fn a_diff_compares_each_runs_own_items_per_step() {
    let d = engine()
        .diff(
            &training(),
            &training(),
            &Config::default(),
            &DiffOptions::default(),
        )
        .unwrap();
    let t = d.gpu.throughput.expect("both runs show their batch");
    assert_eq!(t.per_step, 512.0);
    assert_eq!(t.per_step_new, None);
    assert!(matches!(t.source, ItemsSource::Shapes { .. }));
    assert_eq!(t.value.base, t.value.new);
}
