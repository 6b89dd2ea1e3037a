//! The HTTP listener: hyper's HTTP/1 connections with hyper-util's Tokio timer, so that a
//! request's header must arrive within `--header-timeout` and a kept-alive connection waiting for
//! its next request is closed after as long (hyper runs the same timer then), and an accept loop
//! of our own that caps connections in total and per client address: axum::serve sets no timer
//! and takes every connection, and no maintained crate caps connections per address or takes back
//! idle ones. A connection beyond a cap closes the oldest idle one (no request in flight: a header
//! still arriving, or a keep-alive wait), so half-open connections cannot keep a real request
//! out; when every connection is busy the new one gets 503 (in total) or 429 (per address).
//!
//! Each request then passes the Host and Origin checks (guard.rs) and has its body read whole,
//! within the same timeout and at most MAX_BODY bytes, before the router sees it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tower::ServiceExt;

use crate::app::{self, App};
use crate::config::Limits;
use crate::guard;
use crate::limits::Gate;

/// A request body larger than this is refused (413), as axum's default limit does.
pub const MAX_BODY: usize = 2 * 1024 * 1024;
/// Connections being refused (answered 503 or 429, then closed) at once; beyond, closed at once.
const REFUSING: usize = 16;

/// A connection the table knows: its client address, when it opened, how many of its requests
/// are in flight (a response still being sent counts), and how to close it.
struct Entry {
    ip: IpAddr,
    opened: Instant,
    busy: Arc<AtomicUsize>,
    close: oneshot::Sender<()>,
}

#[derive(Default)]
struct Table {
    next: u64,
    conns: HashMap<u64, Entry>,
    per_ip: HashMap<IpAddr, usize>,
}

impl Table {
    fn remove(&mut self, id: u64) -> Option<Entry> {
        let e = self.conns.remove(&id)?;
        if let Some(n) = self.per_ip.get_mut(&e.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&e.ip);
            }
        }
        Some(e)
    }

    /// Closes the oldest idle connection among those `pick` chooses; false when none is idle.
    fn evict(&mut self, pick: impl Fn(&Entry) -> bool) -> bool {
        let oldest = self
            .conns
            .iter()
            .filter(|(_, e)| pick(e) && e.busy.load(Ordering::Acquire) == 0)
            .min_by_key(|(_, e)| e.opened)
            .map(|(id, _)| *id);
        match oldest.and_then(|id| self.remove(id)) {
            Some(e) => {
                let _ = e.close.send(());
                true
            }
            None => false,
        }
    }
}

/// The open connections, capped in total and per client address.
pub struct Conns {
    table: Mutex<Table>,
    total: usize,
    per_ip: usize,
}

/// A connection's place in the table; leaves it when dropped.
struct Place {
    id: u64,
    conns: Arc<Conns>,
    busy: Arc<AtomicUsize>,
    closed: Option<oneshot::Receiver<()>>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.conns.table.lock().unwrap().remove(self.id);
    }
}

/// An IPv4 client seen through an IPv6 socket is that IPv4 address.
fn client(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

impl Conns {
    pub fn new(total: usize, per_ip: usize) -> Arc<Conns> {
        Arc::new(Conns { table: Mutex::new(Table::default()), total, per_ip })
    }

    /// A place for a new connection from `ip`, made by closing an idle one when a cap is reached;
    /// the status to refuse it with when every connection in the way is busy.
    fn admit(self: &Arc<Conns>, ip: IpAddr) -> Result<Place, StatusCode> {
        let ip = client(ip);
        let mut t = self.table.lock().unwrap();
        if t.per_ip.get(&ip).copied().unwrap_or(0) >= self.per_ip && !t.evict(|e| e.ip == ip) {
            return Err(StatusCode::TOO_MANY_REQUESTS);
        }
        if t.conns.len() >= self.total && !t.evict(|_| true) {
            return Err(StatusCode::SERVICE_UNAVAILABLE);
        }
        t.next += 1;
        let id = t.next;
        let busy = Arc::new(AtomicUsize::new(0));
        let (close, closed) = oneshot::channel();
        t.conns.insert(id, Entry { ip, opened: Instant::now(), busy: busy.clone(), close });
        *t.per_ip.entry(ip).or_default() += 1;
        Ok(Place { id, conns: self.clone(), busy, closed: Some(closed) })
    }

    pub fn open(&self) -> usize {
        self.table.lock().unwrap().conns.len()
    }
}

/// Counts a request in flight on its connection until dropped (with the response's body).
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn new(n: Arc<AtomicUsize>) -> Busy {
        n.fetch_add(1, Ordering::AcqRel);
        Busy(n)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted as in flight until it is sent or dropped.
struct Tracked {
    inner: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

pub fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut r = (status, text).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// A refusal of a request whose body was not read whole: the connection cannot carry another.
fn closing(status: StatusCode, text: &'static str) -> Response {
    let mut r = plain(status, text);
    r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The body, whole: within `within`, at most MAX_BODY bytes.
async fn read_body(body: Incoming, within: Duration) -> Result<Body, Response> {
    if http_body::Body::is_end_stream(&body) {
        return Ok(Body::empty());
    }
    match tokio::time::timeout(within, http_body_util::Limited::new(body, MAX_BODY).collect()).await {
        Err(_) => Err(closing(StatusCode::REQUEST_TIMEOUT, "request timeout: the request's body did not arrive in time\n")),
        Ok(Err(e)) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            Err(closing(StatusCode::PAYLOAD_TOO_LARGE, "payload too large: a request's body may have at most 2 MiB\n"))
        }
        Ok(Err(_)) => Err(closing(StatusCode::BAD_REQUEST, "bad request: the request's body could not be read\n")),
        Ok(Ok(c)) => Ok(Body::from(c.to_bytes())),
    }
}

/// One request: the checks, the body, the router; the response keeps the connection busy.
async fn handle(req: Request<Incoming>, app: App, router: Router, busy: Arc<AtomicUsize>) -> Result<Response, Infallible> {
    let busy = Busy::new(busy);
    let (parts, body) = req.into_parts();
    let resp = match guard::check(&parts, &app.cfg.hosts) {
        Err(r) => app::security_headers(r).await,
        Ok(()) => match read_body(body, app.cfg.limits.header_timeout).await {
            Err(r) => app::security_headers(r).await,
            Ok(body) => router.oneshot(Request::from_parts(parts, body)).await?,
        },
    };
    Ok(resp.map(|b| Body::new(Tracked { inner: b, _busy: busy })))
}

async fn serve_one(stream: TcpStream, mut place: Place, app: App, router: Router) {
    let _ = stream.set_nodelay(true);
    let closed = place.closed.take().expect("a new place");
    let busy = place.busy.clone();
    let timeout = app.cfg.limits.header_timeout;
    let svc = hyper::service::service_fn(move |req| handle(req, app.clone(), router.clone(), busy.clone()));
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new()).header_read_timeout(timeout).max_buf_size(64 * 1024);
    let conn = b.serve_connection(TokioIo::new(stream), svc);
    tokio::select! {
        _ = conn => {}
        // taken back for a new connection: dropping the connection closes its socket
        _ = closed => {}
    }
    drop(place);
}

/// Answers a connection over a cap with `status` and closes it, reading what the client sent
/// first so that the close does not reset the connection before the answer is read.
async fn refuse(mut s: TcpStream, status: StatusCode) {
    let body = if status == StatusCode::TOO_MANY_REQUESTS {
        "too many connections from your address: try again in a moment\n"
    } else {
        "too many connections: try again in a moment\n"
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nretry-after: 5\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        s.write_all(head.as_bytes()).await?;
        s.write_all(body.as_bytes()).await?;
        s.shutdown().await?;
        let mut buf = [0u8; 4096];
        while s.read(&mut buf).await? > 0 {}
        Ok::<(), std::io::Error>(())
    })
    .await;
}

/// An accept error that concerns one connection only (axum::serve's list).
fn one_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// The open-files limit, raised to the hard limit first (the connections, the database's and a
/// few of the process's own must fit under it).
pub fn open_files_limit() -> Option<u64> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct given
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return None;
        }
        if r.rlim_cur < r.rlim_max {
            let raised = libc::rlimit { rlim_cur: r.rlim_max, rlim_max: r.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                r = raised;
            }
        }
    }
    (r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur as u64)
}

/// The connection caps that fit under `open_files` descriptors, beside the database connections
/// and REFUSING refusals and some to spare (listener, stdio, TLS roots, log): the totals may be
/// lowered, never raised.
pub fn fit(limits: Limits, open_files: Option<u64>) -> Limits {
    let Some(n) = open_files else { return limits };
    let others = (limits.db_connections + REFUSING + 32) as u64;
    let room = n.saturating_sub(others).max(8) as usize;
    let connections = limits.connections.min(room);
    Limits {
        connections,
        connections_per_ip: limits.connections_per_ip.min(connections),
        streams: limits.streams.min(connections.saturating_sub(1).max(1)),
        ..limits
    }
}

/// Serves until `shutdown` completes.
pub async fn run(listener: TcpListener, app: App, router: Router, shutdown: impl Future<Output = ()>) {
    let limits = app.cfg.limits;
    let conns = Conns::new(limits.connections, limits.connections_per_ip);
    let refusing = Gate::new(REFUSING);
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer): (TcpStream, SocketAddr) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) if one_connection(&e) => continue,
                Err(e) => {
                    crate::log(&format!("cannot accept a connection: {e} ({} open)", conns.open()));
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return,
        };
        match conns.admit(peer.ip()) {
            Ok(place) => {
                tokio::spawn(serve_one(stream, place, app.clone(), router.clone()));
            }
            Err(status) => {
                // with too many being refused already, this one is closed without an answer
                if let Some(pass) = refusing.enter() {
                    tokio::spawn(async move {
                        refuse(stream, status).await;
                        drop(pass);
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_full_table_takes_back_the_oldest_idle_connection() {
        let c = Conns::new(3, 2);
        let mut a1 = c.admit(ip("10.0.0.1")).unwrap();
        let a2 = c.admit(ip("10.0.0.1")).unwrap();
        // the address is at its cap: its oldest idle connection is closed for the new one
        let mut a3 = c.admit(ip("10.0.0.1")).unwrap();
        assert!(a1.closed.as_mut().unwrap().try_recv().is_ok());
        assert_eq!(c.open(), 2);
        // both of its connections busy: 429
        a2.busy.store(1, Ordering::Release);
        a3.busy.store(1, Ordering::Release);
        assert_eq!(c.admit(ip("10.0.0.1")).err(), Some(StatusCode::TOO_MANY_REQUESTS));
        // another address fills the table; then every connection is busy: 503
        let b1 = c.admit(ip("10.0.0.2")).unwrap();
        b1.busy.store(1, Ordering::Release);
        assert_eq!(c.admit(ip("10.0.0.3")).err(), Some(StatusCode::SERVICE_UNAVAILABLE));
        // one goes idle: it is closed for the newcomer
        a3.busy.store(0, Ordering::Release);
        let _d = c.admit(ip("::ffff:10.0.0.3")).unwrap();
        assert!(a3.closed.as_mut().unwrap().try_recv().is_ok());
        assert_eq!(c.table.lock().unwrap().per_ip.get(&ip("10.0.0.3")), Some(&1));
        drop((a1, a2, a3, b1));
        assert_eq!(c.open(), 1);
    }

    #[test]
    fn caps_fit_under_the_open_files_limit() {
        let d = Limits::default();
        assert_eq!(fit(d, None), d);
        assert_eq!(fit(d, Some(100_000)), d);
        let f = fit(d, Some(256));
        assert_eq!(f.connections, 256 - (32 + 16 + 32));
        assert!(f.connections_per_ip <= f.connections && f.streams < f.connections);
        assert_eq!(fit(d, Some(10)).connections, 8);
    }
}
