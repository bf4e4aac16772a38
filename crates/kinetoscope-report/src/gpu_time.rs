//! `kinetoscope temporal`, `idle`, `launches` and `kernels --by-class`: GPU time as HTA
//! 0.5.0 defines it (`docs/hta-differences.md` lists where kinetoscope departs), as
//! terminal tables, CSV or a versioned JSON document ([`GpuTimeDocument`],
//! `docs/json.md`). Terminal and CSV times are µs; JSON times are ns.

use kinetoscope_analysis::gpu_time::classes::ClassBreakdown;
use kinetoscope_analysis::gpu_time::idle::IdleBreakdown;
use kinetoscope_analysis::gpu_time::launches::{Launch, LaunchStats};
use kinetoscope_analysis::gpu_time::temporal::Temporal;
use kinetoscope_analysis::gpu_time::{Compat, Window};
use kinetoscope_engine::GpuTimeDocument;

use crate::format::percent;
use crate::tabular::{Tabular, Value};

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// A 0–1 share as HTA writes percentages: rounded to 2 decimals.
fn hta_pct(share: f64) -> f64 {
    (percent(share) * 100.0).round() / 100.0
}

fn usf(ns: f64) -> f64 {
    ns / 1000.0
}

fn rank_value(rank: Option<i64>) -> Value {
    rank.map_or(Value::Empty, Value::Int)
}

fn definition(compat: Compat, step_filter: bool) -> String {
    match (compat, step_filter) {
        (Compat::Hta, true) => "HTA definition, HTA step filter (last step dropped)".into(),
        (Compat::Hta, false) => "HTA definition, no step filter (fewer than 2 steps)".into(),
        (Compat::Kinetoscope, _) => "HTA definition over all GPU rows (kinetoscope default)".into(),
    }
}

fn window_note(w: &Window) -> String {
    match &w.cut_step {
        Some(step) => format!(
            "; cut at {step}: {} of {} GPU rows dropped",
            w.gpu_rows_dropped, w.gpu_rows_total
        ),
        None => format!("; {} GPU rows", w.gpu_rows_total),
    }
}

/// `kinetoscope temporal` for the terminal.
pub fn temporal_table(doc: &GpuTimeDocument<Temporal>) -> String {
    let mut t = Tabular::new([
        "Rank",
        "File",
        "GPU span µs",
        "Idle µs",
        "Idle %",
        "Compute µs",
        "Compute %",
        "Non-compute µs",
        "Non-compute %",
    ])
    .titled(format!(
        "Temporal breakdown ({}); % of the GPU-active span",
        definition(doc.options.compat, doc.options.step_filter)
    ));
    for r in &doc.traces {
        t.push(vec![
            rank_value(r.rank),
            file_name(&r.path).into(),
            Value::float(us(r.total_ns), 0),
            Value::float(us(r.idle_ns), 0),
            Value::float(hta_pct(r.idle_share), 2),
            Value::float(us(r.compute_ns), 0),
            Value::float(hta_pct(r.compute_share), 2),
            Value::float(us(r.non_compute_ns), 0),
            Value::float(hta_pct(r.non_compute_share), 2),
        ]);
    }
    t.to_terminal()
}

/// `kinetoscope temporal` as CSV.
pub fn temporal_csv(doc: &GpuTimeDocument<Temporal>) -> String {
    let mut t = Tabular::new([
        "path",
        "rank",
        "idle_us",
        "compute_us",
        "non_compute_us",
        "total_us",
        "idle_pct",
        "compute_pct",
        "non_compute_pct",
    ]);
    for r in &doc.traces {
        t.push(vec![
            r.path.clone().into(),
            rank_value(r.rank),
            Value::float(us(r.idle_ns), 3),
            Value::float(us(r.compute_ns), 3),
            Value::float(us(r.non_compute_ns), 3),
            Value::float(us(r.total_ns), 3),
            Value::float(hta_pct(r.idle_share), 2),
            Value::float(hta_pct(r.compute_share), 2),
            Value::float(hta_pct(r.non_compute_share), 2),
        ]);
    }
    t.to_csv()
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

fn opt_f(v: Option<f64>, decimals: usize) -> Value {
    v.map_or(Value::Empty, |x| Value::float(x, decimals))
}

fn idle_rows(doc: &GpuTimeDocument<IdleBreakdown>, csv: bool) -> Tabular {
    let mut headers = vec![
        "rank", "stream", "category", "idle_us", "ratio", "count", "mean_us",
    ];
    if csv {
        headers.extend(["std_us", "min_us", "p25_us"]);
    }
    headers.extend(["p50_us", "p90_us"]);
    if csv {
        headers.push("p75_us");
    }
    headers.push("max_us");
    let mut t = Tabular::new(headers);
    for b in &doc.traces {
        for s in &b.streams {
            for c in &s.categories {
                let st = c.stats.as_ref();
                let mut row = vec![
                    rank_value(b.rank),
                    Value::Int(s.stream),
                    c.category.as_str().into(),
                    Value::float(us(c.idle_ns), 1),
                    opt_f(c.ratio, 2),
                    Value::Int(st.map_or(0, |s| s.count as i64)),
                    opt_f(st.map(|s| usf(s.mean_ns)), 2),
                ];
                if csv {
                    row.extend([
                        opt_f(st.and_then(|s| s.std_ns).map(usf), 2),
                        opt_f(st.map(|s| us(s.min_ns)), 2),
                        opt_f(st.map(|s| usf(s.p25_ns)), 2),
                    ]);
                }
                row.extend([
                    opt_f(st.map(|s| usf(s.p50_ns)), 2),
                    opt_f(st.map(|s| usf(s.p90_ns)), 2),
                ]);
                if csv {
                    row.push(opt_f(st.map(|s| usf(s.p75_ns)), 2));
                }
                row.push(opt_f(st.map(|s| us(s.max_ns)), 2));
                t.push(row);
            }
        }
    }
    t
}

/// `kinetoscope idle` for the terminal.
pub fn idle_table(doc: &GpuTimeDocument<IdleBreakdown>) -> String {
    let mut out = format!(
        "Idle time per stream ({}): host_wait = launched after the stream drained, \
         kernel_wait = gap < {} µs, other = the rest; interval statistics in µs\n",
        definition(doc.options.compat, doc.options.step_filter),
        doc.traces.first().map_or(30.0, |b| us(b.kernel_wait_ns)),
    );
    for b in &doc.traces {
        out.push_str(&format!(
            "{}{}; host wait of the GPU as a whole (all streams as one queue): {:.1} µs\n",
            file_name(&b.path),
            window_note(&b.window),
            us(b.device_host_wait_ns)
        ));
    }
    out + &idle_rows(doc, false).to_terminal()
}

/// `kinetoscope idle` as CSV.
pub fn idle_csv(doc: &GpuTimeDocument<IdleBreakdown>) -> String {
    idle_rows(doc, true).to_csv()
}

fn launch_list(title: String, list: &[Launch]) -> String {
    let mut t = Tabular::new([
        "Correlation",
        "Launch",
        "Kernel",
        "Step",
        "CPU µs",
        "GPU µs",
        "Delay µs",
    ])
    .titled(title);
    for l in list {
        t.push(vec![
            Value::Int(l.correlation),
            l.launch.clone().into(),
            crate::ops::clip(&l.kernel, 60).into(),
            l.step.map_or(Value::Empty, Value::Int),
            Value::float(us(l.cpu_dur_ns), 1),
            Value::float(us(l.gpu_dur_ns), 1),
            Value::float(us(l.delay_ns), 1),
        ]);
    }
    t.to_terminal()
}

/// `kinetoscope launches` for the terminal.
pub fn launches_table(doc: &GpuTimeDocument<LaunchStats>) -> String {
    let mut out = String::new();
    for s in &doc.traces {
        let o = &s.options;
        let rank = s.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        let mean = |d: &Option<kinetoscope_analysis::stats::DurationStats>| {
            d.as_ref().map_or(0.0, |d| usf(d.mean_ns))
        };
        out.push_str(&format!(
            "{}{rank}: {} launches ({}{}); mean CPU launch {:.1} µs, mean GPU {:.1} µs, \
             mean delay {:.1} µs\n  short kernels (GPU < launch): {}; runtime outliers \
             (> {} µs): {}; delay outliers (> {} µs): {}\n",
            file_name(&s.path),
            s.count,
            definition(doc.options.compat, doc.options.step_filter),
            window_note(&s.window),
            mean(&s.cpu_dur),
            mean(&s.gpu_dur),
            mean(&s.delay),
            s.short_kernels,
            us(o.runtime_cutoff_ns),
            s.runtime_outliers,
            us(o.delay_cutoff_ns),
            s.delay_outliers,
        ));
        let mut t = Tabular::new([
            "Step",
            "Launches",
            "CPU µs",
            "GPU µs",
            "Delay µs",
            "Max delay µs",
            "Short",
            "Runtime outliers",
            "Delay outliers",
        ])
        .titled("Per step");
        for st in &s.steps {
            t.push(vec![
                st.step.clone().into(),
                Value::Int(st.launches as i64),
                Value::float(us(st.cpu_ns), 0),
                Value::float(us(st.gpu_ns), 0),
                Value::float(us(st.delay_ns), 0),
                Value::float(us(st.max_delay_ns), 0),
                Value::Int(st.short_kernels as i64),
                Value::Int(st.runtime_outliers as i64),
                Value::Int(st.delay_outliers as i64),
            ]);
        }
        out.push_str(&t.to_terminal());
        for (name, list) in [
            ("Short kernels", &s.short_kernel_list),
            ("Runtime outliers", &s.runtime_outlier_list),
            ("Delay outliers", &s.delay_outlier_list),
        ] {
            if !list.is_empty() {
                out.push_str(&launch_list(format!("{name} (top {})", list.len()), list));
            }
        }
    }
    out
}

/// `kinetoscope launches` as CSV: one row per launch (HTA's columns plus names and step).
pub fn launches_csv(doc: &GpuTimeDocument<LaunchStats>) -> String {
    let mut t = Tabular::new([
        "rank",
        "correlation",
        "launch",
        "kernel",
        "step",
        "cpu_duration_us",
        "gpu_duration_us",
        "launch_delay_us",
    ]);
    for s in &doc.traces {
        for l in &s.launches {
            t.push(vec![
                rank_value(s.rank),
                Value::Int(l.correlation),
                l.launch.clone().into(),
                l.kernel.clone().into(),
                l.step.map_or(Value::Empty, Value::Int),
                Value::float(us(l.cpu_dur_ns), 3),
                Value::float(us(l.gpu_dur_ns), 3),
                Value::float(us(l.delay_ns), 3),
            ]);
        }
    }
    t.to_csv()
}

/// `kinetoscope kernels --by-class` for the terminal.
pub fn classes_table(doc: &GpuTimeDocument<ClassBreakdown>) -> String {
    let mut out = String::new();
    for b in &doc.traces {
        let rank = b.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        let overlap = b
            .comm_comp_overlap_share
            .map_or("n/a".to_owned(), |s| format!("{:.2} %", hta_pct(s)));
        out.push_str(&format!(
            "{}{rank}: kernel classes ({}{}); communication overlapped by computation: {overlap}\n",
            file_name(&b.path),
            definition(doc.options.compat, doc.options.step_filter),
            window_note(&b.window),
        ));
        let mut t = Tabular::new(["Class", "Rows", "Names", "Σ duration µs", "Busy µs"]);
        for c in &b.classes {
            t.push(vec![
                c.class.label().into(),
                Value::Int(c.count as i64),
                Value::Int(c.names as i64),
                Value::float(us(c.sum_ns), 0),
                Value::float(us(c.busy_ns), 0),
            ]);
        }
        out.push_str(&t.to_terminal());
        let mut t = Tabular::new(["Classes running", "µs", "%"]);
        for o in &b.overlaps {
            t.push(vec![
                o.label.clone().into(),
                Value::float(us(o.time_ns), 0),
                Value::float(percent(o.share), 1),
            ]);
        }
        out.push_str(&t.to_terminal());
        out.push_str(&class_kernels(std::slice::from_ref(b), false).to_terminal());
    }
    out
}

fn class_kernels(traces: &[ClassBreakdown], csv: bool) -> Tabular {
    let mut headers = Vec::new();
    if csv {
        headers.push("rank");
    }
    headers.extend([
        "class", "name", "count", "sum_us", "mean_us", "min_us", "max_us", "std_us",
    ]);
    let mut t = Tabular::new(headers);
    for b in traces {
        for c in &b.classes {
            for k in &c.top {
                let mut row = Vec::new();
                if csv {
                    row.push(rank_value(b.rank));
                }
                row.extend([
                    c.class.label().into(),
                    if csv {
                        k.name.clone().into()
                    } else {
                        crate::ops::clip(&k.name, 70).into()
                    },
                    Value::Int(k.count as i64),
                    Value::float(us(k.sum_ns), 1),
                    Value::float(usf(k.mean_ns), 1),
                    Value::float(us(k.min_ns), 1),
                    Value::float(us(k.max_ns), 1),
                    Value::float(usf(k.std_ns), 1),
                ]);
                t.push(row);
            }
        }
    }
    t
}

/// `kinetoscope kernels --by-class` as CSV: the top kernels of each class per rank.
pub fn classes_csv(doc: &GpuTimeDocument<ClassBreakdown>) -> String {
    class_kernels(&doc.traces, true).to_csv()
}
