//! The metrics page: the `metrics` view's snapshot (admins: reviewers have no SELECT on it) and
//! four charts drawn on the server as inline SVG (no script, no library). The charts are computed
//! from the tables a reviewer can read (`reviews`, `decisions`, `promoted_memory`), so they show
//! for reviewers too:
//! - queue depth over time: derived, not sampled: a candidate is in the queue from its human review
//!   until the first of a newer review, a decision or its promotion (the `review_queue` view's rule
//!   at each instant); nothing is recorded by the console;
//! - auto-promotion rate: memories promoted with `promoted_by` `auto` or `bulk` against the rest;
//! - contradictions by resolution; rejections by reason (automatic by review reason, human by the
//!   decision's reason).

use axum::extract::Query;
use axum::response::Response;
use maud::{html, Markup};
use serde::Deserialize;

use crate::app::{AppError, Ctx};
use crate::db::{self, Failure};
use crate::views;

#[derive(Deserialize, Default)]
pub struct MetricsQuery {
    #[serde(default)]
    days: String,
}

const WINDOWS: [(&str, i32); 3] = [("1", 1), ("7", 7), ("30", 30)];

pub async fn metrics(ctx: Ctx, Query(q): Query<MetricsQuery>) -> Result<Response, AppError> {
    let tenant = ctx.tenant()?;
    let days = WINDOWS.iter().find(|(k, _)| *k == q.days).map(|(_, d)| *d).unwrap_or(7);
    let mut g = ctx.conn().await?;
    let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
    let depth: Vec<(f64, f64)> = tx
        .query(
            "WITH q AS (
                SELECT r.reviewed_at AS t_in,
                       LEAST((SELECT min(n.reviewed_at) FROM memory_fabric.reviews n
                              WHERE n.candidate_id = r.candidate_id AND (n.reviewed_at, n.id) > (r.reviewed_at, r.id)),
                             (SELECT min(d.decided_at) FROM memory_fabric.decisions d
                              WHERE d.candidate_id = r.candidate_id AND d.decided_at >= r.reviewed_at),
                             (SELECT min(p.promoted_at) FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id)) AS t_out
                FROM memory_fabric.reviews r
                WHERE r.tenant_id = $1 AND r.reviewer = 'human'),
             s AS (SELECT pg_catalog.generate_series(pg_catalog.now() - pg_catalog.make_interval(days => $2), pg_catalog.now(),
                                                     pg_catalog.make_interval(days => $2) / 48) AS at)
             SELECT extract(epoch FROM s.at)::float8,
                    (SELECT count(*) FROM q WHERE q.t_in <= s.at AND (q.t_out IS NULL OR q.t_out > s.at))::float8
             FROM s ORDER BY 1",
            &[&tenant, &days],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let promotions: Vec<(String, f64)> = tx
        .query(
            "SELECT CASE WHEN promoted_by IN ('auto', 'bulk') THEN promoted_by ELSE 'human approval' END, count(*)::float8
             FROM memory_fabric.promoted_memory WHERE tenant_id = $1 AND promoted_at > pg_catalog.now() - pg_catalog.make_interval(days => $2)
             GROUP BY 1 ORDER BY 1",
            &[&tenant, &days],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let contradictions: Vec<(String, f64)> = tx
        .query(
            "SELECT coalesce(contradiction_resolution, 'none'), count(DISTINCT candidate_id)::float8
             FROM memory_fabric.reviews WHERE tenant_id = $1 AND status = 'contradicts'
               AND reviewed_at > pg_catalog.now() - pg_catalog.make_interval(days => $2)
             GROUP BY 1 ORDER BY 2 DESC, 1",
            &[&tenant, &days],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let rejections: Vec<(String, f64)> = tx
        .query(
            "SELECT label, n FROM (
                SELECT 'review: ' || coalesce(reason, 'no reason') AS label, count(*)::float8 AS n
                FROM memory_fabric.reviews WHERE tenant_id = $1 AND status = 'rejected'
                  AND reviewed_at > pg_catalog.now() - pg_catalog.make_interval(days => $2) GROUP BY 1
                UNION ALL
                SELECT 'operator: ' || coalesce(pg_catalog.left(notes, 60), 'no reason'), count(*)::float8
                FROM memory_fabric.decisions WHERE tenant_id = $1 AND action = 'reject'
                  AND decided_at > pg_catalog.now() - pg_catalog.make_interval(days => $2) GROUP BY 1) x
             ORDER BY n DESC, label LIMIT 12",
            &[&tenant, &days],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    tx.commit().await?;
    // the metrics view: admins only (reviewers have no SELECT on it), so it is read for admins
    // alone; a reviewer is told what is admin-only, as a note, not an error
    let snapshot: Result<Option<Vec<(&'static str, String)>>, String> = if ctx.session.powers.admin {
        let tx = db::begin(g.as_mut().expect("connected"), Some(&tenant)).await?;
        let r = tx
            .query_opt(
                "SELECT captures::text, queue_depth::text, coalesce(pg_catalog.date_trunc('second', oldest_queued_age)::text, '—'),
                        contradiction_backlog::text, coalesce(pg_catalog.date_trunc('second', median_contradiction_resolution)::text, '—'),
                        promotions_auto::text, promotions_human::text, recalls::text,
                        coalesce(pg_catalog.round(recall_hit_rate::numeric, 3)::text, '—'), pii_promoted_without_consent::text,
                        verdicts::text, promotions_by_tier::text
                 FROM memory_fabric.metrics WHERE tenant_id = $1",
                &[&tenant],
            )
            .await;
        match r {
            Ok(r) => {
                tx.commit().await?;
                Ok(r.map(|r| {
                    let names = [
                        "captures",
                        "queue depth",
                        "oldest queued",
                        "contradiction backlog",
                        "median contradiction resolution",
                        "promotions (auto)",
                        "promotions (human)",
                        "recalls",
                        "recall hit rate",
                        "PII promoted without consent",
                        "verdicts",
                        "promotions by tier",
                    ];
                    names.iter().enumerate().map(|(i, n)| (*n, r.get::<_, String>(i))).collect()
                }))
            }
            Err(e) => match db::classify(&e) {
                Failure::Refused(p) => Err(p.message),
                f => return Err(AppError::Db(f)),
            },
        }
    } else {
        Ok(None)
    };
    drop(g);
    let auto = promotions.iter().filter(|(k, _)| k != "human approval").fold(0.0, |a, (_, n)| a + n);
    let all = promotions.iter().fold(0.0, |a, (_, n)| a + n);
    let body = html! {
        h1 { "Metrics " small { "tenant " (tenant) } }
        form.filters method="get" action="/metrics" {
            label { "Window "
                select name="days" { @for (k, d) in WINDOWS { option value=(k) selected[d == days] { "last " (d) @if d == 1 { " day" } @else { " days" } } } }
            }
            button type="submit" { "Show" }
        }
        section #metrics-view {
            h2 { "The metrics view" }
            @if !ctx.session.powers.admin {
                p #metrics-admin-only .note {
                    "The snapshot of the metrics view (captures, recalls, the recall hit rate, PII promoted without consent, \
                     verdicts, promotions by tier) is for admins: only memory_fabric_admin may read memory_fabric.metrics. \
                     The charts below are computed from the reviews, decisions and memories your role can read."
                }
            } @else {
                @match &snapshot {
                    Ok(Some(rows)) => dl.facts { @for (k, v) in rows { dt { (k) } dd { (v) } } },
                    Ok(None) => p { "No metrics for this tenant yet." },
                    Err(m) => div #metrics-error .error role="alert" {
                        p.message { "The metrics view could not be read: " (m) }
                    },
                }
            }
        }
        section.charts {
            figure #chart-queue-depth {
                figcaption { "Queue depth over the last " (days) @if days == 1 { " day" } @else { " days" }
                    small { " (derived from reviews, decisions and promotions: a candidate counts from its human review until decided, reviewed again or promoted)" } }
                (line_chart(&depth, &if days == 1 { "1 day ago".to_string() } else { format!("{days} days ago") }))
            }
            figure #chart-auto-promotion {
                figcaption { "Auto-promotion rate: "
                    @if all > 0.0 { strong { (format!("{:.0} %", 100.0 * auto / all)) } " of " (all) " promotions" } @else { "no promotions" } }
                (bar_chart(&promotions))
            }
            figure #chart-contradictions { figcaption { "Contradictions by resolution" } (bar_chart(&contradictions)) }
            figure #chart-rejections { figcaption { "Rejections by reason" } (bar_chart(&rejections)) }
        }
    };
    Ok(ctx.page("Metrics", body))
}

/// Horizontal bars, one per label, scaled to the largest; labels and numbers as SVG text.
pub fn bar_chart(data: &[(String, f64)]) -> Markup {
    if data.is_empty() {
        return html! { p.empty { "Nothing in this window." } };
    }
    let (w, label_w, row) = (640.0, 260.0, 24.0);
    let h = row * data.len() as f64 + 8.0;
    let max = data.iter().map(|(_, n)| *n).fold(0.0, f64::max).max(1.0);
    html! {
        svg.chart.bars xmlns="http://www.w3.org/2000/svg" width=(w) height=(h) viewBox=(format!("0 0 {w} {h}")) role="img" {
            @for (i, (label, n)) in data.iter().enumerate() {
                @let y = 4.0 + i as f64 * row;
                @let bw = ((w - label_w - 60.0) * n / max).max(1.0);
                text x=(label_w - 8.0) y=(y + 16.0) text-anchor="end" { (views::clip(label, 40)) }
                rect x=(label_w) y=(y + 3.0) width=(format!("{bw:.1}")) height=(row - 8.0) class="bar" {}
                text x=(format!("{:.1}", label_w + bw + 6.0)) y=(y + 16.0) { (n) }
            }
        }
    }
}

/// A line over time (epoch seconds, value), with the maximum marked on the axis; `since` names
/// the first instant.
pub fn line_chart(points: &[(f64, f64)], since: &str) -> Markup {
    if points.len() < 2 {
        return html! { p.empty { "Nothing in this window." } };
    }
    let (w, h, pad) = (640.0, 200.0, 36.0);
    let (t0, t1) = (points[0].0, points[points.len() - 1].0);
    let max = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0);
    let x = |t: f64| pad + (w - 2.0 * pad) * (t - t0) / (t1 - t0).max(1.0);
    let y = |v: f64| h - pad - (h - 2.0 * pad) * v / max;
    let path: Vec<String> = points.iter().map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v))).collect();
    let last = points[points.len() - 1].1;
    html! {
        svg.chart.line xmlns="http://www.w3.org/2000/svg" width=(w) height=(h) viewBox=(format!("0 0 {w} {h}")) role="img" {
            line x1=(pad) y1=(h - pad) x2=(w - pad) y2=(h - pad) class="axis" {}
            line x1=(pad) y1=(pad) x2=(pad) y2=(h - pad) class="axis" {}
            text x=(pad - 6.0) y=(pad + 4.0) text-anchor="end" { (max) }
            text x=(pad - 6.0) y=(h - pad + 4.0) text-anchor="end" { "0" }
            text x=(pad) y=(h - pad + 18.0) { (since) }
            text x=(w - pad) y=(h - pad + 18.0) text-anchor="end" { "now: " (last) }
            polyline points=(path.join(" ")) class="series" {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_labels_are_escaped_text() {
        let svg = bar_chart(&[("<script>x</script>".into(), 3.0), ("ok".into(), 1.0)]).into_string();
        assert!(!svg.contains("<script>") && svg.contains("&lt;script&gt;"), "{svg}");
        assert!(svg.contains("<rect"), "{svg}");
        let line = line_chart(&[(0.0, 0.0), (60.0, 2.0), (120.0, 1.0)], "<7 days ago>").into_string();
        assert!(line.contains("&lt;7 days ago&gt;"), "{line}");
        assert!(line.contains("<polyline points=\"36.0,164.0 320.0,36.0 604.0,100.0\""), "{line}");
        assert!(line_chart(&[(0.0, 1.0)], "then").into_string().contains("Nothing"));
    }
}
