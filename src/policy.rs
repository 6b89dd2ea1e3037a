//! The policy in force for a tenant, parsed and compiled once per policy version per backend.

use crate::error::OrRaise;
use crate::spi::{plan, INT4, TEXT};
use memory_fabric_core::policy::Policy;
use memory_fabric_core::redact::Redactor;
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

pub struct LoadedPolicy {
    pub version: i32,
    pub policy: Policy,
    pub redactor: Redactor,
}

thread_local! {
    // Keyed by (version, xmin): versions are append-only, and xmin tells a committed row from
    // one written by a transaction that rolled back and later reused the version number.
    static CACHE: RefCell<HashMap<(i32, String), Rc<LoadedPolicy>>> = RefCell::new(HashMap::new());
}

const CURRENT: &str = "SELECT version, xmin::text FROM memory_fabric.policies \
     WHERE tenant_id = $1 OR tenant_id = '*' ORDER BY tenant_id = '*', version DESC LIMIT 1";
const BODY: &str = "SELECT body::text FROM memory_fabric.policies WHERE version = $1";

/// The version of the policy in force for `tenant_id`, and its row's xmin, unparsed.
fn current(client: &SpiClient<'_>, tenant_id: &str) -> (i32, String) {
    let row = client
        .select(&*plan(client, CURRENT, &[TEXT], false), Some(1), &[tenant_id.into()])
        .and_then(|t| t.first().get_two::<i32, String>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot read policies: {e}"));
    let (Some(version), Some(xmin)) = row else {
        error!("memory_fabric: no policy found, not even the default '*' policy");
    };
    (version, xmin)
}

/// The version of the policy in force for `tenant_id`, without parsing it: set_policy() patches
/// a stored policy that no longer validates (one written before a limit was added).
pub fn current_version(client: &SpiClient<'_>, tenant_id: &str) -> i32 {
    current(client, tenant_id).0
}

/// The policy in force for `tenant_id`: its own newest version, else the newest default.
pub fn for_tenant(client: &SpiClient<'_>, tenant_id: &str) -> Rc<LoadedPolicy> {
    let key = current(client, tenant_id);
    let version = key.0;
    if let Some(p) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return p;
    }
    let policy = at_version(client, version);
    let redactor = Redactor::new(policy.default_redaction, &policy.redaction_rules).or_raise();
    let loaded = Rc::new(LoadedPolicy { version, policy, redactor });
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 256 {
            c.clear();
        }
        c.insert(key, loaded.clone());
    });
    loaded
}

/// The policy of one stored version (the one a review used), parsed; not cached.
pub fn at_version(client: &SpiClient<'_>, version: i32) -> Policy {
    let body: String = client
        .select(&*plan(client, BODY, &[INT4], false), Some(1), &[version.into()])
        .and_then(|t| t.first().get_one::<String>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot read policy {version}: {e}"))
        .unwrap_or_else(|| error!("memory_fabric: policy version {version} vanished"));
    let json: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| error!("memory_fabric: policy {version} is not JSON: {e}"));
    Policy::from_json(&json).or_raise()
}

/// The built-in default policy body, inserted as the '*' policy at CREATE EXTENSION.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _default_policy() -> pgrx::JsonB {
    pgrx::JsonB(Policy::default_json())
}

extension_sql!(
    "REVOKE ALL ON FUNCTION memory_fabric._default_policy() FROM PUBLIC;\n",
    name = "default_policy",
    requires = [_default_policy],
);
