//! `kinetoscope memory SNAPSHOT.pickle`: a terminal report and a versioned JSON document
//! for a CUDA caching-allocator snapshot (`docs/json.md`, "memory snapshot").
//!
//! Terminal, per device: the allocator state (reserved, allocated, active, inactive,
//! free, fragmentation), the recorded history (peak, a sparkline of active memory), the
//! top allocation sites at the peak, each OOM with what was live, leak suspects, the
//! largest segments, and the allocator settings.

use kinetoscope_analysis::memory::snapshot::{
    AllocatorState, HistorySummary, OomCause, OomReport, Site, SnapshotDevice, TimelinePoint,
    TopSites,
};
use kinetoscope_engine::SnapshotDocument;

use crate::format::{bytes, count};
use crate::tabular::{Tabular, Value};

fn pct(f: f64) -> String {
    format!("{:.1} %", f * 100.0)
}

/// The frame a reader looks for first: the site's first user-level Python frame, else
/// its first Python frame, else its first frame.
fn lead_frame<'a>(user_frame: Option<&'a str>, frames: &'a [String]) -> Option<&'a str> {
    user_frame
        .or_else(|| frames.iter().map(String::as_str).find(|f| is_python(f)))
        .or_else(|| frames.first().map(String::as_str))
}

/// The label a site is known by: its first user-level Python frame, else (a stack
/// recorded on the autograd engine's threads) its operator and autograd node.
fn site_label<'a>(user_frame: &'a Option<String>, op_site: &'a Option<String>) -> Option<&'a str> {
    user_frame.as_deref().or(op_site.as_deref())
}

/// Whether a rendered frame (`file.py:line:name`) is a Python frame.
fn is_python(frame: &str) -> bool {
    frame.contains(".py:")
}

/// A stack cell: the lead frame, then up to two Python frames that called it, then how
/// many frames the stack has in all (the JSON keeps every one).
fn stack_cell(user_frame: Option<&str>, frames: &[String]) -> String {
    let Some(lead) = lead_frame(user_frame, frames) else {
        return String::new();
    };
    let from = frames.iter().position(|f| f == lead).map_or(0, |i| i + 1);
    let mut out: Vec<String> = vec![lead.to_owned()];
    out.extend(
        frames[from..]
            .iter()
            .filter(|f| is_python(f))
            .take(2)
            .cloned(),
    );
    if frames.len() > out.len() {
        out.push(format!("({} frames in all)", frames.len()));
    }
    out.join("\n")
}

fn sparkline(points: &[TimelinePoint], width: usize) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let Some(last) = points.last() else {
        return String::new();
    };
    let n = last.index.max(1) as usize;
    let mut cols: Vec<Option<u64>> = vec![None; width];
    for p in points {
        let c = (p.index as usize * (width - 1) / n).min(width - 1);
        cols[c] = Some(cols[c].map_or(p.active_bytes, |v| v.max(p.active_bytes)));
    }
    let max = points
        .iter()
        .map(|p| p.active_bytes)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut prev = 0;
    cols.into_iter()
        .map(|c| {
            let v = c.unwrap_or(prev);
            prev = v;
            LEVELS[(v as u128 * 7 / max as u128) as usize]
        })
        .collect()
}

/// The reading of an OOM's numbers in one line.
fn oom_reading(o: &OomReport, d: &SnapshotDevice) -> String {
    let mut out = match o.cause {
        OomCause::Fragmentation => format!(
            "{} reserved but unused ≥ the {} asked for: no free block was large enough \
             (fragmentation); try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            bytes(o.reserved_unused_bytes),
            bytes(o.requested_bytes)
        ),
        OomCause::ExceedsCache => format!(
            "the request needed {} more than the allocator had cached: lower the peak \
             (smaller batch, activation checkpointing) or free what is live below",
            bytes(o.shortfall_bytes)
        ),
    };
    if let (true, Some(free)) = (o.device_free_covers_request, o.device_free_bytes) {
        out.push_str(&format!(
            "; CUDA reported {} free, more than asked: a per-process memory fraction cap, \
             or device memory fragmented by other allocators",
            bytes(free)
        ));
    }
    if o.state_is_at_oom {
        out.push_str(&format!(
            "; the snapshot is the state at this OOM: largest free block {}{}",
            bytes(d.state.largest_free_block_bytes),
            d.state
                .fragmentation
                .map(|f| format!(", fragmentation {}", pct(f)))
                .unwrap_or_default()
        ));
    }
    out
}

fn sites_table(title: String, sites: &[Site]) -> String {
    let mut t = Tabular::new([
        "bytes",
        "count",
        "site (first user frame or operator, its callers)",
    ])
    .titled(title);
    for s in sites {
        t.push(vec![
            Value::Text(bytes(s.bytes)),
            s.count.into(),
            stack_cell(site_label(&s.user_frame, &s.op_site), &s.frames).into(),
        ]);
    }
    t.to_terminal()
}

/// A device's section: its allocator state, recorded history, top sites, OOMs, leak
/// suspects and largest segments, in that order.
fn device_section(d: &SnapshotDevice, out: &mut String) {
    out.push_str(&format!("\n== {} ==\n", d.device));
    out.push_str(&state_table(&d.state));
    if let Some(h) = &d.history {
        out.push_str(&history_table(h));
        out.push_str(&format!(
            "active memory by entry  {}\n",
            sparkline(&d.timeline, 60)
        ));
    }
    out.push_str(&top_sites_table(&d.top_sites));
    oom_blocks(d, out);
    if d.history.is_some() {
        out.push_str(&leak_suspects_block(d));
    }
    out.push_str(&segments_table(d));
}

/// The allocator state at snapshot time, one row per quantity.
fn state_table(s: &AllocatorState) -> String {
    let mut t = Tabular::new(["allocator state at snapshot", "value"]);
    let mut row = |k: &str, v: String| t.push(vec![k.into(), v.into()]);
    row(
        "segments",
        format!(
            "{} ({} large, {} small{})",
            count(s.segments),
            count(s.large_segments),
            count(s.small_segments),
            if s.expandable_segments > 0 {
                format!(", {} expandable", s.expandable_segments)
            } else {
                String::new()
            }
        ),
    );
    row("reserved", bytes(s.reserved_bytes));
    row(
        "allocated",
        format!(
            "{} in {} blocks (requested {}, rounding waste {})",
            bytes(s.allocated_bytes),
            count(s.blocks_active_allocated),
            bytes(s.requested_bytes),
            bytes(s.rounding_waste_bytes)
        ),
    );
    row(
        "pending free",
        format!(
            "{} in {} blocks",
            bytes(s.pending_free_bytes),
            count(s.blocks_active_pending_free)
        ),
    );
    row("active", bytes(s.active_bytes));
    row(
        "inactive (cached)",
        format!(
            "{} in {} blocks",
            bytes(s.inactive_bytes),
            count(s.blocks_inactive)
        ),
    );
    row("free (reserved − active)", bytes(s.free_bytes));
    row("reserved − allocated", bytes(s.reserved_unallocated_bytes));
    row("largest free block", bytes(s.largest_free_block_bytes));
    row(
        "fragmentation",
        s.fragmentation
            .map_or("- (nothing cached free)".to_owned(), |f| {
                format!("{} (1 − largest free block / free)", pct(f))
            }),
    );
    t.to_terminal()
}

/// What the recorded history shows: entries, actions, span, peaks, late segment calls.
fn history_table(h: &HistorySummary) -> String {
    let mut t = Tabular::new(["recorded history", "value"]);
    let mut row = |k: &str, v: String| t.push(vec![k.into(), v.into()]);
    row("entries", count(h.entries));
    row(
        "actions",
        h.actions
            .iter()
            .map(|(k, v)| format!("{k} {}", count(*v)))
            .collect::<Vec<_>>()
            .join(", "),
    );
    if let (Some(a), Some(b)) = (h.first_time_ns, h.last_time_ns) {
        row("span", format!("{:.3} s", (b - a) as f64 / 1e9));
    }
    row("active at start", bytes(h.start_active_bytes));
    row(
        "peak active",
        format!(
            "{} at entry {}{}",
            bytes(h.peak_active_bytes),
            count(h.peak_index),
            h.peak_time_ns
                .zip(h.first_time_ns)
                .map(|(p, f)| format!(" (+{:.3} s)", (p - f) as f64 / 1e9))
                .unwrap_or_default()
        ),
    );
    row("active at end", bytes(h.end_active_bytes));
    row("peak reserved", bytes(h.peak_reserved_bytes));
    row(
        "cudaMalloc/cudaFree after warm-up",
        format!(
            "{}{}",
            count(h.late_segment_events),
            if h.late_segment_events > 0 {
                " (cudaFree synchronises the device; cudaMalloc does when the \
                 allocator must first free cached blocks; see expandable_segments, \
                 static shapes)"
            } else {
                ""
            }
        ),
    );
    t.to_terminal()
}

/// The top allocation sites live at the peak (or at snapshot time), titled with their
/// total.
fn top_sites_table(ts: &TopSites) -> String {
    let at = match ts.index {
        Some(i) => format!("live at the peak (entry {})", count(i)),
        None => "live at snapshot time".to_owned(),
    };
    sites_table(
        format!(
            "top allocation sites, {at}: {} in {} sites{}",
            bytes(ts.bytes),
            count(ts.sites_total as u64),
            if ts.sites.len() < ts.sites_total {
                format!(" (first {})", ts.sites.len())
            } else {
                String::new()
            }
        ),
        &ts.sites,
    )
}

/// Each OOM reported: its numbers, their reading, its frame and what was live; then how
/// many more were not shown.
fn oom_blocks(d: &SnapshotDevice, out: &mut String) {
    for o in &d.ooms {
        out.push_str(&format!(
            "OOM at entry {}: asked for {} on stream {}; active {}, reserved {}, \
             reserved but unused {}{}\n  {}\n  at {}\n",
            count(o.index),
            bytes(o.requested_bytes),
            o.stream,
            bytes(o.active_bytes),
            bytes(o.reserved_bytes),
            bytes(o.reserved_unused_bytes),
            o.device_free_bytes
                .map(|f| format!(", CUDA free {}", bytes(f)))
                .unwrap_or_default(),
            oom_reading(o, d),
            lead_frame(site_label(&o.user_frame, &o.op_site), &o.frames).unwrap_or("-"),
        ));
        out.push_str(&sites_table("live at the OOM".to_owned(), &o.top_sites));
    }

    if d.ooms_total > d.ooms.len() as u64 {
        out.push_str(&format!(
            "… {} more OOM entries not shown\n",
            count(d.ooms_total - d.ooms.len() as u64)
        ));
    }
}

/// The growing leak suspects as a table, or the line saying there are none.
fn leak_suspects_block(d: &SnapshotDevice) -> String {
    let growing: Vec<_> = d.leak_suspects.iter().filter(|l| l.growing).collect();
    if growing.is_empty() {
        return format!(
            "leak suspects: none ({} stacks hold allocations never freed, none growing)\n",
            d.leak_groups_total
        );
    }
    let mut t = Tabular::new([
        "never freed",
        "count",
        "per quarter",
        "growth",
        "site (first user frame or operator, its callers)",
    ])
    .titled("leak suspects: allocations never freed, accumulating across the trace");
    for l in growing {
        t.push(vec![
            Value::Text(bytes(l.bytes)),
            l.count.into(),
            l.per_quarter
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("/")
                .into(),
            l.growth_bytes_per_s
                .map_or(String::new(), |g| format!("{}/s", bytes(g as u64)))
                .into(),
            stack_cell(site_label(&l.user_frame, &l.op_site), &l.frames).into(),
        ]);
    }
    t.to_terminal()
}

/// The largest segments, one row each.
fn segments_table(d: &SnapshotDevice) -> String {
    let mut t = Tabular::new([
        "segment",
        "type",
        "stream",
        "size",
        "allocated",
        "inactive",
        "largest free",
        "blocks",
    ])
    .titled(format!(
        "segments, largest first ({} of {})",
        d.segments.len(),
        d.segments_total
    ));
    for r in &d.segments {
        t.push(vec![
            r.address.clone().into(),
            format!(
                "{}{}",
                r.segment_type,
                if r.is_expandable { " (expandable)" } else { "" }
            )
            .into(),
            r.stream.into(),
            Value::Text(bytes(r.total_size_bytes)),
            Value::Text(bytes(r.allocated_bytes)),
            Value::Text(bytes(r.inactive_bytes)),
            Value::Text(bytes(r.largest_free_block_bytes)),
            r.blocks.into(),
        ]);
    }
    t.to_terminal()
}

/// Render for the terminal.
pub fn to_table(doc: &SnapshotDocument) -> String {
    let v = &doc.snapshot;
    let mut out = format!(
        "{}: CUDA memory snapshot, pickle protocol {}, {} layout, PyTorch {} ({})\n",
        v.path,
        v.protocol,
        match v.layout {
            kinetoscope_trace::snapshot::SnapshotLayout::Dict => "dict",
            kinetoscope_trace::snapshot::SnapshotLayout::BareList => "bare-list (1.13)",
        },
        v.pytorch_versions,
        bytes(v.file_bytes),
    );
    for d in &v.devices {
        device_section(d, &mut out);
    }
    if let Some(settings) = &v.allocator_settings {
        let mut t = Tabular::new(["allocator setting", "value"]);
        for (k, val) in settings {
            t.push(vec![k.clone().into(), val.to_string().into()]);
        }
        out.push('\n');
        out.push_str(&t.to_terminal());
    }
    if !v.other_keys.is_empty() {
        out.push_str(&format!(
            "other keys (not read): {}\n",
            v.other_keys.join(", ")
        ));
    }
    for n in &v.notes {
        out.push_str(&format!("note: {}\n", crate::note::text(n)));
    }
    out
}
