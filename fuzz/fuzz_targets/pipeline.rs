//! The whole pipeline on arbitrary bytes: whatever the reader accepts, every view and the
//! advisor must take without a panic (an out-of-range index, an overflow, a division).
#![no_main]

use std::sync::Arc;

use kinetoscope_advisor::Config;
use kinetoscope_analysis::critical_path::CriticalPathOptions;
use kinetoscope_analysis::gpu_time::Compat;
use kinetoscope_engine::{
    CommOptions, Engine, KernelsOptions, MemoryOptions, OpsOptions, RanksOptions, ReadOptions,
    Source,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let engine = Engine::new(ReadOptions {
        threads: 1,
        ..ReadOptions::default()
    });
    let src = Source::Bytes {
        name: "fuzz.json".into(),
        data: Arc::from(data),
    };
    if engine.summary(&src).is_err() {
        return;
    }
    let _ = engine.report(&src, &Config::default());
    let _ = engine.overview(&src);
    let _ = engine.ops(&src, &OpsOptions::default());
    let _ = engine.kernels(&src, &KernelsOptions::default());
    let _ = engine.comm(&src, CommOptions::default());
    let _ = engine.ranks(&src, RanksOptions::default());
    for compat in [Compat::Kinetoscope, Compat::Hta] {
        let _ = engine.temporal(&src, compat);
    }
    let _ = engine.critical_path(&src, CriticalPathOptions::default());
    let _ = engine.memory(&src, &MemoryOptions::default());
});
