//! The command line and the environment. The console has no database credentials of its own:
//! where the database is comes from here, who connects comes from the sign-in form.

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

pub const USAGE: &str = "\
memory-fabric-console: the operator's console for memory_fabric, a web page for the review queue.
Every query runs as the signed-in operator's own PostgreSQL role.

USAGE:
    memory-fabric-console [--listen ADDR] [--dsn CONNINFO] [--allowed-hosts H,H] [--tenants A,B] [...]

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
    --allowed-hosts H,H  the host names (NAME or NAME:PORT) a request's Host and Origin may name
                         (MEMORY_FABRIC_CONSOLE_ALLOWED_HOSTS); a NAME without a port allows the
                         listen port and none (a proxy on 80 or 443). Default: the listen address
                         and, when it is a loopback or unspecified address, localhost, both with
                         the listen port. Any other Host gets 421
    --tenants A,B        the tenants the chooser offers, each only to roles granted it
                         (MEMORY_FABRIC_CONSOLE_TENANTS)
    --idle-minutes N     sign a session out after N idle minutes (MEMORY_FABRIC_CONSOLE_IDLE_MINUTES;
                         default 30)
    --session-hours N    sign a session out N hours after sign-in however busy
                         (MEMORY_FABRIC_CONSOLE_SESSION_HOURS; 1 to 12, default 8)
    --reauth-seconds S   check a session's password again (a new connection) at its first request
                         after S seconds, and sweep idle sessions as often when that is under a
                         minute (MEMORY_FABRIC_CONSOLE_REAUTH_SECONDS; 5 to 3600, default 300);
                         every decision and admin action checks it, whatever S
    --header-timeout S   a request's header, and its body, must arrive within S seconds, and a
                         kept-alive connection is closed after S idle seconds
                         (MEMORY_FABRIC_CONSOLE_HEADER_TIMEOUT; default 10)
    --max-connections N  open HTTP connections at most (MEMORY_FABRIC_CONSOLE_MAX_CONNECTIONS;
                         default 256); a new one closes the oldest idle one, or gets 503
    --max-connections-per-ip N
                         per client address (MEMORY_FABRIC_CONSOLE_MAX_CONNECTIONS_PER_IP;
                         default 64); beyond, the address's oldest idle one is closed, or 429
    --max-streams N      live-queue streams at most (MEMORY_FABRIC_CONSOLE_MAX_STREAMS; default 64)
    --max-streams-per-session N
                         per session (MEMORY_FABRIC_CONSOLE_MAX_STREAMS_PER_SESSION; default 4)
    --max-db-connections N
                         PostgreSQL connections the console holds at most, all roles together
                         (MEMORY_FABRIC_CONSOLE_MAX_DB_CONNECTIONS; default 32)
    --max-db-connections-per-role N
                         per role (MEMORY_FABRIC_CONSOLE_MAX_DB_CONNECTIONS_PER_ROLE; default 8);
                         a session holds one, and one more while a live queue is open
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
    /// The names a request's Host (and a POST's Origin) may give.
    pub hosts: crate::guard::Allowed,
    pub tenants: Vec<String>,
    pub idle: Duration,
    /// A session's absolute lifetime.
    pub session_max_age: Duration,
    /// A session's password is checked again (a new connection) at its first request, or the
    /// sweep, after this long, so that a password change ends a session that only reads.
    pub reauth: Duration,
    pub secure_cookies: bool,
    pub allow_trust_auth: bool,
    pub limits: Limits,
}

/// The bounds on what clients may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Reading a request's header (and its body), and a kept-alive connection's idle wait.
    pub header_timeout: Duration,
    pub connections: usize,
    pub connections_per_ip: usize,
    pub streams: usize,
    pub streams_per_session: usize,
    pub db_connections: usize,
    pub db_connections_per_role: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            connections: 256,
            connections_per_ip: 64,
            streams: 64,
            streams_per_session: 4,
            db_connections: 32,
            db_connections_per_role: 8,
        }
    }
}

pub enum Parsed {
    Run(Box<Settings>),
    Help,
    Version,
}

/// A whole number (of `unit`, when given) in `range`, or a message naming the option.
fn number(name: &str, s: &str, range: std::ops::RangeInclusive<u64>, unit: &str) -> Result<u64, String> {
    let of = if unit.is_empty() { String::new() } else { format!(" of {unit}") };
    s.parse::<u64>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| format!("{name} {s:?}: give a whole number{of} from {} to {}", range.start(), range.end()))
}

/// Parses the arguments (without the program name); `env` reads a variable. Errors are messages
/// for stderr.
pub fn parse_args(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Parsed, String> {
    // the options that take a value, with their environment variables
    const VALUED: [(&str, &str); 14] = [
        ("--listen", "MEMORY_FABRIC_CONSOLE_LISTEN"),
        ("--dsn", "MEMORY_FABRIC_CONSOLE_DSN"),
        ("--tenants", "MEMORY_FABRIC_CONSOLE_TENANTS"),
        ("--idle-minutes", "MEMORY_FABRIC_CONSOLE_IDLE_MINUTES"),
        ("--allowed-hosts", "MEMORY_FABRIC_CONSOLE_ALLOWED_HOSTS"),
        ("--session-hours", "MEMORY_FABRIC_CONSOLE_SESSION_HOURS"),
        ("--reauth-seconds", "MEMORY_FABRIC_CONSOLE_REAUTH_SECONDS"),
        ("--header-timeout", "MEMORY_FABRIC_CONSOLE_HEADER_TIMEOUT"),
        ("--max-connections", "MEMORY_FABRIC_CONSOLE_MAX_CONNECTIONS"),
        ("--max-connections-per-ip", "MEMORY_FABRIC_CONSOLE_MAX_CONNECTIONS_PER_IP"),
        ("--max-streams", "MEMORY_FABRIC_CONSOLE_MAX_STREAMS"),
        ("--max-streams-per-session", "MEMORY_FABRIC_CONSOLE_MAX_STREAMS_PER_SESSION"),
        ("--max-db-connections", "MEMORY_FABRIC_CONSOLE_MAX_DB_CONNECTIONS"),
        ("--max-db-connections-per-role", "MEMORY_FABRIC_CONSOLE_MAX_DB_CONNECTIONS_PER_ROLE"),
    ];
    let mut given: Vec<Option<String>> = vec![None; VALUED.len()];
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
        let Some(slot) = VALUED.iter().position(|(n, _)| *n == name) else {
            return Err(format!("unknown argument {arg:?} (see --help)"));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i).cloned().ok_or_else(|| format!("{name} needs a value"))?
            }
        };
        given[slot] = Some(value);
        i += 1;
    }
    // the option, else its environment variable; empty is unset
    let pick = |name: &str| -> Option<String> {
        let at = VALUED.iter().position(|(n, _)| *n == name).expect("a known option");
        given[at].clone().or_else(|| env(VALUED[at].1)).filter(|s| !s.is_empty())
    };
    let flag = |var: &str| env(var).is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes" | "on"));
    let listen = pick("--listen").unwrap_or_else(|| "127.0.0.1:8088".into());
    let listen = SocketAddr::from_str(&listen).map_err(|e| format!("--listen {listen:?}: {e} (give ADDRESS:PORT)"))?;
    let (pg, tls) = pg_config(pick("--dsn").as_deref(), env)?;
    let tenants = pick("--tenants").map(|s| parse_tenants(&s)).transpose()?.unwrap_or_default();
    let hosts = match pick("--allowed-hosts") {
        None => crate::guard::Allowed::default_for(listen),
        Some(s) => crate::guard::Allowed::parse(&s, listen.port()).map_err(|e| format!("--allowed-hosts: {e}"))?,
    };
    let amount = |name: &str, default: u64, range, unit| pick(name).map_or(Ok(default), |s| number(name, &s, range, unit));
    let idle = amount("--idle-minutes", 30, 1..=24 * 60, "minutes")?;
    let hours = amount("--session-hours", 8, 1..=12, "hours")?;
    let reauth = amount("--reauth-seconds", 300, 5..=3600, "seconds")?;
    let d = Limits::default();
    let count = |name: &str| -> Result<Option<usize>, String> {
        pick(name).map(|s| number(name, &s, 1..=100_000, "").map(|n| n as usize)).transpose()
    };
    // a part's cap left at its default follows a smaller whole; one given above it is an error
    let part = |name: &str, default: usize, whole: usize, whole_name: &str| -> Result<usize, String> {
        match count(name)? {
            None => Ok(default.min(whole)),
            Some(n) if n > whole => Err(format!("{name} ({n}) is above {whole_name} ({whole})")),
            Some(n) => Ok(n),
        }
    };
    let connections = count("--max-connections")?.unwrap_or(d.connections);
    let db_connections = count("--max-db-connections")?.unwrap_or(d.db_connections);
    // each stream holds a connection: some must be left for pages
    let streams = match count("--max-streams")? {
        None => d.streams.min(connections.saturating_sub(1).max(1)),
        Some(n) if n >= connections => {
            return Err(format!("--max-streams ({n}) must be below --max-connections ({connections}): each stream holds a connection"))
        }
        Some(n) => n,
    };
    let limits = Limits {
        header_timeout: Duration::from_secs(amount("--header-timeout", d.header_timeout.as_secs(), 1..=300, "seconds")?),
        connections,
        connections_per_ip: part("--max-connections-per-ip", d.connections_per_ip, connections, "--max-connections")?,
        streams,
        streams_per_session: part("--max-streams-per-session", d.streams_per_session, streams, "--max-streams")?,
        db_connections,
        db_connections_per_role: part(
            "--max-db-connections-per-role",
            d.db_connections_per_role,
            db_connections,
            "--max-db-connections",
        )?,
    };
    Ok(Parsed::Run(Box::new(Settings {
        listen,
        pg,
        tls,
        hosts,
        tenants,
        idle: Duration::from_secs(idle * 60),
        session_max_age: Duration::from_secs(hours * 3600),
        reauth: Duration::from_secs(reauth),
        secure_cookies: secure || flag("MEMORY_FABRIC_CONSOLE_SECURE_COOKIES"),
        allow_trust_auth: trust || flag("MEMORY_FABRIC_CONSOLE_ALLOW_TRUST_AUTH"),
        limits,
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
    fn caps_and_timeouts_from_options_and_environment() {
        let s = parse(&[], &[]).unwrap();
        assert_eq!(s.limits, Limits::default());
        assert_eq!((s.session_max_age, s.reauth), (Duration::from_secs(8 * 3600), Duration::from_secs(300)));
        assert_eq!(s.hosts.describe(), "127.0.0.1:8088, localhost:8088");
        let s = parse(
            &["--max-db-connections-per-role=2", "--header-timeout", "3", "--allowed-hosts", "console.example.com"],
            &[("MEMORY_FABRIC_CONSOLE_MAX_DB_CONNECTIONS", "4"), ("MEMORY_FABRIC_CONSOLE_MAX_DB_CONNECTIONS_PER_ROLE", "3"),
              ("MEMORY_FABRIC_CONSOLE_MAX_STREAMS_PER_SESSION", "2"), ("MEMORY_FABRIC_CONSOLE_SESSION_HOURS", "1"),
              ("MEMORY_FABRIC_CONSOLE_REAUTH_SECONDS", "30")],
        )
        .unwrap();
        assert_eq!((s.limits.db_connections, s.limits.db_connections_per_role), (4, 2));
        assert_eq!((s.limits.streams_per_session, s.limits.header_timeout), (2, Duration::from_secs(3)));
        assert_eq!((s.session_max_age, s.reauth), (Duration::from_secs(3600), Duration::from_secs(30)));
        assert_eq!(s.hosts.describe(), "console.example.com");
        assert!(parse(&["--session-hours", "13"], &[]).unwrap_err().contains("1 to 12"));
        // a part left at its default follows a smaller whole
        let s = parse(&["--max-connections", "8", "--max-db-connections", "2"], &[]).unwrap();
        assert_eq!((s.limits.connections_per_ip, s.limits.streams, s.limits.db_connections_per_role), (8, 7, 2));
        let e = parse(&["--max-db-connections", "2", "--max-db-connections-per-role", "3"], &[]).unwrap_err();
        assert_eq!(e, "--max-db-connections-per-role (3) is above --max-db-connections (2)");
        assert!(parse(&["--max-connections", "64", "--max-streams", "64"], &[]).unwrap_err().contains("must be below --max-connections"));
        assert!(parse(&["--max-streams", "0"], &[]).unwrap_err().contains("from 1 to"));
        assert!(parse(&["--allowed-hosts", "a/b"], &[]).unwrap_err().starts_with("--allowed-hosts: "));
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        assert!(parse(&["--idle-minutes", "0"], &[]).unwrap_err().contains("1 to 1440"));
        assert!(parse(&["--listen", "nowhere"], &[]).unwrap_err().contains("ADDRESS:PORT"));
        assert!(parse(&["--bogus"], &[]).unwrap_err().contains("unknown argument"));
        assert!(parse(&["--dsn"], &[]).unwrap_err().contains("needs a value"));
    }
}
