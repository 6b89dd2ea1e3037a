//! The agent's connection: opened at start-up, checked (the extension is there, the role may act
//! for the tenant), asked which tools its role may use, opened again after it was lost; every call
//! in its own transaction, pinned to the tenant (and to the intent, with --intent).

use tokio_postgres::error::SqlState;
use tokio_postgres::Client;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::config::{Connection, Settings};
use crate::tools::{Call, Output, ToolError, ToolKind};

/// Where and how to connect: the settings to try in turn, and the TLS connector (its root
/// certificates and client certificate read once, at start-up).
pub struct Target {
    plans: Vec<tokio_postgres::Config>,
    tls: MakeRustlsConnect,
    tls_settings: memory_fabric_pgtls::Settings,
}

impl Target {
    /// Fails (with a message) when a certificate or key cannot be read.
    pub fn new(c: &Connection) -> Result<Target, String> {
        let plans = c.tls.plans(&c.pg);
        // socket directories only: no TLS, so no certificate is read either (as libpq)
        let mut settings = c.tls.clone();
        if plans.iter().all(|p| p.get_ssl_mode() == tokio_postgres::config::SslMode::Disable) {
            settings.mode = memory_fabric_pgtls::Mode::Disable;
        }
        let tls = settings.connector().map_err(|e| format!("cannot set up TLS: {e}"))?;
        Ok(Target { plans, tls, tls_settings: c.tls.clone() })
    }

    /// A connection failure in words: TLS's reason when TLS failed, else PostgreSQL's.
    pub fn describe(&self, e: &tokio_postgres::Error) -> String {
        self.tls_settings.describe(e).unwrap_or_else(|| ToolError::describe(e))
    }

    async fn connect(&self) -> Result<Client, tokio_postgres::Error> {
        let mut last = None;
        for plan in &self.plans {
            match plan.connect(self.tls.clone()).await {
                Ok((client, connection)) => {
                    tokio::spawn(async move {
                        if let Err(e) = connection.await {
                            crate::log(&format!("the connection to PostgreSQL ended: {e}"));
                        }
                    });
                    return Ok(client);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("there is always a plan"))
    }
}

/// Why no session was opened.
#[derive(Debug)]
pub enum OpenError {
    /// No connection, or PostgreSQL failed a start-up query.
    Connect(tokio_postgres::Error),
    /// Connected, but the database or the role cannot serve this server's tenant; the SQLSTATE
    /// is the one PostgreSQL gives the same refusal (42704 for a missing extension, 42501).
    Refused { sqlstate: String, message: String },
}

impl OpenError {
    pub fn describe(&self, target: &Target) -> String {
        match self {
            OpenError::Connect(e) => format!("cannot connect to PostgreSQL: {}", target.describe(e)),
            OpenError::Refused { message, .. } => message.clone(),
        }
    }
}

impl From<tokio_postgres::Error> for OpenError {
    fn from(e: tokio_postgres::Error) -> OpenError {
        OpenError::Connect(e)
    }
}

pub struct Session {
    client: Client,
    /// The role the connection runs as (current_user).
    pub role: String,
    pub database: String,
    /// The tools whose functions this role may execute.
    pub tools: Vec<ToolKind>,
    /// Whether the extension has the per-transaction intent pin (memory_fabric.intent_id); an
    /// older one has not, and refuses to set an unknown memory_fabric.* name.
    pub intent_setting: bool,
}

impl Session {
    /// Connects, then checks before serving anything: memory_fabric is installed in the
    /// database, and the role may act for the tenant (memory_fabric.my_tenants()).
    pub async fn open(target: &Target, settings: &Settings) -> Result<Session, OpenError> {
        let client = target.connect().await?;
        let row = client.query_one("SELECT current_user::text, pg_catalog.current_database()::text", &[]).await?;
        let (role, database): (String, String) = (row.get(0), row.get(1));
        let owner = client
            .query_opt(
                "SELECT e.extowner = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user)
                 FROM pg_catalog.pg_extension e WHERE e.extname = 'memory_fabric'",
                &[],
            )
            .await?;
        let Some(owner) = owner else {
            return Err(OpenError::Refused {
                sqlstate: SqlState::UNDEFINED_OBJECT.code().into(),
                message: format!(
                    "memory_fabric is not installed in database {database:?}: connect to the database that holds it \
                     (PGDATABASE, dbname), or install it there (CREATE EXTENSION memory_fabric CASCADE, as its owner)"
                ),
            });
        };
        check_tenant(&client, &role, &database, &settings.tenant, owner.get(0)).await?;
        // after a call into the extension's library (my_tenants): its settings exist only once loaded
        let intent_setting = client
            .query_opt("SELECT 1 FROM pg_catalog.pg_settings WHERE name = 'memory_fabric.intent_id'", &[])
            .await?
            .is_some();
        let tools = allowed_tools(&client, settings).await?;
        Ok(Session { client, role, database, tools, intent_setting })
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Runs one call in a transaction of its own whose first statement pins the tenant (and the
    /// intent, with --intent, where the extension has that pin); anything that fails rolls the
    /// whole call back.
    pub async fn run(&mut self, settings: &Settings, actor: &str, call: Call) -> Result<Output, ToolError> {
        let pg = |e: tokio_postgres::Error| ToolError::from_pg(&e);
        let tx = self.client.transaction().await.map_err(pg)?;
        let pinned = match (&settings.intent, self.intent_setting) {
            (Some(intent), true) => {
                tx.execute(
                    "SELECT pg_catalog.set_config('memory_fabric.tenant_id', $1::text, true), \
                            pg_catalog.set_config('memory_fabric.intent_id', $2::text, true)",
                    &[&settings.tenant, intent],
                )
                .await
            }
            _ => {
                tx.execute("SELECT pg_catalog.set_config('memory_fabric.tenant_id', $1::text, true)", &[&settings.tenant])
                    .await
            }
        };
        pinned.map_err(pg)?;
        let out = call.run(&tx, settings, actor).await?;
        tx.commit().await.map_err(pg)?;
        Ok(out)
    }
}

/// Refuses a role that may not act for the tenant: every call would fail, so the server does not
/// start (or, after a reconnect, the call fails saying why).
async fn check_tenant(client: &Client, role: &str, database: &str, tenant: &str, owner: bool) -> Result<(), OpenError> {
    let quote = |s: &str| s.replace('\'', "''");
    let grant = format!("SELECT memory_fabric.grant_tenant('{}', '{}')", quote(role), quote(tenant));
    let rows = match client.query("SELECT t.tenant_id FROM memory_fabric.my_tenants() t", &[]).await {
        Ok(rows) => rows,
        Err(e) if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) => {
            return Err(OpenError::Refused {
                sqlstate: SqlState::INSUFFICIENT_PRIVILEGE.code().into(),
                message: format!(
                    "role {role:?} may not use memory_fabric in database {database:?} ({}): it needs one of the roles \
                     memory_fabric_agent, memory_fabric_reviewer or memory_fabric_admin, and a grant for tenant \
                     {tenant:?} ({grant}, by an admin)",
                    ToolError::describe(&e)
                ),
            })
        }
        Err(e) => return Err(e.into()),
    };
    let tenants: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    if owner || tenants.iter().any(|t| t == tenant || t == "*") {
        return Ok(());
    }
    let mut known: Vec<&str> = tenants.iter().map(String::as_str).collect();
    known.sort_unstable();
    known.dedup();
    let listed = match known.len() {
        0 => "none".to_string(),
        n if n <= 10 => known.join(", "),
        n => format!("{}, and {} more", known[..10].join(", "), n - 10),
    };
    Err(OpenError::Refused {
        sqlstate: SqlState::INSUFFICIENT_PRIVILEGE.code().into(),
        message: format!(
            "role {role:?} may not act for tenant {tenant:?} in database {database:?}: it has no grant for it \
             (memory_fabric.my_tenants() lists: {listed}); an admin grants it with {grant}, or start the server \
             with a tenant the role may act for (--tenant)"
        ),
    })
}

/// The tools whose every function the role may execute (has_function_privilege, and USAGE on
/// the schema), and, where the server is scoped to a user or intent, whose tables it may read to
/// check a memory's scope: nothing is offered that the role could not do itself.
async fn allowed_tools(client: &Client, settings: &Settings) -> Result<Vec<ToolKind>, tokio_postgres::Error> {
    let scoped = settings.user.is_some() || settings.intent.is_some();
    let wanted: Vec<String> = ToolKind::ALL.iter().flat_map(|k| k.functions()).map(|f| f.to_string()).collect();
    let rows = client
        .query(
            "SELECT DISTINCT p.proname::text
             FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'memory_fabric' AND p.proname = ANY($1::text[])
               AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
               AND pg_catalog.has_function_privilege(p.oid, 'EXECUTE')",
            &[&wanted],
        )
        .await?;
    let allowed: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    let wanted: Vec<String> = ToolKind::ALL.iter().flat_map(|k| k.tables(scoped)).map(|t| t.to_string()).collect();
    let rows = client
        .query(
            "SELECT c.relname::text
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'memory_fabric' AND c.relname = ANY($1::text[])
               AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
               AND pg_catalog.has_table_privilege(c.oid, 'SELECT')",
            &[&wanted],
        )
        .await?;
    let readable: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok(ToolKind::ALL
        .into_iter()
        .filter(|k| k.functions().iter().all(|f| allowed.iter().any(|a| a == f)))
        .filter(|k| k.tables(scoped).iter().all(|t| readable.iter().any(|r| r == t)))
        .collect())
}
