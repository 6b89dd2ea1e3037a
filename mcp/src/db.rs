//! The agent's connection: opened at start-up, asked which tools its role may use, opened again
//! after it was lost; every call in its own transaction, pinned to the tenant.

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

pub struct Session {
    client: Client,
    /// The role the connection runs as (current_user).
    pub role: String,
    pub database: String,
    /// The tools whose functions this role may execute.
    pub tools: Vec<ToolKind>,
}

impl Session {
    pub async fn open(target: &Target) -> Result<Session, tokio_postgres::Error> {
        let client = target.connect().await?;
        let row = client.query_one("SELECT current_user::text, pg_catalog.current_database()::text", &[]).await?;
        let (role, database) = (row.get(0), row.get(1));
        let tools = allowed_tools(&client).await?;
        Ok(Session { client, role, database, tools })
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Runs one call in a transaction of its own whose first statement pins the tenant;
    /// anything that fails rolls the whole call back.
    pub async fn run(&mut self, settings: &Settings, actor: &str, call: Call) -> Result<Output, ToolError> {
        let pg = |e: tokio_postgres::Error| ToolError::from_pg(&e);
        let tx = self.client.transaction().await.map_err(pg)?;
        tx.execute("SELECT pg_catalog.set_config('memory_fabric.tenant_id', $1::text, true)", &[&settings.tenant])
            .await
            .map_err(pg)?;
        let out = call.run(&tx, settings, actor).await?;
        tx.commit().await.map_err(pg)?;
        Ok(out)
    }
}

/// The tools whose every function the role may execute (has_function_privilege, and USAGE on
/// the schema): nothing is offered that the role could not do itself.
async fn allowed_tools(client: &Client) -> Result<Vec<ToolKind>, tokio_postgres::Error> {
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
    Ok(ToolKind::ALL.into_iter().filter(|k| k.functions().iter().all(|f| allowed.iter().any(|a| a == f))).collect())
}
