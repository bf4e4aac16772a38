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

/// Values that do not fit the model's 32-bit columns (a 5 s span, ids past 2³², a
/// negative id, a flow id past 2³², a sequence number past 2³²) read back exactly, in
/// windows far into a file read on one thread or three, and from the cache.
#[test]
fn values_past_32_bits_survive_threads_and_the_cache() {
    const EXT: i64 = 1 << 40;
    const CORR: i64 = 4_294_967_295;
    const FLOW: u64 = (1 << 40) + 5;
    const SEQ: i64 = 5_000_000_000;
    let filler = |i: usize| {
        format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":{},"dur":1,"args":{{"External id":{},"Sequence number":{i}}}}}"#,
            10 + i * 2,
            i + 1
        )
    };
    let unusual = |at: i64| {
        [
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":7,"ts":{at},"dur":5000000,"args":{{"External id":{EXT},"Sequence number":{SEQ},"Fwd thread id":-1}}}}"#
            ),
            format!(
                r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":7,"ts":{},"dur":10,"args":{{"External id":{EXT},"correlation":{CORR}}}}}"#,
                at + 100
            ),
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":20,"args":{{"External id":-5,"correlation":{CORR},"device":0,"stream":7}}}}"#,
                at + 300
            ),
            format!(
                r#"{{"ph":"s","cat":"ac2g","name":"ac2g","id":{FLOW},"pid":1,"tid":7,"ts":{}}}"#,
                at + 100
            ),
        ]
    };
    let mut events: Vec<String> = (0..100_000).map(filler).collect();
    for (k, at) in [(30_000, 1_000_000), (99_000, 2_000_000_000)] {
        events.splice(k..k, unusual(at));
    }
    let text = format!(r#"{{"traceEvents":[{}]}}"#, events.join(",\n"));
    assert!(text.len() > 9 << 20, "spans more than one 8 MiB window");
    let (_dir, path) = crate::common::temp_file("wide.json", text.as_bytes(), false);

    let check = |t: &Trace, how: &str| {
        let e = &t.events;
        let named = |n: &str| -> Vec<usize> {
            (0..e.len())
                .filter(|&i| t.name(kinetoscope_trace::EventId(i as u32)) == n)
                .collect()
        };
        let (mm, call, gemm) = (named("aten::mm"), named("cudaLaunchKernel"), named("gemm"));
        assert_eq!((mm.len(), call.len(), gemm.len()), (2, 2, 2), "{how}");
        for k in 0..2 {
            assert_eq!(e.dur_ns.at(mm[k]), 5_000_000_000, "{how}");
            assert_eq!(e.external_id.at(mm[k]), EXT, "{how}");
            assert_eq!(
                (e.external_id.at(call[k]), e.correlation.at(call[k])),
                (EXT, CORR),
                "{how}"
            );
            assert_eq!(
                (e.external_id.at(gemm[k]), e.correlation.at(gemm[k])),
                (-5, CORR),
                "{how}"
            );
            let row = t
                .args
                .op_row(kinetoscope_trace::EventId(mm[k] as u32))
                .unwrap();
            assert_eq!(t.args.op_sequence_number.at(row), SEQ, "{how}");
            assert_eq!(t.args.op_fwd_thread_id.at(row), -1, "{how}");
        }
        let flows: Vec<u64> = t.flows.id.iter().map(|v| v as u64).collect();
        assert_eq!(flows, [FLOW, FLOW], "{how}");
        let add = named("aten::add");
        assert_eq!(add.len(), 100_000, "{how}");
        let last = *add.last().unwrap();
        assert_eq!(e.external_id.at(last), 100_000, "{how}");
        let row = t
            .args
            .op_row(kinetoscope_trace::EventId(last as u32))
            .unwrap();
        assert_eq!(t.args.op_sequence_number.at(row), 99_999, "{how}");
    };
    let one = read_trace(&path, &crate::common::lenient(1)).unwrap();
    check(&one, "one thread");
    let three = read_trace(&path, &crate::common::lenient(3)).unwrap();
    check(&three, "three threads");
    assert_eq!(fingerprint(&three), fingerprint(&one));
    let cache = tempfile::tempdir().unwrap();
    let opts = caching(cache.path());
    read_trace(&path, &opts).unwrap();
    let hit = cached(&path, &opts).expect("cached");
    check(&hit, "cache");
    assert_eq!(
        fingerprint(&hit),
        fingerprint(&read_trace(&path, &opts).unwrap())
    );
}
