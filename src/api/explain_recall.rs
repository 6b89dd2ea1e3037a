//! `memory_fabric.explain_recall()`: whether a memory was visible to a recall at an instant, and why not.

use pgrx::prelude::*;

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.explain_recall(
    tenant_id text, memory_id text, intent_id text DEFAULT NULL, user_id text DEFAULT NULL,
    classification_allowed text[] DEFAULT ARRAY['PUBLIC', 'INTERNAL'], as_of timestamptz DEFAULT NULL)
RETURNS TABLE (visible boolean, reasons text[], memory text, at timestamptz)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    t  timestamptz := coalesce(explain_recall.as_of, pg_catalog.clock_timestamp());
    m  memory_fabric.promoted_memory;
    k  memory_fabric.consents;
    r  text[] := '{}';
    ts constant text := 'YYYY-MM-DD HH24:MI:SS "UTC"';
BEGIN
    PERFORM memory_fabric._require_tenant(explain_recall.tenant_id);
    SELECT * INTO m FROM memory_fabric.promoted_memory p
    WHERE p.id = explain_recall.memory_id AND p.tenant_id = explain_recall.tenant_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memory "%" does not exist', explain_recall.memory_id USING ERRCODE = 'no_data_found',
            DETAIL = format('No promoted memory with that id belongs to tenant "%s".', explain_recall.tenant_id);
    END IF;
    IF m.promoted_at > t THEN
        r := r || format('not promoted yet: promoted at %s', to_char(m.promoted_at AT TIME ZONE 'UTC', ts));
    END IF;
    IF m.retracted_at IS NOT NULL AND m.retracted_at <= t THEN
        r := r || format('retracted at %s by %s: %s', to_char(m.retracted_at AT TIME ZONE 'UTC', ts),
                         m.retracted_by, m.retraction_reason);
    END IF;
    IF m.expires_at IS NOT NULL AND m.expires_at <= t THEN
        r := r || format('expired at %s (%s tier)', to_char(m.expires_at AT TIME ZONE 'UTC', ts), m.tier);
    END IF;
    IF m.erased_at IS NOT NULL AND m.erased_at <= t THEN
        r := r || format('erased at %s', to_char(m.erased_at AT TIME ZONE 'UTC', ts));
    END IF;
    IF NOT (m.classification = ANY (coalesce(explain_recall.classification_allowed, '{}'))) THEN
        r := r || format('classification %s is not in the allowed set %s', m.classification,
                         coalesce(explain_recall.classification_allowed, '{}'));
    END IF;
    IF m.user_id IS NOT NULL AND m.user_id IS DISTINCT FROM explain_recall.user_id THEN
        r := r || format('scoped to user %s', m.user_id);
    END IF;
    IF m.intent_scope IS NOT NULL AND m.intent_scope IS DISTINCT FROM explain_recall.intent_id THEN
        r := r || format('scoped to intent %s', m.intent_scope);
    END IF;
    IF m.consent_id IS NOT NULL THEN
        SELECT * INTO k FROM memory_fabric.consents c WHERE c.id = m.consent_id;
        IF k.revoked_at IS NOT NULL AND k.revoked_at <= t THEN
            r := r || format('consent %s revoked at %s: %s', k.id, to_char(k.revoked_at AT TIME ZONE 'UTC', ts),
                             k.revocation_reason);
        ELSIF k.valid_until IS NOT NULL AND k.valid_until <= t THEN
            r := r || format('consent %s expired at %s', k.id, to_char(k.valid_until AT TIME ZONE 'UTC', ts));
        ELSIF k.captured_at > t THEN
            r := r || format('consent %s not recorded yet', k.id);
        END IF;
    END IF;
    -- visible is what recall applies (memory_fabric._visible_memories); the reasons above say why not
    RETURN QUERY SELECT EXISTS (
        SELECT 1 FROM memory_fabric._visible_memories(explain_recall.tenant_id, explain_recall.user_id,
            explain_recall.intent_id, coalesce(explain_recall.classification_allowed, '{}'), t) v
        WHERE v.id = m.id), r, m.text, t;
END
$$;
COMMENT ON FUNCTION memory_fabric.explain_recall IS
    'Whether a memory was visible to a recall at an instant, and every reason it was hidden';
REVOKE ALL ON FUNCTION memory_fabric.explain_recall(text, text, text, text, text[], timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.explain_recall(text, text, text, text, text[], timestamptz) TO memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "explain_recall",
    requires = [_require_tenant],
);
