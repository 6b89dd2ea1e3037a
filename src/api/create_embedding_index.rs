//! `memory_fabric.create_embedding_index()`: the nearest-neighbour index for an embedding model,
//! built-in or a caller's own, from its name and dimensions: HNSW, partial (one model's vectors
//! cast to their dimensions), cosine distance. No model has one by default (sql/schema.sql says
//! why); review searches it for the model's scopes above memory_fabric.exact_search_limit.

use crate::error::raise;
use crate::security::{caller_is_administrator, caller_name};
use crate::spi::vector_schema;
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;

/// pgvector's HNSW indexes `vector` up to this many dimensions.
const HNSW_MAX_DIMENSIONS: i32 = 2000;
/// The graph's parameters: review searches the graph only for its few nearest (near-duplicates and
/// contradictions lie far above the similarity of unrelated rows), so it is built sparse; m = 8
/// and ef_construction = 32 made an insert 3.7 times cheaper than pgvector's defaults (16, 64) on
/// 100,000 memories (BENCHMARKS.md).
const HNSW_M: i32 = 8;
const HNSW_EF_CONSTRUCTION: i32 = 32;

/// Internal: the body of memory_fabric.create_embedding_index(). Returns the index's name;
/// creates it unless an index with that name exists already.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _create_embedding_index(model: Option<&str>, dimensions: Option<i32>) -> String {
    let model = crate::args::require_identifier("model", model);
    if model.len() > 200 {
        raise(Error::invalid("model must be at most 200 bytes").detail(format!("{} bytes were given.", model.len())));
    }
    let Some(dims) = dimensions else {
        raise(Error::invalid("dimensions must not be null"));
    };
    if !(1..=HNSW_MAX_DIMENSIONS).contains(&dims) {
        raise(Error::invalid(format!("dimensions must be between 1 and {HNSW_MAX_DIMENSIONS}"))
            .detail(format!("{dims} was given; pgvector's HNSW index takes vectors of at most {HNSW_MAX_DIMENSIONS} dimensions.")));
    }
    Spi::connect_mut(|client| {
        // One index serves every tenant's vectors of the model, and slows every promotion of
        // them: the same rights as a grant for every tenant.
        if !caller_is_administrator(client) {
            raise(Error::new(Kind::Privilege, format!("role \"{}\" cannot create an embedding index", caller_name(client)))
                .detail("An index serves the model's vectors of every tenant.")
                .hint("Ask a superuser or the role that installed memory_fabric."));
        }
        let name = crate::embedder::hnsw_index_name(client, &model, dims);
        if crate::embedder::has_hnsw_index(client, &model, dims) {
            pgrx::notice!("index \"{name}\" for model \"{model}\" ({dims} dimensions) exists already");
            return name;
        }
        let vs = vector_schema(client);
        let literal = pgrx::spi::quote_literal(&model);
        client
            .update(
                &format!(
                    "CREATE INDEX {name} ON memory_fabric.promoted_memory \
                     USING hnsw ((embedding::{vs}.vector({dims})) {vs}.vector_cosine_ops) \
                     WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) \
                     WHERE embedding_model = {literal}"
                ),
                None,
                &[],
            )
            // vectors of the model with other dimensions fail the cast: pgvector's 22000
            .unwrap_or_else(|e| error!("memory_fabric: cannot create index {name}: {e}"));
        name
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.create_embedding_index(model text, dimensions integer)
RETURNS text
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT memory_fabric._create_embedding_index(create_embedding_index.model, create_embedding_index.dimensions) $$;
COMMENT ON FUNCTION memory_fabric.create_embedding_index IS
    'Create the nearest-neighbour (HNSW) index for an embedding model''s vectors of a given dimension; returns its name';
REVOKE ALL ON FUNCTION memory_fabric.create_embedding_index(text, integer),
    memory_fabric._create_embedding_index(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.create_embedding_index(text, integer) TO memory_fabric_admin;
"#,
    name = "create_embedding_index",
    requires = [_create_embedding_index],
);
