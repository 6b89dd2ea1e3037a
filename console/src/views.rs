//! The pages' common parts. Everything is maud: every `(value)` splice is HTML-escaped, and
//! `PreEscaped` is used for nothing but this crate's own constants.

use maud::{html, Markup, DOCTYPE};

use crate::db::PgError;
use crate::session::{Flash, Session};

/// The static files, embedded; their URLs carry a version so that a new build is fetched anew.
pub const CSS: &str = include_str!("../static/console.css");
pub const JS: &str = include_str!("../static/console.js");
pub const CSS_URL: &str = concat!("/static/console.css?v=", env!("CARGO_PKG_VERSION"));
pub const JS_URL: &str = concat!("/static/console.js?v=", env!("CARGO_PKG_VERSION"));

/// What the header shows about who is signed in.
pub struct Chrome<'a> {
    pub session: &'a Session,
    pub tenant: Option<String>,
}

/// A whole page: the header (who, which tenant, sign-out), a flash message, the body.
pub fn page(title: &str, chrome: Option<&Chrome<'_>>, flash: Option<&Flash>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · memory_fabric console" }
                // no icon: without this line the browser asks for /favicon.ico, a 404, every page
                link rel="icon" href="data:,";
                link rel="stylesheet" href=(CSS_URL);
                script src=(JS_URL) defer {}
            }
            body {
                header.top {
                    a.brand href="/" { "memory_fabric" }
                    @if let Some(c) = chrome {
                        nav {
                            @if c.tenant.is_some() {
                                a #nav-queue href="/queue" { "Queue" }
                                a #nav-metrics href="/metrics" { "Metrics" }
                                @if c.session.powers.admin { a #nav-admin href="/admin/consents" { "Admin" } }
                            }
                        }
                        div.who {
                            span.tenant {
                                @match &c.tenant {
                                    Some(t) => { "tenant " strong { (t) } " " a href="/tenant" { "change" } }
                                    None => { a href="/tenant" { "choose a tenant" } }
                                }
                            }
                            span.role title="the PostgreSQL role every query runs as" {
                                "role " strong { (c.session.role) }
                                @if c.session.powers.admin { " (admin)" } @else { " (reviewer)" }
                            }
                            form.inline method="post" action="/signout" {
                                (csrf_field(&c.session.csrf))
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main {
                    @if let Some(f) = flash { (flash_box(f)) }
                    (body)
                }
            }
        }
    }
}

pub fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(token); }
}

pub fn flash_box(f: &Flash) -> Markup {
    match f {
        Flash::Done(m) => html! { p #flash .flash.done role="status" { (m) } },
        Flash::Failed(e) => error_box(e),
    }
}

/// A database error: a plain explanation where the console has one, then PostgreSQL's message,
/// detail, hint and SQLSTATE.
pub fn error_box(e: &PgError) -> Markup {
    html! {
        div #error .error role="alert" data-sqlstate=(e.code) {
            @if let Some(plain) = explain(e) { p.explain { (plain) } }
            p.message { (e.message) }
            @if let Some(d) = &e.detail { p.detail { "Detail: " (d) } }
            @if let Some(h) = &e.hint { p.hint { "Hint: " (h) } }
            p.code { "SQLSTATE " code { (e.code) } }
        }
    }
}

/// A sentence for the refusals an operator meets in the normal course of things.
pub fn explain(e: &PgError) -> Option<&'static str> {
    let said = format!("{} {}", e.message, e.detail.as_deref().unwrap_or("")).to_lowercase();
    match e.code.as_str() {
        "42501" if said.contains("four eyes") || said.contains("cannot approve") => Some(
            "Four eyes: this candidate was captured by you (your role, a role yours is a member of or that is a \
             member of yours, or under your role's name), so you cannot approve it. Another reviewer must.",
        ),
        "42501" => Some("The database refused: your role lacks the privilege or the tenant grant for this."),
        "55000" => Some("This candidate is no longer waiting: it was decided or changed meanwhile. Reload the queue."),
        "P0002" => Some("Not found."),
        "54000" => Some("Too long: the value is over the limit the database allows."),
        "22023" => Some("A value was refused."),
        _ => None,
    }
}

/// Seconds as a short age: 45 s, 12 min, 3 h, 2 d.
pub fn age(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// The first `n` characters of a text, with an ellipsis when cut.
pub fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// A review's reasons, `a;b`, as `a; b`: a table cell may then wrap between them.
pub fn reasons(s: &str) -> String {
    s.replace(';', "; ")
}

/// A path segment, percent-encoded (ids are plain, but nothing relies on it).
pub fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped() {
        let e = PgError {
            code: "22023".into(),
            message: "<script>alert(1)</script>".into(),
            detail: Some("<img src=x onerror=alert(1)>".into()),
            hint: Some("\"quoted\" & 'single'".into()),
        };
        let html = error_box(&e).into_string();
        assert!(!html.contains("<script>") && !html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("&quot;quoted&quot; &amp;"), "{html}");
        let f = csrf_field("\"><script>").into_string();
        assert!(!f.contains("\"><script>"), "{f}");
    }

    #[test]
    fn four_eyes_is_explained() {
        let mut e = PgError::new("42501", "role \"ana\" cannot approve candidate \"mc_x\"");
        e.detail = Some("Role \"ana\" captured it; four eyes: the approving role must be another role.".into());
        assert!(explain(&e).unwrap().starts_with("Four eyes"));
        assert!(!explain(&PgError::new("42501", "permission denied for table metrics")).unwrap().starts_with("Four"));
    }

    #[test]
    fn small_helpers() {
        assert_eq!(age(5.2), "5 s");
        assert_eq!(age(125.0), "2 min");
        assert_eq!(age(7200.0), "2 h");
        assert_eq!(age(3.0 * 86_400.0), "3 d");
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("hé", 2), "hé");
        assert_eq!(seg("mc_1/../x y"), "mc_1%2F..%2Fx%20y");
        assert_eq!(reasons("contradiction:fact;operator_source"), "contradiction:fact; operator_source");
    }
}
