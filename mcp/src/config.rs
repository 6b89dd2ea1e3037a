//! The command line, the environment, and the connection settings built from them the way libpq
//! would (tokio-postgres reads no PG* variable and no password file by itself).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::Host;

use memory_fabric_pgtls as tls;

pub const USAGE: &str = "\
memory-fabric-mcp: an MCP server (stdio) that gives an AI agent memory_fabric's tools, run as the
agent's own PostgreSQL role.

USAGE:
    memory-fabric-mcp --tenant TENANT [--user USER_ID] [--intent INTENT_ID] [--actor NAME]

OPTIONS (each also read from the environment variable shown; the option wins):
    --tenant TENANT      the tenant every call acts for (MEMORY_FABRIC_TENANT; required). Each
                         call pins it with set_config('memory_fabric.tenant_id', ..., true); the
                         role needs a grant for it (memory_fabric.grant_tenant). The agent
                         cannot choose another tenant: it is no tool argument.
    --user USER_ID       a fixed user (subject) for remember, recall and explain_recall
                         (MEMORY_FABRIC_USER). When set, a call naming another user_id is
                         refused, and another user's memory is not found by explain_recall or
                         memory_history; when unset, the agent may name user_id per call (none:
                         user-less memories only).
    --intent INTENT_ID   pins the server to one intent (MEMORY_FABRIC_INTENT): remember stores
                         every fact under it (recalled only for that intent; intents starting
                         with support. give 30-day episodic memories by default), recall and
                         explain_recall read it and the cross-intent memories, and a call naming
                         another intent (or, for remember, none) is refused; another intent's
                         memory is not found by explain_recall or memory_history. Where the
                         extension has memory_fabric.intent_id, each call sets it too. Leave it
                         out for a general agent: it then names intent_id per call, or none (the
                         fact holds across intents).
    --actor NAME         the display name recorded on captures (MEMORY_FABRIC_ACTOR; default:
                         the database role's name).
    --dsn CONNINFO       a connection string without a password (MEMORY_FABRIC_DSN). A password
                         on the command line is refused: use PGPASSWORD or a password file.
    -h, --help           print this help and exit
    -V, --version        print the version and exit

CONNECTION:
    MEMORY_FABRIC_DSN (or --dsn), a libpq key=value string or a postgresql:// URL, else the usual
    variables: PGHOST (a host name, or a socket directory when it starts with '/'), PGPORT,
    PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE (default ~/.pgpass), PGAPPNAME, PGOPTIONS,
    PGCONNECT_TIMEOUT, PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY, PGSSLSNI.
    Settings the connection string leaves out are taken from these variables, as libpq does.
    Without any: the socket in /var/run/postgresql or /tmp, port 5432, the OS user.

TLS (rustls), as libpq: sslmode (PGSSLMODE) disable, allow or prefer (the default: TLS when the
server offers it), require (TLS always; the certificate is checked against the root certificates
only when there are some), verify-ca (the chain up to a root certificate), verify-full (the
chain and the host name). Root certificates: sslrootcert (PGSSLROOTCERT), a PEM file, else
~/.postgresql/root.crt when it exists; sslrootcert=system, or a verify mode without a file, uses
the system's trusted roots. A client certificate: sslcert and sslkey (PGSSLCERT, PGSSLKEY;
default ~/.postgresql/postgresql.crt and .key). Socket connections never use TLS.

START-UP: the server connects, then checks that memory_fabric is installed in the database and
that the role may act for the tenant (memory_fabric.my_tenants()); it exits with status 1 and a
message on stderr when either is not so. A reconnect checks again: a call then fails saying why.

TOOLS (listed only when the role may execute their functions; asked at start-up and after a
reconnect with has_function_privilege):
    remember        capture a fact, review it and promote it when no human is needed, in one
                    transaction; says what happened: promoted, duplicate, contradiction,
                    queued_for_human or rejected (memory_fabric_agent and up)
    recall          the governed memories in scope, best first, with their provenance
                    (memory_fabric_agent and up)
    review_status   where one of the role's own captures stands (memory_fabric_agent and up)
    explain_recall  why one memory is or is not visible to a recall (memory_fabric_reviewer, _admin)
    memory_history  a candidate's or memory's life, step by step (memory_fabric_reviewer, _admin)

stdout carries only the protocol; logs go to stderr.
";

/// What the command line and the environment asked for.
#[derive(Debug, Clone)]
pub struct Settings {
    pub tenant: String,
    pub user: Option<String>,
    pub intent: Option<String>,
    pub actor: Option<String>,
    pub dsn: Option<String>,
}

pub enum Parsed {
    Run(Settings),
    Help,
    Version,
}

/// Parses the arguments (without the program name). Errors are messages for stderr.
pub fn parse_args(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Parsed, String> {
    let (mut tenant, mut user, mut intent, mut actor, mut dsn) = (None, None, None, None, None);
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg == "-h" || arg == "--help" {
            return Ok(Parsed::Help);
        }
        if arg == "-V" || arg == "--version" {
            return Ok(Parsed::Version);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let slot = match name {
            "--tenant" => &mut tenant,
            "--user" => &mut user,
            "--intent" => &mut intent,
            "--actor" => &mut actor,
            "--dsn" => &mut dsn,
            _ => {
                return Err(if !arg.starts_with('-') && looks_like_conninfo(arg) {
                    "unexpected argument: connection strings go in MEMORY_FABRIC_DSN or --dsn, and passwords never on the command line".to_string()
                } else {
                    format!("unknown argument {arg:?} (see --help)")
                })
            }
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i).cloned().ok_or_else(|| format!("{name} needs a value"))?
            }
        };
        if name == "--dsn" {
            refuse_password_in_conninfo(&value)?;
        }
        *slot = Some(value);
        i += 1;
    }
    let pick = |v: Option<String>, var: &str| v.or_else(|| env(var)).filter(|s| !s.is_empty());
    let tenant =
        pick(tenant, "MEMORY_FABRIC_TENANT").ok_or("no tenant: give --tenant or set MEMORY_FABRIC_TENANT (see --help)")?;
    if tenant.trim() != tenant {
        return Err("the tenant has whitespace at either end".into());
    }
    Ok(Parsed::Run(Settings {
        tenant,
        user: pick(user, "MEMORY_FABRIC_USER"),
        intent: pick(intent, "MEMORY_FABRIC_INTENT"),
        actor: pick(actor, "MEMORY_FABRIC_ACTOR"),
        dsn: pick(dsn, "MEMORY_FABRIC_DSN"),
    }))
}

fn looks_like_conninfo(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.starts_with("postgres://") || l.starts_with("postgresql://") || l.contains("password") || l.contains('=')
}

/// A connection string given on the command line may not carry a password: the command line is
/// visible to every user of the machine (ps) and lands in shell histories and host configs.
fn refuse_password_in_conninfo(s: &str) -> Result<(), String> {
    const REFUSED: &str = "refusing to start: the connection string given on the command line carries a password; \
                           put the password in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass), never in arguments";
    match tokio_postgres::Config::from_str(&tls::split_tls_params(s).0) {
        Ok(c) if c.get_password().is_some() => Err(REFUSED.into()),
        Ok(_) => Ok(()),
        // unparsable: refuse, without echoing it (it may hold a password in a shape the parser missed)
        Err(e) if s.to_ascii_lowercase().contains("password") => Err(format!("{REFUSED} ({e})")),
        Err(e) => Err(format!("invalid connection string in --dsn: {e}")),
    }
}

/// The connection's settings: tokio-postgres's, and TLS's.
#[derive(Debug, Clone)]
pub struct Connection {
    pub pg: tokio_postgres::Config,
    pub tls: tls::Settings,
}

/// The connection's settings: the connection string's, the PG* variables for the rest, then
/// libpq's defaults; the password from the string, PGPASSWORD or the password file; TLS's from
/// the string, the PGSSL* variables and ~/.postgresql.
pub fn connection_config(dsn: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<Connection, String> {
    let (rest, tls_params) = dsn.map(tls::split_tls_params).unwrap_or_default();
    let mut c = match dsn {
        Some(_) => tokio_postgres::Config::from_str(&rest)
            .map_err(|e| format!("invalid connection string in MEMORY_FABRIC_DSN: {e}"))?,
        None => tokio_postgres::Config::new(),
    };
    let env = |k: &str| env(k).filter(|v| !v.is_empty());
    let tls = tls::Settings::resolve(
        &|key: &str, var: &str| {
            tls_params.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()).or_else(|| env(var))
        },
        env("HOME").as_deref().map(std::path::Path::new),
    )?;
    if c.get_hosts().is_empty() && !c.get_hostaddrs().is_empty() {
        // hostaddr alone: the address is the host name too (tokio-postgres needs one for TLS)
        for addr in c.get_hostaddrs().to_vec() {
            c.host(addr.to_string());
        }
    }
    if c.get_hosts().is_empty() {
        let hosts = env("PGHOST").unwrap_or_default();
        let hosts: Vec<&str> = hosts.split(',').map(str::trim).filter(|h| !h.is_empty()).collect();
        if hosts.is_empty() {
            let dir =
                ["/var/run/postgresql", "/tmp"].into_iter().find(|d| std::path::Path::new(d).is_dir()).unwrap_or("/tmp");
            c.host_path(dir);
        }
        for h in hosts {
            if h.starts_with('/') {
                c.host_path(h);
            } else {
                c.host(h);
            }
        }
    }
    if c.get_ports().is_empty() {
        let port = match env("PGPORT") {
            Some(p) => p.parse::<u16>().map_err(|_| format!("PGPORT is not a port number: {p:?}"))?,
            None => 5432,
        };
        c.port(port);
    }
    if c.get_user().is_none() {
        let user = env("PGUSER").or_else(|| env("USER")).or_else(|| env("LOGNAME")).ok_or("no database user: set PGUSER")?;
        c.user(user);
    }
    if c.get_dbname().is_none() {
        let db = env("PGDATABASE").unwrap_or_else(|| c.get_user().unwrap_or_default().to_string());
        c.dbname(db);
    }
    if c.get_application_name().is_none() {
        c.application_name(env("PGAPPNAME").unwrap_or_else(|| "memory-fabric-mcp".into()));
    }
    if c.get_options().is_none() {
        if let Some(o) = env("PGOPTIONS") {
            c.options(o);
        }
    }
    if c.get_connect_timeout().is_none() {
        let secs = match env("PGCONNECT_TIMEOUT") {
            Some(t) => t.parse::<u64>().map_err(|_| format!("PGCONNECT_TIMEOUT is not a number of seconds: {t:?}"))?,
            None => 10,
        };
        if secs > 0 {
            c.connect_timeout(Duration::from_secs(secs.max(2)));
        }
    }
    if c.get_password().is_none() {
        if let Some(p) = env("PGPASSWORD") {
            c.password(p);
        } else if let Some(p) = passfile_password(&c, &env) {
            c.password(p);
        }
    }
    Ok(Connection { pg: c, tls })
}

/// The password file's entry for this connection (libpq's rules: `host:port:db:user:password`,
/// `*` matches anything, `\` escapes; a socket directory matches the host name `localhost`; the
/// file is ignored when others may read it).
fn passfile_password(c: &tokio_postgres::Config, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let path = env("PGPASSFILE").map(PathBuf::from).or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let meta = std::fs::metadata(&path).ok()?;
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            crate::log(&format!(
                "warning: password file {} has group or world access; it is ignored (chmod 0600 it)",
                path.display()
            ));
            return None;
        }
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let (host, socket) = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => (h.clone(), None),
        Some(Host::Unix(p)) => ("localhost".to_string(), Some(p.display().to_string())),
        None => ("localhost".to_string(), None),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let db = c.get_dbname().unwrap_or_default();
    let user = c.get_user().unwrap_or_default();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_passfile_line(line);
        if fields.len() < 5 {
            continue;
        }
        let m = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        let host_ok = m(&fields[0], &host) || socket.as_deref().is_some_and(|s| fields[0] == s);
        if host_ok && m(&fields[1], &port) && m(&fields[2], db) && m(&fields[3], user) {
            return Some(fields[4].clone());
        }
    }
    None
}

fn split_passfile_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().unwrap().push(n);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(ch),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }
    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_password_on_the_command_line_is_refused() {
        for dsn in [
            "host=/tmp user=a password=secret",
            "postgresql://a:secret@localhost/db",
            "postgresql://a@localhost/db?password=secret",
        ] {
            let e = parse_args(&args(&["--tenant", "t", "--dsn", dsn]), &no_env).err().unwrap();
            assert!(e.contains("refusing to start") && !e.contains("secret"), "{e}");
        }
        let e = parse_args(&args(&["--tenant", "t", "postgresql://a:secret@h/db"]), &no_env).err().unwrap();
        assert!(!e.contains("secret"), "{e}");
        assert!(matches!(parse_args(&args(&["--tenant=t", "--dsn=host=/tmp user=a"]), &no_env), Ok(Parsed::Run(_))));
    }

    #[test]
    fn the_environment_fills_what_the_string_leaves_out() {
        let env = |k: &str| match k {
            "PGHOST" => Some("/run/sock".to_string()),
            "PGPORT" => Some("55432".to_string()),
            "PGUSER" => Some("agent".to_string()),
            _ => None,
        };
        let c = connection_config(Some("dbname=mem"), &env).unwrap().pg;
        assert_eq!(c.get_hosts(), &[Host::Unix("/run/sock".into())]);
        assert_eq!(c.get_ports(), &[55432]);
        assert_eq!((c.get_user(), c.get_dbname()), (Some("agent"), Some("mem")));
        let c = connection_config(Some("host=db.internal port=6000 user=x"), &env).unwrap().pg;
        assert_eq!(c.get_hosts(), &[Host::Tcp("db.internal".into())]);
        assert_eq!((c.get_ports(), c.get_dbname()), (&[6000u16][..], Some("x")));
        // hostaddr alone names the host too
        let c = connection_config(Some("hostaddr=127.0.0.1 user=x"), &env).unwrap().pg;
        assert_eq!(c.get_hosts(), &[Host::Tcp("127.0.0.1".into())]);
    }

    #[test]
    fn tls_settings_come_out_of_the_string() {
        let (rest, tls) = tls::split_tls_params(
            r"host=db  sslmode = verify-full sslrootcert='/a b/c\'a.pem' application_name='x y' sslsni=0",
        );
        assert_eq!(rest, "host=db application_name='x y'");
        let pairs = |v: &[(&str, &str)]| v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        assert_eq!(tls, pairs(&[("sslmode", "verify-full"), ("sslrootcert", "/a b/c'a.pem"), ("sslsni", "0")]));
        let (rest, tls) =
            tls::split_tls_params("postgresql://u@db:5433/mem?sslmode=verify-ca&application_name=a&sslrootcert=%2Fca.pem");
        assert_eq!(rest, "postgresql://u@db:5433/mem?application_name=a");
        assert_eq!(tls, pairs(&[("sslmode", "verify-ca"), ("sslrootcert", "/ca.pem")]));
        assert_eq!(tls::split_tls_params("postgres://db/x?sslmode=require").0, "postgres://db/x");
        // unreadable: left whole for tokio-postgres to complain about
        assert_eq!(tls::split_tls_params("host='db sslmode=require").1, vec![]);

        let no_home = |k: &str| (k == "PGSSLMODE").then(|| "require".to_string());
        let c = connection_config(Some("host=db user=u sslmode=verify-full sslrootcert=/ca.pem"), &no_home).unwrap();
        assert_eq!((c.tls.mode, c.tls.roots), (tls::Mode::VerifyFull, tls::Roots::File("/ca.pem".into())));
        let c = connection_config(Some("host=db user=u"), &no_home).unwrap();
        assert_eq!((c.tls.mode, c.tls.roots), (tls::Mode::Require, tls::Roots::None));
        let e = connection_config(Some("host=db user=u sslmode=maybe"), &no_env).unwrap_err();
        assert!(e.contains("invalid sslmode"), "{e}");
        // the password check reads strings with TLS settings too
        assert!(refuse_password_in_conninfo("host=db sslmode=verify-full password=x").is_err());
        assert!(refuse_password_in_conninfo("host=db sslmode=verify-full sslrootcert=system").is_ok());
    }

    #[test]
    fn passfile_lines_split_with_escapes() {
        assert_eq!(split_passfile_line(r"h:5432:d:u:pa\:ss:word"), ["h", "5432", "d", "u", "pa:ss:word"]);
        assert_eq!(split_passfile_line(r"*:*:*:u\\x:p"), ["*", "*", "*", r"u\x", "p"]);
    }
}
