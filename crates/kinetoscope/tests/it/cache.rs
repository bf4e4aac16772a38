//! The trace cache through the CLI: every view's JSON is byte for byte the same when the
//! trace is parsed (`--no-cache`), parsed and cached (first run) and read back from the
//! cache (second run); a touched source, or a damaged entry, is read again with the same
//! output; `KINETOSCOPE_NO_CACHE` and `--no-cache` write nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::common::{fixtures, Run};

/// Real traces: an H200 run with CUDA graphs, a DDP rank with NCCL, a ROCm trace, an
/// old TensorBoard-era trace, and an Nsight Systems export.
fn traces() -> Vec<PathBuf> {
    let h200 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/gpu-h200");
    vec![
        h200.join("cuda_graph/trace.json.gz"),
        h200.join("ddp_nccl/rank0.trace.json.gz"),
        fixtures().join("mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
        fixtures().join("torch-1.13.1_tb_w0.1795238235109.pt.trace.json.gz"),
        fixtures().join("nsys/cs336-a100-2p7b-nvtx/result_2_7B_nvtx.sqlite"),
    ]
}

/// Every view that reads one trace, as its command line before the path.
const VIEWS: [&[&str]; 16] = [
    &["summary"],
    &["report"],
    &["overview"],
    &["ops"],
    &["ops", "--group-by", "shape"],
    &["perf"],
    &["kernels"],
    &["kernels", "--by-class"],
    &["temporal"],
    &["idle"],
    &["launches"],
    &["comm"],
    &["sequences"],
    &["nvtx"],
    &["critical-path"],
    &["memory"],
];

/// `kinetoscope args… --format json` with the trace cache in `cache` (every file cached
/// whatever its size) and `env` set.
fn run(cache: &Path, args: &[&str], path: &Path, env: &[(&str, &str)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
        .args(args)
        .arg(path)
        .args(["--format", "json"])
        .env("KINETOSCOPE_CACHE_DIR", cache)
        .env("KINETOSCOPE_CACHE_MIN_BYTES", "0")
        .env_remove("KINETOSCOPE_NO_CACHE")
        .envs(env.iter().copied())
        .output()
        .expect("run kinetoscope");
    Run::from(out)
}

/// The files in `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn every_view_is_the_same_from_the_cache() {
    for trace in traces() {
        let cache = tempfile::tempdir().unwrap();
        let dir = cache.path();
        for view in VIEWS {
            let what = format!("{view:?} {}", trace.display());
            let mut parsed = view.to_vec();
            parsed.push("--no-cache");
            let plain = run(dir, &parsed, &trace, &[]);
            assert!(entries(dir).is_empty(), "{what}: --no-cache wrote");
            let first = run(dir, view, &trace, &[]);
            assert_eq!(entries(dir).len(), 1, "{what}: one entry");
            let second = run(dir, view, &trace, &[]);
            assert_eq!(plain.code, first.code, "{what}: {}", first.stderr);
            for (name, r) in [("first", &first), ("second", &second)] {
                assert_eq!(r.code, plain.code, "{what} {name}: {}", r.stderr);
                assert!(
                    r.stdout == plain.stdout,
                    "{what}: {name} run's JSON differs"
                );
                assert_eq!(r.stderr, plain.stderr, "{what} {name}");
            }
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}

#[test]
fn the_environment_turns_the_cache_off() {
    let cache = tempfile::tempdir().unwrap();
    let trace = &traces()[0];
    let r = run(
        cache.path(),
        &["summary"],
        trace,
        &[("KINETOSCOPE_NO_CACHE", "1")],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(entries(cache.path()).is_empty());
    let r = run(
        cache.path(),
        &["summary"],
        trace,
        &[("KINETOSCOPE_NO_CACHE", "0")],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(entries(cache.path()).len(), 1, "0 leaves it on");
}

#[test]
fn a_touched_source_or_a_damaged_entry_is_read_again() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let trace = src.path().join("trace.json.gz");
    std::fs::copy(&traces()[1], &trace).unwrap();
    let want = run(cache.path(), &["report", "--no-cache"], &trace, &[]);
    assert_eq!(want.code, Some(0), "{}", want.stderr);
    let first = run(cache.path(), &["report"], &trace, &[]);
    assert_eq!(first.stdout, want.stdout);
    let entry = entries(cache.path()).pop().expect("an entry");
    let written = std::fs::read(&entry).unwrap();

    let f = std::fs::File::options().write(true).open(&trace).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(600))
        .unwrap();
    drop(f);
    let touched = run(cache.path(), &["report"], &trace, &[]);
    assert_eq!(touched.stdout, want.stdout, "touched");
    assert_ne!(
        std::fs::read(&entry).unwrap(),
        written,
        "touched: the entry is replaced"
    );

    let good = std::fs::read(&entry).unwrap();
    let n = good.len();
    let mut damaged = vec![good[..n / 2].to_vec(), Vec::new()];
    for at in [3, n / 4, n / 2, n - 1] {
        let mut b = good.clone();
        b[at] ^= 0xff;
        damaged.push(b);
    }
    for (i, bytes) in damaged.into_iter().enumerate() {
        std::fs::write(&entry, bytes).unwrap();
        let r = run(cache.path(), &["report"], &trace, &[]);
        assert_eq!(r.code, Some(0), "damage {i}: {}", r.stderr);
        assert_eq!(r.stdout, want.stdout, "damage {i}");
        assert_eq!(std::fs::read(&entry).unwrap(), good, "damage {i}: replaced");
    }
    assert_eq!(entries(src.path()), vec![trace], "nothing beside the input");
}

#[test]
fn cache_info_and_clear_touch_only_the_caches_files() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let other = dir.join("notes.txt");
    std::fs::write(&other, "mine").unwrap();
    let r = run(dir, &["summary"], &traces()[0], &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let cmd = |action: &str, env: &[(&str, &str)]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kinetoscope"))
            .args(["cache", action])
            .env("KINETOSCOPE_CACHE_DIR", dir)
            .env_remove("KINETOSCOPE_NO_CACHE")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let info = cmd("info", &[]);
    assert!(
        info.contains("trace cache: on") && info.contains("entries: 1,"),
        "{info}"
    );
    assert!(info.contains(&dir.display().to_string()), "{info}");
    let off = cmd("info", &[("KINETOSCOPE_NO_CACHE", "1")]);
    assert!(off.contains("trace cache: off"), "{off}");
    let cleared = cmd("clear", &[]);
    assert!(cleared.starts_with("removed 1 file ("), "{cleared}");
    assert_eq!(
        entries(dir),
        vec![other],
        "only the cache's files are removed"
    );
    assert!(cmd("info", &[]).contains("entries: 0, 0 B"));
}
