//! `memory_fabric.register_embedding_model()`: a tenant admin accepts callers' vectors of a model.
//! Review compares a candidate with the memories of its scope by their vectors, so the models
//! whose vectors callers may bring are the tenant's decision, not an agent's (README, Embedders).

use crate::events;
use crate::security::{caller_name, require_tenant};
use pgrx::prelude::*;
use serde_json::json;

/// Internal: the body of memory_fabric.register_embedding_model(). Idempotent.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _register_embedding_model(tenant_id: Option<&str>, model: Option<&str>, dimensions: Option<i32>) {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let model = crate::args::require_identifier("model", model);
    if model.len() > memory_fabric_core::args::NAME_MAX {
        crate::error::raise(
            memory_fabric_core::Error::limit("model is too long")
                .detail(format!("It has {} bytes; at most {} are allowed.", model.len(), memory_fabric_core::args::NAME_MAX)),
        );
    }
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        let max = crate::policy::for_tenant(client, &tenant).policy.limits.embedding_max_dimensions;
        let dims = dimensions.filter(|d| *d >= 1 && *d as usize <= max).unwrap_or_else(|| {
            crate::error::raise(memory_fabric_core::Error::invalid(format!("dimensions must be between 1 and {max}")).detail(
                format!("{} was given; the tenant's policy allows vectors of at most {max} dimensions.", dimensions.map_or("NULL".to_owned(), |d| d.to_string())),
            ))
        });
        if !crate::embedder::register(client, &tenant, &model, dims) {
            let by = caller_name(client);
            events::emit(client, &tenant, "memory.model_registered", &format!("model:{model}"), Some(&by), json!({"model": model, "dimensions": dims}));
        }
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.register_embedding_model(tenant_id text, model text, dimensions integer)
RETURNS memory_fabric.embedding_models
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_row memory_fabric.embedding_models;
BEGIN
    PERFORM memory_fabric._register_embedding_model(register_embedding_model.tenant_id, register_embedding_model.model,
                                                     register_embedding_model.dimensions);
    SELECT * INTO STRICT v_row FROM memory_fabric.embedding_models AS m
    WHERE m.tenant_id = register_embedding_model.tenant_id AND m.model = register_embedding_model.model;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.register_embedding_model IS
    'Accept callers'' vectors of an embedding model for a tenant (a tenant admin''s decision: review compares memories by them)';
REVOKE ALL ON FUNCTION memory_fabric.register_embedding_model(text, text, integer),
    memory_fabric._register_embedding_model(text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.register_embedding_model(text, text, integer) TO memory_fabric_admin;
"#,
    name = "register_embedding_model",
    requires = [_register_embedding_model],
);
