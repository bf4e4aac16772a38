//! `kinetoscope serve`: the local web UI's server. It lists the runs under the paths
//! given (as TensorBoard's `--logdir` did), answers every view with the document the
//! CLI's `--format json` prints, and answers the timeline's window queries with
//! level-of-detail data, all from one engine [`Session`] that keeps loaded traces in
//! memory (docs/api.md).
//!
//! Security (docs/security.md): it binds 127.0.0.1 unless told otherwise; every request
//! carries a random 128-bit token; it only reads what lies under the paths given (no
//! `..`: requests name runs by id, never by path; links out of a root refused; special
//! files never opened); it is read-only (GET and HEAD, 405 otherwise); request heads are
//! capped in size and time, and a few worker threads serve connections, so one slow or
//! malformed client holds one worker for at most its deadline and gets a 4xx.
//!
//! The HTTP layer (`http.rs`) is a small HTTP/1.1 server on the standard library
//! rather than a crate: the small crates (`tiny_http`) read request heads with no size
//! cap and no timeout, which this server must have; the complete ones (`hyper`, `axum`)
//! would add an async runtime and minutes of compile time for a GET-only, one-request-
//! per-connection, localhost server.

mod api;
mod catalog;
mod error;
mod http;
mod params;
mod token;
mod views;

pub use http::{HEAD_DEADLINE, MAX_HEAD_BYTES};

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;

use kinetoscope_engine::{Engine, Session};

/// How to serve.
#[derive(Clone)]
pub struct ServeOptions {
    /// The address to bind (127.0.0.1 by default).
    pub host: IpAddr,
    /// The port (0: any free port).
    pub port: u16,
    /// Worker threads answering requests.
    pub workers: usize,
    /// Most bytes of loaded traces (models and timeline indexes) kept in memory.
    pub max_loaded_bytes: u64,
    /// Most bytes of computed documents kept.
    pub max_document_bytes: u64,
    /// The engine (read options, progress).
    pub engine: Engine,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            workers: 8,
            max_loaded_bytes: 8 << 30,
            max_document_bytes: 256 << 20,
            engine: Engine::default(),
        }
    }
}

/// A server bound to its address, ready to run.
pub struct Server {
    listener: TcpListener,
    app: Arc<api::App>,
    workers: usize,
}

impl Server {
    /// Resolve `paths` and bind (nothing is read yet).
    pub fn bind(paths: &[PathBuf], opts: ServeOptions) -> Result<Self, String> {
        if paths.is_empty() {
            return Err("give at least one trace, folder or log dir to serve".to_owned());
        }
        let catalog = catalog::Catalog::new(paths)?;
        let listener = TcpListener::bind(SocketAddr::new(opts.host, opts.port))
            .map_err(|e| format!("cannot listen on {}:{}: {e}", opts.host, opts.port))?;
        let app = api::App {
            catalog,
            session: Session::new(opts.engine, opts.max_loaded_bytes, opts.max_document_bytes),
            token: token::Token::random()?,
        };
        Ok(Self {
            listener,
            app: Arc::new(app),
            workers: opts.workers,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The token requests must carry.
    pub fn token(&self) -> &str {
        self.app.token.as_str()
    }

    /// The page's URL, token included.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr(), self.token())
    }

    /// Serve until the process ends.
    pub fn run(self) {
        let app = self.app.clone();
        http::serve(
            self.listener,
            self.workers,
            Arc::new(move |r| app.handle(r)),
        );
    }
}
