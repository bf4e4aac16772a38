//! The trace cache (`kinetoscope_trace::cache`): a trace read back from its entry is the
//! model the reader built; a changed source, a damaged, truncated or foreign entry is a
//! miss (the file is read again and the entry replaced), and no entry, however
//! hostile, makes a read panic.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use kinetoscope_trace::cache::{cached, entry_file, CacheOptions};
use kinetoscope_trace::read::{gpu_processes, process_path, read_trace, ReadOptions};
use kinetoscope_trace::Trace;

use crate::common::fixture;

/// Reading options that cache every file in `dir`.
fn caching(dir: &Path) -> ReadOptions {
    ReadOptions {
        cache: Some(CacheOptions {
            dir: dir.to_owned(),
            min_bytes: 0,
            max_bytes: u64::MAX,
        }),
        ..ReadOptions::default()
    }
}

/// Everything a trace holds, as text (the lazily built indexes left out).
fn fingerprint(t: &Trace) -> String {
    let cats: Vec<_> = t.categories.iter().collect();
    let links: Vec<_> = t.launch_links().iter().collect();
    format!(
        "{}\n{}\n{:?}\n{cats:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{links:?}\n{:?}",
        serde_json::to_string(&t.meta).unwrap(),
        serde_json::to_string(&t.report).unwrap(),
        t.strings,
        t.tracks,
        t.events,
        t.args,
        t.flows,
        t.path,
    )
}

/// A copy of a fixture in `dir`, so its times and bytes can be changed.
fn copy(name: &str, dir: &Path) -> PathBuf {
    let to = dir.join(Path::new(name).file_name().unwrap());
    std::fs::copy(fixture(name), &to).unwrap();
    to
}

/// Plain and gzip Kineto traces of several eras, with arguments of every table, and an
/// Nsight Systems export.
const SOURCES: [&str; 5] = [
    "backward_thread.json",
    "torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz",
    "inference_rank_1.json.gz",
    "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "nsys/cs336-a100-2p7b-nvtx/result_2_7B_nvtx.sqlite",
];

#[test]
fn a_cached_trace_is_the_model_read() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let opts = caching(cache.path());
    for name in SOURCES {
        let path = copy(name, src.path());
        let plain = read_trace(&path, &ReadOptions::default()).unwrap();
        assert!(cached(&path, &opts).is_none(), "{name}: nothing cached yet");
        let first = read_trace(&path, &opts).unwrap();
        let hit = cached(&path, &opts).unwrap_or_else(|| panic!("{name}: cached"));
        let second = read_trace(&path, &opts).unwrap();
        assert_eq!(fingerprint(&first), fingerprint(&plain), "{name}");
        assert_eq!(fingerprint(&hit), fingerprint(&plain), "{name}");
        assert_eq!(fingerprint(&second), fingerprint(&plain), "{name}");
        assert!(hit.model_bytes() > 0, "{name}: the budget is charged");
        let entry = entry_file(&path, &opts).unwrap();
        assert!(
            entry.starts_with(cache.path()),
            "{name}: {}",
            entry.display()
        );
    }
    assert_eq!(
        std::fs::read_dir(src.path()).unwrap().count(),
        SOURCES.len()
    );
}

#[test]
fn options_that_change_the_model_have_their_own_entry() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let path = copy(SOURCES[1], src.path());
    let opts = caching(cache.path());
    let strict = ReadOptions {
        strict: true,
        ..opts.clone()
    };
    read_trace(&path, &opts).unwrap();
    assert!(cached(&path, &strict).is_none());
    assert_ne!(entry_file(&path, &opts), entry_file(&path, &strict));
    let threads = ReadOptions {
        threads: 1,
        mmap: false,
        ..opts.clone()
    };
    assert!(cached(&path, &threads).is_some(), "threads and mmap do not");
}

#[test]
fn small_files_folders_and_the_cache_folder_itself_are_not_cached() {
    let src = tempfile::tempdir().unwrap();
    let path = copy(SOURCES[0], src.path());
    let mut opts = caching(&src.path().join("cache"));
    opts.cache.as_mut().unwrap().min_bytes = u64::MAX;
    assert!(entry_file(&path, &opts).is_none(), "below the minimum size");
    let beside = caching(src.path());
    assert!(
        entry_file(&path, &beside).is_none(),
        "the source's own folder"
    );
    read_trace(&path, &beside).unwrap();
    assert_eq!(std::fs::read_dir(src.path()).unwrap().count(), 1);
    assert!(entry_file(src.path(), &caching(&src.path().join("c"))).is_none());
    assert!(entry_file(&path, &ReadOptions::default()).is_none(), "off");
}

#[test]
fn a_changed_source_is_read_again() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let opts = caching(cache.path());
    let path = copy(SOURCES[0], src.path());
    read_trace(&path, &opts).unwrap();
    assert!(cached(&path, &opts).is_some());
    // Touched: same bytes, another modification time.
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(f);
    assert!(cached(&path, &opts).is_none(), "touched");
    read_trace(&path, &opts).unwrap();
    assert!(cached(&path, &opts).is_some(), "replaced");
    // Rewritten with one name changed, at the same size.
    let text = std::fs::read_to_string(&path).unwrap();
    let (from, to) = ("aten::", "aten;;");
    assert!(text.contains(from));
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    assert!(cached(&path, &opts).is_none(), "rewritten");
    let again = read_trace(&path, &opts).unwrap();
    let plain = read_trace(&path, &ReadOptions::default()).unwrap();
    assert_eq!(fingerprint(&again), fingerprint(&plain));
    assert!(plain.strings.iter().any(|(_, s)| s.contains(to)));
}

/// The entry of `path`, after a first read wrote it.
fn written_entry(path: &Path, opts: &ReadOptions) -> (PathBuf, Vec<u8>) {
    read_trace(path, opts).unwrap();
    let entry = entry_file(path, opts).unwrap();
    let bytes = std::fs::read(&entry).unwrap();
    (entry, bytes)
}

#[test]
fn damaged_entries_are_misses_and_replaced() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let opts = caching(cache.path());
    let path = copy(SOURCES[1], src.path());
    let want = fingerprint(&read_trace(&path, &ReadOptions::default()).unwrap());
    let (entry, good) = written_entry(&path, &opts);
    let n = good.len();
    let mut damaged: Vec<Vec<u8>> = [0, 1, 8, 12, 100, n / 2, n - 5, n - 1]
        .iter()
        .map(|&cut| good[..cut].to_vec())
        .collect();
    for at in [0, 9, 40, n / 3, n / 2, n - 20, n - 1] {
        let mut b = good.clone();
        b[at] ^= 0x5a;
        damaged.push(b);
    }
    let mut longer = good.clone();
    longer.push(0);
    damaged.push(longer);
    for (i, bytes) in damaged.iter().enumerate() {
        std::fs::write(&entry, bytes).unwrap();
        assert!(cached(&path, &opts).is_none(), "damage {i}");
        let t = read_trace(&path, &opts).unwrap();
        assert_eq!(fingerprint(&t), want, "damage {i}");
        assert_eq!(std::fs::read(&entry).unwrap(), good, "damage {i}: replaced");
    }
}

#[test]
fn hostile_entries_with_a_valid_checksum_never_panic() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let opts = caching(cache.path());
    let path = copy(SOURCES[2], src.path());
    let (entry, good) = written_entry(&path, &opts);
    let body = good.len() - 4;
    let step = (body / 800).max(1);
    for at in (0..body).step_by(step) {
        for value in [0xff, 0x7f, 0x00] {
            let mut b = good.clone();
            b[at] = value;
            let crc = crc32fast::hash(&b[..body]);
            b[body..].copy_from_slice(&crc.to_le_bytes());
            std::fs::write(&entry, &b).unwrap();
            // Whatever it holds, a read neither panics nor fails.
            let _ = cached(&path, &opts).map(|t| fingerprint(&t));
            read_trace(&path, &opts).unwrap();
        }
    }
}

#[test]
fn each_process_of_a_multi_gpu_export_has_its_own_entry() {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let opts = caching(cache.path());
    let file = copy(
        "nsys/fastvideo-h100x2-infer-emit-nvtx/h100_2gpu_1s.sqlite",
        src.path(),
    );
    let pids = gpu_processes(&file).unwrap();
    assert!(pids.len() >= 2, "{pids:?}");
    for &pid in &pids {
        let path = process_path(&file, pid);
        let plain = read_trace(&path, &ReadOptions::default()).unwrap();
        read_trace(&path, &opts).unwrap();
        let hit = cached(&path, &opts).unwrap_or_else(|| panic!("pid {pid}: cached"));
        assert_eq!(fingerprint(&hit), fingerprint(&plain), "pid {pid}");
        let again = read_trace(&path, &opts).unwrap();
        assert_eq!(fingerprint(&again), fingerprint(&plain), "pid {pid}");
    }
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), pids.len());
}
