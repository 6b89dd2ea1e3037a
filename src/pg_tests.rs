// `#[pg_test]`: Rust-level behaviour inside a real backend. Included into `mod tests` in lib.rs.

use memory_fabric_core::embed;
use pgrx::prelude::*;

fn capture(tenant: &str, text: &str) -> String {
    Spi::get_one_with_args::<String>(
        "SELECT id FROM memory_fabric.capture_memory($1, $2, 'agent', 'PUBLIC')",
        &[tenant.into(), text.into()],
    )
    .unwrap()
    .unwrap()
}

#[pg_test]
fn default_policy_is_installed_and_parses() {
    let n = Spi::get_one::<i64>("SELECT count(*) FROM memory_fabric.policies WHERE tenant_id = '*'");
    assert_eq!(n, Ok(Some(1)));
    let p = Spi::connect(|c| crate::policy::for_tenant(c, "any_tenant"));
    assert_eq!(p.version, 1);
    assert_eq!(p.policy, memory_fabric_core::policy::Policy::from_json(
        &memory_fabric_core::policy::Policy::default_json()).unwrap());
}

#[pg_test]
fn a_new_policy_version_is_picked_up_by_the_cache() {
    let before = Spi::connect(|c| crate::policy::for_tenant(c, "t_cache"));
    assert_eq!(before.version, 1);
    Spi::run("INSERT INTO memory_fabric.policies (tenant_id, version, body) \
              VALUES ('t_cache', 7, '{\"classifications\": [\"PUBLIC\"]}')").unwrap();
    let after = Spi::connect(|c| crate::policy::for_tenant(c, "t_cache"));
    assert_eq!(after.version, 7);
    assert_eq!(after.policy.classifications, ["PUBLIC"]);
    // Other tenants still get the default.
    assert_eq!(Spi::connect(|c| crate::policy::for_tenant(c, "t_other")).version, 1);
}

#[pg_test]
fn stored_embedding_is_the_core_embedding_of_the_redacted_text() {
    Spi::run("SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1'").unwrap();
    let id = capture("t_emb", "Card 4111111111111111 is on file.");
    let (text, v) = Spi::get_two_with_args::<String, Vec<f32>>(
        "SELECT text, embedding::real[] FROM memory_fabric.candidates WHERE id = $1",
        &[id.as_str().into()],
    )
    .unwrap();
    let text = text.unwrap();
    assert_eq!(text, "Card [REDACTED:payment_card] is on file.");
    assert_eq!(v.unwrap(), embed::embed(&text));
}

#[pg_test]
fn the_semantic_model_embeds_in_the_backend_as_in_the_core() {
    Spi::run("SET memory_fabric.builtin_model = 'sentence-transformers/all-MiniLM-L6-v2'").unwrap();
    let id = capture("t_sem", "The customer prefers email for order updates.");
    let (model, v) = Spi::get_two_with_args::<String, Vec<f32>>(
        "SELECT embedding_model, embedding::real[] FROM memory_fabric.candidates WHERE id = $1",
        &[id.as_str().into()],
    )
    .unwrap();
    assert_eq!(model.as_deref(), Some("sentence-transformers/all-MiniLM-L6-v2"));
    let core = memory_fabric_core::minilm::MiniLm::load(&crate::embedder::model_dir()).unwrap();
    assert_eq!(v.unwrap(), core.embed("The customer prefers email for order updates."));
}

#[pg_test]
fn ids_are_prefixed_and_unique() {
    let a = capture("t_ids", "one");
    let b = capture("t_ids", "two");
    assert!(a.starts_with("mc_") && b.starts_with("mc_"));
    assert_ne!(a, b);
}

#[pg_test]
fn settings_are_registered() {
    assert_eq!(Spi::get_one::<String>("SHOW memory_fabric.embedding_function"), Ok(Some(String::new())));
    assert_eq!(Spi::get_one::<String>("SHOW memory_fabric.embedding_model"), Ok(Some(String::new())));
}

#[pg_test(error = "invalid configuration parameter name \"memory_fabric.no_such_setting\"")]
fn the_setting_prefix_is_reserved() {
    Spi::run("SET memory_fabric.no_such_setting = 1").unwrap();
}

#[pg_test(error = "invalid source \"user\"")]
fn core_errors_become_postgres_errors() {
    capture_with_source("user");
}

fn capture_with_source(source: &str) {
    Spi::run_with_args(
        "SELECT memory_fabric.capture_memory('t_err', 'x', $1, 'PUBLIC')",
        &[source.into()],
    )
    .unwrap();
}

#[pg_test(error = "cannot update column \"text\" of table \"memory_fabric.candidates\"")]
fn candidates_refuse_update() {
    capture("t_upd", "original");
    Spi::run("UPDATE memory_fabric.candidates SET text = 'changed'").unwrap();
}

/// Builds promoted memories in bulk: captures through the real function, then reviews and
/// promotion rows written directly (the pipeline's own per-row checks are tested elsewhere).
fn bulk_promote(tenant: &str, texts: &[String]) {
    for t in texts {
        capture(tenant, t);
    }
    Spi::run_with_args(
        "INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
         SELECT 'rv_' || substr(c.id, 4), c.tenant_id, c.id, 'pending_promotion', 'semantic', 0.5, 'auto', 1
         FROM memory_fabric.candidates c WHERE c.tenant_id = $1;
         INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source,
             tier, priority, embedding, embedding_model, content_hash, promoted_by)
         SELECT 'pm_' || substr(c.id, 4), c.id, 'rv_' || substr(c.id, 4), c.tenant_id, c.text, c.classification, c.source,
             'semantic', 0.5, c.embedding, c.embedding_model, c.content_hash, 'test'
         FROM memory_fabric.candidates c WHERE c.tenant_id = $1",
        &[tenant.into()],
    )
    .unwrap();
}

fn nearest(candidate_id: &str) -> Option<(String, f64)> {
    Spi::connect(|client| {
        let c = crate::rows::candidate(client, candidate_id);
        crate::pipeline::review::neighbors(client, &c)
            .into_iter()
            .filter_map(|n| n.similarity.map(|s| (n.id, s)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
    })
}

/// How often this transaction has scanned the extension's index `index`.
fn index_scans(index: &str) -> i64 {
    Spi::get_one_with_args::<i64>("SELECT pg_stat_get_xact_numscans(('memory_fabric.' || $1)::regclass)", &[index.into()])
        .unwrap()
        .unwrap_or(0)
}

/// A scope above review::EXACT_ROWS is ranked by the quantised embeddings and only the first rows
/// are compared exactly: a near-duplicate must still come out as the nearest, with the exact
/// similarity, as a plain scan of the scope ordered by cosine distance finds it.
#[pg_test]
fn quantised_ranking_finds_near_duplicates_in_large_scopes() {
    Spi::run("SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1'").unwrap();
    let channels = ["email", "phone", "sms", "post", "chat", "fax"];
    let topics = ["billing", "shipping", "returns", "outages", "renewals", "security", "invoices"];
    let texts: Vec<String> = (0..2100)
        .map(|i| format!("Customer cust_{i} prefers {} for {} updates", channels[i % 6], topics[(i / 6) % 7]))
        .collect();
    bulk_promote("t_bits", &texts);
    Spi::run("ANALYZE memory_fabric.promoted_memory").unwrap();
    let rows = Spi::get_one::<i64>("SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_bits'");
    assert!(rows.unwrap().unwrap() > crate::pipeline::review::EXACT_ROWS, "the scope is ranked by bits");
    for i in [7usize, 1042, 2099] {
        let probe = format!("Customer cust_{i} prefers {} for {} updates, noted", channels[i % 6], topics[(i / 6) % 7]);
        let id = capture("t_bits", &probe);
        let (plain_id, plain_sim) = Spi::get_two_with_args::<String, f64>(
            "SELECT m.id, 1 - (m.embedding <=> c.embedding) FROM memory_fabric.promoted_memory m, memory_fabric.candidates c
             WHERE c.id = $1 AND m.tenant_id = 't_bits' AND m.candidate_id <> c.id
             ORDER BY m.embedding <=> c.embedding, m.id LIMIT 1",
            &[id.as_str().into()],
        )
        .unwrap();
        // by the default limit, and above memory_fabric.exact_search_limit: the model has no
        // HNSW index, so the scope is still ranked by bits, not scanned whole or searched by index
        for limit in ["20000", "0"] {
            Spi::run(&format!("SET memory_fabric.exact_search_limit = {limit}")).unwrap();
            let found = nearest(&id).expect("the search finds a neighbour");
            assert_eq!(Some(found.0), plain_id, "{probe} (limit {limit})");
            assert!((found.1 - plain_sim.unwrap()).abs() < 1e-6);
        }
        Spi::run("RESET memory_fabric.exact_search_limit").unwrap();
    }
    let hnsw = Spi::get_one::<i64>(
        "SELECT count(*) FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid \
         JOIN pg_catalog.pg_am a ON a.oid = c.relam WHERE i.indrelid = 'memory_fabric.promoted_memory'::regclass AND a.amname = 'hnsw'",
    );
    assert_eq!(hnsw, Ok(Some(0)), "no model has an HNSW index unless create_embedding_index() made it");
}

#[pg_test]
fn scoped_nearest_neighbour_is_exact_through_the_index() {
    // the hashing model's index, made as a caller makes one, is the one looked at below
    Spi::run("SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1'").unwrap();
    let index = Spi::get_one::<String>("SELECT memory_fabric.create_embedding_index('memory_fabric/hash-384-v1', 384)")
        .unwrap()
        .unwrap();
    let channels = ["email", "phone", "sms", "post", "chat", "fax"];
    let topics = ["billing", "shipping", "returns", "outages", "renewals", "security", "invoices"];
    let big: Vec<String> = (0..700)
        .map(|i| format!("Customer cust_{i} prefers {} for {} updates", channels[i % 6], topics[(i / 6) % 7]))
        .collect();
    bulk_promote("t_big", &big);
    let small: Vec<String> = vec![
        "The Lisbon warehouse ships on weekdays".into(),
        "Refunds above 500 euros need a manager".into(),
        "Customer cust_3 prefers sms for billing updates".into(),
    ];
    bulk_promote("t_small", &small);
    Spi::run("ANALYZE memory_fabric.promoted_memory").unwrap();

    let probes = [
        ("t_big", "Customer cust_42 prefers email for returns updates"),
        ("t_big", "customer prefers fax for security news"),
        ("t_big", "Refunds above 500 euros need a manager"),
        ("t_small", "Customer cust_3 prefers sms for billing"),
        ("t_small", "which warehouse ships on weekdays?"),
    ];
    for (tenant, text) in probes {
        let id = capture(tenant, text);
        Spi::run("SET memory_fabric.exact_search_limit = 1000000").unwrap();
        let exact = nearest(&id).expect("exact search finds the nearest memory in scope");
        for (setting, value) in [("enable_sort", "on"), ("enable_sort", "off")] {
            Spi::run(&format!("SET memory_fabric.exact_search_limit = 0; SET {setting} = {value}")).unwrap();
            let indexed = nearest(&id).expect("the indexed search is never starved by the scope filter");
            assert_eq!(indexed.0, exact.0, "{tenant}: {text} ({setting}={value})");
            assert!((indexed.1 - exact.1).abs() < 1e-6);
            Spi::run("RESET enable_sort").unwrap();
        }
        // Only memories of the candidate's own tenant are ever neighbours.
        let owner = Spi::get_one_with_args::<String>(
            "SELECT tenant_id FROM memory_fabric.promoted_memory WHERE id = $1",
            &[exact.0.as_str().into()],
        )
        .unwrap()
        .unwrap();
        assert_eq!(owner, tenant);
    }
    // A generic plan (what PostgreSQL switches kept plans to after five runs) still uses the
    // partial HNSW index: the model is written into the statement, not passed as a parameter.
    let scans = || index_scans(&index);
    Spi::run("SET plan_cache_mode = force_generic_plan; SET enable_sort = off; SET memory_fabric.exact_search_limit = 0").unwrap();
    let probe = capture("t_big", "Customer cust_7 prefers phone for billing updates!");
    let before = scans();
    assert!(nearest(&probe).is_some());
    assert!(scans() > before, "the generic plan did not scan {index}");
    Spi::run("RESET plan_cache_mode; RESET enable_sort").unwrap();

    // The index really is used on the forced path.
    Spi::run("SET enable_sort = off").unwrap();
    let plan: Vec<String> = Spi::connect(|c| {
        c.select(
            "EXPLAIN (COSTS OFF) SELECT id FROM memory_fabric.promoted_memory m WHERE m.tenant_id = 't_small' \
             AND m.user_id IS NULL AND m.embedding_model = 'memory_fabric/hash-384-v1' \
             ORDER BY m.embedding::vector(384) <=> (SELECT embedding::vector(384) FROM memory_fabric.candidates LIMIT 1) LIMIT 5",
            None,
            &[],
        )
        .unwrap()
        .map(|r| r.get::<String>(1).unwrap().unwrap_or_default())
        .collect()
    });
    let plan = plan.join("\n");
    assert!(plan.contains(index.as_str()), "{plan}");
}

#[pg_test]
fn the_hnsw_settings_are_restored_after_review() {
    Spi::run("SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1'").unwrap();
    let index = Spi::get_one::<String>("SELECT memory_fabric.create_embedding_index('memory_fabric/hash-384-v1', 384)")
        .unwrap()
        .unwrap();
    Spi::run("SET hnsw.iterative_scan = off; SET memory_fabric.exact_search_limit = 0").unwrap();
    bulk_promote("t_restore", &["Deploys are frozen on Fridays".to_string()]);
    let id = capture("t_restore", "Deploys are frozen on Fridays!");
    let scans = || index_scans(&index);
    let before = scans();
    Spi::run_with_args("SELECT memory_fabric.review_candidate($1)", &[id.as_str().into()]).unwrap();
    assert!(scans() > before, "review searched {index}");
    assert_eq!(Spi::get_one::<String>("SHOW hnsw.iterative_scan"), Ok(Some("off".into())));
}
