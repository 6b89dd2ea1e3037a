//! A memory's (or candidate's) history as a timeline, from `memory_history`, and what recall would
//! say about it for a chosen user and intent, from `explain_recall`.

use axum::extract::{Path, Query};
use axum::response::Response;
use maud::html;
use serde::Deserialize;

use crate::app::{AppError, Ctx};
use crate::db::{self, Failure};
use crate::views;

#[derive(Deserialize, Default)]
pub struct ExplainQuery {
    #[serde(default)]
    user: String,
    #[serde(default)]
    intent: String,
    /// Comma-separated classifications allowed (default: PUBLIC, INTERNAL).
    #[serde(default)]
    classes: String,
    #[serde(default)]
    explain: String,
}

struct Step {
    at: String,
    stage: String,
    reference: Option<String>,
    detail: Option<String>,
}

struct Explained {
    visible: bool,
    reasons: Vec<String>,
    memory: Option<String>,
    at: Option<String>,
}

const TS: &str = "YYYY-MM-DD HH24:MI:SS TZ";

fn opt(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() {
        None
    } else {
        Some(t.to_string())
    }
}

pub async fn memory(ctx: Ctx, Path(id): Path<String>, Query(q): Query<ExplainQuery>) -> Result<Response, AppError> {
    let tenant = ctx.tenant()?;
    let classes: Vec<String> = q.classes.split(',').map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect();
    let classes = if classes.is_empty() { vec!["PUBLIC".to_string(), "INTERNAL".to_string()] } else { classes };
    let result = async {
        let mut g = ctx.conn().await?;
        let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
        // another tenant's id is not found here, like an unknown one, also when the role holds a
        // grant for that tenant: memory_history would refuse it with 42501 ("not the pinned
        // tenant"), a page that differs from the unknown id's
        let here: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM memory_fabric.candidates WHERE id = $1 AND tenant_id = $2)
                     OR EXISTS (SELECT 1 FROM memory_fabric.promoted_memory WHERE id = $1 AND tenant_id = $2)",
                &[&id, &tenant],
            )
            .await?
            .get(0);
        if !here {
            return Err(AppError::NotFound { what: "memory or candidate", id: id.clone() });
        }
        let steps: Vec<Step> = tx
            .query(
                "SELECT pg_catalog.to_char(at, $2), stage, ref, CASE WHEN detail IS NULL OR detail = '{}'::jsonb THEN NULL
                        ELSE pg_catalog.jsonb_pretty(detail) END
                 FROM memory_fabric.memory_history($1) ORDER BY at, stage",
                &[&id, &TS],
            )
            .await?
            .iter()
            .map(|r| Step { at: r.get(0), stage: r.get(1), reference: r.get(2), detail: r.get(3) })
            .collect();
        let memory: Option<(String, String, bool)> = tx
            .query_opt(
                "SELECT text, tier, retracted_at IS NOT NULL FROM memory_fabric.promoted_memory WHERE id = $1 AND tenant_id = $2",
                &[&id, &tenant],
            )
            .await?
            .map(|r| (r.get(0), r.get(1), r.get(2)));
        let explained = if memory.is_some() && !q.explain.is_empty() {
            let r = tx
                .query_one(
                    "SELECT visible, reasons, memory, pg_catalog.to_char(at, $6)
                     FROM memory_fabric.explain_recall($1, $2, intent_id => $3, user_id => $4, classification_allowed => $5)",
                    &[&tenant, &id, &opt(&q.intent), &opt(&q.user), &classes, &TS],
                )
                .await?;
            Some(Explained {
                visible: r.get(0),
                reasons: r.get::<_, Option<Vec<String>>>(1).unwrap_or_default(),
                memory: r.get(2),
                at: r.get(3),
            })
        } else {
            None
        };
        tx.commit().await?;
        Ok::<_, AppError>((steps, memory, explained))
    };
    let (steps, memory, explained) = match result.await {
        Ok(v) => v,
        // an unknown id and another tenant's: the same page
        Err(AppError::Db(Failure::Refused(e))) if e.code == "P0002" => {
            return Err(AppError::NotFound { what: "memory or candidate", id });
        }
        Err(e) => return Err(e),
    };
    let body = html! {
        h1 { "History of " code { (id) } }
        @if let Some((text, tier, retracted)) = &memory {
            div.side { p.text { (text) } p.meta { (tier) @if *retracted { " · retracted" } } }
        }
        h2 { "Timeline" }
        @if steps.is_empty() { p { "No history." } }
        ol #timeline .timeline {
            @for s in &steps {
                li class=(format!("step stage-{}", s.stage.replace(|c: char| !c.is_ascii_alphanumeric(), "-"))) {
                    span.at { (s.at) } " "
                    strong.stage { (s.stage) }
                    @if let Some(r) = &s.reference {
                        " "
                        @if r.starts_with("mc_") { a href=(format!("/candidates/{}", views::seg(r))) { code { (r) } } }
                        @else if r.starts_with("pm_") { a href=(format!("/memories/{}", views::seg(r))) { code { (r) } } }
                        @else { code { (r) } }
                    }
                    @if let Some(d) = &s.detail { details { summary { "detail" } pre.detail { (d) } } }
                }
            }
        }
        @if memory.is_some() {
            h2 { "What recall would say" }
            form #explain-form .explain method="get" action=(format!("/memories/{}", views::seg(&id))) {
                input type="hidden" name="explain" value="1";
                label { "User " input type="text" name="user" value=(q.user) maxlength="256"; }
                label { "Intent " input type="text" name="intent" value=(q.intent) maxlength="256"; }
                label { "Classifications " input type="text" name="classes" value=(classes.join(",")) maxlength="256"; }
                button #explain type="submit" { "Explain" }
            }
            @if let Some(x) = &explained {
                div #explained class=(if x.visible { "explained visible" } else { "explained hidden" }) {
                    p { strong { @if x.visible { "Visible" } @else { "Not visible" } }
                        " to a recall for user " code { (q.user.trim()) } " and intent " code { (q.intent.trim()) }
                        @if let Some(at) = &x.at { " at " (at) } }
                    @if !x.reasons.is_empty() { ul.reasons { @for r in &x.reasons { li { (r) } } } }
                    @if let Some(m) = &x.memory { p.meta { "memory: " (m) } }
                }
            }
        } @else {
            p.meta { "Recall's explanation is for promoted memories: this is a candidate." }
        }
    };
    Ok(ctx.page(&format!("History {id}"), body))
}
