//! Parse once: a trace read from a file is kept in a cache folder as its model's columns
//! (`docs/cache.md`), and read back from there, at close to the speed of copying the
//! bytes, while the file is unchanged.
//!
//! - **Where**: `$KINETOSCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/kinetoscope/traces`, else
//!   `~/.cache/kinetoscope/traces`; never beside the input. `KINETOSCOPE_NO_CACHE=1`
//!   (or the CLI's `--no-cache`) turns it off.
//! - **What**: traces read from regular files of at least [`CacheOptions::min_bytes`]
//!   (Kineto JSON, plain or gzip, and Nsight Systems exports); never bytes in memory or
//!   streams.
//! - **Key**: one entry per path as given (made absolute) and per reading option that
//!   changes the model (`strict`, the element cap, the NVTX step name). The entry's
//!   header holds the format version, kinetoscope's version, those options and the
//!   source's stamp: device, inode, size, modification and status-change times (ns) and
//!   a CRC-32 of its first and last MiB. Any difference is a miss, and the entry is
//!   replaced. The whole entry is covered by a CRC-32, so a truncated or damaged file
//!   is a miss too, and every id is checked on decoding, so no file can make a read panic.
//! - **Writes** go to a temporary file in the cache folder renamed onto the entry, and
//!   entries are removed oldest first (by last use) beyond [`CacheOptions::max_bytes`].

mod codec;
mod format;
mod pages;

use std::fs::{File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::model::{Charge, Trace};
use crate::read::ReadOptions;
use crate::TraceResult;

/// The version of the entry layout; an entry of another version is a miss.
const FORMAT_VERSION: u32 = 2;
/// The first bytes of every entry.
const MAGIC: &[u8; 8] = b"KSTRACE\0";
/// The file name extension of entries.
const EXT: &str = "kstrace";
/// Bytes hashed at each end of the source for its stamp.
const SAMPLE: u64 = 1 << 20;
/// The default smallest source cached: 4 MiB (below it, parsing costs milliseconds).
pub const DEFAULT_MIN_BYTES: u64 = 4 << 20;
/// The default size of the cache folder: 8 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 8 << 30;

/// Where and when traces read from files are cached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheOptions {
    /// The cache folder (created on first use).
    pub dir: PathBuf,
    /// Sources smaller than this are not cached.
    pub min_bytes: u64,
    /// Entries are removed, least recently used first, while the folder holds more.
    pub max_bytes: u64,
}

impl CacheOptions {
    /// The cache as the environment sets it: `None` when `KINETOSCOPE_NO_CACHE` is set
    /// (to anything but `0` or nothing) or no folder can be named; the folder is
    /// `$KINETOSCOPE_CACHE_DIR`, else `traces` in [`cache_root`]; the sizes
    /// `$KINETOSCOPE_CACHE_MIN_BYTES` and `$KINETOSCOPE_CACHE_MAX_BYTES` (in bytes),
    /// else the defaults.
    pub fn from_env() -> Option<Self> {
        if Self::off_by_env() {
            return None;
        }
        Self::configured()
    }

    /// Whether `KINETOSCOPE_NO_CACHE` turns the cache off (set to anything but `0` or
    /// nothing).
    pub fn off_by_env() -> bool {
        std::env::var_os("KINETOSCOPE_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// The cache the environment names ([`CacheOptions::from_env`]), even when
    /// `KINETOSCOPE_NO_CACHE` turns it off: the folder to show or clear.
    pub fn configured() -> Option<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let dir = match var("KINETOSCOPE_CACHE_DIR") {
            Some(d) => PathBuf::from(d),
            None => cache_root()?.join("traces"),
        };
        let bytes = |name: &str, default: u64| {
            var(name)
                .and_then(|v| v.to_str()?.trim().parse().ok())
                .unwrap_or(default)
        };
        Some(Self {
            dir,
            min_bytes: bytes("KINETOSCOPE_CACHE_MIN_BYTES", DEFAULT_MIN_BYTES),
            max_bytes: bytes("KINETOSCOPE_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES),
        })
    }
}

/// kinetoscope's cache folder: `$XDG_CACHE_HOME/kinetoscope` (when absolute), else
/// `$HOME/.cache/kinetoscope`; `None` when neither is set.
pub fn cache_root() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("kinetoscope"))
}

/// The trace of `path` (open as `source`, when it is a file) from its cache entry, or
/// else `parse()`'s, which is then cached: the one way readers use the cache.
pub(crate) fn through(
    path: &Path,
    source: Option<&File>,
    opts: &ReadOptions,
    parse: impl FnOnce() -> TraceResult<Trace>,
) -> TraceResult<Trace> {
    let entry = source.and_then(|f| Entry::new(path, f, opts));
    if let Some(mut trace) = entry.as_ref().and_then(|e| e.load(opts)) {
        trace.path = path.to_owned();
        if let Some(p) = &opts.progress {
            p(entry.as_ref().map_or(0, |e| e.stamp.size));
        }
        return Ok(trace);
    }
    let trace = parse()?;
    if let (Some(entry), Some(f)) = (entry, source) {
        entry.store(&trace, f);
    }
    Ok(trace)
}

/// The file `path` names, opened: the export of a process path
/// (`run.sqlite#pid466`), else `path` itself.
pub(crate) fn source_file(path: &Path) -> Option<File> {
    match crate::read::split_process_path(path) {
        Some((file, _)) => File::open(file).ok(),
        None => File::open(path).ok(),
    }
}

/// The trace cached for the file at `path` with `opts` (its cache included), without
/// parsing the file: `None` when caching is off or the entry is missing, stale or
/// damaged.
pub fn cached(path: &Path, opts: &ReadOptions) -> Option<Trace> {
    let source = source_file(path)?;
    let mut trace = Entry::new(path, &source, opts)?.load(opts)?;
    trace.path = path.to_owned();
    Some(trace)
}

/// The file of the entry that caches `path` read with `opts`, whether or not it
/// exists; `None` where the file would not be cached.
pub fn entry_file(path: &Path, opts: &ReadOptions) -> Option<PathBuf> {
    let source = source_file(path)?;
    Entry::new(path, &source, opts).map(|e| e.file)
}

/// What identifies the source's content: where it lives, its size and times, and a
/// CRC-32 of its first and last [`SAMPLE`] bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ends_crc: u32,
}

impl Stamp {
    /// The stamp of the open file `f` (its times and size from `fstat`, so a file
    /// renamed over the path afterwards does not change it).
    #[cfg(unix)]
    fn of(f: &File) -> Option<Self> {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let m = f.metadata().ok()?;
        let mut crc = crc32fast::Hasher::new();
        let mut buf = vec![0u8; SAMPLE.min(m.len()) as usize];
        for at in [0, m.len().saturating_sub(SAMPLE)] {
            f.read_exact_at(&mut buf, at).ok()?;
            crc.update(&buf);
        }
        let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
        Some(Self {
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
            ends_crc: crc.finalize(),
        })
    }

    /// No stamp where the platform does not give inodes and status-change times: no
    /// cache.
    #[cfg(not(unix))]
    fn of(_: &File) -> Option<Self> {
        None
    }
}

/// The reading options that change the model read.
#[derive(Serialize)]
struct ModelOptions<'a> {
    strict: bool,
    max_element_bytes: u64,
    nvtx_step: Option<&'a str>,
}

/// An entry's header: everything that must match for the entry to be used.
#[derive(Serialize)]
struct Header<'a> {
    format: u32,
    kinetoscope: &'static str,
    path: &'a Path,
    options: ModelOptions<'a>,
    source: Stamp,
}

/// The cache entry of one source being read: looked up before parsing, written after.
struct Entry {
    file: PathBuf,
    dir: PathBuf,
    max_bytes: u64,
    header: Vec<u8>,
    stamp: Stamp,
}

impl Entry {
    /// The entry for `path`, open as `source`, read with `opts`: `None` when caching is
    /// off, the source is small or not a regular file, or the cache folder is the
    /// source's own folder.
    fn new(path: &Path, source: &File, opts: &ReadOptions) -> Option<Self> {
        let cache = opts.cache.as_ref()?;
        let meta = source.metadata().ok()?;
        if !meta.is_file() || meta.len() < cache.min_bytes {
            return None;
        }
        let abs = std::path::absolute(path).ok()?;
        let dir = std::path::absolute(&cache.dir).ok()?;
        let beside = |d: &Path| {
            let real = |p: &Path| std::fs::canonicalize(p).ok();
            real(d).is_some_and(|d| abs.parent().and_then(real) == Some(d))
        };
        if beside(&dir) {
            return None;
        }
        let stamp = Stamp::of(source)?;
        let options = ModelOptions {
            strict: opts.strict,
            max_element_bytes: opts.max_element_bytes,
            nvtx_step: opts.nvtx_step.as_deref(),
        };
        let mut key = std::hash::DefaultHasher::new();
        abs.hash(&mut key);
        serde_json::to_vec(&options).ok()?.hash(&mut key);
        let header = Header {
            format: FORMAT_VERSION,
            kinetoscope: env!("CARGO_PKG_VERSION"),
            path: &abs,
            options,
            source: stamp.clone(),
        };
        Some(Self {
            file: dir.join(format!("{:016x}.{EXT}", key.finish())),
            dir,
            max_bytes: cache.max_bytes,
            header: serde_json::to_vec(&header).ok()?,
            stamp,
        })
    }

    /// The trace this entry holds, if it exists and is intact and current (its `path`
    /// is the caller's to set); its use is recorded as its modification time.
    fn load(&self, opts: &ReadOptions) -> Option<Trace> {
        let mut file = File::open(&self.file).ok()?;
        let trace = match mapped(&file, opts) {
            Some(map) => self.decode(&map, true, opts),
            None => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).ok()?;
                self.decode(&bytes, false, opts)
            }
        };
        if trace.is_some() {
            let _ = file.set_modified(SystemTime::now());
        }
        trace
    }

    /// The trace in the bytes of an entry file, if they are one for this source.
    /// `mapped`: `bytes` are a mapping of the file, read a window at a time.
    fn decode(&self, bytes: &[u8], mapped: bool, opts: &ReadOptions) -> Option<Trace> {
        let reader = |b| {
            if mapped {
                codec::In::mapped(b)
            } else {
                codec::In::new(b)
            }
        };
        let (rest, crc) = bytes.split_at_checked(bytes.len().checked_sub(4)?)?;
        let ours = |r: &mut codec::In<'_>| {
            r.take(MAGIC.len()).ok() == Some(MAGIC)
                && r.num::<u32>().ok() == Some(FORMAT_VERSION)
                && r.blob().ok() == Some(&self.header[..])
        };
        if !ours(&mut reader(rest)) {
            return None;
        }
        let mut hasher = crc32fast::Hasher::new();
        let mut pass = reader(rest);
        while !pass.is_done() {
            let n = pass.rest().len().min(pages::WINDOW);
            hasher.update(pass.take(n).ok()?);
        }
        if hasher.finalize().to_le_bytes() != crc {
            return None;
        }
        let mut r = reader(rest);
        ours(&mut r);
        format::decode(r, Charge::new(&opts.budget)).ok()
    }

    /// Write `trace`, read from `source`, as this entry: to a temporary file in the cache
    /// folder renamed onto the entry, unless the source changed while it was read. Then
    /// keep the folder within its size. Failures are ignored: a cache is optional.
    fn store(&self, trace: &Trace, source: &File) {
        if Stamp::of(source).as_ref() != Some(&self.stamp) {
            return;
        }
        let _ = std::fs::create_dir_all(&self.dir);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let tmp = self
            .file
            .with_extension(format!("{}.{nanos}.tmp", std::process::id()));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| {
                let mut out = codec::Out::to(&mut f);
                out.bytes_raw(MAGIC);
                out.num(FORMAT_VERSION);
                out.blob(&self.header);
                let encoded = format::encode(trace, &mut out);
                let crc = out.finish()?;
                encoded.map_err(|_| std::io::Error::other("not encodable"))?;
                f.write_all(&crc.to_le_bytes())
            });
        if written.is_err() || std::fs::rename(&tmp, &self.file).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        evict(&self.dir, self.max_bytes);
    }
}

/// The entry file mapped into memory, when `opts.mmap` allows it: a hit then costs no
/// copy of the file, only the copies into the model's columns, and holds a window of the
/// file at a time ([`pages::Window`]).
fn mapped(file: &File, opts: &ReadOptions) -> Option<memmap2::Mmap> {
    if !opts.mmap {
        return None;
    }
    // SAFETY: the mapping is only read, and kinetoscope never writes an entry in place
    // (it writes a new file and renames it onto the entry's name). Another program
    // truncating the entry while it is mapped would raise SIGBUS, the risk
    // `ReadOptions::mmap` documents for inputs and lets callers turn off.
    unsafe { memmap2::MmapOptions::new().map(file) }.ok()
}

/// One file of a cache folder: an entry, or a temporary file being written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CacheFile {
    /// When it was last used (an entry's modification time is set on every hit).
    pub last_used: SystemTime,
    /// Its size.
    pub bytes: u64,
    /// The file.
    pub path: PathBuf,
    /// Whether it is a temporary file (a write in progress, or left by a crash).
    pub temporary: bool,
}

/// The cache's files in `dir`, least recently used first: entries (`*.kstrace`) and
/// temporary files (`*.kstrace`'s key, a process id and a time, `.tmp`); other files
/// and folders are not the cache's and are left out.
pub fn files(dir: &Path) -> Vec<CacheFile> {
    let Ok(list) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in list.flatten() {
        let (path, Ok(meta)) = (e.path(), e.metadata()) else {
            continue;
        };
        let name = e.file_name();
        let name = name.to_string_lossy();
        let hex = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
        let key = name.split('.').next().unwrap_or("");
        let entry = name.len() == 16 + 1 + EXT.len() && name.ends_with(EXT);
        let temporary = name.ends_with(".tmp") && name.split('.').count() == 4;
        if meta.is_file() && hex(key) && (entry || temporary) {
            out.push(CacheFile {
                last_used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                bytes: meta.len(),
                path,
                temporary,
            });
        }
    }
    out.sort();
    out
}

/// Remove every file of the cache in `dir` ([`files`]; nothing else); returns how many
/// and their bytes.
pub fn clear(dir: &Path) -> (usize, u64) {
    let mut removed = (0, 0);
    for f in files(dir) {
        if std::fs::remove_file(&f.path).is_ok() {
            removed.0 += 1;
            removed.1 += f.bytes;
        }
    }
    removed
}

/// Remove entries, least recently used first, while `dir` holds more than `max_bytes`
/// of them; and temporary files an interrupted write left over an hour ago.
fn evict(dir: &Path, max_bytes: u64) {
    let now = SystemTime::now();
    let (temporary, entries): (Vec<_>, Vec<_>) = files(dir).into_iter().partition(|f| f.temporary);
    for f in temporary {
        if now.duration_since(f.last_used).unwrap_or_default() > Duration::from_secs(3600) {
            let _ = std::fs::remove_file(&f.path);
        }
    }
    let mut total: u64 = entries.iter().map(|f| f.bytes).sum();
    for f in entries {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&f.path).is_ok() {
            total -= f.bytes;
        }
    }
}
