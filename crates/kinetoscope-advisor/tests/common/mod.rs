//! A small builder for inline GPU traces: steps, operators, and kernels launched from
//! them (runtime call + kernel linked by correlation and External id).

#![allow(dead_code)]

use std::path::Path;

use kinetoscope_advisor::{advise_trace, Config, TraceReport};
use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};

/// An H100 (compute capability 9.0, 132 SMs).
pub const H100: &str = r#"{"id":0,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":85899345920,"computeMajor":9,"computeMinor":0,"numSms":132,"maxThreadsPerMultiProcessor":2048}"#;

/// Events of a trace under construction; times in µs.
#[derive(Default)]
pub struct TraceBuilder {
    events: Vec<String>,
    next_id: u64,
    /// Extra top-level keys (`"distributedInfo":{...}`), comma-joined.
    pub top: Vec<String>,
}

impl TraceBuilder {
    pub fn new() -> Self {
        Self {
            next_id: 1,
            ..Self::default()
        }
    }

    /// A `ProfilerStep#n` annotation.
    pub fn step(&mut self, n: u64, ts: u64, dur: u64) {
        self.events.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":100,"tid":100,"ts":{ts},"dur":{dur}}}"#
        ));
    }

    /// A `cpu_op` with extra args (a JSON object body without braces, may be empty);
    /// returns its External id.
    pub fn op(&mut self, name: &str, ts: u64, dur: u64, args: &str) -> u64 {
        let ext = self.next_id;
        self.next_id += 1;
        let sep = if args.is_empty() { "" } else { "," };
        self.events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":100,"tid":100,"ts":{ts},"dur":{dur},"args":{{"External id":{ext}{sep}{args}}}}}"#
        ));
        ext
    }

    /// A kernel launched at `launch_ts` (inside the operator with External id `ext`),
    /// running `[k_ts, k_ts + k_dur)`, with extra kernel args.
    pub fn kernel(
        &mut self,
        ext: u64,
        launch_ts: u64,
        name: &str,
        k_ts: u64,
        k_dur: u64,
        args: &str,
    ) {
        let corr = 10_000 + self.next_id;
        self.next_id += 1;
        self.events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":{launch_ts},"dur":2,"args":{{"External id":{ext},"correlation":{corr}}}}}"#
        ));
        let sep = if args.is_empty() { "" } else { "," };
        self.events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{k_ts},"dur":{k_dur},"args":{{"External id":{ext},"correlation":{corr},"device":0,"stream":7{sep}{args}}}}}"#
        ));
    }

    /// A `[memory]` record on GPU 0 with the totals after it, bytes.
    pub fn memory(&mut self, ts: u64, allocated: u64, reserved: u64) {
        let addr = 4096 + self.next_id;
        self.next_id += 1;
        self.events.push(format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":100,"tid":100,"ts":{ts},"args":{{"Device Type":1,"Device Id":0,"Addr":{addr},"Bytes":1024,"Total Allocated":{allocated},"Total Reserved":{reserved}}}}}"#
        ));
    }

    /// The trace's JSON with the given `deviceProperties` entries.
    pub fn json(&self, devices: &[&str]) -> String {
        let mut top = String::new();
        for t in &self.top {
            top.push_str(t);
            top.push(',');
        }
        format!(
            r#"{{"schemaVersion":1,{top}"deviceProperties":[{}],"traceEvents":[{}]}}"#,
            devices.join(","),
            self.events.join(",\n")
        )
    }

    /// Read the trace and run the advisor.
    pub fn report(&self, devices: &[&str], config: &Config) -> TraceReport {
        let text = self.json(devices);
        let trace = read_trace_bytes(
            Path::new("inline.json"),
            text.as_bytes(),
            &ReadOptions::default(),
        )
        .expect("inline trace reads");
        advise_trace(&trace, config)
    }
}
