//! The PARAM job of `../shared` (the original of the fixture): merged in every format,
//! decoded and compared with the models. Ignored: run with `--ignored`; fails when
//! `/work/shared` is missing.

use std::path::PathBuf;
use std::time::Instant;

use kinetoscope_engine::Align;
use kinetoscope_export::merge::{write_merged, Format};

use crate::common::{decode_trace, inputs, merge_set, written};

fn shared_param() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/external/param/dlrm_kineto");
    assert!(
        dir.is_dir(),
        "{} is missing: these tests need ../shared",
        dir.display()
    );
    dir
}

#[test]
#[ignore = "needs ../shared"]
fn shared_param_job_merges_in_every_format() {
    let started = Instant::now();
    let set = merge_set(&shared_param(), Align::Auto);
    assert_eq!(set.ranks.len(), 8);
    let read = started.elapsed();
    for format in [Format::Json, Format::JsonGz, Format::Pftrace] {
        let t = Instant::now();
        let mut out = Vec::new();
        let stats = write_merged(&inputs(&set), format, &mut out).expect("writes");
        let total: usize = set
            .ranks
            .iter()
            .map(|r| {
                let w = written(&r.trace, r.offset_ns);
                w.spans.len() + w.instants.len()
            })
            .sum();
        assert_eq!(stats.events as usize, total);
        if format == Format::Pftrace {
            let packets = decode_trace(&out);
            assert!(packets.get_field_by_name("packet").is_some());
        }
        eprintln!(
            "{format:?}: {} bytes in {:?} (read {read:?})",
            out.len(),
            t.elapsed()
        );
    }
}
