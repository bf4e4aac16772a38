//! `kinetoscope serve`: the first line is the URL with its token, the API's views are
//! the CLI's `--format json` documents for the same input, `--host` warns.

use std::path::Path;

use crate::common::{fixtures, json, Served};

#[test]
fn the_first_line_is_the_url_and_views_equal_the_cli_json() {
    let dir = fixtures().join("ranks").canonicalize().unwrap();
    let s = Served::start(&[], &[&dir]);
    assert!(s.url.starts_with("http://127.0.0.1:"), "{}", s.url);
    assert_eq!(s.token.len(), 32);
    assert!(s.token.bytes().all(|b| b.is_ascii_hexdigit()));
    let run = s.first_run();
    let cwd = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir_s = dir.to_str().unwrap();
    for (target, args) in [
        (
            format!("/api/v1/runs/{run}/views/overview"),
            vec!["overview", dir_s],
        ),
        (
            format!("/api/v1/runs/{run}/views/ranks"),
            vec!["ranks", dir_s],
        ),
        (
            format!("/api/v1/runs/{run}/views/ops?group_by=shape&top=5&sort=calls"),
            vec![
                "ops",
                dir_s,
                "--group-by",
                "shape",
                "--top",
                "5",
                "--sort",
                "calls",
            ],
        ),
        (
            format!("/api/v1/runs/{run}/views/kernels?group_by=properties"),
            vec!["kernels", dir_s, "--group-by", "properties"],
        ),
        (
            format!("/api/v1/runs/{run}/views/report"),
            vec!["report", dir_s],
        ),
    ] {
        let api = s.get_json(&target);
        let mut cli_args = args.clone();
        cli_args.extend(["--format", "json"]);
        assert_eq!(api, json(cwd, &cli_args), "{target}");
    }
    // One worker: the CLI on that file.
    let runs = s.get_json("/api/v1/runs");
    let worker = runs["runs"][0]["workers"][1]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let file = dir.join(format!("{worker}.json.gz"));
    assert!(file.is_file(), "{}", file.display());
    let api = s.get_json(&format!("/api/v1/runs/{run}/views/summary?worker={worker}"));
    assert_eq!(
        api,
        json(
            cwd,
            &["summary", file.to_str().unwrap(), "--format", "json"]
        )
    );
}

#[test]
fn another_host_is_warned_about() {
    let dir = fixtures().join("ranks");
    let mut s = Served::start(&["--host", "0.0.0.0"], &[&dir]);
    assert!(s.url.starts_with("http://0.0.0.0:"), "{}", s.url);
    let warning = s.stderr_line();
    assert!(
        warning.starts_with("warning: listening on 0.0.0.0"),
        "{warning}"
    );
    let mut local = Served::start(&[], &[&dir]);
    assert!(!local.stderr_line().starts_with("warning"));
}

#[test]
fn a_missing_path_is_an_error_before_listening() {
    let r = crate::common::kinetoscope(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["serve", "--port", "0", "/no/such/dir"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("/no/such/dir"), "{}", r.stderr);
}
