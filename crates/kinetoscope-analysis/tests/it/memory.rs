//! The memory view: the TensorBoard plugin's memory-statistics reference numbers on the
//! trace they came from, and small inline traces for pairing, peaks, down-sampling and
//! statistics including children.
//!
//! Reference tables: `tests/fixtures/tb_plugin_reference/` (see its `SOURCE.md`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use kinetoscope_analysis::memory::{
    analyze_trace, curve, sort, Device, DeviceFilter, MemoryOptions, MemoryView, OpMemoryStats,
    SortKey,
};
use kinetoscope_analysis::note::Note;
use kinetoscope_trace::Trace;

use crate::common::{fixtures, read, read_json, shared_file};

/// The r0_span1 / r0_span2 sample traces (`fixtures/tb_plugin/<run>/<file>`).
fn sample_trace(run: &str, file: &str) -> PathBuf {
    fixtures().join("tb_plugin").join(run).join(file)
}

/// One row of the plugin's memory statistics CSV; sizes in hundredths of KB (1024 B).
#[derive(Debug, PartialEq, Eq)]
struct RefRow {
    calls: u64,
    increase: i64,
    self_increase: i64,
    count: u64,
    self_count: u64,
    size: i64,
    self_size: i64,
}

/// Parse a decimal with at most two places into hundredths, exactly.
fn hundredths(s: &str) -> i64 {
    let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    assert!(frac.len() <= 2, "{s}");
    let frac = format!("{frac:0<2}");
    let v = int.parse::<i64>().unwrap() * 100 + frac.parse::<i64>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

/// Bytes → KB with two decimals as Python's `round(bytes / 1024, 2)` (half to even on
/// the exact value), in hundredths.
fn kb_hundredths(bytes: i64) -> i64 {
    let n = bytes as i128 * 100;
    let d = 1024i128;
    let q = n.div_euclid(d);
    let r = n.rem_euclid(d);
    let q = match (2 * r).cmp(&d) {
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal if q % 2 != 0 => q + 1,
        _ => q,
    };
    q as i64
}

fn reference(run: &str, device: &str) -> BTreeMap<String, RefRow> {
    let path = fixtures()
        .join("tb_plugin_reference")
        .join(run)
        .join(format!("worker0_span1_memory_stats_{device}.csv"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "Operator Name,Calls,Size Increase (KB),Self Size Increase (KB),Allocation Count,\
         Self Allocation Count,Allocation Size (KB),Self Allocation Size (KB)"
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 8, "{l}");
            (
                f[0].to_owned(),
                RefRow {
                    calls: f[1].parse().unwrap(),
                    increase: hundredths(f[2]),
                    self_increase: hundredths(f[3]),
                    count: f[4].parse().unwrap(),
                    self_count: f[5].parse().unwrap(),
                    size: hundredths(f[6]),
                    self_size: hundredths(f[7]),
                },
            )
        })
        .collect()
}

fn as_ref_row(s: &OpMemoryStats) -> RefRow {
    RefRow {
        calls: s.calls,
        increase: kb_hundredths(s.size_increase_bytes),
        self_increase: kb_hundredths(s.self_size_increase_bytes),
        count: s.allocation_count,
        self_count: s.self_allocation_count,
        size: kb_hundredths(s.allocation_size_bytes),
        self_size: kb_hundredths(s.self_allocation_size_bytes),
    }
}

/// Operator names kinetoscope reports that the plugin leaves out on purpose: it does not
/// treat these `record_function` ranges as operators (`docs/tb-plugin-differences.md`).
fn plugin_excludes(name: &str) -> bool {
    name.starts_with("Optimizer.") || name.starts_with("enumerate(DataLoader)#")
}

/// Compare one device's statistics with the plugin's table; returns the extra names.
fn compare(view: &MemoryView, run: &str, device: &str) -> Vec<String> {
    let expected = reference(run, device);
    let d = view
        .devices
        .iter()
        .find(|d| d.device == device)
        .unwrap_or_else(|| panic!("no {device} in {:?}", view.devices));
    let ours: BTreeMap<&str, &OpMemoryStats> =
        d.operators.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut mismatches = Vec::new();
    for (name, want) in &expected {
        match ours.get(name.as_str()) {
            None => mismatches.push(format!("{name}: missing")),
            Some(s) => {
                let got = as_ref_row(s);
                if &got != want {
                    mismatches.push(format!("{name}: got {got:?}, want {want:?}"));
                }
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{run} {device}: {} of {} rows differ:\n{}",
        mismatches.len(),
        expected.len(),
        mismatches.join("\n")
    );
    ours.keys()
        .filter(|n| !expected.contains_key(**n))
        .map(|n| n.to_string())
        .collect()
}

fn check_reference_run(run: &str, file: &str) {
    let trace = read(&sample_trace(run, file));
    let view = analyze_trace(&trace, &MemoryOptions::default());
    assert_eq!(view.records, 12_838);
    assert_eq!(view.records_with_addr, 0);
    assert_eq!(view.records_with_totals, 0);
    let names: Vec<&str> = view.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(names, ["CPU", "GPU0"]);
    for device in ["CPU", "GPU0"] {
        let extra = compare(&view, run, device);
        assert!(
            extra.iter().all(|n| plugin_excludes(n)),
            "{run} {device}: unexpected extra rows {extra:?}"
        );
    }
    // No Addr: no allocation table, a net-since-start curve, no reserved peak.
    for d in &view.devices {
        assert!(d.allocations.rows.is_empty());
        assert_eq!(d.allocations.skipped_without_addr as u64, d.records);
        assert_eq!(d.curve.kind, curve::CurveKind::NetSinceStart);
        assert!(d.peak_reserved.is_none());
        assert!(d.peak_allocated.is_some());
    }
    assert!(view.notes.contains(&Note::NoAddressOrTotals));
}

#[test]
fn plugin_memory_statistics_r0_span1() {
    check_reference_run("r0_span1", "worker0.1623143089861.pt.trace.json.gz");
}

#[test]
fn plugin_memory_statistics_r0_span2() {
    check_reference_run("r0_span2", "worker0.1623143566756.pt.trace.json.gz");
}

fn stats<'a>(view: &'a MemoryView, device: &str, name: &str) -> Option<&'a OpMemoryStats> {
    view.devices
        .iter()
        .find(|d| d.device == device)?
        .operators
        .iter()
        .find(|s| s.name == name)
}

/// `[self increase, self allocation size, self allocation count, increase, allocation
/// size, allocation count, calls]`, the plugin test's order.
fn plugin_order(s: &OpMemoryStats) -> [i64; 7] {
    [
        s.self_size_increase_bytes,
        s.self_allocation_size_bytes,
        s.self_allocation_count as i64,
        s.size_increase_bytes,
        s.allocation_size_bytes,
        s.allocation_count as i64,
        s.calls as i64,
    ]
}

fn plugin_unit_trace() -> MemoryView {
    let trace = read(&fixtures().join("tb_plugin_reference/test_memory_view.json"));
    analyze_trace(&trace, &MemoryOptions::default())
}

#[test]
fn plugin_unit_test_memory_view() {
    let view = plugin_unit_trace();
    let gpu = [
        ("aten::to", [104, 104, 2, 104, 204, 3, 4]),
        ("aten::nll_loss_backward", [0, 10, 1, 0, 10, 1, 1]),
        ("aten::copy_", [0, 100, 1, 0, 100, 1, 1]),
        ("aten::addmm", [0, 30, 1, 0, 30, 1, 1]),
        ("aten::tranas_stride", [0, 50, 1, 0, 50, 1, 1]),
        ("aten::transpose", [0, 50, 1, 0, 100, 2, 1]),
        ("aten::t", [0, 100, 1, 0, 200, 3, 1]),
        ("aten::liner", [20, 130, 3, 20, 360, 7, 1]),
    ];
    let cpu = [
        ("aten::to", [4, 4, 1, 4, 4, 1, 4]),
        ("aten::liner", [0, 100, 1, 50, 150, 2, 1]),
        ("aten::tranas_stride", [50, 50, 1, 50, 50, 1, 1]),
        ("aten::transpose", [0, 0, 0, 50, 50, 1, 1]),
        ("aten::t", [0, 0, 0, 50, 50, 1, 1]),
    ];
    for (device, expected) in [("GPU0", &gpu[..]), ("CPU", &cpu[..])] {
        for (name, want) in expected {
            let got = stats(&view, device, name).unwrap_or_else(|| panic!("{device} {name}"));
            assert_eq!(&plugin_order(got), want, "{device} {name}");
        }
        // The one extra row: the DataLoader range, which the plugin does not treat as
        // an operator (its records at 150 µs / 265 µs are dropped there).
        let d = view.devices.iter().find(|d| d.device == device).unwrap();
        let extra: Vec<&str> = d
            .operators
            .iter()
            .map(|s| s.name.as_str())
            .filter(|n| !expected.iter().any(|(e, _)| e == n))
            .collect();
        assert_eq!(
            extra,
            ["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"],
            "{device}"
        );
    }
    let dl = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    assert_eq!(
        plugin_order(stats(&view, "CPU", dl).unwrap()),
        [4, 4, 1, 8, 8, 2, 1]
    );
    assert_eq!(
        plugin_order(stats(&view, "GPU0", dl).unwrap()),
        [4, 4, 1, 8, 8, 2, 1]
    );
    // 90 µs and 300 µs (inside ProfilerStep#1 only), 450 µs (between steps), 690 µs
    // (inside ProfilerStep#2 only).
    assert_eq!(view.unattributed_records, 4);
}

/// The plugin pairs frees with allocations by address alone, across devices; here a
/// CPU free at 749 µs of address 690 would close the GPU allocation at 690 µs.
/// kinetoscope pairs by (device, address).
#[test]
fn pairing_by_device_and_address() {
    let view = plugin_unit_trace();
    let gpu = &view
        .devices
        .iter()
        .find(|d| d.device == "GPU0")
        .unwrap()
        .allocations;
    let cpu = &view
        .devices
        .iter()
        .find(|d| d.device == "CPU")
        .unwrap()
        .allocations;
    assert_eq!((gpu.paired, gpu.unreleased, gpu.unmatched_frees), (8, 6, 0));
    assert_eq!((cpu.paired, cpu.unreleased, cpu.unmatched_frees), (0, 6, 1));
    assert_eq!(gpu.total_rows, 14);
    assert_eq!(cpu.total_rows, 7);
    let at_690 = gpu.rows.iter().find(|r| r.addr == 690).unwrap();
    assert_eq!(at_690.alloc_ns, Some(690_000));
    assert_eq!(at_690.release_ns, None);
    let cpu_free = cpu.rows.iter().find(|r| r.addr == 690).unwrap();
    assert_eq!(
        (cpu_free.alloc_ns, cpu_free.release_ns, cpu_free.bytes),
        (None, Some(749_000), 100)
    );
    assert_eq!(cpu_free.release_op.as_deref(), Some("aten::liner"));
    // Allocated in aten::to (outside its aten::copy_), freed in aten::liner.
    let at_515 = gpu.rows.iter().find(|r| r.addr == 515).unwrap();
    assert_eq!(at_515.op.as_deref(), Some("aten::to"));
    assert_eq!(at_515.release_op.as_deref(), Some("aten::liner"));
    assert_eq!(at_515.lifetime_ns, Some(281_000));
    assert_eq!(at_515.bytes, 100);
    // Rows are in allocation time order.
    let times: Vec<i64> = gpu.rows.iter().map(|r| r.alloc_ns.unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

fn modern(events: &[String], extra: &str) -> Trace {
    read_json(&format!(
        "{{\"schemaVersion\": 1, {extra}\"traceEvents\": [\n{}\n]}}",
        events.join(",\n")
    ))
}

fn op(name: &str, cat: &str, tid: i64, ts: f64, dur: f64) -> String {
    format!(
        "{{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": 1, \"tid\": {tid}, \
         \"ts\": {ts}, \"dur\": {dur}, \"args\": {{}}}}"
    )
}

#[allow(clippy::too_many_arguments)]
fn mem(tid: i64, ts: f64, dev: (i64, i64), addr: u64, bytes: i64, ta: i64, tr: i64) -> String {
    format!(
        "{{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \
         \"pid\": 1, \"tid\": {tid}, \"ts\": {ts}, \"args\": {{\"Total Reserved\": {tr}, \
         \"Total Allocated\": {ta}, \"Bytes\": {bytes}, \"Device Id\": {}, \"Device Type\": {}, \
         \"Addr\": {addr}}}}}",
        dev.1, dev.0
    )
}

const GPU0: (i64, i64) = (1, 0);
const CPU: (i64, i64) = (0, -1);

fn peak_trace() -> Trace {
    let events = vec![
        op("ProfilerStep#1", "user_annotation", 1, 0.0, 1000.0),
        op("aten::linear", "cpu_op", 1, 100.0, 300.0),
        op("aten::empty", "cpu_op", 1, 110.0, 10.0),
        op("aten::addmm", "cpu_op", 1, 200.0, 100.0),
        op("aten::empty", "cpu_op", 1, 210.0, 10.0),
        mem(1, 50.0, GPU0, 1, 512, 512, 2048),
        mem(1, 115.0, GPU0, 2, 1024, 1536, 2048),
        mem(1, 215.5, GPU0, 3, 4096, 5632, 8192),
        mem(1, 230.0, CPU, 9, 64, 64, 0),
        mem(1, 350.0, GPU0, 2, -1024, 4608, 8192),
        mem(1, 500.0, GPU0, 3, -4096, 512, 8192),
        mem(1, 600.0, GPU0, 4, 4096, 4608, 8192),
    ];
    modern(
        &events,
        "\"deviceProperties\": [{\"id\": 0, \"name\": \"Test GPU\", \"totalGlobalMem\": 85899345920}], ",
    )
}

#[test]
fn peak_with_time_and_operator() {
    let view = analyze_trace(&peak_trace(), &MemoryOptions::default());
    assert_eq!(view.records, 7);
    assert_eq!(view.records_with_totals, 7);
    let names: Vec<&str> = view.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(names, ["CPU", "GPU0"]);
    let gpu = &view.devices[1];
    assert_eq!(gpu.capacity_bytes, Some(85_899_345_920));
    let peak = gpu.peak_allocated.as_ref().unwrap();
    assert_eq!(peak.bytes, 5632);
    assert_eq!(peak.ts_ns, 215_500);
    assert_eq!(peak.op.as_deref(), Some("aten::empty"));
    assert_eq!(peak.parent_op.as_deref(), Some("aten::addmm"));
    // Reserved reaches 8192 at the same event and stays there: first time counts.
    let reserved = gpu.peak_reserved.as_ref().unwrap();
    assert_eq!((reserved.bytes, reserved.ts_ns), (8192, 215_500));
    assert_eq!(gpu.curve.kind, curve::CurveKind::Recorded);
    assert_eq!(gpu.curve.raw_points, 6);
    assert!(!gpu.curve.downsampled);
    assert_eq!(
        gpu.curve
            .points
            .iter()
            .map(|p| p.allocated_bytes)
            .collect::<Vec<_>>(),
        [512, 1536, 5632, 4608, 512, 4608]
    );
    let cpu = &view.devices[0];
    assert_eq!(
        cpu.peak_allocated.as_ref().unwrap().op.as_deref(),
        Some("aten::addmm")
    );
    assert_eq!(cpu.capacity_bytes, None);
    // Allocation table: `aten::empty` rows carry their parent for display.
    let rows = &gpu.allocations.rows;
    let r = rows.iter().find(|r| r.addr == 3).unwrap();
    assert_eq!(
        kinetoscope_analysis::memory::op_context(r.op.as_deref(), r.parent_op.as_deref()),
        "aten::addmm (aten::empty)"
    );
    assert_eq!(r.lifetime_ns, Some(500_000 - 215_500));
    assert_eq!(r.release_op, None); // freed outside any operator
    assert_eq!(view.unattributed_records, 3);
    // Times relative to the first event of the trace.
    assert_eq!(view.origin_ns, 0);
}

#[test]
fn downsampling_keeps_the_peak() {
    let mut events = vec![op("aten::big", "cpu_op", 1, 0.0, 100_000.0)];
    let mut total = 0i64;
    let mut peak = (0i64, 0i64);
    for i in 0..20_000i64 {
        // A sawtooth with one narrow spike of one event.
        let bytes = if i == 13_337 {
            1 << 30
        } else if i % 2 == 0 {
            4096
        } else {
            -4096
        };
        let bytes = if i == 13_338 { -(1 << 30) } else { bytes };
        total += bytes;
        if total > peak.0 {
            peak = (total, i);
        }
        events.push(mem(
            1,
            i as f64 * 5.0,
            GPU0,
            1000 + i as u64,
            bytes,
            total,
            1 << 31,
        ));
    }
    let opts = MemoryOptions {
        points: 100,
        ..MemoryOptions::default()
    };
    let view = analyze_trace(&modern(&events, ""), &opts);
    let gpu = &view.devices[0];
    assert_eq!(gpu.curve.raw_points, 20_000);
    assert!(gpu.curve.downsampled);
    assert!(gpu.curve.points.len() <= 100, "{}", gpu.curve.points.len());
    let peak_point = gpu
        .curve
        .points
        .iter()
        .max_by_key(|p| p.allocated_bytes)
        .unwrap();
    assert_eq!(peak_point.allocated_bytes, peak.0);
    assert_eq!(peak_point.ts_ns, peak.1 * 5_000);
    assert_eq!(gpu.peak_allocated.as_ref().unwrap().bytes, peak.0);
    assert_eq!(
        gpu.peak_allocated.as_ref().unwrap().op.as_deref(),
        Some("aten::big")
    );
}

#[test]
fn statistics_include_children_and_merge_same_name_child() {
    let events = vec![
        // A wraps a single A: one call (merged), records counted once.
        op("A", "cpu_op", 1, 0.0, 100.0),
        op("A", "cpu_op", 1, 10.0, 80.0),
        // B has two children, B and C: two calls; a record in the inner B counts for
        // both B calls including children.
        op("B", "cpu_op", 1, 200.0, 100.0),
        op("B", "cpu_op", 1, 210.0, 20.0),
        op("C", "cpu_op", 1, 240.0, 20.0),
        // A user annotation is an operator too, with the ops inside as children.
        op("forward", "user_annotation", 2, 0.0, 100.0),
        op("aten::mm", "cpu_op", 2, 10.0, 10.0),
        mem(1, 5.0, GPU0, 1, 100, 100, 0),     // A (outer)
        mem(1, 20.0, GPU0, 2, 10, 110, 0),     // A (inner, merged)
        mem(1, 50.0, GPU0, 2, -10, 100, 0),    // A (inner, merged)
        mem(1, 215.0, GPU0, 3, 1000, 1100, 0), // inner B
        mem(1, 250.0, GPU0, 4, 7, 1107, 0),    // C
        mem(1, 290.0, GPU0, 4, -7, 1100, 0),   // outer B
        mem(2, 15.0, GPU0, 5, 64, 1164, 0),    // aten::mm on thread 2
        mem(2, 50.0, GPU0, 6, 32, 1196, 0),    // forward
    ];
    let view = analyze_trace(&modern(&events, ""), &MemoryOptions::default());
    let s = |n| plugin_order(stats(&view, "GPU0", n).unwrap());
    // [self increase, self size, self count, increase, size, count, calls]
    assert_eq!(s("A"), [100, 110, 2, 100, 110, 2, 1]);
    assert_eq!(s("B"), [993, 1000, 1, 2000, 2007, 3, 2]);
    assert_eq!(s("C"), [7, 7, 1, 7, 7, 1, 1]);
    assert_eq!(s("aten::mm"), [64, 64, 1, 64, 64, 1, 1]);
    assert_eq!(s("forward"), [32, 32, 1, 96, 96, 2, 1]);
    assert_eq!(view.unattributed_records, 0);
}

#[test]
fn double_allocation_and_repeated_unmatched_frees() {
    let events = vec![
        op("aten::empty", "cpu_op", 1, 0.0, 1000.0),
        mem(1, 1.0, GPU0, 77, 10, 10, 0),
        mem(1, 2.0, GPU0, 77, 20, 30, 0), // same address again: the first is kept, unreleased
        mem(1, 3.0, GPU0, 77, -20, 10, 0),
        mem(1, 4.0, GPU0, 88, -5, 5, 0), // two frees of an address never allocated
        mem(1, 5.0, GPU0, 88, -5, 0, 0),
        mem(1, 6.0, GPU0, 99, 0, 0, 0), // zero bytes: neither
    ];
    let view = analyze_trace(&modern(&events, ""), &MemoryOptions::default());
    let t = &view.devices[0].allocations;
    assert_eq!((t.paired, t.unreleased, t.unmatched_frees), (1, 1, 2));
    assert_eq!(t.total_rows, 4);
    let sizes: Vec<(i64, Option<i64>, Option<i64>)> = t
        .rows
        .iter()
        .map(|r| (r.bytes, r.alloc_ns, r.release_ns))
        .collect();
    assert_eq!(
        sizes,
        [
            (10, Some(1000), None),
            (20, Some(2000), Some(3000)),
            (5, None, Some(4000)),
            (5, None, Some(5000)),
        ]
    );
}

#[test]
fn no_memory_events_says_so() {
    let trace = modern(&[op("aten::mm", "cpu_op", 1, 0.0, 10.0)], "");
    let view = analyze_trace(&trace, &MemoryOptions::default());
    assert_eq!(view.records, 0);
    assert!(view.devices.is_empty());
    assert_eq!(view.notes, [Note::NoMemoryEvents]);
}

#[test]
fn device_filter_and_sorting() {
    let opts = MemoryOptions {
        device: Some("gpu0".parse::<DeviceFilter>().unwrap()),
        ..MemoryOptions::default()
    };
    let mut view = analyze_trace(&peak_trace(), &opts);
    assert_eq!(view.devices.len(), 1);
    assert_eq!(view.devices[0].device_type, Device::cuda(0).device_type);
    sort::sort_and_limit(&mut view, Some("calls".parse::<SortKey>().unwrap()), 1);
    let d = &view.devices[0];
    assert_eq!(d.operators.len(), 1);
    assert_eq!(d.operators_total, 3);
    assert_eq!(
        (d.operators[0].name.as_str(), d.operators[0].calls),
        ("aten::empty", 2)
    );
    // The allocation table keeps its default order (largest first) and is cut too.
    assert_eq!(d.allocations.rows.len(), 1);
    assert_eq!(d.allocations.rows[0].bytes, 4096);
    assert_eq!(d.allocations.total_rows, 4);
    assert!("bogus".parse::<SortKey>().is_err());
}

/// The 28k CUDA `[memory]` events of HTA's `df_index_resolver` trace (in `../shared`
/// when present; too big to copy here).
#[test]
#[ignore = "reads shared/external/hta/df_index_resolver (KINETOSCOPE_SHARED); fails when it is missing"]
fn shared_df_index_resolver() {
    let path = shared_file("external/hta/df_index_resolver/df_index_resolver.json.gz");
    let trace = read(&path);
    let start = std::time::Instant::now();
    let view = analyze_trace(&trace, &MemoryOptions::default());
    eprintln!("analysis: {:?}", start.elapsed());
    assert_eq!(view.records, 28_010);
    assert_eq!(view.records_with_addr, 28_010);
    let gpu = view.devices.iter().find(|d| d.device == "GPU1").unwrap();
    let peak = gpu.peak_allocated.as_ref().unwrap();
    assert_eq!(peak.bytes, 6_629_508_096);
    assert!(gpu.curve.points.len() <= 500);
    assert!(gpu
        .curve
        .points
        .iter()
        .any(|p| p.allocated_bytes == peak.bytes));
    let t = &gpu.allocations;
    assert_eq!(
        t.paired * 2 + t.unreleased + t.unmatched_frees,
        gpu.records as usize
    );
    eprintln!(
        "GPU1: {} records, peak {} B at {} ns in {:?} (parent {:?}); paired {}, unreleased {}, unmatched frees {}; {} operator rows",
        gpu.records, peak.bytes, peak.ts_ns - view.origin_ns, peak.op, peak.parent_op,
        t.paired, t.unreleased, t.unmatched_frees, gpu.operators_total
    );
}

/// Every sample trace in `../shared/samples` (recorded with `profile_memory=True`):
/// each record is in exactly one place of the allocation table, and the peak is the
/// largest `Total Allocated`.
#[test]
#[ignore = "reads shared/samples (KINETOSCOPE_SHARED); fails when it is missing"]
fn shared_samples_are_consistent() {
    let root = shared_file("samples");
    let dirs = std::fs::read_dir(&root).unwrap();
    let mut files: Vec<PathBuf> = dirs
        .flatten()
        .filter(|d| d.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with(".pt.trace.json.gz") || n.ends_with("_export.json.gz")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let trace = read(&path);
        let view = analyze_trace(&trace, &MemoryOptions::default());
        assert!(view.records > 0, "{}: no [memory] events", path.display());
        for d in &view.devices {
            let t = &d.allocations;
            let zero = trace
                .args
                .memory
                .iter()
                .filter(|m| m.bytes == 0 && trace.name(m.event) == "[memory]")
                .count();
            assert_eq!(
                t.paired * 2 + t.unreleased + t.unmatched_frees + t.skipped_without_addr + zero,
                d.records as usize,
                "{}",
                path.display()
            );
            let max_total = trace
                .args
                .memory
                .iter()
                .filter(|m| m.device_type == d.device_type && trace.name(m.event) == "[memory]")
                .map(|m| m.total_allocated)
                .max();
            assert_eq!(d.peak_allocated.as_ref().map(|p| p.bytes), max_total);
            assert!(d.curve.points.len() <= 500);
        }
        eprintln!(
            "{}: {} records, {} outside operators, peak {:?}",
            path.strip_prefix(&root).unwrap().display(),
            view.records,
            view.unattributed_records,
            view.devices
                .iter()
                .map(|d| d.peak_allocated.as_ref().map(|p| p.bytes))
                .collect::<Vec<_>>()
        );
    }
}
