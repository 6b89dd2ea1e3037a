//! The SQL surface: one module per public operation, named as users call it. Each holds the
//! operation's SQL declaration (its SECURITY DEFINER wrapper or view, the comment users read
//! with \df+, and its privileges) next to the internal `_`-prefixed Rust function it calls.
//! PUBLIC executes nothing; the three roles (sql/schema.sql) get what their job needs.

mod approve;
mod candidate_evidence;
mod capture_memory;
mod create_embedding_index;
mod edit;
mod explain_recall;
mod forget_subject;
mod grant_tenant;
mod memory_history;
mod metrics;
mod my_tenants;
mod promote;
mod promote_pending;
mod purge_expired;
mod purge_expired_memories;
mod recall;
mod recall_fact;
mod record_consent;
mod reembed_memories;
mod register_embedding_model;
mod reject;
mod retract;
mod review_candidate;
mod review_status;
mod revoke_consent;
mod revoke_tenant;
mod set_policy;
mod verify_audit;
