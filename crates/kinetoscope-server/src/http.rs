//! A small HTTP/1.1 server on the standard library: one accepting thread hands
//! connections to a few worker threads through a bounded queue; each connection carries
//! one request (`Connection: close`), whose head is read with a size cap and a deadline;
//! bodies are never read. Whatever a client sends, it gets a status line or a closed
//! socket, and the other connections go on.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest request head read (request line and headers); larger gets 431 / 414.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// The longest a client may take to send its request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// The longest one write of the response may block on a client that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections waiting for a worker; more are answered 503 at once.
const QUEUE: usize = 64;

/// A parsed request head.
#[derive(Debug)]
pub struct Request {
    /// The method, as sent.
    pub method: String,
    /// The request target (path and query), as sent.
    pub target: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response to send.
#[derive(Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// Body (left out for `HEAD`).
    pub body: Vec<u8>,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
}

/// Serve `listener` with `workers` threads calling `handle` for each request; returns
/// when the listener fails.
pub fn serve(
    listener: TcpListener,
    workers: usize,
    handle: Arc<dyn Fn(&Request) -> Response + Send + Sync>,
) {
    let (tx, rx) = sync_channel::<TcpStream>(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..workers.max(1) {
        let rx = rx.clone();
        let handle = handle.clone();
        std::thread::spawn(move || worker(&rx, &*handle));
    }
    accept(&listener, &tx);
}

fn accept(listener: &TcpListener, tx: &SyncSender<TcpStream>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if let Err(TrySendError::Full(mut s)) = tx.try_send(stream) {
            let busy = error_response(503, "the server is busy; try again");
            let _ = write_response(&mut s, &busy, false);
        }
    }
}

fn worker(rx: &Mutex<Receiver<TcpStream>>, handle: &(dyn Fn(&Request) -> Response + Sync)) {
    loop {
        let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(mut stream) = next else { return };
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        let (response, head_only) = match read_head(&stream) {
            Ok(req) => {
                let head_only = req.method == "HEAD";
                // A bug must not take a worker down with it.
                let answer =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(&req)));
                let answer = answer.unwrap_or_else(|_| error_response(500, "internal error"));
                (answer, head_only)
            }
            Err(Some(status)) => (error_response(status, status_text(status)), false),
            Err(None) => continue,
        };
        let _ = write_response(&mut stream, &response, head_only);
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

/// Read and parse a request head within [`MAX_HEAD_BYTES`] and [`HEAD_DEADLINE`]:
/// `Err(Some(status))` for a request to refuse, `Err(None)` when the client went away
/// or timed out.
fn read_head(stream: &TcpStream) -> Result<Request, Option<u16>> {
    let start = Instant::now();
    let mut reader = BufReader::new(Deadline { stream, start });
    let mut lines: Vec<String> = Vec::new();
    let mut total = 0usize;
    loop {
        let mut line = Vec::new();
        let room = (MAX_HEAD_BYTES - total) as u64 + 1;
        let n = (&mut reader)
            .take(room)
            .read_until(b'\n', &mut line)
            .map_err(|_| None)?;
        if n == 0 {
            return Err(if lines.is_empty() { None } else { Some(400) });
        }
        total += n;
        if total > MAX_HEAD_BYTES {
            return Err(Some(if lines.is_empty() { 414 } else { 431 }));
        }
        let text = String::from_utf8(line).map_err(|_| Some(400))?;
        let text = text.trim_end_matches(['\r', '\n']).to_owned();
        if text.is_empty() {
            break;
        }
        lines.push(text);
    }
    parse_head(&lines).ok_or(Some(400))
}

/// The request line and headers, or `None` when malformed.
fn parse_head(lines: &[String]) -> Option<Request> {
    let (first, rest) = lines.split_first()?;
    let mut parts = first.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_uppercase());
    if parts.next().is_some() || !token(method) || !version.starts_with("HTTP/1.") {
        return None;
    }
    if !target.starts_with('/') || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return None;
    }
    let mut headers = Vec::with_capacity(rest.len());
    for h in rest {
        let (name, value) = h.split_once(':')?;
        if name.is_empty() || name.bytes().any(|b| b <= b' ') {
            return None;
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    Some(Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
    })
}

/// A stream whose reads fail once the head's deadline has passed.
struct Deadline<'a> {
    stream: &'a TcpStream,
    start: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = HEAD_DEADLINE
            .checked_sub(self.start.elapsed())
            .filter(|d| !d.is_zero())
            .ok_or(std::io::ErrorKind::TimedOut)?;
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

fn write_response(stream: &mut TcpStream, r: &Response, head_only: bool) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Referrer-Policy: no-referrer\r\n",
        r.status,
        status_text(r.status),
        r.content_type,
        r.body.len()
    );
    for (name, value) in &r.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(&r.body)?;
    }
    stream.flush()
}

/// A JSON error response: `{"error": {"status": N, "message": "..."}}`.
pub fn error_response(status: u16, message: &str) -> Response {
    let body = serde_json::json!({"error": {"status": status, "message": message}});
    Response {
        status,
        content_type: "application/json",
        body: body.to_string().into_bytes(),
        headers: Vec::new(),
    }
}

/// The reason phrase of a status.
pub fn status_text(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        414 => "URI Too Long",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}
