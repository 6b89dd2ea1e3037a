//! Connections as the signed-in operator's role: opened at sign-in, opened again when lost, and
//! every request's work in one transaction whose first statement pins the tenant.

use tokio_postgres::error::SqlState;
use futures_util::future::poll_fn;
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, Client, Transaction};
use tokio_postgres_rustls::MakeRustlsConnect;

use memory_fabric_pgtls::{self as tls, Settings as Tls};

use crate::limits::{DbSlot, DbSlots, Full};
use crate::session::Credentials;

/// A PostgreSQL error as the operator sees it: never a stack trace, never the SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl PgError {
    pub fn new(code: &str, message: impl Into<String>) -> PgError {
        PgError { code: code.into(), message: message.into(), detail: None, hint: None }
    }
}

/// What went wrong talking to the database.
#[derive(Debug, Clone)]
pub enum Failure {
    /// PostgreSQL refused the statement: shown with its message, detail and hint.
    Refused(PgError),
    /// The database cannot be reached (down, restarting, not accepting connections).
    Unavailable(String),
    /// The connection broke during the request.
    Lost(String),
    /// The database no longer lets the role in (password changed, role dropped): sign in again.
    SignInAgain(PgError),
    /// The console holds as many connections as it may (for the role, or in all).
    Full(PgError),
}

fn db_error(e: &tokio_postgres::Error) -> Option<PgError> {
    e.as_db_error().map(|d| PgError {
        code: d.code().code().to_string(),
        message: d.message().to_string(),
        detail: d.detail().map(str::to_string),
        hint: d.hint().map(str::to_string),
    })
}

/// A statement's failure, sorted.
pub fn classify(e: &tokio_postgres::Error) -> Failure {
    match db_error(e) {
        Some(d) if is_shutdown(&d.code) => Failure::Lost(format!("{} ({})", d.message, d.code)),
        Some(d) => Failure::Refused(d),
        None if e.is_closed() => Failure::Lost("the connection to the database was closed".into()),
        None => Failure::Lost(plain(e)),
    }
}

/// Why a connection was not opened: a cap, or PostgreSQL.
#[derive(Debug)]
pub enum ConnectError {
    Full(PgError),
    Pg(tokio_postgres::Error),
}

/// A connection attempt's failure, sorted.
pub fn classify_connect(e: &ConnectError) -> Failure {
    let e = match e {
        ConnectError::Full(p) => return Failure::Full(p.clone()),
        ConnectError::Pg(e) => e,
    };
    match db_error(e) {
        Some(d) if d.code == SqlState::INVALID_PASSWORD.code() || d.code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION.code() => {
            Failure::SignInAgain(d)
        }
        Some(d) if d.code == SqlState::CANNOT_CONNECT_NOW.code() || d.code == SqlState::TOO_MANY_CONNECTIONS.code() || is_shutdown(&d.code) => {
            Failure::Unavailable(format!("{} ({})", d.message, d.code))
        }
        Some(d) => Failure::Refused(d),
        None => match tls::describe_plain(e) {
            Some(t) => Failure::Refused(PgError::new("08P01", t)),
            None => Failure::Unavailable(plain(e)),
        },
    }
}

/// An administrator or a shutdown ended the backend.
fn is_shutdown(code: &str) -> bool {
    code == SqlState::ADMIN_SHUTDOWN.code() || code == SqlState::CRASH_SHUTDOWN.code() || code.starts_with("08")
}

/// A non-database error in words, with its causes (an I/O error's text, not a debug dump).
fn plain(e: &tokio_postgres::Error) -> String {
    let mut s = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cause = c.source();
    }
    s
}

/// Where the database is and how to reach it: the settings without user or password, the plans
/// for TLS (one per host where sockets and TLS hosts are mixed), and the rustls connector; and
/// the caps on the connections the console holds.
pub struct Pg {
    pub plans: Vec<tokio_postgres::Config>,
    pub connector: MakeRustlsConnect,
    pub tls: Tls,
    pub slots: std::sync::Arc<DbSlots>,
}

/// A connection as an operator's role, holding its place under the caps until it is dropped
/// (which closes it).
pub struct Conn {
    client: Client,
    _slot: DbSlot,
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// The refusal of a connection over a cap (53300, as PostgreSQL's own too_many_connections).
fn full(role: &str, why: Full) -> PgError {
    match why {
        Full::Role(n) => PgError {
            code: "53300".into(),
            message: format!("too many console connections for role \"{role}\""),
            detail: Some(format!(
                "The console holds {n} connections as this role, its limit (--max-db-connections-per-role): \
                 one per signed-in session, and one more while the session's live queue is open."
            )),
            hint: Some("Sign out of another session of this role, or wait for one to end.".into()),
        },
        Full::Total(n) => PgError {
            code: "53300".into(),
            message: "too many console connections".into(),
            detail: Some(format!(
                "The console holds {n} connections to the database, its limit (--max-db-connections), \
                 which leaves the rest of max_connections to agents and other clients."
            )),
            hint: Some("Try again when another operator has signed out.".into()),
        },
    }
}

/// What to do with a connection's messages besides running it.
pub enum Messages {
    /// Nothing: notices and notifications are dropped.
    Ignore,
    /// Forward each notification (its payload is not trusted or used), then `Live::Ended` when
    /// the connection ends.
    Forward(broadcast::Sender<Live>),
}

/// What the listener connection tells the live queue's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Live {
    Queued,
    Ended,
}

impl Pg {
    pub fn new(cfg: &crate::config::Settings) -> Result<Pg, String> {
        Ok(Pg {
            plans: cfg.tls.plans(&cfg.pg),
            connector: cfg.tls.connector()?,
            tls: cfg.tls.clone(),
            slots: DbSlots::new(cfg.limits.db_connections, cfg.limits.db_connections_per_role),
        })
    }

    /// Connects as the operator's role, trying each plan in turn, when the caps leave room.
    pub async fn connect(&self, who: &Credentials, messages: Messages) -> Result<Conn, ConnectError> {
        let slot = self.slots.take(&who.role).map_err(|why| ConnectError::Full(full(&who.role, why)))?;
        let client = self.open(who, messages).await.map_err(ConnectError::Pg)?;
        Ok(Conn { client, _slot: slot })
    }

    async fn open(&self, who: &Credentials, messages: Messages) -> Result<Client, tokio_postgres::Error> {
        let mut last = None;
        for plan in &self.plans {
            let mut c = plan.clone();
            c.user(&who.role).password(who.password.as_bytes());
            match c.connect(self.connector.clone()).await {
                Ok((client, mut connection)) => {
                    match messages {
                        Messages::Ignore => {
                            tokio::spawn(async move {
                                // the connection's end is found by the next request
                                // (client.is_closed()); a restart of the database is expected
                                let _ = connection.await;
                            });
                        }
                        Messages::Forward(tx) => {
                            tokio::spawn(async move {
                                while let Some(m) = poll_fn(|cx| connection.poll_message(cx)).await {
                                    match m {
                                        Ok(AsyncMessage::Notification(_)) => {
                                            let _ = tx.send(Live::Queued);
                                        }
                                        Ok(_) => {}
                                        Err(_) => break,
                                    }
                                }
                                let _ = tx.send(Live::Ended);
                            });
                        }
                    }
                    return Ok(client);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one plan"))
    }
}

/// Whether the session's role may still use the console: it may log in, its password is not past
/// VALID UNTIL, and it is neither a superuser nor exempt from row-level security. NOLOGIN, VALID
/// UNTIL and DROP ROLE end no connection already open, so the console asks (one round trip).
pub async fn role_allowed(client: &Client) -> Result<bool, tokio_postgres::Error> {
    let rows = client
        .simple_query(
            "SELECT r.rolcanlogin AND NOT r.rolsuper AND NOT r.rolbypassrls
                    AND (r.rolvaliduntil IS NULL OR r.rolvaliduntil > pg_catalog.now())
             FROM pg_catalog.pg_roles r WHERE r.rolname = session_user",
        )
        .await?;
    Ok(rows.iter().any(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(r) if r.get(0) == Some("t"))))
}

/// Starts the request's transaction, pinned to the tenant when there is one.
pub async fn begin<'c>(client: &'c mut Client, tenant: Option<&str>) -> Result<Transaction<'c>, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    if let Some(t) = tenant {
        tx.execute("SELECT pg_catalog.set_config('memory_fabric.tenant_id', $1::text, true)", &[&t]).await?;
    }
    Ok(tx)
}

/// Whether the role holds a live grant for the tenant (the probe of older extensions): pins it in
/// a transaction of its own and asks memory_fabric._visible_tenant(), the check row-level security
/// makes. An unknown tenant and one not granted give the same answer.
async fn probe(client: &mut Client, tenant: &str) -> Result<bool, tokio_postgres::Error> {
    let tx = begin(client, Some(tenant)).await?;
    let row = tx.query_one("SELECT memory_fabric._visible_tenant()", &[]).await?;
    let v: Option<String> = row.get(0);
    tx.rollback().await?;
    Ok(v.as_deref() == Some(tenant))
}

/// The tenants a role may choose.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tenants {
    /// The tenants granted by name, sorted.
    pub named: Vec<String>,
    /// An all-tenants grant ('*'): any tenant typed may be chosen.
    pub any: bool,
}

impl Tenants {
    pub fn allows(&self, t: &str) -> bool {
        !t.is_empty() && t != "*" && (self.any || self.named.iter().any(|n| n == t))
    }
}

/// The tenants the role holds live grants for: memory_fabric.my_tenants() (extension 0.19.0 and
/// later); with an older extension, the probe of each tenant in `offered` and of `typed`.
pub async fn tenants(client: &mut Client, offered: &[String], typed: Option<&str>) -> Result<Tenants, tokio_postgres::Error> {
    let has_fn: bool = client
        .query_one("SELECT pg_catalog.to_regprocedure('memory_fabric.my_tenants()') IS NOT NULL", &[])
        .await?
        .get(0);
    let mut out = Tenants::default();
    if has_fn {
        let rows = client.query("SELECT DISTINCT tenant_id FROM memory_fabric.my_tenants() ORDER BY 1", &[]).await?;
        for r in rows {
            let t: String = r.get(0);
            if t == "*" {
                out.any = true;
            } else {
                out.named.push(t);
            }
        }
        return Ok(out);
    }
    for t in offered.iter().map(String::as_str).chain(typed) {
        if !out.named.iter().any(|n| n == t) && probe(client, t).await? {
            out.named.push(t.to_string());
        }
    }
    out.named.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shutdowns_and_connection_classes_are_losses() {
        assert!(is_shutdown("57P01"));
        assert!(is_shutdown("57P02"));
        assert!(is_shutdown("08006"));
        assert!(!is_shutdown("42501"));
        assert!(!is_shutdown("57014"));
    }

    #[test]
    fn an_all_tenants_grant_allows_any_typed_tenant() {
        let t = Tenants { named: vec!["acme".into()], any: false };
        assert!(t.allows("acme") && !t.allows("globex") && !t.allows(""));
        let t = Tenants { named: vec![], any: true };
        assert!(t.allows("globex") && !t.allows("*"));
    }
}
