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

#[pg_test(error = "cannot update table \"memory_fabric.candidates\"")]
fn candidates_refuse_update() {
    capture("t_upd", "original");
    Spi::run("UPDATE memory_fabric.candidates SET text = 'changed'").unwrap();
}
