//! Which requests reach the console at all. The Host a request names must be one of the allowed
//! host names: after DNS rebinding, a page of another site is same-origin with the console, but
//! its requests still name that site as their Host. A request that changes anything (every method
//! but GET and HEAD) must come from an allowed origin (Origin), or, from a browser that sends no
//! Origin, from this origin (Sec-Fetch-Site); a client that sends neither is no browser, and the
//! form's CSRF token still applies. Both checks run before the request's body is read.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use maud::html;

use crate::views;

/// The host names a request may give, each with a port or without (then the listen port, or
/// none: a proxy in front on 80 or 443).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    names: Vec<(String, Option<u16>)>,
    listen_port: u16,
}

/// An authority (`name`, `name:port`, `[v6]`, `[v6]:port`) as a lowercase name and a port; None
/// when it is not one. IPv6 addresses are written the one way Ipv6Addr writes them.
fn split_authority(a: &str) -> Option<(String, Option<u16>)> {
    let port = |p: &str| p.parse::<u16>().ok().filter(|p| *p > 0);
    if let Some(rest) = a.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        let ip: Ipv6Addr = v6.parse().ok()?;
        let p = match after {
            "" => None,
            _ => Some(port(after.strip_prefix(':')?)?),
        };
        return Some((format!("[{ip}]"), p));
    }
    let (name, p) = match a.split_once(':') {
        Some((n, p)) => (n, Some(port(p)?)),
        None => (a, None),
    };
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !name.starts_with(['-', '.']);
    ok.then(|| (name.to_ascii_lowercase(), p))
}

fn host_of(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

impl Allowed {
    /// The listen address itself, and for a loopback or unspecified one (every address) the
    /// loopback names, all with the listen port.
    pub fn default_for(listen: SocketAddr) -> Allowed {
        let port = Some(listen.port());
        let ip = listen.ip();
        let mut names = vec![];
        if ip.is_unspecified() {
            names.push(("127.0.0.1".to_string(), port));
            names.push(("[::1]".to_string(), port));
        } else {
            names.push((host_of(ip), port));
        }
        if ip.is_loopback() || ip.is_unspecified() {
            names.push(("localhost".to_string(), port));
        }
        Allowed { names, listen_port: listen.port() }
    }

    /// A comma-separated list of `NAME` or `NAME:PORT`; it replaces the default.
    pub fn parse(s: &str, listen_port: u16) -> Result<Allowed, String> {
        let mut names = vec![];
        for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let n = split_authority(item)
                .ok_or_else(|| format!("{item:?} is not a host name, an address or either with :PORT"))?;
            if !names.contains(&n) {
                names.push(n);
            }
        }
        if names.is_empty() {
            return Err("give at least one host name".into());
        }
        Ok(Allowed { names, listen_port })
    }

    /// Whether an authority (a Host header's value, an Origin's host and port) is allowed.
    pub fn allows(&self, authority: &str) -> bool {
        let Some((name, port)) = split_authority(authority) else { return false };
        self.names.iter().any(|(n, p)| {
            *n == name
                && match p {
                    Some(p) => port == Some(*p),
                    None => port.is_none() || port == Some(self.listen_port),
                }
        })
    }

    /// As the log shows it.
    pub fn describe(&self) -> String {
        self.names
            .iter()
            .map(|(n, p)| match p {
                Some(p) => format!("{n}:{p}"),
                None => n.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut r = (status, text).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// The page a POST from elsewhere gets (the same words as a missing CSRF token: nothing was done).
pub fn refused_page() -> Response {
    let body = html! {
        h1 { "Refused" }
        p { "This form was not sent by a page of this console (it came from another site or port), \
             so nothing was done. Go back, reload the page and try again." }
        p { a href="/" { "Back to the console" } }
    };
    (StatusCode::FORBIDDEN, Html(views::page("Refused", None, None, body).into_string())).into_response()
}

/// Refuses a request whose Host is not allowed (421; 400 without one), and a state-changing
/// request from another origin (403).
pub fn check(parts: &Parts, allowed: &Allowed) -> Result<(), Response> {
    let mut hosts = parts.headers.get_all(header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (Some(h), None) => h.to_str().ok(),
        (None, _) => None,
        (Some(_), Some(_)) => return Err(plain(StatusCode::BAD_REQUEST, "bad request: more than one Host header\n")),
    };
    // an absolute-form target (GET http://name/…) names the host too; both must be allowed
    let target = parts.uri.authority().map(|a| a.as_str());
    match (host, target) {
        (None, None) => return Err(plain(StatusCode::BAD_REQUEST, "bad request: no Host header\n")),
        (h, t) => {
            if !h.into_iter().chain(t).all(|a| allowed.allows(a)) {
                return Err(plain(
                    StatusCode::MISDIRECTED_REQUEST,
                    "misdirected request: this console does not serve the host this request names (--allowed-hosts)\n",
                ));
            }
        }
    }
    if parts.method == Method::GET || parts.method == Method::HEAD {
        return Ok(());
    }
    let from_here = match parts.headers.get(header::ORIGIN) {
        Some(o) => o.to_str().ok().and_then(origin_authority).is_some_and(|a| allowed.allows(a)),
        // no Origin: a browser still says where the request comes from in Sec-Fetch-Site
        None => parts
            .headers
            .get("sec-fetch-site")
            .is_none_or(|v| v.as_bytes().eq_ignore_ascii_case(b"same-origin")),
    };
    if from_here {
        Ok(())
    } else {
        Err(refused_page())
    }
}

/// The host and port of an Origin (`http://name:port`); None for `null` or anything else.
fn origin_authority(origin: &str) -> Option<&str> {
    let (scheme, rest) = origin.split_once("://")?;
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")).then_some(())?;
    (!rest.is_empty() && !rest.contains(['/', '?', '#', '@'])).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn req(method: &str, uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut b = Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    fn status(r: Result<(), Response>) -> u16 {
        r.map_or_else(|r| r.status().as_u16(), |_| 200)
    }

    #[test]
    fn defaults_follow_the_listen_address() {
        let a = Allowed::default_for("127.0.0.1:8088".parse().unwrap());
        assert_eq!(a.describe(), "127.0.0.1:8088, localhost:8088");
        assert!(a.allows("127.0.0.1:8088") && a.allows("LOCALHOST:8088"));
        assert!(!a.allows("127.0.0.1:8089") && !a.allows("localhost") && !a.allows("evil.example:8088"));
        let a = Allowed::default_for("0.0.0.0:80".parse().unwrap());
        assert_eq!(a.describe(), "127.0.0.1:80, [::1]:80, localhost:80");
        assert!(a.allows("[0:0::1]:80"));
        let a = Allowed::default_for("10.1.2.3:8088".parse().unwrap());
        assert_eq!(a.describe(), "10.1.2.3:8088");
        let a = Allowed::default_for("[::1]:8088".parse().unwrap());
        assert_eq!(a.describe(), "[::1]:8088, localhost:8088");
    }

    #[test]
    fn configured_names_with_and_without_a_port() {
        let a = Allowed::parse(" console.example.com, review.internal:9000 ,", 8088).unwrap();
        assert!(a.allows("console.example.com") && a.allows("Console.Example.com:8088"));
        assert!(!a.allows("console.example.com:9000") && !a.allows("console.example.com.evil.example"));
        assert!(a.allows("review.internal:9000") && !a.allows("review.internal") && !a.allows("review.internal:8088"));
        assert!(Allowed::parse("a b", 1).unwrap_err().contains("not a host name"));
        assert!(Allowed::parse(",", 1).unwrap_err().contains("at least one"));
        assert!(Allowed::parse("x:99999", 1).is_err() && Allowed::parse("[zz]", 1).is_err());
        for bad in ["", "user@host", "host:", "host:0", ".x", "x/y", "[::1", "a:1:2"] {
            assert!(!a.allows(bad) && split_authority(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_host_is_checked_before_anything() {
        let a = Allowed::default_for("127.0.0.1:8088".parse().unwrap());
        assert_eq!(status(check(&req("GET", "/", &[("host", "127.0.0.1:8088")]), &a)), 200);
        assert_eq!(status(check(&req("GET", "/", &[("host", "rebound.example:8088")]), &a)), 421);
        assert_eq!(status(check(&req("GET", "/", &[("host", "127.0.0.1:9999")]), &a)), 421);
        assert_eq!(status(check(&req("GET", "/", &[]), &a)), 400);
        assert_eq!(status(check(&req("GET", "/", &[("host", "127.0.0.1:8088"), ("host", "evil:1")]), &a)), 400);
        assert_eq!(status(check(&req("GET", "http://evil.example:8088/", &[("host", "127.0.0.1:8088")]), &a)), 421);
        assert_eq!(status(check(&req("GET", "http://localhost:8088/", &[]), &a)), 200);
    }

    #[test]
    fn posts_must_come_from_an_allowed_origin() {
        let a = Allowed::default_for("127.0.0.1:8088".parse().unwrap());
        let post = |h: &[(&str, &str)]| {
            let mut all = vec![("host", "127.0.0.1:8088")];
            all.extend_from_slice(h);
            status(check(&req("POST", "/signin", &all), &a))
        };
        assert_eq!(post(&[("origin", "http://127.0.0.1:8088")]), 200);
        assert_eq!(post(&[("origin", "http://localhost:8088")]), 200);
        assert_eq!(post(&[("origin", "http://127.0.0.1:9999")]), 403);
        assert_eq!(post(&[("origin", "http://evil.example")]), 403);
        assert_eq!(post(&[("origin", "null")]), 403);
        assert_eq!(post(&[("origin", "http://127.0.0.1:8088/path")]), 403);
        assert_eq!(post(&[("origin", "ftp://127.0.0.1:8088")]), 403);
        // without Origin: what the browser says about the request, or nothing (no browser)
        assert_eq!(post(&[("sec-fetch-site", "same-origin")]), 200);
        assert_eq!(post(&[("sec-fetch-site", "same-site")]), 403);
        assert_eq!(post(&[("sec-fetch-site", "cross-site")]), 403);
        assert_eq!(post(&[("sec-fetch-site", "none")]), 403);
        assert_eq!(post(&[]), 200);
        // a GET changes nothing: its Origin is not looked at
        assert_eq!(status(check(&req("GET", "/", &[("host", "127.0.0.1:8088"), ("origin", "http://evil")]), &a)), 200);
    }
}
