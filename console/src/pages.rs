//! The pages and the forms' actions.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{AppendHeaders, Html, IntoResponse, Redirect, Response};
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use crate::app::{action_failure, not_found, App, AppError, Ctx};
use crate::db::{self, Failure, PgError};
use crate::session::{self, Credentials, Flash, Lookup, Powers, Session, State as SessionState};
use crate::{diff, views};

// ---------------------------------------------------------------------------------------------
// Sign-in and sign-out

#[derive(Deserialize, Default)]
pub struct SigninQuery {
    #[serde(default)]
    why: String,
}

/// The sign-in form. There is no display name: decisions record the role's own name, so that an
/// operator cannot decide under another's (a field sent anyway is ignored).
#[derive(Deserialize, Default)]
pub struct SigninForm {
    #[serde(default)]
    role: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    login: String,
}

pub async fn root(State(app): State<App>, headers: HeaderMap) -> Redirect {
    match app.store.lookup(&headers) {
        Lookup::Found(s) if s.tenant().is_some() => Redirect::to("/queue"),
        Lookup::Found(_) => Redirect::to("/tenant"),
        _ => Redirect::to("/signin"),
    }
}

fn signin_form(app: &App, role: &str, note: Option<Markup>, status: StatusCode) -> Response {
    let token = session::random_token();
    let body = html! {
        h1 { "Sign in" }
        p.lead { "Sign in with your PostgreSQL role and its password. Every page runs as that role: \
                  the console has no users or privileges of its own." }
        @if let Some(n) = note { (n) }
        form #signin .signin method="post" action="/signin" {
            input type="hidden" name="login" value=(token);
            label { "Role" input type="text" name="role" value=(role) required autocomplete="username" autofocus; }
            label { "Password" input type="password" name="password" autocomplete="current-password"; }
            p { small { "Your decisions are recorded under your role's name." } }
            button #signin-submit type="submit" { "Sign in" }
        }
    };
    let page = views::page("Sign in", None, None, body).into_string();
    (
        status,
        AppendHeaders([(header::SET_COOKIE, session::set_cookie(session::LOGIN_COOKIE, Some(&token), app.cfg.secure_cookies))]),
        Html(page),
    )
        .into_response()
}

pub async fn signin_page(State(app): State<App>, headers: HeaderMap, Query(q): Query<SigninQuery>) -> Response {
    if let Lookup::Found(_) = app.store.lookup(&headers) {
        return Redirect::to("/").into_response();
    }
    let note = match q.why.as_str() {
        "expired" => Some(html! { p.flash.done role="status" { "Your session expired. Sign in again." } }),
        "ended" => Some(html! { p.flash.done role="status" {
            "The database no longer accepts your role's sign-in (password changed, or the role lost LOGIN). Sign in again." } }),
        "out" => Some(html! { p.flash.done role="status" { "Signed out." } }),
        _ => None,
    };
    signin_form(&app, "", note, StatusCode::OK)
}

fn refused(app: &App, f: &SigninForm, e: &PgError) -> Response {
    let status = if e.code == "53300" { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::UNAUTHORIZED };
    signin_form(app, &f.role, Some(views::error_box(e)), status)
}

/// What the database says about the role just signed in.
struct Who {
    role: String,
    powers: Powers,
    superuser: bool,
    bypassrls: bool,
    installed: bool,
    version: i32,
}

async fn who(client: &tokio_postgres::Client) -> Result<Who, tokio_postgres::Error> {
    let r = client
        .query_one(
            "SELECT current_user::text,
                    coalesce(pg_catalog.has_function_privilege(
                        pg_catalog.to_regprocedure('memory_fabric.approve(text,text,text,text)'), 'EXECUTE'), false),
                    coalesce(pg_catalog.has_function_privilege(
                        pg_catalog.to_regprocedure('memory_fabric.set_policy(text,jsonb,text)'), 'EXECUTE'), false),
                    (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user),
                    EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'memory_fabric'),
                    pg_catalog.current_setting('server_version_num')::int,
                    (SELECT rolbypassrls FROM pg_catalog.pg_roles WHERE rolname = session_user)",
            &[],
        )
        .await?;
    Ok(Who {
        role: r.get(0),
        powers: Powers { reviewer: r.get(1), admin: r.get(2) },
        superuser: r.get::<_, Option<bool>>(3).unwrap_or(false),
        bypassrls: r.get::<_, Option<bool>>(6).unwrap_or(false),
        installed: r.get(4),
        version: r.get(5),
    })
}

/// Whether the database checked a credential for this connection (PostgreSQL 16 and later say so
/// in system_user; NULL means trust). None: the server cannot tell (15 and earlier).
async fn authenticated(client: &tokio_postgres::Client, version: i32) -> Result<Option<bool>, tokio_postgres::Error> {
    if version < 160000 {
        return Ok(None);
    }
    let v: Option<String> = client.query_one("SELECT system_user::text", &[]).await?.get(0);
    Ok(Some(v.is_some()))
}

pub async fn signin(State(app): State<App>, headers: HeaderMap, Form(f): Form<SigninForm>) -> Response {
    // the double-submit token: the form's must be the cookie this console set with it
    let cookie = session::cookie(&headers, session::LOGIN_COOKIE).unwrap_or_default();
    if f.login.is_empty() || !session::same_token(&f.login, &cookie) {
        let note = html! { p.flash.done role="status" { "The sign-in form had expired. Sign in again." } };
        return signin_form(&app, &f.role, Some(note), StatusCode::FORBIDDEN);
    }
    let role = f.role.trim().to_string();
    if role.is_empty() || role.len() > 63 {
        return refused(&app, &f, &PgError::new("28000", "Give your PostgreSQL role's name (at most 63 bytes)."));
    }
    let credentials = Credentials { role: role.clone(), password: f.password.clone() };
    let mut opened = app.pg.connect(&credentials, db::Messages::Ignore).await;
    if let Err(db::ConnectError::Full(_)) = opened {
        // sessions past their time still hold their connections until the next sweep
        if app.store.sweep() > 0 {
            opened = app.pg.connect(&credentials, db::Messages::Ignore).await;
        }
    }
    let client = match opened {
        Ok(c) => c,
        Err(e) => {
            let shown = match db::classify_connect(&e) {
                Failure::Refused(p) | Failure::SignInAgain(p) | Failure::Full(p) => p,
                Failure::Unavailable(m) | Failure::Lost(m) => PgError {
                    code: "08001".into(),
                    message: format!("The database is not reachable: {m}"),
                    detail: None,
                    hint: Some("Try again in a moment.".into()),
                },
            };
            return refused(&app, &f, &shown);
        }
    };
    let w = match who(&client).await {
        Ok(w) => w,
        Err(e) => {
            return refused(&app, &f, &db::classify(&e).into_pg());
        }
    };
    if !w.installed {
        return refused(&app, &f, &PgError::new("0A000", "The extension memory_fabric is not installed in this database."));
    }
    // a superuser or a BYPASSRLS role passes row-level security and the extension's four eyes
    // compares no roles for it: the console is for the roles the extension governs
    if w.superuser || w.bypassrls {
        let what = if w.superuser { "a superuser" } else { "exempt from row-level security (BYPASSRLS)" };
        let mut e = PgError::new("42501", format!("role \"{}\" may not sign in to the console: it is {what}", w.role));
        e.detail = Some(
            "Such a role passes row-level security and tenant pins, and four eyes would not hold for it: \
             the console serves only the roles the extension governs."
                .into(),
        );
        e.hint = Some("Sign in with a role that is a member of memory_fabric_reviewer or memory_fabric_admin.".into());
        return refused(&app, &f, &e);
    }
    if !(w.powers.reviewer || w.powers.admin) {
        let mut e = PgError::new("42501", format!("Role \"{}\" may not review.", w.role));
        e.detail = Some("It may not execute memory_fabric.approve: it is a member of neither memory_fabric_reviewer nor memory_fabric_admin.".into());
        e.hint = Some("The console is for operators. An agent's role acts through its own connection.".into());
        return refused(&app, &f, &e);
    }
    match authenticated(&client, w.version).await {
        Ok(Some(false)) if !app.cfg.allow_trust_auth => {
            let mut e = PgError::new("28000", "The database let this role in without checking a password (trust).");
            e.hint = Some("Point the console at a host and port whose pg_hba.conf rule asks for a password \
                           (scram-sha-256), or start it with --allow-trust-auth on a test cluster."
                .into());
            return refused(&app, &f, &e);
        }
        Ok(_) => {}
        Err(e) => return refused(&app, &f, &db::classify(&e).into_pg()),
    }
    let mut client = client;
    let tenants = match db::tenants(&mut client, &app.cfg.tenants, None).await {
        Ok(t) => t,
        Err(e) => return refused(&app, &f, &db::classify(&e).into_pg()),
    };
    let id = session::random_token();
    let s = Arc::new(Session {
        id: id.clone(),
        credentials,
        role: w.role,
        powers: w.powers,
        csrf: session::random_token(),
        created: Instant::now(),
        state: Mutex::new(SessionState {
            tenant: if tenants.named.len() == 1 && !tenants.any { tenants.named.first().cloned() } else { None },
            authenticated: Some(Instant::now()),
            ..Default::default()
        }),
        conn: tokio::sync::Mutex::new(Some(client)),
        listener: tokio::sync::Mutex::new(None),
        streams: crate::limits::Gate::new(app.cfg.limits.streams_per_session),
    });
    // a new id at every sign-in; the old session of this browser, if any, ends
    if let Some(old) = session::cookie(&headers, session::COOKIE) {
        app.store.remove(&old);
    }
    if !app.store.insert(s) {
        return refused(&app, &f, &PgError::new("53300", "Too many sessions are open on this console."));
    }
    let secure = app.cfg.secure_cookies;
    (
        AppendHeaders([
            (header::SET_COOKIE, session::set_cookie(session::COOKIE, Some(&id), secure)),
            (header::SET_COOKIE, session::set_cookie(session::LOGIN_COOKIE, None, secure)),
        ]),
        Redirect::to("/"),
    )
        .into_response()
}

#[derive(Deserialize, Default)]
pub struct CsrfOnly {
    #[serde(default)]
    csrf: String,
}

pub async fn signout(ctx: Ctx, Form(f): Form<CsrfOnly>) -> Result<Response, AppError> {
    ctx.check_csrf(&f.csrf)?;
    // the connections close now, not when the last request holding the session ends
    let mut g = ctx.session.conn.lock().await;
    ctx.app.end(&ctx.session, &mut g);
    drop(g);
    Ok((
        AppendHeaders([(header::SET_COOKIE, session::set_cookie(session::COOKIE, None, ctx.app.cfg.secure_cookies))]),
        Redirect::to("/signin?why=out"),
    )
        .into_response())
}

// ---------------------------------------------------------------------------------------------
// The tenant chooser

pub async fn tenant_page(ctx: Ctx) -> Result<Response, AppError> {
    let tenants = {
        let mut g = ctx.conn().await?;
        db::tenants(g.as_mut().expect("connected"), &ctx.app.cfg.tenants, None).await?
    };
    let current = ctx.session.tenant();
    let body = html! {
        h1 { "Choose a tenant" }
        @if tenants.named.is_empty() && !tenants.any {
            p #no-tenants { "Your role holds no grant for any tenant. An admin can grant one with memory_fabric.grant_tenant()." }
        } @else if !tenants.named.is_empty() {
            p { "Your role holds a grant for these tenants:" }
            ul #tenants .tenants {
                @for t in &tenants.named {
                    li {
                        form.inline method="post" action="/tenant" {
                            (views::csrf_field(&ctx.session.csrf))
                            button.tenant type="submit" name="tenant" value=(t) { (t) }
                            @if current.as_deref() == Some(t.as_str()) { " (current)" }
                        }
                    }
                }
            }
        }
        @if tenants.any {
            p { "Your role holds a grant for every tenant: type the one to work in." }
            form #tenant-other .other method="post" action="/tenant" {
                (views::csrf_field(&ctx.session.csrf))
                label { "Tenant " input #tenant-typed type="text" name="tenant" required maxlength="256"; }
                button type="submit" { "Choose" }
            }
        }
    };
    Ok(ctx.page("Tenant", body))
}

#[derive(Deserialize, Default)]
pub struct TenantForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    tenant: String,
}

pub async fn choose_tenant(ctx: Ctx, Form(f): Form<TenantForm>) -> Result<Response, AppError> {
    ctx.check_csrf(&f.csrf)?;
    let ok = if f.tenant.is_empty() || f.tenant.len() > 256 {
        false
    } else {
        let mut g = ctx.conn().await?;
        db::tenants(g.as_mut().expect("connected"), &ctx.app.cfg.tenants, Some(&f.tenant)).await?.allows(&f.tenant)
    };
    if ok {
        ctx.session.set_tenant(Some(f.tenant));
        Ok(Redirect::to("/queue").into_response())
    } else {
        let mut e = PgError::new("42501", format!("Your role has no grant for tenant \"{}\".", f.tenant));
        e.hint = Some("An admin can grant it with memory_fabric.grant_tenant().".into());
        ctx.session.flash(Flash::Failed(e));
        Ok(Redirect::to("/tenant").into_response())
    }
}

// ---------------------------------------------------------------------------------------------
// The queue

#[derive(Deserialize, Default, Clone)]
pub struct QueueFilter {
    #[serde(default)]
    pub tier: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub age: String,
}

pub const AGES: [(&str, &str, f64); 4] =
    [("", "any age", 0.0), ("1h", "older than 1 hour", 3600.0), ("1d", "older than 1 day", 86_400.0), ("7d", "older than 7 days", 604_800.0)];
pub const TIERS: [&str; 4] = ["working", "episodic", "semantic", "durable"];
/// At most this many rows on the page (the oldest first).
pub const QUEUE_LIMIT: i64 = 1000;

pub struct QueueRow {
    pub candidate_id: String,
    pub tier: String,
    pub reason: Option<String>,
    pub status: String,
    pub resolution: Option<String>,
    pub source: String,
    pub actor: Option<String>,
    pub classification: String,
    pub text: String,
    pub evidence: i32,
    pub priority: f64,
    pub age: f64,
}

fn none_if_empty(s: &str) -> Option<&str> {
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// The queue of the tenant, filtered: the rows (oldest first, at most QUEUE_LIMIT), the number
/// waiting in all, and the count per reason. One transaction, committed before it returns.
pub async fn load_queue(ctx: &Ctx, tenant: &str, f: &QueueFilter) -> Result<(Vec<QueueRow>, i64, Vec<(Option<String>, i64)>), AppError> {
    let min_age = AGES.iter().find(|(k, _, _)| *k == f.age).map(|(_, _, s)| *s).filter(|s| *s > 0.0);
    let mut g = ctx.conn().await?;
    let tx = db::begin(g.as_mut().expect("connected"), Some(tenant)).await?;
    let rows = tx
        .query(
            "SELECT candidate_id, proposed_tier, reason, status, contradiction_resolution, source, actor, classification,
                    proposed_text, pg_catalog.jsonb_array_length(evidence_refs), priority_score::float8,
                    extract(epoch FROM pg_catalog.now() - enqueued_at)::float8
             FROM memory_fabric.review_queue
             WHERE tenant_id = $1 AND ($2::text IS NULL OR proposed_tier = $2) AND ($3::text IS NULL OR reason = $3)
               AND ($4::float8 IS NULL OR enqueued_at <= pg_catalog.now() - pg_catalog.make_interval(secs => $4))
             ORDER BY enqueued_at, candidate_id LIMIT $5",
            &[&tenant, &none_if_empty(&f.tier), &none_if_empty(&f.reason), &min_age, &QUEUE_LIMIT],
        )
        .await?;
    let counts = tx
        .query(
            "SELECT reason, count(*) FROM memory_fabric.review_queue WHERE tenant_id = $1 GROUP BY 1 ORDER BY 1",
            &[&tenant],
        )
        .await?;
    tx.commit().await?;
    let reasons: Vec<(Option<String>, i64)> = counts.iter().map(|r| (r.get(0), r.get(1))).collect();
    let total: i64 = reasons.iter().map(|(_, n)| n).sum();
    let rows: Vec<QueueRow> = rows
        .iter()
        .map(|r| QueueRow {
            candidate_id: r.get(0),
            tier: r.get(1),
            reason: r.get(2),
            status: r.get(3),
            resolution: r.get(4),
            source: r.get(5),
            actor: r.get(6),
            classification: r.get(7),
            text: r.get(8),
            evidence: r.get(9),
            priority: r.get(10),
            age: r.get(11),
        })
        .collect();
    Ok((rows, total, reasons))
}

pub async fn queue(ctx: Ctx, Query(f): Query<QueueFilter>) -> Result<Response, AppError> {
    let tenant = ctx.tenant()?;
    let started = Instant::now();
    let (rows, total, reasons) = load_queue(&ctx, &tenant, &f).await?;
    let body = queue_body(&tenant, &f, &rows, total, &reasons, ctx.session.powers);
    let mut resp = ctx.page("Queue", body);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Ok(v) = format!("render;dur={ms:.2}").parse() {
        resp.headers_mut().insert("server-timing", v);
    }
    Ok(resp)
}

pub fn queue_body(
    tenant: &str,
    f: &QueueFilter,
    rows: &[QueueRow],
    total: i64,
    reasons: &[(Option<String>, i64)],
    _powers: Powers,
) -> Markup {
    html! {
        h1 { "Review queue " small { "tenant " (tenant) } }
        form.filters method="get" action="/queue" {
            label { "Tier "
                select name="tier" {
                    option value="" selected[f.tier.is_empty()] { "any" }
                    @for t in TIERS { option value=(t) selected[f.tier == t] { (t) } }
                }
            }
            label { "Reason "
                select name="reason" {
                    option value="" selected[f.reason.is_empty()] { "any" }
                    @for (r, n) in reasons {
                        @if let Some(r) = r { option value=(r) selected[f.reason == *r] { (r) " (" (n) ")" } }
                    }
                    @if !f.reason.is_empty() && !reasons.iter().any(|(r, _)| r.as_deref() == Some(f.reason.as_str())) {
                        option value=(f.reason) selected { (f.reason) " (0)" }
                    }
                }
            }
            label { "Age "
                select name="age" {
                    @for (k, label, _) in AGES { option value=(k) selected[f.age == k] { (label) } }
                }
            }
            button type="submit" { "Filter" }
        }
        p.live { span #live-status .live-status role="status" aria-live="polite" { "" } }
        p #queue-count .count {
            (total) " waiting in all"
            @if rows.len() as i64 >= QUEUE_LIMIT { "; showing the oldest " (rows.len()) }
            @else if rows.len() as i64 != total { "; " (rows.len()) " match the filters" }
        }
        p #queue-empty .empty hidden[!rows.is_empty()] { "Nothing waits for a human here." }
        {
            table #queue .queue {
                thead { tr { th { "Age" } th { "Tier" } th { "Reason" } th { "Verdict" } th { "Source" } th { "Actor" }
                             th { "Class" } th { "Text" } th { "Evidence" } th { "Priority" } } }
                tbody id="queue-rows" {
                    @for r in rows {
                        tr.queue-row data-candidate-id=(r.candidate_id) data-href=(format!("/candidates/{}", views::seg(&r.candidate_id))) {
                            td.age { (views::age(r.age)) }
                            td { (r.tier) }
                            td.reason { (views::reasons(r.reason.as_deref().unwrap_or(""))) }
                            td { (r.status) @if let Some(res) = &r.resolution { " (" (res) ")" } }
                            td { (r.source) }
                            td { (r.actor.as_deref().unwrap_or("")) }
                            td { (r.classification) }
                            td.text { a href=(format!("/candidates/{}", views::seg(&r.candidate_id))) { (views::clip(&r.text, 200)) } }
                            td.num { (r.evidence) }
                            td.num { (format!("{:.2}", r.priority)) }
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A candidate

struct Candidate {
    id: String,
    text: String,
    classification: String,
    source: String,
    actor: Option<String>,
    captured_by: Option<String>,
    evidence: Vec<String>,
    user_id: Option<String>,
    intent_id: Option<String>,
    captured_at: String,
    redactions: i32,
    redaction_rules: Vec<String>,
    write_class: Option<String>,
    fact: Option<(String, String, Option<String>)>,
    supersedes: Option<String>,
    erased: bool,
}

struct Review {
    status: String,
    reviewer: String,
    reason: Option<String>,
    tier: String,
    priority: f64,
    similarity: Option<f64>,
    policy_version: i32,
    notes: Option<String>,
    duplicate_of: Option<String>,
    contradicts: Option<String>,
    resolution: Option<String>,
    reviewed_at: String,
}

struct Related {
    id: String,
    text: String,
    tier: String,
    promoted_at: String,
    retracted: bool,
}

const TS: &str = "YYYY-MM-DD HH24:MI:SS TZ";

pub async fn candidate(ctx: Ctx, Path(id): Path<String>) -> Result<Response, AppError> {
    let tenant = ctx.tenant()?;
    let (c, review, stage, related, evidence, next, mine) = {
        let mut g = ctx.conn().await?;
        let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
        let Some(r) = tx
            .query_opt(
                "SELECT id, text, classification, source, actor, captured_by,
                        ARRAY(SELECT pg_catalog.jsonb_array_elements_text(evidence_refs)), user_id, intent_id,
                        pg_catalog.to_char(captured_at, $3), redaction_count, redaction_rules, write_class,
                        entity, predicate, value::text, supersedes, erased_at IS NOT NULL
                 FROM memory_fabric.candidates WHERE id = $1 AND tenant_id = $2",
                &[&id, &tenant, &TS],
            )
            .await?
        else {
            return Ok(not_found("candidate", &id));
        };
        let c = Candidate {
            id: r.get(0),
            text: r.get(1),
            classification: r.get(2),
            source: r.get(3),
            actor: r.get(4),
            captured_by: r.get(5),
            evidence: r.get(6),
            user_id: r.get(7),
            intent_id: r.get(8),
            captured_at: r.get(9),
            redactions: r.get(10),
            redaction_rules: r.get(11),
            write_class: r.get(12),
            fact: r.get::<_, Option<String>>(13).map(|e| (e, r.get::<_, Option<String>>(14).unwrap_or_default(), r.get(15))),
            supersedes: r.get(16),
            erased: r.get(17),
        };
        let review = tx
            .query_opt(
                "SELECT status, reviewer, reason, proposed_tier, priority_score::float8, similarity, policy_version,
                        reviewer_notes, duplicate_of_id, contradicts_id, contradiction_resolution, pg_catalog.to_char(reviewed_at, $2)
                 FROM memory_fabric.reviews WHERE candidate_id = $1 ORDER BY reviewed_at DESC, id DESC LIMIT 1",
                &[&id, &TS],
            )
            .await?
            .map(|r| Review {
                status: r.get(0),
                reviewer: r.get(1),
                reason: r.get(2),
                tier: r.get(3),
                priority: r.get(4),
                similarity: r.get(5),
                policy_version: r.get(6),
                notes: r.get(7),
                duplicate_of: r.get(8),
                contradicts: r.get(9),
                resolution: r.get(10),
                reviewed_at: r.get(11),
            });
        let stage: Option<(String, Option<String>, Option<String>)> = tx
            .query_opt("SELECT stage, decision, memory_id FROM memory_fabric.review_status($1)", &[&id])
            .await?
            .map(|r| (r.get(0), r.get(1), r.get(2)));
        // each evidence ref's provenance class, as the provenance gate gives it (extension 0.19.0)
        let has_fn: bool = tx
            .query_one("SELECT pg_catalog.to_regprocedure('memory_fabric.candidate_evidence(text)') IS NOT NULL", &[])
            .await?
            .get(0);
        let evidence: Vec<(String, Option<String>)> = if has_fn {
            tx.query("SELECT evidence_ref, untrusted_origin FROM memory_fabric.candidate_evidence($1)", &[&id])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect()
        } else {
            vec![]
        };
        // the next candidate waiting after this one (skip)
        let next: Option<String> = tx
            .query_opt(
                "SELECT q.candidate_id FROM memory_fabric.review_queue q
                 WHERE q.tenant_id = $2 AND q.candidate_id <> $1
                   AND (q.enqueued_at, q.candidate_id) > coalesce(
                        (SELECT (s.enqueued_at, s.candidate_id) FROM memory_fabric.review_queue s WHERE s.candidate_id = $1),
                        ('-infinity'::timestamptz, ''::text))
                 ORDER BY q.enqueued_at, q.candidate_id LIMIT 1",
                &[&id, &tenant],
            )
            .await?
            .map(|r| r.get(0));
        let related_id = review.as_ref().and_then(|r| r.duplicate_of.clone().or(r.contradicts.clone()));
        let related = match related_id {
            None => None,
            Some(m) => tx
                .query_opt(
                    "SELECT id, text, tier, pg_catalog.to_char(promoted_at, $2), retracted_at IS NOT NULL
                     FROM memory_fabric.promoted_memory WHERE id = $1",
                    &[&m, &TS],
                )
                .await?
                .map(|r| Related { id: r.get(0), text: r.get(1), tier: r.get(2), promoted_at: r.get(3), retracted: r.get(4) }),
        };
        // four eyes, as the extension decides it (require_second_pair_of_eyes): the capturing role,
        // a role it is a member of or one that is a member of it, or the capture's actor under
        // this role's name, may not approve; the form is not offered to them
        let mine: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                                WHERE r.rolname::text = $1::text
                                  AND (r.rolname = session_user OR pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER')
                                       OR pg_catalog.pg_has_role(r.oid, session_user, 'MEMBER')))
                        OR $2::text = session_user::text",
                &[&c.captured_by, &c.actor],
            )
            .await?
            .get(0);
        tx.commit().await?;
        (c, review, stage, related, evidence, next, mine)
    };
    // a contradiction no rule resolved waits for a person too (extension 0.21.0), who chooses what
    // becomes of the memory it contradicts
    let waiting = stage.as_ref().is_some_and(|(s, _, _)| s == "waiting_for_human");
    let choose = review.as_ref().is_some_and(|r| r.status == "contradicts" && r.resolution.as_deref() == Some("block"));
    let csrf = &ctx.session.csrf;
    let action = |what: &str| format!("/candidates/{}/{what}", views::seg(&c.id));
    let body = html! {
        h1 { "Candidate " code { (c.id) } }
        @if let Some((s, decision, memory)) = &stage {
            p.stage { "Stage: " strong { (s) }
                @if let Some(d) = decision { " · decision: " (d) }
                @if let Some(m) = memory { " · memory " a href=(format!("/memories/{}", views::seg(m))) { code { (m) } } }
                " · " a href=(format!("/memories/{}", views::seg(&c.id))) { "history" }
            }
        }
        @if c.erased { p.flash.done { "Erased: the content was replaced by a tombstone." } }
        section.sides {
            div.side.candidate {
                h2 { "This candidate" }
                @if let Some(rel) = &related {
                    @let (left, _) = diff::words(&c.text, &rel.text);
                    p.text.diff { (diff_side(&c.text, &left)) }
                } @else {
                    p.text { (c.text) }
                }
            }
            @if let Some(rel) = &related {
                div.side.related {
                    h2 { @if review.as_ref().is_some_and(|r| r.duplicate_of.is_some()) { "Duplicates memory " } @else { "Contradicts memory " }
                         a href=(format!("/memories/{}", views::seg(&rel.id))) { code { (rel.id) } } }
                    @let (_, right) = diff::words(&c.text, &rel.text);
                    p.text.diff { (diff_side(&rel.text, &right)) }
                    p.meta { (rel.tier) " · promoted " (rel.promoted_at) @if rel.retracted { " · retracted" } }
                }
            }
        }
        @if waiting {
            section.actions {
                @if mine {
                    p.keys { "Keys: " kbd { "r" } " reject (type the reason, Enter) · " kbd { "s" } " skip" }
                    div #four-eyes .four-eyes role="note" {
                        button #approve-unavailable type="button" disabled title="four eyes: another reviewer must approve it" { "Approve" }
                        p { "Four eyes: this candidate was captured by you (by your role, a role yours is a member of or that is a \
                             member of yours, or under your role's name), so you cannot approve it: another reviewer must. \
                             You may still reject or edit it." }
                    }
                } @else {
                    p.keys { "Keys: " kbd { "a" } " approve · " kbd { "r" } " reject (type the reason, Enter) · " kbd { "s" } " skip" }
                    form #approve-form .approve method="post" action=(action("approve")) {
                        (views::csrf_field(csrf))
                        @if choose {
                            fieldset #resolution {
                                legend { "It contradicts a memory no rule lets it replace. Approving it:" }
                                label { input type="radio" name="resolution" value="supersede" required; " supersedes that memory (it is retracted)" }
                                label { input type="radio" name="resolution" value="coexist" required; " keeps both (recall marks both as in contradiction)" }
                            }
                        }
                        label { "Notes " input #approve-notes type="text" name="notes" maxlength="8192"; }
                        button #approve type="submit" { "Approve" }
                    }
                }
                form #reject-form .reject method="post" action=(action("reject")) {
                    (views::csrf_field(csrf))
                    label { "Reason " input #reject-reason type="text" name="reason" required maxlength="8192"; }
                    button #reject type="submit" { "Reject" }
                }
                details.edit {
                    summary { "Edit before approving" }
                    form #edit-form method="post" action=(action("edit")) {
                        (views::csrf_field(csrf))
                        label { "Text" textarea name="text" rows="4" required { (c.text) } }
                        label { "Classification " input type="text" name="classification" value=(c.classification); }
                        label { "Notes " input type="text" name="notes" maxlength="8192"; }
                        button #edit type="submit" { "Save the edit" }
                    }
                }
            }
        }
        section.about {
            div.capture {
                h2 { "Capture" }
                dl.facts {
                    dt { "Classification" } dd { (c.classification) }
                    dt { "Source" } dd { (c.source) }
                    dt { "Actor" } dd { (c.actor.as_deref().unwrap_or("—")) }
                    dt { "Captured by role" } dd { (c.captured_by.as_deref().unwrap_or("—")) }
                    dt { "Captured" } dd { (c.captured_at) }
                    dt { "User" } dd { (c.user_id.as_deref().unwrap_or("—")) }
                    dt { "Intent" } dd { (c.intent_id.as_deref().unwrap_or("—")) }
                    dt { "Redactions" } dd { (c.redactions) @if !c.redaction_rules.is_empty() { " (" (c.redaction_rules.join(", ")) ")" } }
                    @if let Some(w) = &c.write_class { dt { "Write class" } dd { (w) } }
                    @if let Some((e, p, v)) = &c.fact { dt { "Fact" } dd { (e) " · " (p) @if let Some(v) = v { " = " code { (v) } } } }
                    @if let Some(s) = &c.supersedes { dt { "Supersedes" } dd { code { (s) } } }
                    dt { "Evidence" }
                    dd {
                        @if c.evidence.is_empty() { "none" }
                        @else if evidence.is_empty() { ul #evidence .evidence { @for e in &c.evidence { li { code { (e) } } } } }
                        @else {
                            ul #evidence .evidence {
                                @for (e, origin) in &evidence {
                                    li {
                                        code { (e) } " "
                                        @match origin {
                                            None => span.prov.trusted { "trusted" },
                                            Some(o) => span.prov.untrusted title="untrusted content: the provenance gate's class" { "untrusted: " (o) },
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(r) = &review {
                div.review {
                    h2 { "Review" }
                    dl.facts {
                        dt { "Verdict" } dd { (r.status) " by " (r.reviewer) @if let Some(res) = &r.resolution { " (" (res) ")" } }
                        dt { "Reason" } dd { (views::reasons(r.reason.as_deref().unwrap_or("—"))) }
                        dt { "Tier" } dd { (r.tier) }
                        dt { "Priority" } dd { (format!("{:.2}", r.priority)) }
                        dt { "Similarity" } dd { @if let Some(s) = r.similarity { (format!("{s:.3}")) } @else { "—" } }
                        dt { "Policy version" } dd { (r.policy_version) }
                        dt { "Reviewed" } dd { (r.reviewed_at) }
                        @if let Some(n) = &r.notes { dt { "Notes" } dd.notes { (n) } }
                    }
                }
            }
        }
        p.nav {
            a href="/queue" { "Back to the queue" }
            " · "
            @match &next {
                Some(n) => a #skip href=(format!("/candidates/{}", views::seg(n))) { "Skip: next candidate" },
                None => a #skip href="/queue" { "Skip: no other candidate waits" },
            }
        }
    };
    Ok(ctx.page(&format!("Candidate {}", c.id), body))
}

/// One side of the word diff: the words of `text` (which `words` are slices of, in order), the
/// differing ones in `<mark>`, with the whitespace between them as `text` has it, so that line
/// breaks survive (the text is shown pre-wrap) and no space is added at the end.
fn diff_side(text: &str, words: &[diff::Word<'_>]) -> Markup {
    let base = text.as_ptr() as usize;
    let mut at = 0;
    let mut parts: Vec<(&str, &diff::Word<'_>)> = Vec::with_capacity(words.len());
    for w in words {
        let start = (w.text.as_ptr() as usize).wrapping_sub(base);
        let gap = match text.get(at..start) {
            Some(g) if start + w.text.len() <= text.len() => {
                at = start + w.text.len();
                g
            }
            // not a slice of text (never, with diff::words): a plain space between words
            _ if parts.is_empty() => "",
            _ => " ",
        };
        parts.push((gap, w));
    }
    html! { @for (gap, w) in &parts { (gap) @if w.changed { mark { (w.text) } } @else { (w.text) } } }
}

#[derive(Deserialize, Default)]
pub struct DecisionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    classification: String,
    /// approve: what becomes of the memory a contradiction contradicts (supersede, coexist)
    #[serde(default)]
    resolution: String,
}

pub async fn decide(ctx: Ctx, Path((id, what)): Path<(String, String)>, Form(f): Form<DecisionForm>) -> Result<Response, AppError> {
    ctx.check_csrf(&f.csrf)?;
    let tenant = ctx.tenant()?;
    if !matches!(what.as_str(), "approve" | "reject" | "edit") {
        return Ok(not_found("action", &what));
    }
    if what == "reject" && f.reason.trim().is_empty() {
        ctx.session.flash(Flash::Failed(PgError::new("22023", "A rejection needs a reason.")));
        return Ok(Redirect::to(&format!("/candidates/{}", views::seg(&id))).into_response());
    }
    // the role's own name: an operator cannot decide under another's
    let by = ctx.session.role.clone();
    let notes = none_if_empty(f.notes.trim()).map(str::to_string);
    // the password is checked again for every decision (a new connection): a changed password or
    // NOLOGIN ends the session here, and nothing is recorded
    let mut g = ctx.conn_fresh().await?;
    let result: Result<String, AppError> = async {
        let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
        // another tenant's candidate is not found, like an unknown id, also when the role holds a
        // grant for that tenant (the functions would refuse it with 42501, "not the pinned tenant")
        let here: bool = tx
            .query_one("SELECT EXISTS (SELECT 1 FROM memory_fabric.candidates WHERE id = $1 AND tenant_id = $2)", &[&id, &tenant])
            .await?
            .get(0);
        if !here {
            return Err(AppError::NotFound { what: "candidate", id: id.clone() });
        }
        let done = match what.as_str() {
            "approve" => {
                let resolution = none_if_empty(f.resolution.trim()).map(str::to_string);
                let r = tx
                    .query_one("SELECT id FROM memory_fabric.approve($1, $2, $3, resolution => $4)", &[&id, &by, &notes, &resolution])
                    .await?;
                format!("Approved {id}: promoted as memory {}.", r.get::<_, String>(0))
            }
            "reject" => {
                tx.query_one("SELECT id FROM memory_fabric.reject($1, $2, $3)", &[&id, &by, &f.reason.trim()]).await?;
                format!("Rejected {id}.")
            }
            _ => {
                let class = none_if_empty(f.classification.trim()).map(str::to_string);
                let r = tx
                    .query_one(
                        "SELECT candidate_id, status, reviewer FROM memory_fabric.edit($1, $2, $3, classification => $4, notes => $5)",
                        &[&id, &by, &f.text, &class, &notes],
                    )
                    .await?;
                let (new_id, status, reviewer): (String, String, String) = (r.get(0), r.get(1), r.get(2));
                format!("Edited {id}: the new candidate {new_id} was reviewed ({status}, by {reviewer}).")
            }
        };
        tx.commit().await?;
        Ok::<String, AppError>(done)
    }
    .await;
    match result {
        Ok(m) => {
            ctx.session.flash(Flash::Done(m));
            Ok(Redirect::to("/queue").into_response())
        }
        Err(e) => {
            let e = action_failure(e)?;
            // an unknown candidate and another tenant's: the same page
            if e.code == "P0002" {
                return Ok(not_found("candidate", &id));
            }
            ctx.session.flash(Flash::Failed(e));
            Ok(Redirect::to(&format!("/candidates/{}", views::seg(&id))).into_response())
        }
    }
}

impl Failure {
    /// As a message for a form's page.
    pub fn into_pg(self) -> PgError {
        match self {
            Failure::Refused(p) | Failure::SignInAgain(p) | Failure::Full(p) => p,
            Failure::Unavailable(m) | Failure::Lost(m) => PgError::new("08006", format!("The database connection failed: {m}")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Static files and health

pub async fn css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "public, max-age=86400")], views::CSS)
        .into_response()
}

pub async fn js() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "public, max-age=86400")], views::JS)
        .into_response()
}

pub async fn healthz() -> &'static str {
    "ok\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_queue_text_is_escaped() {
        let row = QueueRow {
            candidate_id: "mc_\"><script>x</script>".into(),
            tier: "durable".into(),
            reason: Some("operator_source".into()),
            status: "pending_promotion".into(),
            resolution: None,
            source: "operator".into(),
            actor: Some("<b>op</b>".into()),
            classification: "INTERNAL".into(),
            text: "<script>alert(1)</script> <img src=x onerror=alert(2)>".into(),
            evidence: 1,
            priority: 0.5,
            age: 10.0,
        };
        let html = queue_body("t<1>", &QueueFilter::default(), &[row], 1, &[(Some("operator_source".into()), 1)], Powers::default())
            .into_string();
        assert!(!html.contains("<script>") && !html.contains("<img") && !html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("/candidates/mc_%22%3E%3Cscript%3Ex%3C%2Fscript%3E"), "{html}");
    }

    #[test]
    fn a_diff_side_keeps_the_texts_whitespace_and_escapes() {
        let (a, b) = ("Ships  from Oslo.\nPays <b>by</b> card.", "Ships from Bergen.\nPays <b>by</b> card.");
        let (left, right) = diff::words(a, b);
        assert_eq!(diff_side(a, &left).into_string(), "Ships  from <mark>Oslo.</mark>\nPays &lt;b&gt;by&lt;/b&gt; card.");
        assert_eq!(diff_side(b, &right).into_string(), "Ships from <mark>Bergen.</mark>\nPays &lt;b&gt;by&lt;/b&gt; card.");
        // words that are not slices of the text are joined by spaces
        let other = [diff::Word { text: "a", changed: false }, diff::Word { text: "b", changed: true }];
        assert_eq!(diff_side("zz", &other).into_string(), "a <mark>b</mark>");
    }
}
