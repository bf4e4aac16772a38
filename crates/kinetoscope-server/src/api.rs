//! The routes: every request is checked (method, token, target) and answered from the
//! catalog of runs and the engine session, one engine call per request.

use std::path::PathBuf;

use kinetoscope_advisor::Config;
use kinetoscope_analysis::timeline::WindowQuery;
use kinetoscope_engine::input::files_read;
use kinetoscope_engine::{to_json, to_json_compact, DiffOptions, Session, Source};
use serde::Serialize;

use crate::catalog::{Catalog, Run, RunInfo};
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::params::{Query, Target};
use crate::token::Token;
use crate::views::{self, VIEWS};

/// Selecting a run's worker and span.
const SIDE: [&str; 2] = ["worker", "span"];

/// What every request is answered from.
pub struct App {
    /// The runs under the paths served.
    pub catalog: Catalog,
    /// Traces loaded, documents computed.
    pub session: Session,
    /// The access token.
    pub token: Token,
}

impl App {
    /// Answer one request; never panics on what a client sends.
    pub fn handle(&self, req: &Request) -> Response {
        match self.route(req) {
            Ok(r) => r,
            Err(e) => {
                let mut r = e.response();
                if e.status == 405 {
                    r.headers.push(("Allow", "GET, HEAD".to_owned()));
                }
                if e.status == 401 {
                    r.headers.push(("WWW-Authenticate", "Bearer".to_owned()));
                }
                r
            }
        }
    }

    fn route(&self, req: &Request) -> Result<Response, ApiError> {
        if req.method != "GET" && req.method != "HEAD" {
            return Err(ApiError::new(
                405,
                "read-only: only GET and HEAD are served",
            ));
        }
        let target = Target::parse(&req.target)?;
        self.authorize(req, &target.query)?;
        let q = &target.query;
        let seg: Vec<&str> = target.segments.iter().map(String::as_str).collect();
        match seg.as_slice() {
            [] => {
                q.only(&[])?;
                Ok(Response {
                    status: 200,
                    content_type: "text/html; charset=utf-8",
                    body: kinetoscope_report::web::web_app_html().into_bytes(),
                    headers: vec![(
                        "Content-Security-Policy",
                        "default-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:"
                            .to_owned(),
                    )],
                })
            }
            ["api", "v1", "runs"] => {
                q.only(&[])?;
                let runs: Vec<RunInfo> = self.catalog.scan().into_iter().map(|r| r.info).collect();
                json(&RunList { runs })
            }
            ["api", "v1", "diff"] => self.diff(q),
            ["api", "v1", "runs", run, rest @ ..] => {
                let run = self.catalog.run(run)?;
                self.run_route(&run, rest, q)
            }
            _ => Err(ApiError::not_found("no such page or endpoint")),
        }
    }

    /// The token from `Authorization: Bearer`, else `?token=`: 401 when absent, 403
    /// when wrong.
    fn authorize(&self, req: &Request, q: &Query) -> Result<(), ApiError> {
        let bearer = req
            .header("authorization")
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim);
        match bearer.or(q.token()) {
            None => Err(ApiError::new(
                401,
                "a token is needed: open the URL that `kinetoscope serve` printed",
            )),
            Some(t) if self.token.matches(t) => Ok(()),
            Some(_) => Err(ApiError::new(403, "wrong token")),
        }
    }

    fn run_route(&self, run: &Run, rest: &[&str], q: &Query) -> Result<Response, ApiError> {
        let worker = q.get("worker");
        let span = q.get("span");
        match rest {
            ["views", view] => {
                if !VIEWS.contains(view) {
                    return Err(ApiError::not_found(format!(
                        "no view {view:?} (views: {})",
                        VIEWS.join(", ")
                    )));
                }
                q.only(&[&SIDE[..], views::options_of(view)].concat())?;
                let path = run.target(worker, span)?;
                let key = format!("{}/{view}?{}", run.info.id, q.key());
                let text = self.session.document(&key, &files_read(&path), |engine| {
                    views::document(engine, view, &path, q)
                })?;
                Ok(json_text(text.as_bytes().to_vec()))
            }
            ["timeline", "tracks"] => {
                q.only(&SIDE)?;
                let path = run.trace(worker, span)?;
                json(&self.session.timeline_tracks(&path)?)
            }
            ["timeline"] => {
                q.only(&[&SIDE[..], &["start_ns", "end_ns", "width_px", "tracks"]].concat())?;
                let path = run.trace(worker, span)?;
                let window = self.window_query(&path, q)?;
                json(&self.session.timeline_window(&path, &window)?)
            }
            ["events", event] => {
                q.only(&SIDE)?;
                let id: u64 = event
                    .parse()
                    .map_err(|_| ApiError::bad_request(format!("{event:?}: not an event id")))?;
                let path = run.trace(worker, span)?;
                json(&self.session.timeline_event(&path, id)?)
            }
            ["search"] => {
                q.only(&[&SIDE[..], &["q", "limit"]].concat())?;
                let text = q.get("q").filter(|t| !t.is_empty());
                let text = text.ok_or_else(|| ApiError::bad_request("q= is needed"))?;
                let limit = q.parse("limit", 100usize)?;
                let path = run.trace(worker, span)?;
                json(&self.session.timeline_search(&path, text, limit)?)
            }
            _ => Err(ApiError::not_found("no such endpoint for a run")),
        }
    }

    /// The window asked: the whole timeline unless `start_ns`/`end_ns` say otherwise,
    /// 1600 px unless `width_px` does, every track unless `tracks` lists some.
    fn window_query(&self, path: &std::path::Path, q: &Query) -> Result<WindowQuery, ApiError> {
        let tracks = self.session.timeline_tracks(path)?;
        let tracks_asked = match q.get("tracks").filter(|t| !t.is_empty()) {
            None => None,
            Some(list) => Some(
                list.split(',')
                    .map(|t| {
                        t.trim().parse::<u32>().map_err(|_| {
                            ApiError::bad_request(format!("tracks: {t:?} is not a track id"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(WindowQuery {
            start_ns: q.parse("start_ns", 0i64)?,
            end_ns: q.parse("end_ns", tracks.t1_ns.saturating_add(1))?,
            width_px: q.parse("width_px", 1600u32)?,
            tracks: tracks_asked,
        })
    }

    /// `GET /api/v1/diff?base=RUN&new=RUN` (with `base_worker`, `base_span`,
    /// `new_worker`, `new_span`): the diff document.
    fn diff(&self, q: &Query) -> Result<Response, ApiError> {
        q.only(&[
            "base",
            "new",
            "base_worker",
            "base_span",
            "new_worker",
            "new_span",
        ])?;
        let side = |name: &str| -> Result<PathBuf, ApiError> {
            let id = q
                .get(name)
                .ok_or_else(|| ApiError::bad_request(format!("{name}= is needed")))?;
            let run = self.catalog.run(id)?;
            run.target(
                q.get(&format!("{name}_worker")),
                q.get(&format!("{name}_span")),
            )
        };
        let (base, new) = (side("base")?, side("new")?);
        let mut files = files_read(&base);
        files.extend(files_read(&new));
        let key = format!("diff?{}", q.key());
        let text = self.session.document(&key, &files, |engine| {
            let config = Config::from_toml("", &[]).map_err(ApiError::bad_request)?;
            let doc = engine.diff(
                &Source::Path(base.clone()),
                &Source::Path(new.clone()),
                &config,
                &DiffOptions::default(),
            )?;
            to_json(&doc).map_err(|e| ApiError::new(500, e.to_string()))
        })?;
        Ok(json_text(text.as_bytes().to_vec()))
    }
}

/// The runs listing.
#[derive(Serialize)]
struct RunList {
    runs: Vec<RunInfo>,
}

/// A value as compact JSON, strings escaped as in every document (the timeline's
/// answers and the run list; the views' documents are the CLI's text).
fn json<T: Serialize>(value: &T) -> Result<Response, ApiError> {
    let body = to_json_compact(value).map_err(|e| ApiError::new(500, e.to_string()))?;
    Ok(json_text(body.into_bytes()))
}

fn json_text(body: Vec<u8>) -> Response {
    Response {
        status: 200,
        content_type: "application/json",
        body,
        headers: Vec::new(),
    }
}
