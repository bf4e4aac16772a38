//! The profiler memory timeline (`prof.export_memory_timeline`, PyTorch 2.1+): the
//! coalesced `.json` / `.json.gz` form (`[times_us, sizes]`, 9 columns per row) and the
//! raw `.raw.json.gz` form (rows `[t_ns, action, bytes, category]`), both read into one
//! [`MemoryTimeline`]: bytes live per category after each distinct timestamp.
//!
//! Detected by content, not name ([`super::ContentKind::MemoryTimeline`]):
//! (gzip-compressed) JSON whose text starts with an array of arrays. The text is
//! streamed through `serde_json` visitors that keep only the numbers
//! (`timeline_rows.rs`), charged to the memory budget: 32 bytes per raw row, about 100
//! per coalesced row.

use std::io::{BufReader, Read};
use std::path::Path;

use super::timeline_rows::{walk, NumbersOnly, Rows};
use super::{sniff_bytes, sniff_path, sniff_reader, ReadOptions};
use crate::model::{grow, Charge, MemoryError, MemoryTimeline, TimelineFormat};
use crate::{TraceError, TraceResult};

/// The error for content that is not a memory timeline, saying `why`.
pub(crate) fn not_timeline(path: &Path, why: impl Into<String>) -> TraceError {
    TraceError::NotA {
        path: path.to_owned(),
        expected: "memory timeline",
        why: why.into(),
    }
}

/// Read a memory timeline file (either form, plain or gzip).
pub fn read_memory_timeline(path: &Path) -> TraceResult<MemoryTimeline> {
    sniff_path(path)?.read_memory_timeline(&ReadOptions::default())
}

/// Read a memory timeline held in memory (either form, plain or gzip); `name` is used in
/// messages.
pub fn timeline_from_bytes(name: &Path, bytes: &[u8]) -> TraceResult<MemoryTimeline> {
    sniff_bytes(name, bytes)?.read_memory_timeline(&ReadOptions::default())
}

/// Read a memory timeline from a stream (either form, plain or gzip); `name` is used in
/// messages.
pub fn timeline_from_reader(name: &Path, reader: impl Read + Send) -> TraceResult<MemoryTimeline> {
    sniff_reader(name, reader)?.read_memory_timeline(&ReadOptions::default())
}

/// Read a memory timeline's (decompressed) text from `reader`, streamed: only the
/// numbers are kept, in vectors charged to `charge`; `path` is used in messages.
pub(crate) fn parse_reader(
    path: &Path,
    reader: impl Read,
    charge: &mut Charge,
) -> TraceResult<MemoryTimeline> {
    let mut read = 0u64;
    let rows = {
        let counted = Counted {
            inner: BufReader::new(NumbersOnly(reader)),
            read: &mut read,
        };
        let mut de = serde_json::Deserializer::from_reader(counted);
        walk(&mut de, charge).and_then(|rows| de.end().map(|()| rows))
    };
    let rows = rows.map_err(|e| {
        if let Some(oom) = charge.refused() {
            out_of_memory(path, read, oom)
        } else if e.is_data() {
            not_timeline(path, e.to_string())
        } else {
            TraceError::Malformed {
                path: path.to_owned(),
                offset: read.saturating_sub(1),
                event_index: None,
                message: format!("memory timeline JSON: {e}"),
            }
        }
    })?;
    match rows {
        Rows::Coalesced { times, sizes } => coalesced_from(path, &times, &sizes),
        Rows::Raw(rows) => raw_from(&rows, charge).map_err(|e| out_of_memory(path, read, e)),
    }
}

/// Counts the bytes the parser took.
struct Counted<'a, R> {
    inner: R,
    read: &'a mut u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        *self.read += n as u64;
        Ok(n)
    }
}

fn out_of_memory(path: &Path, offset: u64, e: crate::model::MemoryError) -> TraceError {
    TraceError::OutOfMemory {
        path: path.to_owned(),
        offset,
        needed: e.needed,
        in_use: e.in_use,
        limit: e.limit,
    }
}

/// Sizes past ±4 PiB are clamped there, so that sums over categories and rows cannot
/// overflow in the analyses.
const MAX_BYTES: i64 = 1 << 52;
/// Times (epoch ns, about 1.8e18 today) past ±(2^62 − 1) are clamped there, so that the
/// difference of any two cannot overflow.
const MAX_TIME: i64 = (1 << 62) - 1;

fn bytes(v: i64) -> i64 {
    v.clamp(-MAX_BYTES, MAX_BYTES)
}

fn time(v: i64) -> i64 {
    v.clamp(-MAX_TIME, MAX_TIME)
}

fn coalesced_from(path: &Path, times: &[i64], sizes: &[Vec<i64>]) -> TraceResult<MemoryTimeline> {
    if times.len() != sizes.len() {
        return Err(not_timeline(
            path,
            format!("{} times but {} rows of sizes", times.len(), sizes.len()),
        ));
    }
    let mut tl = MemoryTimeline {
        format: TimelineFormat::Coalesced,
        rows: times.len(),
        preexisting_rows: 0,
        times_ns: Vec::with_capacity(times.len()),
        sizes: Vec::with_capacity(times.len()),
    };
    for (k, (&t, cols)) in times.iter().zip(sizes).enumerate() {
        // 9 columns: a 0 baseline then 8 categories; accept 8 (no baseline) too.
        let cats = match cols.len() {
            9 => &cols[1..],
            8 => &cols[..],
            n => {
                return Err(not_timeline(
                    path,
                    format!("row #{k} has {n} columns, expected 9"),
                ))
            }
        };
        let mut s = [0i64; 8];
        for (slot, &v) in s.iter_mut().zip(cats) {
            *slot = bytes(v);
        }
        let t_ns = time(t.saturating_mul(1000));
        // Rows are in time order; a repeated time keeps the last state.
        if tl.times_ns.last() == Some(&t_ns) {
            *tl.sizes.last_mut().expect("same length") = s;
        } else {
            tl.times_ns.push(t_ns);
            tl.sizes.push(s);
        }
    }
    sort_by_time(&mut tl);
    Ok(tl)
}

/// Sum the raw rows per category in time order; the order and the result are charged.
fn raw_from(rows: &[[i64; 4]], charge: &mut Charge) -> Result<MemoryTimeline, MemoryError> {
    let cat = |v: i64| if (0..8).contains(&v) { v as usize } else { 7 };
    let preexisting = rows.iter().filter(|r| r[0] < 0).count();
    // Pre-existing allocations (t = -1) get the smallest real time, as PyTorch does.
    let first_real = rows.iter().map(|r| time(r[0])).filter(|t| *t >= 0).min();
    let t_of = |r: &[i64; 4]| {
        if r[0] < 0 {
            first_real.unwrap_or(0)
        } else {
            time(r[0])
        }
    };
    let mut tl = MemoryTimeline {
        format: TimelineFormat::Raw,
        rows: rows.len(),
        preexisting_rows: preexisting,
        times_ns: Vec::new(),
        sizes: Vec::new(),
    };
    let mut order: Vec<u32> = Vec::new();
    grow(&mut order, rows.len(), charge)?;
    order.extend(0..rows.len() as u32);
    order.sort_by_key(|&i| (t_of(&rows[i as usize]), i));
    let mut live = [0i64; 8];
    for i in order {
        let r = &rows[i as usize];
        let t = t_of(r);
        // Sizes come from the file: a sum past i64 saturates instead of overflowing.
        let c = cat(r[3]);
        live[c] = live[c].saturating_add(bytes(r[2]));
        if tl.times_ns.last() == Some(&t) {
            *tl.sizes.last_mut().expect("same length") = live;
        } else {
            grow(&mut tl.times_ns, 1, charge)?;
            grow(&mut tl.sizes, 1, charge)?;
            tl.times_ns.push(t);
            tl.sizes.push(live);
        }
    }
    Ok(tl)
}

fn sort_by_time(tl: &mut MemoryTimeline) {
    if tl.times_ns.windows(2).all(|w| w[0] <= w[1]) {
        return;
    }
    let mut idx: Vec<usize> = (0..tl.times_ns.len()).collect();
    idx.sort_by_key(|&i| (tl.times_ns[i], i));
    tl.times_ns = idx.iter().map(|&i| tl.times_ns[i]).collect();
    tl.sizes = idx.iter().map(|&i| tl.sizes[i]).collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_raw_rows() {
        let text = br#"[[-1,1,100,0],[5,2,10,4],[5,2,6,3],[7,3,-10,4],[7,3,10,5],[9,4,-6,3]]"#;
        let tl = timeline_from_bytes(Path::new("x"), text).unwrap();
        assert_eq!(tl.format, TimelineFormat::Raw);
        assert_eq!(tl.rows, 6);
        assert_eq!(tl.preexisting_rows, 1);
        assert_eq!(tl.times_ns, vec![5, 7, 9]);
        assert_eq!(tl.sizes[0], [100, 0, 0, 6, 10, 0, 0, 0]);
        assert_eq!(tl.sizes[1], [100, 0, 0, 6, 0, 10, 0, 0]);
        assert_eq!(tl.sizes[2], [100, 0, 0, 0, 0, 10, 0, 0]);
        assert_eq!(tl.total_at(0), 116);
    }

    #[test]
    fn reads_coalesced() {
        let text =
            br#"[[10, 10, 12], [[0,1,2,3,4,5,6,7,8],[0,1,2,3,4,5,6,7,9],[0,0,0,0,0,0,0,0,1]]]"#;
        let tl = timeline_from_bytes(Path::new("x"), text).unwrap();
        assert_eq!(tl.format, TimelineFormat::Coalesced);
        assert_eq!(tl.times_ns, vec![10_000, 12_000]);
        assert_eq!(tl.sizes[0], [1, 2, 3, 4, 5, 6, 7, 9]);
        assert_eq!(tl.total_at(1), 1);
    }

    #[test]
    fn strings_long_rows_and_the_budget_are_refused_without_building_a_tree() {
        let e = timeline_from_bytes(Path::new("x"), br#"[[1,2,3,"x"]]"#).unwrap_err();
        assert!(e.to_string().contains("only numbers"), "{e}");
        let long = format!("[[1,2,3,4],[{}]]", vec!["1"; 65].join(","));
        let e = timeline_from_bytes(Path::new("x"), long.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("more than 64 numbers"), "{e}");
        let rows: Vec<String> = (0..10_000).map(|i| format!("[{i},1,8,3]")).collect();
        let text = format!("[{}]", rows.join(","));
        let read = |limit: u64| {
            let opts = ReadOptions {
                budget: crate::model::MemoryBudget::new(Some(limit)),
                ..ReadOptions::default()
            };
            sniff_bytes(Path::new("x"), text.as_bytes())
                .unwrap()
                .read_memory_timeline(&opts)
        };
        let e = read(64 << 10).unwrap_err();
        assert!(matches!(e, TraceError::OutOfMemory { .. }), "{e}");
        let tl = read(8 << 20).unwrap();
        assert_eq!((tl.rows, tl.times_ns.len()), (10_000, 10_000));
        assert_eq!(tl.total_at(9_999), 80_000);
    }

    #[test]
    fn detects_and_refuses() {
        assert!(timeline_from_bytes(Path::new("x"), b"{}").is_err());
        assert!(timeline_from_bytes(Path::new("x"), b"[[1,2]]").is_err());
        assert!(timeline_from_bytes(Path::new("x"), b"[[1],[[0,1]]]").is_err());
        assert!(timeline_from_bytes(Path::new("x"), b"[[1,2").is_err());
    }
}
