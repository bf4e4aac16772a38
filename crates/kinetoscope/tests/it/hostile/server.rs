//! Hostile traces behind `kinetoscope serve`: a truncated gzip, broken JSON, a binary
//! file named like a trace, and names full of control characters sit beside a good
//! trace. Each request gets a 200 or a 4xx whose JSON names the file, never a dropped
//! connection, and the server goes on answering; no raw control byte reaches a body.

use std::io::Write;

use crate::common::{fixtures, Served};

fn gzip_truncated(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    let mut gz = enc.finish().unwrap();
    gz.truncate(gz.len() / 2);
    gz
}

#[test]
fn hostile_traces_get_a_4xx_naming_the_file_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("ranks/sampled_rank-0.json.gz");
    std::fs::copy(&good, dir.path().join("good.json.gz")).unwrap();
    let events: String = (0..2000)
        .map(|i| {
            format!(
                r#"{{"ph":"X","name":"op\u001b[31m\u202e{i}","cat":"cpu_op","pid":1,"tid":1,"ts":{i},"dur":1}},"#
            )
        })
        .collect();
    let text = format!(
        r#"{{"traceEvents":[{events}{{"ph":"X","name":"end","pid":1,"tid":1,"ts":5000,"dur":1}}]}}"#
    );
    std::fs::write(dir.path().join("controls.json"), &text).unwrap();
    std::fs::write(
        dir.path().join("truncated.json.gz"),
        gzip_truncated(text.as_bytes()),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("broken.json"),
        r#"{"traceEvents":[{"ph":"X","ts":"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("binary.json"),
        [0u8, 159, 146, 150, 255, 0, 1],
    )
    .unwrap();
    let s = Served::start(&[], &[dir.path()]);
    let run = s.first_run();
    for worker in ["good", "controls", "truncated", "broken", "binary"] {
        for target in [
            format!("/api/v1/runs/{run}/timeline/tracks?worker={worker}"),
            format!("/api/v1/runs/{run}/timeline?worker={worker}&width_px=300"),
            format!("/api/v1/runs/{run}/search?worker={worker}&q=op"),
            format!("/api/v1/runs/{run}/views/summary?worker={worker}"),
        ] {
            let (status, body) = s.get(&target);
            let text = String::from_utf8_lossy(&body);
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{target}: a raw control character in {text}"
            );
            // Lenient reading keeps what a damaged trace holds (and counts the defects):
            // the truncated and broken ones may be read; the binary one never is.
            match (worker, status) {
                ("good" | "controls", _) => assert_eq!(status, 200, "{target}: {text}"),
                ("truncated" | "broken", 200) => {}
                _ => {
                    assert!((400..500).contains(&status), "{target}: {status} {text}");
                    let v: serde_json::Value = serde_json::from_slice(&body).expect("JSON error");
                    let message = v["error"]["message"].as_str().unwrap();
                    assert!(message.contains(worker), "{target}: {message}");
                }
            }
            assert_eq!(
                s.get("/api/v1/runs").0,
                200,
                "the server goes on after {target}"
            );
        }
    }
    // The whole folder: what can be read is, the rest is listed as errors.
    let doc = s.get_json(&format!("/api/v1/runs/{run}/views/summary"));
    let (read, failed) = (
        doc["traces"].as_array().unwrap().len(),
        doc["errors"].as_array().unwrap().len(),
    );
    assert_eq!(read + failed, 5, "{doc}");
    assert!(read >= 2 && failed >= 1, "{doc}");
}
