//! Loading the rows the pipeline decides on, and the lifecycle checks every stage shares.

use crate::error::raise;
use crate::spi::{col, plan, TEXT};
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

pub struct Candidate {
    pub id: String,
    pub tenant_id: String,
    pub user_id: Option<String>,
    pub intent_id: Option<String>,
    pub source: String,
    pub text: String,
    pub evidence_refs: String,
    pub evidence_count: usize,
    pub classification: String,
    pub captured_at: f64,
    pub entity: Option<String>,
    pub predicate: Option<String>,
    pub value: Option<String>,
    pub write_class: Option<String>,
    pub confidence: Option<f64>,
    pub actor: Option<String>,
    pub embedding: Option<Vec<f32>>,
    pub embedding_model: String,
    pub content_hash: String,
    pub metadata: String,
    pub supersedes: Option<String>,
    pub erased: bool,
    /// The role that captured it (NULL before 0.7.0 recorded roles).
    pub captured_by: Option<String>,
}

const CANDIDATE: &str = "SELECT id, tenant_id, user_id, intent_id, source, text, evidence_refs::text, \
     jsonb_array_length(evidence_refs), classification, extract(epoch FROM captured_at)::float8, entity, \
     predicate, value::text, write_class, confidence, actor, embedding::real[], embedding_model, content_hash, \
     metadata::text, supersedes, erased_at IS NOT NULL, captured_by FROM memory_fabric.candidates WHERE id = $1";

/// P0002 for a candidate id: unknown, or of a tenant the caller is not granted.
pub fn candidate_not_found(id: &str) -> Error {
    Error::new(Kind::NotFound, format!("candidate \"{id}\" does not exist"))
}

/// The candidate, or P0002.
pub fn candidate(client: &SpiClient<'_>, id: &str) -> Candidate {
    let t = client
        .select(&*plan(client, CANDIDATE, &[TEXT], false), Some(1), &[id.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read candidate: {e}"));
    let Some(r) = t.into_iter().next() else {
        raise(candidate_not_found(id));
    };
    Candidate {
        id: col(&r, 1).unwrap_or_default(),
        tenant_id: col(&r, 2).unwrap_or_default(),
        user_id: col(&r, 3),
        intent_id: col(&r, 4),
        source: col(&r, 5).unwrap_or_default(),
        text: col(&r, 6).unwrap_or_default(),
        evidence_refs: col(&r, 7).unwrap_or_else(|| "[]".into()),
        evidence_count: col::<i32>(&r, 8).unwrap_or(0).max(0) as usize,
        classification: col(&r, 9).unwrap_or_default(),
        captured_at: col(&r, 10).unwrap_or(0.0),
        entity: col(&r, 11),
        predicate: col(&r, 12),
        value: col(&r, 13),
        write_class: col(&r, 14),
        confidence: col(&r, 15),
        actor: col(&r, 16),
        embedding: col::<Vec<Option<f32>>>(&r, 17).map(|v| v.into_iter().map(|x| x.unwrap_or(0.0)).collect()),
        embedding_model: col(&r, 18).unwrap_or_default(),
        content_hash: col(&r, 19).unwrap_or_default(),
        metadata: col(&r, 20).unwrap_or_else(|| "{}".into()),
        supersedes: col(&r, 21),
        erased: col(&r, 22).unwrap_or(false),
        captured_by: col(&r, 23),
    }
}

/// A candidate's effective review: its newest.
pub struct Review {
    pub id: String,
    pub status: String,
    pub duplicate_of_id: Option<String>,
    pub contradicts_id: Option<String>,
    pub resolution: Option<String>,
    pub tier: String,
    pub priority: f64,
    pub reviewer: String,
    pub consent_id: Option<String>,
    /// What the verdict was decided on (sql/schema.sql, reviews): the scope's version and the
    /// memories compared, live and retracted.
    pub scope_version: Option<String>,
    pub neighbour_ids: Option<Vec<String>>,
    pub retracted_ids: Option<Vec<String>>,
    /// Why it was duplicated, contradicted, rejected or queued (review's machine-readable reason).
    pub reason: Option<String>,
}

impl Review {
    pub fn promotable(&self) -> bool {
        memory_fabric_core::review::promotable(&self.status, self.resolution.as_deref())
    }
}

const REVIEW: &str = "SELECT id, status, duplicate_of_id, contradicts_id, contradiction_resolution, proposed_tier, \
     priority_score::float8, reviewer, consent_id, scope_version::text, neighbour_ids, retracted_ids, reason \
     FROM memory_fabric.reviews WHERE candidate_id = $1 \
     ORDER BY reviewed_at DESC, id DESC LIMIT 1";

pub fn effective_review(client: &SpiClient<'_>, candidate_id: &str) -> Option<Review> {
    let t = client
        .select(&*plan(client, REVIEW, &[TEXT], false), Some(1), &[candidate_id.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read reviews: {e}"));
    t.into_iter().next().map(|r| Review {
        id: col(&r, 1).unwrap_or_default(),
        status: col(&r, 2).unwrap_or_default(),
        duplicate_of_id: col(&r, 3),
        contradicts_id: col(&r, 4),
        resolution: col(&r, 5),
        tier: col(&r, 6).unwrap_or_default(),
        priority: col(&r, 7).unwrap_or(0.0),
        reviewer: col(&r, 8).unwrap_or_default(),
        consent_id: col(&r, 9),
        scope_version: col(&r, 10),
        neighbour_ids: col(&r, 11),
        retracted_ids: col(&r, 12),
        reason: col(&r, 13),
    })
}

const DECISION: &str = "SELECT action, decided_by FROM memory_fabric.decisions WHERE candidate_id = $1 \
     ORDER BY decided_at DESC, id DESC LIMIT 1";

/// The newest decision on a candidate: (action, decided_by).
pub fn latest_decision(client: &SpiClient<'_>, candidate_id: &str) -> Option<(String, String)> {
    let t = client
        .select(&*plan(client, DECISION, &[TEXT], false), Some(1), &[candidate_id.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read decisions: {e}"));
    t.into_iter().next().map(|r| (col(&r, 1).unwrap_or_default(), col(&r, 2).unwrap_or_default()))
}

const PROMOTED_AS: &str = "SELECT id FROM memory_fabric.promoted_memory WHERE candidate_id = $1";

pub fn promoted_as(client: &SpiClient<'_>, candidate_id: &str) -> Option<String> {
    client
        .select(&*plan(client, PROMOTED_AS, &[TEXT], false), Some(1), &[candidate_id.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read promoted_memory: {e}"))
        .into_iter()
        .next()
        .and_then(|r| col(&r, 1))
}


/// Refuses a candidate that is promoted already, or that an operator rejected or replaced.
pub fn require_open(client: &SpiClient<'_>, c: &Candidate) {
    if c.erased {
        raise(Error::wrong_state(format!("candidate \"{}\" was erased", c.id)).detail("Its content was replaced by a tombstone."));
    }
    if let Some(pm) = promoted_as(client, &c.id) {
        raise(Error::wrong_state(format!("candidate \"{}\" is already promoted", c.id))
            .detail(format!("It was promoted as memory \"{pm}\"; a candidate is promoted at most once.")));
    }
    match latest_decision(client, &c.id) {
        Some((a, by)) if a == "reject" => raise(
            Error::wrong_state(format!("candidate \"{}\" was rejected", c.id))
                .detail(format!("It was rejected by {by}."))
                .hint("Capture a new candidate if the fact is right after all."),
        ),
        Some((a, by)) if a == "edit" => raise(
            Error::wrong_state(format!("candidate \"{}\" was replaced by an edit", c.id))
                .detail(format!("{by} edited it into a new candidate that supersedes it."))
                .hint("Review and promote the new candidate instead."),
        ),
        _ => {}
    }
}
