//! The live queue: one listener connection per signed-in session (the session's own role) runs
//! `LISTEN memory_fabric`; each notification is forwarded to the session's event streams
//! (`GET /queue/events`, server-sent events) as `queued`, which says only that something was
//! queued. The page then fetches `GET /queue/rows` (JSON), read through the role's own connection
//! and row-level security, and inserts the new rows with DOM APIs. The payload of a notification
//! is never read: another tenant's capture wakes the page for nothing, and tells it nothing.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::Query;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use tokio::sync::broadcast;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::StreamExt;

use crate::app::{AppError, Ctx, Why};
use crate::db::{self, Failure, Live, Messages};
use crate::pages::{load_queue, QueueFilter, QueueRow};
use crate::views;

/// `GET /queue/events`: `ready` once listening, then `queued` per notification; the stream ends
/// when the listener's connection ends (the database restarted, the session ended), and the page
/// reconnects. Streams are capped per session (429) and in all (503): each holds a connection.
pub async fn events(ctx: Ctx) -> Result<Response, AppError> {
    ctx.tenant()?;
    let Some(mine) = ctx.session.streams.enter() else {
        return Ok(busy(StatusCode::TOO_MANY_REQUESTS, "too many live-queue streams for this session: close another tab of the queue\n"));
    };
    let Some(all) = ctx.app.streams.enter() else {
        return Ok(busy(StatusCode::SERVICE_UNAVAILABLE, "too many live-queue streams on this console: try again in a moment\n"));
    };
    // the role is checked as for any request (and the session ended when it may no longer sign in)
    drop(ctx.conn().await?);
    let rx = {
        let mut g = ctx.session.listener.lock().await;
        if g.as_ref().is_none_or(|(c, _)| c.is_closed()) {
            *g = None;
            let (tx, _) = broadcast::channel(16);
            let client = match ctx.app.pg.connect(&ctx.session.credentials, Messages::Forward(tx.clone())).await {
                Ok(c) => c,
                Err(e) => {
                    return Err(match db::classify_connect(&e) {
                        Failure::SignInAgain(_) => {
                            ctx.app.store.remove(&ctx.session.id);
                            AppError::SignedOut(Why::Ended)
                        }
                        f => AppError::Db(f),
                    })
                }
            };
            client.batch_execute("LISTEN memory_fabric").await?;
            *g = Some((client, tx));
        }
        g.as_ref().expect("listening").1.subscribe()
    };
    let ready = tokio_stream::once(Ok::<Event, Infallible>(Event::default().event("ready").data("{}").retry(Duration::from_secs(3))));
    let notes = BroadcastStream::new(rx)
        .map(|m| match m {
            Ok(Live::Queued) | Err(BroadcastStreamRecvError::Lagged(_)) => Some(Live::Queued),
            Ok(Live::Ended) => None,
        })
        .take_while(Option::is_some)
        // the passes go with the stream: given back when the browser goes away or the stream ends
        .map(move |_| {
            let _held = (&mine, &all);
            Ok(Event::default().event("queued").data("{}"))
        });
    Ok(Sse::new(ready.chain(notes)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response())
}

fn busy(status: StatusCode, text: &'static str) -> Response {
    let mut r = crate::serve::plain(status, text);
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

/// One row of the queue, as the page's script builds it (every field set as text).
#[derive(Serialize)]
pub struct RowJson {
    candidate_id: String,
    href: String,
    age: String,
    tier: String,
    reason: String,
    verdict: String,
    source: String,
    actor: String,
    classification: String,
    text: String,
    evidence: i32,
    priority: String,
}

impl From<&QueueRow> for RowJson {
    fn from(r: &QueueRow) -> RowJson {
        RowJson {
            candidate_id: r.candidate_id.clone(),
            href: format!("/candidates/{}", views::seg(&r.candidate_id)),
            age: views::age(r.age),
            tier: r.tier.clone(),
            reason: views::reasons(r.reason.as_deref().unwrap_or_default()),
            verdict: match &r.resolution {
                Some(res) => format!("{} ({res})", r.status),
                None => r.status.clone(),
            },
            source: r.source.clone(),
            actor: r.actor.clone().unwrap_or_default(),
            classification: r.classification.clone(),
            text: views::clip(&r.text, 200),
            evidence: r.evidence,
            priority: format!("{:.2}", r.priority),
        }
    }
}

#[derive(Serialize)]
pub struct RowsJson {
    total: i64,
    rows: Vec<RowJson>,
}

/// `GET /queue/rows?tier=&reason=&age=`: the queue as JSON, for the live page.
pub async fn rows(ctx: Ctx, Query(f): Query<QueueFilter>) -> Result<Response, AppError> {
    let tenant = ctx.tenant()?;
    let (rows, total, _) = load_queue(&ctx, &tenant, &f).await?;
    Ok(Json(RowsJson { total, rows: rows.iter().map(RowJson::from).collect() }).into_response())
}
