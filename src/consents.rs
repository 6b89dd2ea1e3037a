//! The consents store: which live consent covers a candidate.

use crate::rows::Candidate;
use crate::spi::{col, plan, TEXT};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

// The consent's subject is the memory's: its user ($2) when it has one, and its entity ($3) when
// it has one, each naming it as the subject itself or as "<kind>:<subject>" (customer:cus_77;
// memory_fabric._names_subject(), which erasure reads too). A memory with neither has no subject
// and no consent.
const MATCHING_CONSENT: &str = "SELECT k.id FROM memory_fabric.consents k \
     WHERE k.tenant_id = $1 AND ($2::text IS NOT NULL OR $3::text IS NOT NULL) \
       AND ($2::text IS NULL OR memory_fabric._names_subject($2, k.subject)) \
       AND ($3::text IS NULL OR memory_fabric._names_subject($3, k.subject)) \
       AND k.revoked_at IS NULL AND k.captured_at <= pg_catalog.clock_timestamp() \
       AND (k.valid_until IS NULL OR k.valid_until > pg_catalog.clock_timestamp()) \
       AND (pg_catalog.cardinality(k.predicates_allowed) = 0 OR $4 = ANY (k.predicates_allowed)) \
       AND (pg_catalog.cardinality(k.classifications_allowed) = 0 OR $5 = ANY (k.classifications_allowed)) \
       AND k.purpose = $6 \
       AND NOT EXISTS (SELECT 1 FROM memory_fabric.consents s WHERE s.supersedes = k.id AND s.tenant_id = k.tenant_id \
                       AND s.captured_at <= pg_catalog.clock_timestamp()) \
     ORDER BY k.captured_at DESC, k.id LIMIT 1";

/// Review step 2: a live consent of the candidate's tenant for its subject (every subject it
/// names: its user and its entity), its predicate, its classification and its purpose: the one
/// the capture names in metadata.purpose, else the policy's consent.default_purpose. A consent
/// superseded by a newer record no longer matches.
pub fn matching_consent(client: &SpiClient<'_>, c: &Candidate, default_purpose: &str) -> Option<String> {
    let purpose = serde_json::from_str::<serde_json::Value>(&c.metadata)
        .ok()
        .and_then(|m| m.get("purpose").and_then(|p| p.as_str()).map(str::to_owned))
        .unwrap_or_else(|| default_purpose.to_owned());
    let p = plan(client, MATCHING_CONSENT, &[TEXT, TEXT, TEXT, TEXT, TEXT, TEXT], false);
    client
        .select(
            &*p,
            Some(1),
            &[
                c.tenant_id.as_str().into(),
                c.user_id.as_deref().into(),
                c.entity.as_deref().into(),
                c.predicate.as_deref().into(),
                c.classification.as_str().into(),
                purpose.as_str().into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot read consents: {e}"))
        .into_iter()
        .next()
        .and_then(|r| col(&r, 1))
}
