//! Stage 3, promotion: promote, approve, reject, edit, retract. Promotion is the only way into
//! promoted_memory; every step re-checks the lifecycle under a lock, so concurrent calls cannot
//! promote a candidate twice or supersede a memory twice.

use crate::pipeline::capture::capture;
use crate::ids::new_id;
use crate::pipeline::review::{review, verdict_again};
use crate::error::raise;
use crate::events;
use crate::policy;
use crate::rows::{self, Candidate, Review};
use crate::spi::{col, plan, BOOL, FLOAT8, INT8, OID, TEXT, TIMESTAMPTZ};
use memory_fabric_core::capture::CaptureInput;
use memory_fabric_core::policy::Tier;
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use serde_json::json;


/// The effective review of a candidate, which must exist.
fn reviewed(client: &SpiClient<'_>, c: &Candidate) -> Review {
    let Some(r) = rows::effective_review(client, &c.id) else {
        raise(Error::wrong_state(format!("candidate \"{}\" has not been reviewed", c.id))
            .hint("Call memory_fabric.review_candidate() first."));
    };
    r
}

/// The effective review of an open candidate, which must allow promotion: as it stands, or with
/// the resolution a reviewer chose for its contradiction (`chosen`, from approve(), which checked
/// that the review is a contradiction).
fn promotable_review(client: &SpiClient<'_>, c: &Candidate, chosen: Option<&str>) -> Review {
    let r = reviewed(client, c);
    if !r.promotable() && !(chosen.is_some() && r.status == "contradicts") {
        let (what, hint) = match (r.status.as_str(), &r.duplicate_of_id, &r.contradicts_id) {
            ("duplicate_of", Some(d), _) => (format!("it duplicates memory \"{d}\""), None),
            ("contradicts", _, Some(x)) => (
                format!("it contradicts memory \"{x}\" and no rule resolved it (resolution block): a person decides"),
                Some("A reviewer decides it: memory_fabric.approve() with resolution => 'supersede' or 'coexist', or memory_fabric.reject().".to_owned()),
            ),
            ("rejected", _, _) => ("review rejected it".to_owned(), None),
            (s, _, _) => (format!("its review status is {s}"), None),
        };
        let e = Error::wrong_state(format!("candidate \"{}\" is not promotable", c.id))
            .detail(format!("The effective review {} says {what}.", r.id));
        raise(match hint {
            Some(h) => e.hint(h),
            None => e,
        });
    }
    r
}

/// The resolutions a reviewer may choose for a contradiction in approve().
const RESOLUTIONS: [&str; 2] = ["supersede", "coexist"];

/// What approve() applies to the candidate's contradiction: the reviewer's `resolution`, else the
/// review's own when a rule resolved it (supersede, coexist); None for any other candidate.
/// Refuses (22023) a resolution that is not one of RESOLUTIONS, a resolution for a candidate
/// whose review is not a contradiction, and none for a contradiction no rule resolved (block).
fn resolution_for(c: &Candidate, r: &Review, resolution: Option<&str>) -> Option<String> {
    let choices = "resolution => 'supersede' (it is promoted and the memory it contradicts is retracted), \
                   resolution => 'coexist' (both stand, and recall marks both in_contradiction), \
                   or memory_fabric.reject() to keep the memory and not promote the candidate";
    if let Some(x) = resolution {
        if !RESOLUTIONS.contains(&x) {
            raise(Error::invalid(format!("resolution must be supersede or coexist, not \"{x}\""))
                .hint(format!("Pass {choices}.")));
        }
    }
    if r.status != "contradicts" {
        if resolution.is_some() {
            raise(Error::invalid(format!("candidate \"{}\" is not a contradiction: it takes no resolution", c.id))
                .detail(format!("Its effective review {} says {}; a resolution is chosen for a contradiction only.", r.id, r.status))
                .hint("Call memory_fabric.approve() without resolution."));
        }
        return None;
    }
    let memory = r.contradicts_id.as_deref().unwrap_or_default();
    match (resolution, r.resolution.as_deref()) {
        (Some(x), _) => Some(x.to_owned()),
        (None, Some(own)) if RESOLUTIONS.contains(&own) => Some(own.to_owned()),
        _ => raise(
            Error::invalid(format!("approving candidate \"{}\" needs a resolution", c.id))
                .detail(format!(
                    "It contradicts memory \"{memory}\" and no rule resolved it (its effective review {} says resolution block).",
                    r.id
                ))
                .hint(format!("Pass {choices}.")),
        ),
    }
}

const RETRACT_SUPERSEDED: &str = "UPDATE memory_fabric.promoted_memory \
     SET retracted_at = $3, retracted_by = $2, retraction_reason = 'superseded by ' || $2 \
     WHERE id = $1 AND retracted_at IS NULL RETURNING tenant_id";

const INSERT: &str = "WITH t AS (SELECT $12::timestamptz AS now) \
     INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope, text, \
        evidence_refs, classification, source, tier, priority, entity, predicate, value, write_class, confidence, \
        embedding, embedding_model, content_hash, consent_id, promoted_by, promoted_at, expires_at, \
        in_contradiction, contradicts_id, supersedes_id, promoted_by_role) \
     SELECT $1, c.id, $2, c.tenant_id, c.user_id, c.intent_id, c.text, c.evidence_refs, c.classification, c.source, \
        $3, $4, c.entity, c.predicate, c.value, c.write_class, c.confidence, c.embedding, c.embedding_model, \
        c.content_hash, $5, $6, t.now, t.now + $7 * interval '1 second', $8, $9, $10, pg_catalog.pg_get_userbyid($13) \
     FROM memory_fabric.candidates c, t WHERE c.id = $11";

/// Promotes an open, reviewed candidate. `approved` is set only by approve(), after it has
/// recorded the approval decision.
pub fn promote(client: &mut SpiClient<'_>, candidate_id: &str, approver: Option<&str>, approved: bool) -> String {
    promote_as(client, candidate_id, approver, approved, None)
}

/// promote(), with the resolution a reviewer chose for the candidate's contradiction (approve()).
fn promote_as(client: &mut SpiClient<'_>, candidate_id: &str, approver: Option<&str>, approved: bool, chosen: Option<&str>) -> String {
    promote_if_current(client, candidate_id, approver, approved, false, chosen)
        .unwrap_or_else(|| error!("memory_fabric: promotion of {candidate_id} refused without an error"))
}

/// What the bulk path does (promote_pending()): promotes like promote(), or returns None, having
/// written nothing, when review would decide otherwise now (promote() raises 55000 then), so
/// that the caller reviews the candidate again instead of stopping.
pub fn promote_unless_stale(client: &mut SpiClient<'_>, candidate_id: &str) -> Option<String> {
    promote_if_current(client, candidate_id, None, false, true, None)
}

/// Promotes as the effective review says, or, for a contradiction, as the reviewer chose
/// (`chosen`: supersede or coexist; approve() checked it). The verdict decided again must be the
/// review's in either case: a reviewer decides the contradiction the review found, with the
/// promoted memories as they were then.
fn promote_if_current(
    client: &mut SpiClient<'_>,
    candidate_id: &str,
    approver: Option<&str>,
    approved: bool,
    stale_ok: bool,
    chosen: Option<&str>,
) -> Option<String> {
    crate::xact::lock(client, "candidate", &[Some(candidate_id)]);
    let c = crate::security::candidate_for_caller(client, candidate_id);
    // An erasure of the candidate's subject cannot interleave: forget_subject() takes the same
    // lock, so it either ran first (the candidate, read again, is erased) or waits and then
    // erases the new memory with the rest. Without it, a promotion could copy content that an
    // uncommitted erasure had already tombstoned into a memory the erasure never saw.
    // every subject the candidate's user or entity names: itself, and what follows the kind of
    // a "<kind>:<subject>" (memory_fabric._names_subject(), as erasure reads it)
    let mut subjects: Vec<&str> = Vec::new();
    for name in [c.user_id.as_deref(), c.entity.as_deref()].into_iter().flatten() {
        subjects.push(name);
        if let Some((_, s)) = name.split_once(':') {
            subjects.push(s);
        }
    }
    subjects.sort_unstable();
    subjects.dedup();
    for s in &subjects {
        crate::xact::lock(client, "subject", &[Some(c.tenant_id.as_str()), Some(s)]);
    }
    let c = if subjects.is_empty() { c } else { rows::candidate(client, candidate_id) };
    rows::require_open(client, &c);
    let r = promotable_review(client, &c, chosen);
    if r.reviewer == "human" && !approved {
        raise(Error::wrong_state(format!("candidate \"{}\" requires approval", c.id))
            .detail(match &r.reason {
                Some(why) => format!("Its review queued it for a human ({why}; {} tier).", r.tier),
                None => format!("Its review queued it for a human ({} tier).", r.tier),
            })
            .hint("Call memory_fabric.approve() as a reviewer other than the capture's actor."));
    }

    // One promotion at a time per scope, and the verdict must still hold: a near-duplicate or
    // a contradiction promoted since the review changes it.
    crate::xact::lock_scope(client, &c.tenant_id, c.user_id.as_deref());
    // The consent the memory will depend on cannot be revoked until this promotion ends:
    // revoke_consent() takes the same lock, so it either ran first (and the verdict below no
    // longer finds the consent) or waits and then retracts this memory with the others.
    if let Some(k) = &r.consent_id {
        crate::xact::lock(client, "consent", &[Some(k.as_str())]);
    }
    let now = verdict_again(client, &c, &r);
    let same = now.status.as_str() == r.status
        && now.duplicate_of == r.duplicate_of_id
        && now.contradicts == r.contradicts_id
        && now.resolution.map(|x| x.as_str()) == r.resolution.as_deref();
    let consent_same = now.consent_id == r.consent_id;
    if (!same || !consent_same) && stale_ok {
        return None;
    }
    if !same || !consent_same {
        let what = if consent_same { "the promoted memories" } else { "its consent" };
        raise(Error::wrong_state(format!("{what} changed since candidate \"{}\" was reviewed", c.id))
            .detail(format!("Reviewed now, it would be {}.", now.notes.as_deref().unwrap_or(now.status.as_str())))
            .hint("Call memory_fabric.review_candidate() again."));
    }

    let pm = new_id("pm");
    // One instant for the whole promotion: a superseded memory is retracted at the instant its
    // successor is promoted, so recall as of any instant sees exactly one of the two.
    let now = crate::xact::clock(client);
    // what the promotion does with the contradiction: the reviewer's choice, else the review's
    let resolution = if r.status == "contradicts" { chosen.or(r.resolution.as_deref()) } else { None };
    let supersedes = (resolution == Some("supersede")).then(|| r.contradicts_id.clone()).flatten();
    if let Some(old) = &supersedes {
        crate::xact::lock(client, "memory", &[Some(old.as_str())]);
        let p = plan(client, RETRACT_SUPERSEDED, &[TEXT, TEXT, TIMESTAMPTZ], true);
        let done = client
            .update(&*p, None, &[old.as_str().into(), pm.as_str().into(), now.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot supersede: {e}"));
        if done.is_empty() {
            raise(Error::wrong_state(format!("memory \"{old}\" is already retracted"))
                .detail("A memory is superseded at most once.")
                .hint("Call memory_fabric.review_candidate() again."));
        }
        events::emit(client, &c.tenant_id, "memory.retracted", old, approver, json!({"reason": "superseded", "superseded_by": pm}));
    }

    let pol = policy::for_tenant(client, &c.tenant_id);
    let ttl = Tier::parse(&r.tier).and_then(|t| pol.policy.ttl_of(t));
    let coexist = resolution == Some("coexist");
    let promoted_by = approver.unwrap_or("auto");
    let p = plan(client, INSERT, &[TEXT, TEXT, TEXT, FLOAT8, TEXT, TEXT, INT8, BOOL, TEXT, TEXT, TEXT, TIMESTAMPTZ, OID], true);
    client
        .update(
            &*p,
            None,
            &[
                pm.as_str().into(),
                r.id.as_str().into(),
                r.tier.as_str().into(),
                r.priority.into(),
                r.consent_id.as_deref().into(),
                promoted_by.into(),
                ttl.into(),
                coexist.into(),
                (if coexist { r.contradicts_id.as_deref() } else { None }).into(),
                supersedes.as_deref().into(),
                c.id.as_str().into(),
                now.into(),
                crate::role::caller().into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot promote: {e}"));
    let mut payload = json!({"candidate_id": c.id, "review_id": r.id, "tier": r.tier, "promoted_by": promoted_by,
                             "supersedes": supersedes, "coexists_with": if coexist { r.contradicts_id.clone() } else { None }});
    // the resolution a reviewer chose (approve()), in the audit chain with the event
    if let Some(x) = chosen {
        payload["resolution"] = json!(x);
    }
    events::emit(client, &c.tenant_id, "memory.promoted", &pm, approver, payload);
    Some(pm)
}

const DECIDE: &str = "INSERT INTO memory_fabric.decisions (id, tenant_id, candidate_id, review_id, action, decided_by, \
     notes, new_candidate_id, decided_by_role, resolution) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, pg_catalog.pg_get_userbyid($9), $10)";

/// A decision. `resolution`: what an approval did with the candidate's contradiction.
#[allow(clippy::too_many_arguments)]
fn record_decision(
    client: &mut SpiClient<'_>,
    c: &Candidate,
    review_id: Option<&str>,
    action: &str,
    by: &str,
    notes: Option<&str>,
    new_candidate: Option<&str>,
    resolution: Option<&str>,
) -> String {
    let id = new_id("dc");
    let p = plan(client, DECIDE, &[TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, OID, TEXT], true);
    client
        .update(
            &*p,
            None,
            &[
                id.as_str().into(),
                c.tenant_id.as_str().into(),
                c.id.as_str().into(),
                review_id.into(),
                action.into(),
                by.into(),
                notes.into(),
                new_candidate.into(),
                crate::role::caller().into(),
                resolution.into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot record decision: {e}"));
    id
}

/// Four eyes: refuses (42501) an approval by the role that captured the candidate (or a role
/// that is a member of it, or of which it is a member), and by the display name it captured
/// under. Superusers and the extension's owner can write the tables directly, so for them only
/// the display names are compared; so too for candidates captured before roles were recorded.
fn require_second_pair_of_eyes(client: &SpiClient<'_>, c: &Candidate, approver: &str) {
    let by_role = c.captured_by.as_deref().filter(|role| {
        !crate::security::caller_is_administrator(client) && crate::security::is_caller(client, role)
    });
    if let Some(role) = by_role {
        raise(Error::new(Kind::Privilege, format!("role \"{}\" cannot approve candidate \"{}\"", crate::security::caller_name(client), c.id))
            .detail(format!("Role \"{role}\" captured it; four eyes: the approving role must be another role, not a member of it nor one it belongs to."))
            .hint("Ask a reviewer logged in as another role to approve it."));
    }
    if c.actor.as_deref() == Some(approver) {
        raise(Error::new(Kind::Privilege, format!("\"{approver}\" cannot approve candidate \"{}\"", c.id))
            .detail(format!("{approver} captured it; four eyes: the approver must differ from the capture's actor."))
            .hint("Ask another reviewer to approve it."));
    }
}

/// Records an approval (four eyes: not by the role or the actor that captured it) and promotes.
/// For a contradiction, the promotion does what `resolution` says (supersede: the memory it
/// contradicts is retracted; coexist: both stand), else what its review said; one that no rule
/// resolved (block) needs a resolution. The decision records what it did.
pub fn approve(client: &mut SpiClient<'_>, candidate_id: &str, approver: &str, notes: Option<&str>, resolution: Option<&str>) -> String {
    crate::xact::lock(client, "candidate", &[Some(candidate_id)]);
    let c = crate::security::candidate_for_caller(client, candidate_id);
    rows::require_open(client, &c);
    let r = reviewed(client, &c);
    let applied = resolution_for(&c, &r, resolution);
    let chosen = resolution.and(applied.as_deref());
    let r = promotable_review(client, &c, chosen);
    require_second_pair_of_eyes(client, &c, approver);
    record_decision(client, &c, Some(&r.id), "approve", approver, notes, None, applied.as_deref());
    promote_as(client, candidate_id, Some(approver), true, chosen)
}

pub fn reject(client: &mut SpiClient<'_>, candidate_id: &str, approver: &str, reason: &str) -> String {
    crate::xact::lock(client, "candidate", &[Some(candidate_id)]);
    let c = crate::security::candidate_for_caller(client, candidate_id);
    rows::require_open(client, &c);
    let r = rows::effective_review(client, &c.id);
    let id = record_decision(client, &c, r.as_ref().map(|r| r.id.as_str()), "reject", approver, Some(reason), None, None);
    events::emit(client, &c.tenant_id, "memory.rejected", &c.id, Some(approver), json!({"decision_id": id, "reason": reason}));
    id
}

/// Captures the edited text as a new operator candidate that supersedes the old one, records
/// the edit, and reviews the new candidate; returns the new review's id.
#[allow(clippy::too_many_arguments)]
pub fn edit(
    client: &mut SpiClient<'_>,
    candidate_id: &str,
    editor: &str,
    text: &str,
    classification: Option<&str>,
    evidence_refs: Option<&str>,
    value: Option<&str>,
    notes: Option<&str>,
) -> String {
    crate::xact::lock(client, "candidate", &[Some(candidate_id)]);
    let c = crate::security::candidate_for_caller(client, candidate_id);
    rows::require_open(client, &c);
    let mut metadata: serde_json::Value = serde_json::from_str(&c.metadata).unwrap_or_else(|_| json!({}));
    metadata["edited_from"] = json!(c.id);
    let metadata = metadata.to_string();
    let input = CaptureInput {
        tenant_id: Some(&c.tenant_id),
        text: Some(text),
        source: Some("operator"),
        classification: Some(classification.unwrap_or(&c.classification)),
        user_id: c.user_id.as_deref(),
        intent_id: c.intent_id.as_deref(),
        evidence_refs: Some(evidence_refs.unwrap_or(&c.evidence_refs)),
        entity: c.entity.as_deref(),
        predicate: c.predicate.as_deref(),
        value: value.or(c.value.as_deref()),
        write_class: c.write_class.as_deref(),
        confidence: c.confidence,
        actor: Some(editor),
        embedding_model: None,
        has_embedding: false,
        supersedes: Some(&c.id),
        metadata: Some(&metadata),
    };
    let new_id = capture(client, &input, None);
    let r = rows::effective_review(client, &c.id);
    record_decision(client, &c, r.as_ref().map(|r| r.id.as_str()), "edit", editor, notes, Some(&new_id), None);
    review(client, &new_id, None)
}

const MEMORY: &str = "SELECT tenant_id, to_char(retracted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), retracted_by \
     FROM memory_fabric.promoted_memory WHERE id = $1";
const RETRACT: &str = "UPDATE memory_fabric.promoted_memory SET retracted_at = pg_catalog.clock_timestamp(), \
     retracted_by = $2, retraction_reason = $3 WHERE id = $1 AND retracted_at IS NULL";
const ORPHANED_DUPLICATES: &str = "SELECT r.candidate_id FROM memory_fabric.reviews r \
     WHERE r.duplicate_of_id = $1 AND r.status = 'duplicate_of' \
       AND r.id = (SELECT r2.id FROM memory_fabric.reviews r2 WHERE r2.candidate_id = r.candidate_id \
                   ORDER BY r2.reviewed_at DESC, r2.id DESC LIMIT 1) \
       AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id) \
       AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d WHERE d.candidate_id = r.candidate_id \
                       AND d.action IN ('reject', 'edit')) \
     ORDER BY r.candidate_id";

/// Retracts a memory (write-once), then sends the candidates that were duplicates of it back
/// to the human queue: the original is gone, so someone decides whether they stand.
pub fn retract(client: &mut SpiClient<'_>, memory_id: &str, reason: &str, retracted_by: &str) -> String {
    crate::xact::lock(client, "memory", &[Some(memory_id)]);
    let row = client
        .select(&*plan(client, MEMORY, &[TEXT], false), Some(1), &[memory_id.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read memory: {e}"))
        .into_iter()
        .next()
        .map(|r| (col::<String>(&r, 1).unwrap_or_default(), col::<String>(&r, 2), col::<String>(&r, 3)));
    let not_found = || Error::new(Kind::NotFound, format!("memory \"{memory_id}\" does not exist"));
    let Some((tenant, retracted_at, by)) = row else {
        raise(not_found());
    };
    crate::security::require_row_tenant(client, &tenant, not_found);
    if let Some(at) = retracted_at {
        raise(Error::wrong_state(format!("memory \"{memory_id}\" is already retracted"))
            .detail(format!("It was retracted at {at} by {}.", by.unwrap_or_default())));
    }
    let p = plan(client, RETRACT, &[TEXT, TEXT, TEXT], true);
    client
        .update(&*p, None, &[memory_id.into(), retracted_by.into(), reason.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot retract: {e}"));
    events::emit(client, &tenant, "memory.retracted", memory_id, Some(retracted_by), json!({"reason": reason}));

    let p = plan(client, ORPHANED_DUPLICATES, &[TEXT], false);
    let orphans: Vec<String> = client
        .select(&*p, None, &[memory_id.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot find duplicates: {e}"))
        .into_iter()
        .filter_map(|r| col::<String>(&r, 1))
        .collect();
    for cid in orphans {
        pgrx::check_for_interrupts!();
        review(client, &cid, Some("duplicate_of_retracted"));
    }
    memory_id.to_owned()
}

