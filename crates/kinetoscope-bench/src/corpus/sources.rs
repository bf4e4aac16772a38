//! The corpus: real traces (seeds) and how each is grown, laid out and compressed.

/// How a grown trace is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// The seed's own layout (Kineto's pretty printing).
    Pretty,
    /// The whole trace on one line, no whitespace outside strings.
    Minified,
}

/// One entry of the corpus: a seed grown in one layout, plain or gzip.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Entry {
    /// Short name, used in tables and file names.
    pub name: &'static str,
    /// The seed, relative to the `--seeds` root.
    pub seed: &'static str,
    /// The layout of the grown trace.
    pub layout: Layout,
    /// Written as `.json.gz` (timed against the single-stream inflate floor).
    pub gzip: bool,
    /// What this entry exercises.
    pub exercises: &'static str,
}

const A100: &str = "hta/negative_queue_length_values_check/rank0.json.gz";
const PROFILE_MEMORY: &str = "hta/df_index_resolver/df_index_resolver.json.gz";
const B200: &str = "tracelens/b200__eager_trace.json.gz";
const NCCL: &str = "param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json";
const H100: &str = "tracelens/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
const MI300X: &str = "tracelens/mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";

const fn entry(
    name: &'static str,
    seed: &'static str,
    layout: Layout,
    gzip: bool,
    exercises: &'static str,
) -> Entry {
    Entry {
        name,
        seed,
        layout,
        gzip,
        exercises,
    }
}

/// The built-in corpus, in the order it is run.
pub const CORPUS: &[Entry] = &[
    entry(
        "a100",
        A100,
        Layout::Pretty,
        false,
        "PyTorch 2.0-era A100 training step (HTA): integer µs, many small kernels, pretty layout",
    ),
    entry(
        "a100-min",
        A100,
        Layout::Minified,
        false,
        "the same, minified: the whole trace on one line",
    ),
    entry(
        "a100-gz",
        A100,
        Layout::Pretty,
        true,
        "the same, gzip: inflating on the reader's path",
    ),
    entry(
        "profile-memory",
        PROFILE_MEMORY,
        Layout::Pretty,
        false,
        "profile_memory (HTA df_index_resolver): [memory] instants with addresses and totals",
    ),
    entry(
        "with-stack",
        B200,
        Layout::Pretty,
        false,
        "with_stack and record_shapes on a B200 (TraceLens): python_function events, MX GEMMs, MoE, baseTimeNanoseconds",
    ),
    entry(
        "nccl",
        NCCL,
        Layout::Pretty,
        false,
        "multi-GPU NCCL rank (PARAM DLRM, 8× V100): record_param_comms, NCCL kernels",
    ),
    entry(
        "nccl-gz",
        NCCL,
        Layout::Pretty,
        true,
        "the same, gzip",
    ),
    entry(
        "h100",
        H100,
        Layout::Pretty,
        false,
        "PyTorch 2.4+ on an H100 (TraceLens): baseTimeNanoseconds-relative ts, profile_memory, with_stack, with_flops, with_modules",
    ),
    entry(
        "h100-min",
        H100,
        Layout::Minified,
        false,
        "the same, minified",
    ),
    entry(
        "mi300x",
        MI300X,
        Layout::Pretty,
        false,
        "the same model on an MI300X (TraceLens): ROCm kernels and agents",
    ),
];

/// Every distinct seed of the corpus, in order.
pub fn seeds() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for e in CORPUS {
        if !out.contains(&e.seed) {
            out.push(e.seed);
        }
    }
    out
}

/// The entries named in `only` (all when empty); an unknown name is an error.
pub fn select(only: &[String]) -> anyhow::Result<Vec<Entry>> {
    if only.is_empty() {
        return Ok(CORPUS.to_vec());
    }
    only.iter()
        .map(|name| {
            CORPUS
                .iter()
                .find(|e| e.name == name)
                .copied()
                .ok_or_else(|| {
                    let names: Vec<&str> = CORPUS.iter().map(|e| e.name).collect();
                    anyhow::anyhow!("no corpus entry {name:?} (entries: {})", names.join(", "))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_covers_what_the_issue_asks() {
        let seeds = seeds();
        assert!(seeds.len() >= 5, "{seeds:?}");
        assert!(CORPUS.iter().filter(|e| e.gzip).count() >= 2);
        assert!(
            CORPUS
                .iter()
                .filter(|e| e.layout == Layout::Minified)
                .count()
                >= 2
        );
        let mut names: Vec<&str> = CORPUS.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CORPUS.len(), "names are unique");
    }

    #[test]
    fn select_keeps_the_order_given_and_refuses_unknown_names() {
        let got = select(&["nccl".into(), "a100".into()]).unwrap();
        assert_eq!(
            got.iter().map(|e| e.name).collect::<Vec<_>>(),
            ["nccl", "a100"]
        );
        let err = select(&["nope".into()]).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("a100-min"), "{err}");
    }
}
