//! The command line and the environment. The console has no database credentials of its own:
//! where the database is comes from here, who connects comes from the sign-in form.

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

pub const USAGE: &str = "\
memory-fabric-console: the operator's console for memory_fabric, a web page for the review queue.
Every query runs as the signed-in operator's own PostgreSQL role.

USAGE:
    memory-fabric-console [--listen ADDR] [--dsn CONNINFO] [--tenants A,B] [--idle-minutes N]

OPTIONS (each also read from the environment variable shown; the option wins):
    --listen ADDR        address and port to serve (MEMORY_FABRIC_CONSOLE_LISTEN; default
                         127.0.0.1:8088)
    --dsn CONNINFO       where the database is: host, port, dbname, options
                         (MEMORY_FABRIC_CONSOLE_DSN). No user and no password: operators sign in
                         with their own. PGHOST, PGPORT, PGDATABASE, PGOPTIONS, PGAPPNAME and
                         PGCONNECT_TIMEOUT fill what it leaves out; PGUSER and PGPASSWORD are
                         never read. TLS as libpq: sslmode (PGSSLMODE) disable, allow, prefer
                         (default), require, verify-ca, verify-full; sslrootcert (PGSSLROOTCERT)
                         a PEM file or `system`, else ~/.postgresql/root.crt.
    --tenants A,B        the tenants the chooser offers, each only to roles granted it
                         (MEMORY_FABRIC_CONSOLE_TENANTS)
    --idle-minutes N     sign a session out after N idle minutes (MEMORY_FABRIC_CONSOLE_IDLE_MINUTES;
                         default 30)
    --secure-cookies     mark cookies Secure, for a console behind a TLS proxy
                         (MEMORY_FABRIC_CONSOLE_SECURE_COOKIES=1)
    --allow-trust-auth   accept sign-ins the database did not check a password for (trust in
                         pg_hba.conf; test clusters only) (MEMORY_FABRIC_CONSOLE_ALLOW_TRUST_AUTH=1)
    -h, --help           print this help and exit
    -V, --version        print the version and exit
";

#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    /// The database's address and options; user and password are set per sign-in.
    pub pg: tokio_postgres::Config,
    /// libpq's sslmode and sslrootcert, from the connection string or PGSSLMODE, PGSSLROOTCERT.
    pub tls: memory_fabric_pgtls::Settings,
    pub tenants: Vec<String>,
    pub idle: Duration,
    pub secure_cookies: bool,
    pub allow_trust_auth: bool,
}

pub enum Parsed {
    Run(Box<Settings>),
    Help,
    Version,
}

/// Parses the arguments (without the program name); `env` reads a variable. Errors are messages
/// for stderr.
pub fn parse_args(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Parsed, String> {
    let (mut listen, mut dsn, mut tenants, mut idle) = (None, None, None, None);
    let (mut secure, mut trust) = (false, false);
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        match arg.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            "--secure-cookies" => {
                secure = true;
                i += 1;
                continue;
            }
            "--allow-trust-auth" => {
                trust = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let slot = match name {
            "--listen" => &mut listen,
            "--dsn" => &mut dsn,
            "--tenants" => &mut tenants,
            "--idle-minutes" => &mut idle,
            _ => return Err(format!("unknown argument {arg:?} (see --help)")),
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i).cloned().ok_or_else(|| format!("{name} needs a value"))?
            }
        };
        *slot = Some(value);
        i += 1;
    }
    let pick = |v: Option<String>, var: &str| v.or_else(|| env(var)).filter(|s| !s.is_empty());
    let flag = |var: &str| env(var).is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes" | "on"));
    let listen = pick(listen, "MEMORY_FABRIC_CONSOLE_LISTEN").unwrap_or_else(|| "127.0.0.1:8088".into());
    let listen = SocketAddr::from_str(&listen).map_err(|e| format!("--listen {listen:?}: {e} (give ADDRESS:PORT)"))?;
    let (pg, tls) = pg_config(pick(dsn, "MEMORY_FABRIC_CONSOLE_DSN").as_deref(), env)?;
    let tenants = pick(tenants, "MEMORY_FABRIC_CONSOLE_TENANTS")
        .map(|s| parse_tenants(&s))
        .transpose()?
        .unwrap_or_default();
    let idle = match pick(idle, "MEMORY_FABRIC_CONSOLE_IDLE_MINUTES") {
        None => 30,
        Some(s) => s
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=24 * 60).contains(n))
            .ok_or_else(|| format!("--idle-minutes {s:?}: give a whole number of minutes from 1 to 1440"))?,
    };
    Ok(Parsed::Run(Box::new(Settings {
        listen,
        pg,
        tls,
        tenants,
        idle: Duration::from_secs(idle * 60),
        secure_cookies: secure || flag("MEMORY_FABRIC_CONSOLE_SECURE_COOKIES"),
        allow_trust_auth: trust || flag("MEMORY_FABRIC_CONSOLE_ALLOW_TRUST_AUTH"),
    })))
}

/// A comma-separated list of tenant ids; each as written, without whitespace at either end.
pub fn parse_tenants(s: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = vec![];
    for t in s.split(',') {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

/// The database's settings: the connection string, then the PG* variables for what it leaves out.
/// A user or password in it is refused: operators sign in with their own.
pub fn pg_config(
    dsn: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(tokio_postgres::Config, memory_fabric_pgtls::Settings), String> {
    let (rest, tls_params) = dsn.map(memory_fabric_pgtls::split_tls_params).unwrap_or_default();
    let mut c = match dsn {
        None => tokio_postgres::Config::new(),
        Some(s) => match tokio_postgres::Config::from_str(&rest) {
            Ok(c) => c,
            Err(e) if s.to_ascii_lowercase().contains("password") => {
                return Err(format!("--dsn is not a valid connection string ({e}); it may not carry a password"))
            }
            Err(e) => return Err(format!("--dsn is not a valid connection string: {e}")),
        },
    };
    let tls = memory_fabric_pgtls::Settings::resolve(
        &|key, var| {
            tls_params.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()).or_else(|| env(var)).filter(|v| !v.is_empty())
        },
        env("HOME").filter(|h| !h.is_empty()).as_deref().map(std::path::Path::new),
    )
    .map_err(|e| format!("--dsn: {e}"))?;
    if c.get_password().is_some() {
        return Err("--dsn carries a password: the console has no credentials of its own, operators sign in \
                    with their role's"
            .into());
    }
    if c.get_user().is_some() {
        return Err("--dsn names a user: the console has no role of its own, operators sign in with theirs".into());
    }
    if c.get_hosts().is_empty() {
        match env("PGHOST").filter(|h| !h.is_empty()) {
            Some(h) => {
                for part in h.split(',') {
                    if part.starts_with('/') {
                        c.host_path(part);
                    } else {
                        c.host(part);
                    }
                }
            }
            None => {
                let sock = ["/var/run/postgresql", "/tmp"].into_iter().find(|d| std::path::Path::new(d).is_dir());
                c.host_path(sock.unwrap_or("/tmp"));
            }
        }
    }
    if c.get_ports().is_empty() {
        if let Some(p) = env("PGPORT").filter(|p| !p.is_empty()) {
            c.port(p.parse().map_err(|_| format!("PGPORT {p:?} is not a port"))?);
        }
    }
    if c.get_dbname().is_none() {
        if let Some(d) = env("PGDATABASE").filter(|d| !d.is_empty()) {
            c.dbname(&d);
        }
    }
    if c.get_options().is_none() {
        if let Some(o) = env("PGOPTIONS").filter(|o| !o.is_empty()) {
            c.options(&o);
        }
    }
    if c.get_application_name().is_none() {
        c.application_name(env("PGAPPNAME").filter(|a| !a.is_empty()).unwrap_or_else(|| "memory-fabric-console".into()));
    }
    if c.get_connect_timeout().is_none() {
        let secs = env("PGCONNECT_TIMEOUT").and_then(|t| t.parse::<u64>().ok()).filter(|t| *t > 0).unwrap_or(10);
        c.connect_timeout(Duration::from_secs(secs));
    }
    Ok((c, tls))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str], vars: &[(&str, &str)]) -> Result<Settings, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        match parse_args(&args, &|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))? {
            Parsed::Run(s) => Ok(*s),
            _ => Err("help or version".into()),
        }
    }

    #[test]
    fn defaults_and_environment() {
        let s = parse(&[], &[("PGHOST", "/run/pg"), ("PGPORT", "5433"), ("PGDATABASE", "agents")]).unwrap();
        assert_eq!(s.listen.to_string(), "127.0.0.1:8088");
        assert_eq!(s.pg.get_ports(), &[5433]);
        assert_eq!(s.pg.get_dbname(), Some("agents"));
        assert_eq!(s.pg.get_application_name(), Some("memory-fabric-console"));
        assert_eq!(s.idle, Duration::from_secs(1800));
        assert!(!s.secure_cookies && !s.allow_trust_auth);
        let s = parse(&["--listen=0.0.0.0:9000", "--tenants", " acme, globex,acme,", "--secure-cookies"], &[]).unwrap();
        assert_eq!(s.listen.port(), 9000);
        assert_eq!(s.tenants, vec!["acme", "globex"]);
        assert!(s.secure_cookies);
        assert!(parse(&[], &[("MEMORY_FABRIC_CONSOLE_ALLOW_TRUST_AUTH", "1")]).unwrap().allow_trust_auth);
    }

    #[test]
    fn credentials_in_the_dsn_are_refused() {
        let e = parse(&["--dsn", "host=db user=ana"], &[]).unwrap_err();
        assert!(e.contains("names a user"), "{e}");
        let e = parse(&["--dsn", "host=db password=secret"], &[]).unwrap_err();
        assert!(e.contains("carries a password") && !e.contains("secret"), "{e}");
        let e = parse(&["--dsn", "postgresql://ana:secret@db/agents"], &[]).unwrap_err();
        assert!(!e.contains("secret"), "{e}");
        // PGUSER and PGPASSWORD are never read
        let s = parse(&["--dsn", "host=db"], &[("PGUSER", "postgres"), ("PGPASSWORD", "x")]).unwrap();
        assert_eq!((s.pg.get_user(), s.pg.get_password()), (None, None));
    }

    #[test]
    fn tls_settings_are_read_like_libpq() {
        let s = parse(&["--dsn", "host=db dbname=agents sslmode=verify-full sslrootcert=/ca.pem"], &[]).unwrap();
        assert_eq!((s.tls.mode, s.tls.roots), (memory_fabric_pgtls::Mode::VerifyFull, memory_fabric_pgtls::Roots::File("/ca.pem".into())));
        assert_eq!(s.pg.get_dbname(), Some("agents"));
        let s = parse(&["--dsn", "host=db"], &[("PGSSLMODE", "require")]).unwrap();
        assert_eq!(s.tls.mode, memory_fabric_pgtls::Mode::Require);
        assert!(parse(&["--dsn", "host=db sslmode=maybe"], &[]).unwrap_err().contains("invalid sslmode"));
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        assert!(parse(&["--idle-minutes", "0"], &[]).unwrap_err().contains("1 to 1440"));
        assert!(parse(&["--listen", "nowhere"], &[]).unwrap_err().contains("ADDRESS:PORT"));
        assert!(parse(&["--bogus"], &[]).unwrap_err().contains("unknown argument"));
        assert!(parse(&["--dsn"], &[]).unwrap_err().contains("needs a value"));
    }
}
