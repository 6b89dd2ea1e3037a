//! The application's state, the request context (who is signed in), errors as pages, and the
//! headers every response carries.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::html;
use tokio::sync::MutexGuard;

use crate::config::Settings;
use crate::db::{self, Conn, Failure, PgError};
use crate::limits::Gate;
use crate::session::{self, Lookup, Session, Store};
use crate::views;

pub struct Inner {
    pub cfg: Settings,
    pub pg: db::Pg,
    pub store: Store,
    /// The live-queue streams of every session (--max-streams).
    pub streams: Arc<Gate>,
}

#[derive(Clone)]
pub struct App(pub Arc<Inner>);

impl std::ops::Deref for App {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// Why a request found no session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    None,
    Expired,
    /// The database no longer lets the role in.
    Ended,
}

/// A request's failure, as a page or a redirect. Never a stack trace.
#[derive(Debug)]
pub enum AppError {
    SignedOut(Why),
    NoTenant,
    Csrf,
    NotFound { what: &'static str, id: String },
    /// An admin page asked for by a role that is not an admin.
    AdminOnly,
    Db(Failure),
}

impl From<tokio_postgres::Error> for AppError {
    fn from(e: tokio_postgres::Error) -> AppError {
        AppError::Db(db::classify(&e))
    }
}

fn bare_page(status: StatusCode, title: &str, body: maud::Markup) -> Response {
    (status, Html(views::page(title, None, None, body).into_string())).into_response()
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match self {
            AppError::SignedOut(why) => Redirect::to(match why {
                Why::None => "/signin",
                Why::Expired => "/signin?why=expired",
                Why::Ended => "/signin?why=ended",
            })
            .into_response(),
            AppError::NoTenant => Redirect::to("/tenant").into_response(),
            AppError::Csrf => bare_page(
                StatusCode::FORBIDDEN,
                "Refused",
                html! {
                    h1 { "Refused" }
                    p { "This form was not sent by a page of this console (its security token is missing or wrong), \
                         so nothing was done. Go back, reload the page and try again." }
                    p { a href="/" { "Back to the console" } }
                },
            ),
            AppError::NotFound { what, id } => not_found(what, &id),
            AppError::AdminOnly => bare_page(
                StatusCode::FORBIDDEN,
                "Admins only",
                html! {
                    h1 { "Admins only" }
                    div.error role="alert" { p.message { "This page is for roles that may execute memory_fabric.set_policy (memory_fabric_admin)." } }
                    p { a href="/" { "Back to the console" } }
                },
            ),
            AppError::Db(Failure::Refused(e)) => bare_page(
                StatusCode::CONFLICT,
                "Refused by the database",
                html! { h1 { "Refused by the database" } (views::error_box(&e)) p { a href="/" { "Back to the console" } } },
            ),
            AppError::Db(Failure::SignInAgain(_)) => AppError::SignedOut(Why::Ended).into_response(),
            AppError::Db(Failure::Full(e)) => {
                let mut r = bare_page(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Too many connections",
                    html! { h1 { "Too many connections" } (views::error_box(&e)) p { a href="/" { "Back to the console" } } },
                );
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                r
            }
            AppError::Db(Failure::Unavailable(m)) | AppError::Db(Failure::Lost(m)) => {
                let mut r = bare_page(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Database unavailable",
                    html! {
                        h1 { "The database is not reachable" }
                        div #unavailable .error.unavailable role="alert" {
                            p { "The console cannot reach PostgreSQL right now (" (m) "). It reconnects by itself: \
                                 this page tries again every 5 seconds." }
                        }
                        p { "Nothing you did was lost: a decision is recorded only when the database confirms it." }
                    },
                );
                r.headers_mut().insert(header::REFRESH, HeaderValue::from_static("5"));
                r
            }
        }
    }
}

/// The one not-found page, for an unknown id, a malformed one, and another tenant's alike: its
/// text depends only on the id asked for.
pub fn not_found(what: &str, id: &str) -> Response {
    bare_page(
        StatusCode::NOT_FOUND,
        "Not found",
        html! {
            h1 { "Not found" }
            p { "There is no " (what) " " code { (id) } " in this tenant." }
            p { a href="/queue" { "Back to the queue" } }
        },
    )
}

/// The signed-in operator of a request. (A POST from another origin never gets here: guard.rs
/// refuses it first; the handler checks the form's CSRF token itself.)
pub struct Ctx {
    pub app: App,
    pub session: Arc<Session>,
}

impl FromRequestParts<App> for Ctx {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Ctx, AppError> {
        match app.store.lookup(&parts.headers) {
            Lookup::Found(session) => Ok(Ctx { app: app.clone(), session }),
            Lookup::Expired => Err(AppError::SignedOut(Why::Expired)),
            Lookup::Unknown => Err(AppError::SignedOut(Why::None)),
        }
    }
}

impl App {
    /// Ends a session: out of the store, its connections closed now (a request still holding
    /// the session does not keep them open).
    pub fn end(&self, s: &Session, conn: &mut Option<Conn>) {
        self.store.remove(&s.id);
        *conn = None;
        if let Ok(mut l) = s.listener.try_lock() {
            *l = None;
        }
    }

    /// Makes `conn` the session's checked connection: opened again (PostgreSQL checks the
    /// password anew) when it is closed, when `fresh`, or when the last check is older than
    /// --reauth-seconds; then the role asked whether it may still use the console
    /// (db::role_allowed). A role the database no longer lets in ends the session.
    pub async fn check(&self, s: &Session, conn: &mut Option<Conn>, fresh: bool) -> Result<(), AppError> {
        if fresh || conn.as_ref().is_none_or(|c| c.is_closed()) || s.since_authenticated() > self.cfg.reauth {
            // the old connection goes first: its place under the caps is the new one's
            *conn = None;
            match self.pg.connect(&s.credentials, db::Messages::Ignore).await {
                Ok(c) => {
                    *conn = Some(c);
                    s.authenticated_now();
                }
                Err(e) => {
                    let f = db::classify_connect(&e);
                    if let Failure::SignInAgain(_) = f {
                        self.end(s, conn);
                        return Err(AppError::SignedOut(Why::Ended));
                    }
                    return Err(AppError::Db(f));
                }
            }
        }
        match db::role_allowed(conn.as_ref().expect("connected")).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.end(s, conn);
                Err(AppError::SignedOut(Why::Ended))
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Ctx {
    /// The chosen tenant, or a redirect to the chooser.
    pub fn tenant(&self) -> Result<String, AppError> {
        self.session.tenant().ok_or(AppError::NoTenant)
    }

    /// Refuses a form whose CSRF token is not the session's.
    pub fn check_csrf(&self, token: &str) -> Result<(), AppError> {
        if session::same_token(token, &self.session.csrf) {
            Ok(())
        } else {
            Err(AppError::Csrf)
        }
    }

    /// The session's connection, checked (App::check): for reading.
    pub async fn conn(&self) -> Result<MutexGuard<'_, Option<Conn>>, AppError> {
        let mut g = self.session.conn.lock().await;
        self.app.check(&self.session, &mut g, false).await?;
        Ok(g)
    }

    /// The session's connection opened anew with its credentials, so that PostgreSQL checks the
    /// password again: for every decision and admin action. A changed password or NOLOGIN ends
    /// the session here, before anything is recorded.
    pub async fn conn_fresh(&self) -> Result<MutexGuard<'_, Option<Conn>>, AppError> {
        let mut g = self.session.conn.lock().await;
        self.app.check(&self.session, &mut g, true).await?;
        Ok(g)
    }

    pub fn chrome(&self) -> views::Chrome<'_> {
        views::Chrome { session: &self.session, tenant: self.session.tenant() }
    }

    /// A page with the header, and the session's flash message (taken: shown once).
    pub fn page(&self, title: &str, body: maud::Markup) -> Response {
        let flash = self.session.take_flash();
        Html(views::page(title, Some(&self.chrome()), flash.as_ref(), body).into_string()).into_response()
    }
}

/// A database failure during an action, as the message the next page shows.
pub fn action_failure(e: AppError) -> Result<PgError, AppError> {
    match e {
        AppError::Db(Failure::Refused(p)) => Ok(p),
        AppError::Db(Failure::Lost(m)) => Ok(PgError {
            code: "08006".into(),
            message: format!("The connection to the database was lost during this action ({m})."),
            detail: Some("It may or may not have been applied: PostgreSQL did not confirm it.".into()),
            hint: Some("Look at the candidate's state before trying again.".into()),
        }),
        other => Err(other),
    }
}

/// The headers every response carries: no script or style from anywhere but the console, no
/// framing, no sniffing, no referrer to other sites, no caching of pages that hold tenant data.
pub async fn security_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
             frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
        ),
    );
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with every
    // form post (Fetch, "serializing a request origin"), which guard::check refuses. same-origin
    // sends this origin to this origin only, and `null` to every other site.
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    r
}
