//! Every security rule of `serve`, each with a request that would break it.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use kinetoscope_server::{ServeOptions, Server, MAX_HEAD_BYTES};

use crate::common::{copy, h100, hta, serve, Running};

fn one_trace() -> (tempfile::TempDir, Running) {
    let dir = tempfile::tempdir().unwrap();
    copy(&h100(), dir.path(), "w1.1700000000001.pt.trace.json.gz");
    let s = serve(&[dir.path().to_owned()]);
    (dir, s)
}

#[test]
fn the_default_address_is_loopback_and_the_url_carries_the_token() {
    assert!(ServeOptions::default().host.is_loopback());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::bind(&[dir.path().to_owned()], ServeOptions::default()).unwrap();
    assert!(server.addr().ip().is_loopback());
    assert_eq!(server.token().len(), 32);
    assert!(server
        .url()
        .ends_with(&format!("/?token={}", server.token())));
}

#[test]
fn every_request_needs_the_token() {
    let (_dir, s) = one_trace();
    for target in [
        "/",
        "/api/v1/runs",
        "/api/v1/runs/x/views/summary",
        "/nothing",
    ] {
        let none = s.raw(format!("GET {target} HTTP/1.1\r\n\r\n").as_bytes());
        assert_eq!(none.status, 401, "{target}");
        assert!(none.error().contains("token"));
        assert_eq!(none.header("www-authenticate"), Some("Bearer"));
        let wrong = s.raw(
            format!(
                "GET {target} HTTP/1.1\r\nAuthorization: Bearer {}\r\n\r\n",
                "0".repeat(32)
            )
            .as_bytes(),
        );
        assert_eq!(wrong.status, 403, "{target}");
        let wrong_query = s.raw(format!("GET {target}?token=abc HTTP/1.1\r\n\r\n").as_bytes());
        assert_eq!(wrong_query.status, 403, "{target}");
    }
    let page = s.raw(format!("GET /?token={} HTTP/1.1\r\n\r\n", s.token).as_bytes());
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(s.get("/api/v1/runs").status, 200);
}

#[test]
fn dot_dot_in_any_spelling_reaches_nothing() {
    let (_dir, s) = one_trace();
    for target in [
        "/../../etc/passwd",
        "/api/v1/runs/../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/api/v1/runs/%2e%2e%2f%2e%2e%2fetc%2fpasswd/views/summary",
        "/api/v1/runs/..%2F..%2Fetc/views/summary",
        "/api/v1/runs/x/views/summary?worker=../../etc/passwd",
    ] {
        let r = s.get(target);
        assert_eq!(
            r.status,
            404,
            "{target}: {}",
            String::from_utf8_lossy(&r.body)
        );
        assert!(!String::from_utf8_lossy(&r.body).contains("root:"));
    }
    let run = s.run_id(None);
    let r = s.get(&format!(
        "/api/v1/runs/{run}/views/summary?worker=..%2F..%2Fetc%2Fpasswd"
    ));
    assert_eq!(r.status, 404);
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_root_is_never_followed() {
    let outside = tempfile::tempdir().unwrap();
    let secret = copy(&h100(), outside.path(), "secret.pt.trace.json.gz");
    let root = tempfile::tempdir().unwrap();
    copy(&h100(), root.path(), "w1.1700000000001.pt.trace.json.gz");
    std::os::unix::fs::symlink(
        &secret,
        root.path().join("evil.1700000000002.pt.trace.json.gz"),
    )
    .unwrap();
    let s = serve(&[root.path().to_owned()]);
    let runs = s.get_json("/api/v1/runs");
    let workers = &runs["runs"][0]["workers"];
    assert_eq!(workers.as_array().unwrap().len(), 1, "{workers}");
    assert_eq!(workers[0]["id"], "w1");
    let run = s.run_id(None);
    // The whole folder would read the link: refused.
    let r = s.get(&format!("/api/v1/runs/{run}/views/summary"));
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.error().contains("outside"));
    let r = s.get(&format!("/api/v1/runs/{run}/timeline/tracks?worker=evil"));
    assert_eq!(r.status, 404);
    // The timeline of a link-free worker reads that file only: served. Its views may
    // read the files beside it (`memory` looks for its memory timeline): refused.
    let r = s.get(&format!("/api/v1/runs/{run}/timeline/tracks?worker=w1"));
    assert_eq!(r.status, 200);
    let r = s.get(&format!("/api/v1/runs/{run}/views/memory?worker=w1"));
    assert_eq!(r.status, 403);
}

#[test]
fn only_get_and_head_are_served() {
    let (_dir, s) = one_trace();
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
        let r = s.raw(
            format!(
                "{method} /api/v1/runs?token={} HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
                s.token
            )
            .as_bytes(),
        );
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("GET, HEAD"));
        r.error();
    }
    let head = s.raw(format!("HEAD /api/v1/runs?token={} HTTP/1.1\r\n\r\n", s.token).as_bytes());
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_ne!(head.header("content-length"), Some("0"));
}

#[test]
fn oversized_requests_are_refused_and_the_server_goes_on() {
    let (_dir, s) = one_trace();
    let long_target = format!("/api/v1/runs?x={}", "a".repeat(MAX_HEAD_BYTES));
    let r = s.raw(format!("GET {long_target} HTTP/1.1\r\n\r\n").as_bytes());
    assert_eq!(r.status, 414);
    r.error();
    let big_header = format!(
        "GET /api/v1/runs HTTP/1.1\r\nAuthorization: Bearer {}\r\nX-Pad: {}\r\n\r\n",
        s.token,
        "b".repeat(MAX_HEAD_BYTES)
    );
    assert_eq!(s.raw(big_header.as_bytes()).status, 431);
    assert_eq!(s.get("/api/v1/runs").status, 200);
}

#[test]
fn garbage_gets_a_4xx_and_the_next_request_is_answered() {
    let (_dir, s) = one_trace();
    let garbage: [&[u8]; 7] = [
        b"HELLO\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET /a b c HTTP/1.1\r\n\r\n",
        b"get / HTTP/1.1\r\n\r\n",
        b"GET / SPDY/9\r\n\r\n",
        b"GET /api/v1/runs HTTP/1.1\r\nno colon here\r\n\r\n",
        b"\xff\xfe\x00\x01\r\n\r\n",
    ];
    for g in garbage {
        let r = s.raw(g);
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(g));
        r.error();
        assert_eq!(s.get("/api/v1/runs").status, 200);
    }
    // A bad escape, bad numbers, unknown parameters: 400 with a message.
    let run = s.run_id(None);
    for target in [
        "/api/v1/runs%zz".to_owned(),
        format!("/api/v1/runs/{run}/views/ops?top=many"),
        format!("/api/v1/runs/{run}/views/ops?group_by=nope"),
        format!("/api/v1/runs/{run}/views/ops?nope=1"),
        format!("/api/v1/runs/{run}/timeline?width_px=-3"),
        format!("/api/v1/runs/{run}/timeline?start_ns=10&end_ns=5"),
        format!("/api/v1/runs/{run}/timeline?tracks=1,x"),
        format!("/api/v1/runs/{run}/events/abc"),
        format!("/api/v1/runs/{run}/search"),
    ] {
        let r = s.get(&target);
        assert_eq!(
            r.status,
            400,
            "{target}: {}",
            String::from_utf8_lossy(&r.body)
        );
        r.error();
    }
}

#[test]
fn a_slow_client_does_not_block_others() {
    let (_dir, s) = one_trace();
    // Several clients that send half a request line and wait.
    let slow: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr).unwrap();
            c.write_all(b"GET /api/v1/ru").unwrap();
            c
        })
        .collect();
    let start = Instant::now();
    assert_eq!(s.get("/api/v1/runs").status, 200);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "answered while slow clients wait"
    );
    drop(slow);
}

#[cfg(unix)]
#[test]
fn special_files_are_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("w2.1700000000003.pt.trace.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    match Server::bind(std::slice::from_ref(&fifo), ServeOptions::default()) {
        Err(e) => assert!(e.contains("special"), "{e}"),
        Ok(_) => panic!("a FIFO given as a path is refused"),
    }
    copy(&h100(), dir.path(), "w1.1700000000001.pt.trace.json.gz");
    let s = serve(&[dir.path().to_owned()]);
    let run = s.run_id(None);
    // The folder's views skip the FIFO (reading it would block for ever).
    let doc = s.get_json(&format!("/api/v1/runs/{run}/views/summary"));
    assert_eq!(doc["traces"].as_array().unwrap().len(), 1);
    assert!(doc["skipped"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with(".pt.trace.json"));
}

#[test]
fn a_file_given_alone_is_served_beside_other_files_but_not_beside_a_link_out() {
    let dir = tempfile::tempdir().unwrap();
    let trace = copy(&h100(), dir.path(), "w1.1700000000001.pt.trace.json.gz");
    copy(&hta(), dir.path(), "other.1700000000002.pt.trace.json.gz");
    let s = serve(std::slice::from_ref(&trace));
    let run = s.run_id(None);
    for view in ["summary", "memory"] {
        let r = s.get(&format!("/api/v1/runs/{run}/views/{view}"));
        assert_eq!(
            r.status,
            200,
            "{view}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
    // A link beside it that leaves its folder is something `memory` would read: refused.
    let outside = tempfile::tempdir().unwrap();
    let secret = copy(&h100(), outside.path(), "secret_memory_timeline.json");
    std::os::unix::fs::symlink(&secret, dir.path().join("x_memory_timeline.json")).unwrap();
    let r = s.get(&format!("/api/v1/runs/{run}/views/memory"));
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
}
