//! Admin pages, shown only to roles that may execute `memory_fabric.set_policy` (the console's
//! check is a courtesy: the database checks every call again): consents (record, revoke),
//! erasure (`forget_subject`, after a confirmation step that asks for the user id again), and the
//! policy in force with its version history.

use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use maud::html;
use serde::Deserialize;

use crate::app::{action_failure, AppError, Ctx};
use crate::db::{self, PgError};
use crate::session::Flash;
use crate::views;

const TS: &str = "YYYY-MM-DD HH24:MI:SS TZ";

fn admin(ctx: &Ctx) -> Result<String, AppError> {
    if !ctx.session.powers.admin {
        return Err(AppError::AdminOnly);
    }
    ctx.tenant()
}

fn list(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()
}

fn opt(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() {
        None
    } else {
        Some(t.to_string())
    }
}

/// Runs an admin action in one transaction; its message or its failure becomes the flash, and
/// the browser goes back to `back` (post/redirect/get).
async fn act<F>(ctx: &Ctx, tenant: &str, back: &str, f: F) -> Result<Response, AppError>
where
    F: for<'t> FnOnce(&'t tokio_postgres::Transaction<'t>) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, AppError>> + Send + 't>>,
{
    // a new connection, so that PostgreSQL checks the password again before any admin action
    let mut g = ctx.conn_fresh().await?;
    let result = async {
        let tx = db::begin(g.as_mut().expect("connected"), Some(tenant)).await?;
        let m = f(&tx).await?;
        tx.commit().await?;
        Ok::<String, AppError>(m)
    }
    .await;
    match result {
        Ok(m) => ctx.session.flash(Flash::Done(m)),
        Err(e) => ctx.session.flash(Flash::Failed(action_failure(e)?)),
    }
    Ok(Redirect::to(back).into_response())
}

pub async fn index(ctx: Ctx) -> Result<Response, AppError> {
    admin(&ctx)?;
    Ok(Redirect::to("/admin/consents").into_response())
}

fn admin_nav() -> maud::Markup {
    html! {
        nav.admin { a href="/admin/consents" { "Consents" } " · " a href="/admin/erasure" { "Erasure" } " · " a href="/admin/policy" { "Policy" } }
    }
}

// ---------------------------------------------------------------------------------------------
// Consents

pub async fn consents(ctx: Ctx) -> Result<Response, AppError> {
    let tenant = admin(&ctx)?;
    let rows = {
        let mut g = ctx.conn().await?;
        let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
        let rows = tx
            .query(
                "SELECT id, subject, purpose, basis, pg_catalog.array_to_string(predicates_allowed, ', '),
                        pg_catalog.array_to_string(classifications_allowed, ', '), pg_catalog.to_char(valid_until, $2),
                        pg_catalog.to_char(captured_at, $2), pg_catalog.to_char(revoked_at, $2), revocation_reason, supersedes,
                        erased_at IS NOT NULL
                 FROM memory_fabric.consents WHERE tenant_id = $1 ORDER BY captured_at DESC, id LIMIT 500",
                &[&tenant, &TS],
            )
            .await?;
        tx.commit().await?;
        rows
    };
    let csrf = &ctx.session.csrf;
    let body = html! {
        h1 { "Consents " small { "tenant " (tenant) } }
        (admin_nav())
        table #consents .queue {
            thead { tr { th { "Id" } th { "Subject" } th { "Purpose" } th { "Basis" } th { "Predicates" } th { "Classes" }
                         th { "Valid until" } th { "Recorded" } th { "State" } } }
            tbody {
                @for r in &rows {
                    @let id: String = r.get(0);
                    @let revoked: Option<String> = r.get(8);
                    tr.consent-row data-consent-id=(id) {
                        td { code { (id) } @if let Some(s) = r.get::<_, Option<String>>(10) { br; small { "supersedes " (s) } } }
                        td { (r.get::<_, String>(1)) }
                        td { (r.get::<_, String>(2)) }
                        td { (r.get::<_, String>(3)) }
                        td { (r.get::<_, String>(4)) }
                        td { (r.get::<_, String>(5)) }
                        td { (r.get::<_, Option<String>>(6).unwrap_or_else(|| "—".into())) }
                        td { (r.get::<_, String>(7)) }
                        td {
                            @if r.get::<_, bool>(11) { "erased " }
                            @if let Some(at) = &revoked {
                                "revoked " (at) @if let Some(why) = r.get::<_, Option<String>>(9) { ": " (why) }
                            } @else {
                                form.revoke method="post" action="/admin/consents/revoke" {
                                    (views::csrf_field(csrf))
                                    input type="hidden" name="consent_id" value=(id);
                                    input type="text" name="reason" required placeholder="reason" maxlength="8192";
                                    button type="submit" { "Revoke" }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Record a consent" }
        form #record-consent .stack method="post" action="/admin/consents/record" {
            (views::csrf_field(csrf))
            label { "Subject (user or entity) " input type="text" name="subject" required maxlength="256"; }
            label { "Purpose " input type="text" name="purpose" required maxlength="256"; }
            label { "Basis " input type="text" name="basis" required maxlength="256" placeholder="consent, contract, legal_obligation…"; }
            label { "Predicates allowed " small { "(comma-separated; empty: any)" } input type="text" name="predicates"; }
            label { "Classifications allowed " small { "(comma-separated; empty: any)" } input type="text" name="classifications"; }
            label { "Valid until " small { "(a timestamp; empty: no end)" } input type="text" name="valid_until" placeholder="2027-01-01 00:00+00"; }
            label { "Evidence refs " small { "(comma-separated)" } input type="text" name="evidence"; }
            label { "Supersedes " small { "(a consent id of the same subject)" } input type="text" name="supersedes"; }
            button type="submit" { "Record" }
        }
    };
    Ok(ctx.page("Consents", body))
}

#[derive(Deserialize, Default)]
pub struct ConsentForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    purpose: String,
    #[serde(default)]
    basis: String,
    #[serde(default)]
    predicates: String,
    #[serde(default)]
    classifications: String,
    #[serde(default)]
    valid_until: String,
    #[serde(default)]
    evidence: String,
    #[serde(default)]
    supersedes: String,
}

pub async fn record_consent(ctx: Ctx, Form(f): Form<ConsentForm>) -> Result<Response, AppError> {
    ctx.check_csrf(&f.csrf)?;
    let tenant = admin(&ctx)?;
    let evidence = serde_json::Value::from(list(&f.evidence));
    let (subject, purpose, basis) = (f.subject.trim().to_string(), f.purpose.trim().to_string(), f.basis.trim().to_string());
    let (preds, classes) = (list(&f.predicates), list(&f.classifications));
    let (until, supersedes) = (opt(&f.valid_until), opt(&f.supersedes));
    // the role's own name, as on decisions
    let auditor = ctx.session.role.clone();
    let t = tenant.clone();
    act(&ctx, &tenant, "/admin/consents", move |tx| {
        Box::pin(async move {
            let r = tx
                .query_one(
                    "SELECT id FROM memory_fabric.record_consent($1, $2, $3, $4, predicates_allowed => $5,
                        classifications_allowed => $6, valid_until => $7::text::timestamptz, evidence_refs => $8,
                        auditor_id => $9, supersedes => $10)",
                    &[&t, &subject, &purpose, &basis, &preds, &classes, &until, &evidence, &auditor, &supersedes],
                )
                .await?;
            Ok(format!("Recorded consent {} for {subject}.", r.get::<_, String>(0)))
        })
    })
    .await
}

#[derive(Deserialize, Default)]
pub struct RevokeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    consent_id: String,
    #[serde(default)]
    reason: String,
}

pub async fn revoke_consent(ctx: Ctx, Form(f): Form<RevokeForm>) -> Result<Response, AppError> {
    ctx.check_csrf(&f.csrf)?;
    let tenant = admin(&ctx)?;
    act(&ctx, &tenant, "/admin/consents", move |tx| {
        Box::pin(async move {
            tx.query_one("SELECT id FROM memory_fabric.revoke_consent($1, $2)", &[&f.consent_id, &f.reason.trim()]).await?;
            Ok(format!("Revoked consent {}: the memories that depended on it are retracted.", f.consent_id))
        })
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Erasure

pub async fn erasure(ctx: Ctx) -> Result<Response, AppError> {
    let tenant = admin(&ctx)?;
    let body = html! {
        h1 { "Erasure " small { "tenant " (tenant) } }
        (admin_nav())
        p { "Erases everything about a subject (user or entity) in this tenant: memory_fabric.forget_subject tombstones \
             the content, evidence, notes, event text, recall queries and consent evidence, keeps keyed digests, and \
             retracts the live memories. It cannot be undone." }
        form #erasure-form .stack method="post" action="/admin/erasure" {
            (views::csrf_field(&ctx.session.csrf))
            input type="hidden" name="step" value="confirm";
            label { "Subject (user id) " input #erasure-user type="text" name="user_id" required maxlength="256"; }
            label { "Reason " input type="text" name="reason" required maxlength="8192"; }
            button type="submit" { "Continue" }
        }
    };
    Ok(ctx.page("Erasure", body))
}

#[derive(Deserialize, Default)]
pub struct ErasureForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    step: String,
    #[serde(default)]
    user_id: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    confirm: String,
}

pub async fn erase(ctx: Ctx, Form(f): Form<ErasureForm>) -> Result<Response, AppError> {
    ctx.check_csrf(&f.csrf)?;
    let tenant = admin(&ctx)?;
    if f.user_id.is_empty() || f.reason.trim().is_empty() {
        ctx.session.flash(Flash::Failed(PgError::new("22023", "Give the subject and a reason.")));
        return Ok(Redirect::to("/admin/erasure").into_response());
    }
    if f.step != "erase" {
        let body = html! {
            h1 { "Confirm the erasure" }
            div.error role="alert" {
                p.message { "This erases everything about " code { (f.user_id) } " in tenant " code { (tenant) } ", for good." }
            }
            form #erasure-confirm .stack method="post" action="/admin/erasure" {
                (views::csrf_field(&ctx.session.csrf))
                input type="hidden" name="step" value="erase";
                input type="hidden" name="user_id" value=(f.user_id);
                input type="hidden" name="reason" value=(f.reason);
                label { "Type the subject again to confirm " input #erasure-confirm-user type="text" name="confirm" required autocomplete="off"; }
                button #erase type="submit" { "Erase" }
            }
            p { a href="/admin/erasure" { "Cancel" } }
        };
        return Ok(ctx.page("Confirm the erasure", body));
    }
    if f.confirm != f.user_id {
        ctx.session.flash(Flash::Failed(PgError::new("22023", "The subject typed to confirm does not match: nothing was erased.")));
        return Ok(Redirect::to("/admin/erasure").into_response());
    }
    let t = tenant.clone();
    act(&ctx, &tenant, "/admin/erasure", move |tx| {
        Box::pin(async move {
            let r = tx
                .query_one(
                    "SELECT candidates_erased, memories_erased FROM memory_fabric.forget_subject($1, $2, $3)",
                    &[&t, &f.user_id, &f.reason.trim()],
                )
                .await?;
            Ok(format!(
                "Erased {}: {} candidates and {} memories.",
                f.user_id,
                r.get::<_, i64>(0),
                r.get::<_, i64>(1)
            ))
        })
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Policy

pub async fn policy(ctx: Ctx) -> Result<Response, AppError> {
    let tenant = admin(&ctx)?;
    let rows = {
        let mut g = ctx.conn().await?;
        let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
        let rows = tx
            .query(
                "SELECT tenant_id, version, pg_catalog.jsonb_pretty(body), pg_catalog.to_char(created_at, $2), created_by, note
                 FROM memory_fabric.policies WHERE tenant_id IN ($1, '*')
                 ORDER BY tenant_id = '*', version DESC LIMIT 200",
                &[&tenant, &TS],
            )
            .await?;
        tx.commit().await?;
        rows
    };
    let in_force = rows.first();
    let body = html! {
        h1 { "Policy " small { "tenant " (tenant) } }
        (admin_nav())
        @match in_force {
            None => p { "No policy is visible to your role for this tenant." },
            Some(r) => {
                h2 #policy-in-force { "In force: "
                    @if r.get::<_, String>(0) == "*" { "the default policy" } @else { "tenant " (r.get::<_, String>(0)) }
                    ", version " (r.get::<_, i32>(1)) }
                pre.policy { (r.get::<_, String>(2)) }
            }
        }
        h2 { "Versions" }
        table #policy-versions .queue {
            thead { tr { th { "Tenant" } th { "Version" } th { "Created" } th { "By" } th { "Note" } th { "Body" } } }
            tbody {
                @for r in &rows {
                    tr {
                        td { (r.get::<_, String>(0)) }
                        td.num { (r.get::<_, i32>(1)) }
                        td { (r.get::<_, String>(3)) }
                        td { (r.get::<_, Option<String>>(4).unwrap_or_default()) }
                        td { (r.get::<_, Option<String>>(5).unwrap_or_default()) }
                        td { details { summary { "show" } pre.policy { (r.get::<_, String>(2)) } } }
                    }
                }
            }
        }
        p.meta { "A new version is made with memory_fabric.set_policy(tenant, patch, note) from psql." }
    };
    Ok(ctx.page("Policy", body))
}
