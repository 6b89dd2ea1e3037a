//! The agent's connection: opened at start-up, asked which tools its role may use, opened again
//! after it was lost; every call in its own transaction, pinned to the tenant.

use tokio_postgres::{Client, NoTls};

use crate::config::Settings;
use crate::tools::{Call, Output, ToolError, ToolKind};

pub struct Session {
    client: Client,
    /// The role the connection runs as (current_user).
    pub role: String,
    pub database: String,
    /// The tools whose functions this role may execute.
    pub tools: Vec<ToolKind>,
}

impl Session {
    pub async fn open(config: &tokio_postgres::Config) -> Result<Session, tokio_postgres::Error> {
        let (client, connection) = config.connect(NoTls).await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                crate::log(&format!("the connection to PostgreSQL ended: {e}"));
            }
        });
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
