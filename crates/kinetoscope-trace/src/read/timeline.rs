//! The profiler memory timeline (`prof.export_memory_timeline`, PyTorch 2.1+): the
//! coalesced `.json` / `.json.gz` form (`[times_us, sizes]`, 9 columns per row) and the
//! raw `.raw.json.gz` form (rows `[t_ns, action, bytes, category]`), both read into one
//! [`MemoryTimeline`]: bytes live per category after each distinct timestamp.
//!
//! Detected by content, not name ([`super::ContentKind::MemoryTimeline`]):
//! (gzip-compressed) JSON whose text starts with an array of arrays. The files are small
//! (one row per allocation event), so they are read whole with `serde_json`.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::{sniff_bytes, sniff_path, sniff_reader, ReadOptions};
use crate::model::{MemoryTimeline, TimelineFormat};
use crate::{TraceError, TraceResult};

/// Bytes of parsed values per byte of timeline text, charged to the memory budget before
/// parsing: a row `[t,a,b,c],` of about 10 bytes becomes five JSON values of 32 bytes
/// and a vector.
pub(crate) const VALUE_BYTES_PER_TEXT_BYTE: u64 = 20;

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

/// Parse the whole (decompressed) text of a memory timeline; `path` is used in messages.
pub(crate) fn parse(path: &Path, text: &[u8]) -> TraceResult<MemoryTimeline> {
    let value: Value = serde_json::from_slice(text).map_err(|e| TraceError::Malformed {
        path: path.to_owned(),
        offset: 0,
        event_index: None,
        message: format!("memory timeline JSON: {e}"),
    })?;
    let Value::Array(outer) = value else {
        return Err(not_timeline(path, "the top level is not an array"));
    };
    let coalesced = outer.len() == 2
        && outer[0]
            .as_array()
            .is_some_and(|t| t.iter().all(Value::is_number))
        && outer[1]
            .as_array()
            .is_some_and(|s| s.iter().all(Value::is_array));
    if coalesced {
        coalesced_from(path, &outer)
    } else {
        raw_from(path, &outer)
    }
}

fn int(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

fn coalesced_from(path: &Path, outer: &[Value]) -> TraceResult<MemoryTimeline> {
    let times = outer[0].as_array().expect("checked");
    let sizes = outer[1].as_array().expect("checked");
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
    for (k, (t, row)) in times.iter().zip(sizes).enumerate() {
        let t = int(t).ok_or_else(|| not_timeline(path, format!("time #{k} is not a number")))?;
        let row = row.as_array().expect("checked");
        // 9 columns: a 0 baseline then 8 categories; accept 8 (no baseline) too.
        let cols: Vec<i64> = row.iter().map(|v| int(v).unwrap_or(0)).collect();
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
        s.copy_from_slice(cats);
        let t_ns = t.saturating_mul(1000);
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

fn raw_from(path: &Path, rows: &[Value]) -> TraceResult<MemoryTimeline> {
    let mut events: Vec<(i64, i64, i64, usize)> = Vec::with_capacity(rows.len());
    let mut preexisting = 0;
    for (k, row) in rows.iter().enumerate() {
        let r = row.as_array().filter(|r| r.len() >= 4).ok_or_else(|| {
            not_timeline(
                path,
                format!("row #{k} is not [t, action, bytes, category]"),
            )
        })?;
        let vals: Option<Vec<i64>> = r[..4].iter().map(int).collect();
        let v = vals.ok_or_else(|| not_timeline(path, format!("row #{k} has a non-number")))?;
        let cat = if (0..8).contains(&v[3]) {
            v[3] as usize
        } else {
            7
        };
        if v[0] < 0 {
            preexisting += 1;
        }
        events.push((v[0], v[1], v[2], cat));
    }
    // Pre-existing allocations (t = -1) get the smallest real time, as PyTorch does.
    let first_real = events.iter().map(|e| e.0).filter(|t| *t >= 0).min();
    let mut tl = MemoryTimeline {
        format: TimelineFormat::Raw,
        rows: rows.len(),
        preexisting_rows: preexisting,
        times_ns: Vec::new(),
        sizes: Vec::new(),
    };
    let mut live = [0i64; 8];
    let mut order: Vec<usize> = (0..events.len()).collect();
    let t_of = |e: &(i64, i64, i64, usize)| {
        if e.0 < 0 {
            first_real.unwrap_or(0)
        } else {
            e.0
        }
    };
    order.sort_by_key(|&i| (t_of(&events[i]), i));
    for i in order {
        let e = &events[i];
        let t = t_of(e);
        live[e.3] += e.2;
        if tl.times_ns.last() == Some(&t) {
            *tl.sizes.last_mut().expect("same length") = live;
        } else {
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
    fn detects_and_refuses() {
        assert!(timeline_from_bytes(Path::new("x"), b"{}").is_err());
        assert!(timeline_from_bytes(Path::new("x"), b"[[1,2]]").is_err());
        assert!(timeline_from_bytes(Path::new("x"), b"[[1],[[0,1]]]").is_err());
        assert!(timeline_from_bytes(Path::new("x"), b"[[1,2").is_err());
    }
}
