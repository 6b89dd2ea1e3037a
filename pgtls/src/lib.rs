//! TLS to PostgreSQL the way libpq does it, on rustls (ring provider), for the workspace's
//! clients (the MCP server, the operator's console): the sslmode, sslrootcert, sslcert, sslkey
//! and sslsni settings, read from the connection string or PGSSLMODE, PGSSLROOTCERT, PGSSLCERT,
//! PGSSLKEY and PGSSLSNI; the certificates and keys are read once, at start-up.
//!
//! | sslmode | TLS | the server's certificate |
//! |---|---|---|
//! | disable | never | - |
//! | allow, prefer | when the server offers it | as require |
//! | require | always | the chain against the root certificates when there are some (sslrootcert, or ~/.postgresql/root.crt), else not at all |
//! | verify-ca | always | the chain against the root certificates (sslrootcert, ~/.postgresql/root.crt, else the system's) |
//! | verify-full | always | as verify-ca, and the host name |
//!
//! A handshake's signatures are always checked: an unverified certificate still has to be the
//! one whose key signed the handshake. Unix-socket connections never use TLS (PostgreSQL offers
//! none there).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's sslmode values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        Ok(match s {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => {
                return Err(format!(
                    "invalid sslmode {s:?}: disable, allow, prefer, require, verify-ca or verify-full"
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Allow => "allow",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }

    fn verifies(self) -> bool {
        matches!(self, Mode::VerifyCa | Mode::VerifyFull)
    }

    /// What tokio-postgres is told: allow is taken as prefer (TLS when the server offers it).
    fn pg(self) -> SslMode {
        match self {
            Mode::Disable => SslMode::Disable,
            Mode::Allow | Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }
}

/// Where the root certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// None: the certificate is not verified (allow, prefer, require without a root file).
    None,
    /// A PEM file: sslrootcert, PGSSLROOTCERT, or ~/.postgresql/root.crt when it exists.
    File(PathBuf),
    /// The operating system's trust store (sslrootcert=system, or a verify mode without a file).
    System,
}

impl fmt::Display for Roots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Roots::None => write!(f, "no root certificates"),
            Roots::File(p) => write!(f, "the root certificates of {}", p.display()),
            Roots::System => write!(f, "the system's trusted root certificates"),
        }
    }
}

/// The TLS settings, resolved the way libpq resolves them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub mode: Mode,
    pub roots: Roots,
    /// A client certificate (PEM, the leaf first) and its private key.
    pub client: Option<(PathBuf, PathBuf)>,
    pub sni: bool,
}

impl Settings {
    /// `get(dsn_key, env_var)`: the connection string's value, else the variable's (empty counts
    /// as unset). `home`: for the defaults in ~/.postgresql.
    pub fn resolve(get: &dyn Fn(&str, &str) -> Option<String>, home: Option<&Path>) -> Result<Settings, String> {
        let given_mode = get("sslmode", "PGSSLMODE").map(|m| Mode::parse(&m)).transpose()?;
        let rootcert = get("sslrootcert", "PGSSLROOTCERT");
        let default_file = |name: &str| home.map(|h| h.join(".postgresql").join(name)).filter(|p| p.is_file());

        let system = rootcert.as_deref() == Some("system");
        let mode = match given_mode {
            // libpq: sslrootcert=system makes verify-full the default, and refuses weaker modes
            Some(m) if system && m != Mode::VerifyFull => {
                return Err(format!(
                    "weak sslmode \"{}\" may not be used with sslrootcert=system (use \"verify-full\")",
                    m.name()
                ))
            }
            Some(m) => m,
            None if system => Mode::VerifyFull,
            None => Mode::Prefer,
        };
        let roots = match rootcert {
            Some(_) if system => Roots::System,
            Some(path) => Roots::File(PathBuf::from(path)),
            None => match default_file("root.crt") {
                Some(p) => Roots::File(p),
                None if mode.verifies() => Roots::System,
                None => Roots::None,
            },
        };

        // a client certificate: sslcert, else ~/.postgresql/postgresql.crt when it exists; its key:
        // sslkey, else ~/.postgresql/postgresql.key (read when TLS is used, as libpq does)
        let client = match get("sslcert", "PGSSLCERT").map(PathBuf::from).or_else(|| default_file("postgresql.crt")) {
            Some(cert) => {
                let key = get("sslkey", "PGSSLKEY")
                    .map(PathBuf::from)
                    .or_else(|| home.map(|h| h.join(".postgresql").join("postgresql.key")))
                    .ok_or_else(|| format!("sslcert {} is given but no private key: set sslkey (PGSSLKEY)", cert.display()))?;
                Some((cert, key))
            }
            None => None,
        };

        let sni = match get("sslsni", "PGSSLSNI").as_deref() {
            None | Some("1") => true,
            Some("0") => false,
            Some(v) => return Err(format!("invalid sslsni {v:?}: 0 or 1")),
        };
        Ok(Settings { mode, roots, client, sni })
    }

    /// The rustls connector. Reads the root certificates, the client certificate and its key
    /// (nothing when sslmode is disable).
    pub fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let algorithms = provider.signature_verification_algorithms;
        let verifier: Arc<dyn ServerCertVerifier> = match (self.mode, &self.roots) {
            (Mode::Disable, _) | (_, Roots::None) => Arc::new(Verifier { roots: None, algorithms }),
            (mode, roots) => {
                let store = Arc::new(load_roots(roots)?);
                if mode == Mode::VerifyFull {
                    WebPkiServerVerifier::builder_with_provider(store, provider.clone())
                        .build()
                        .map_err(|e| format!("cannot use {roots}: {e}"))?
                } else {
                    Arc::new(Verifier { roots: Some(store), algorithms })
                }
            }
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match (&self.client, self.mode) {
            (Some((cert, key)), mode) if mode != Mode::Disable => {
                let (chain, key_der) = load_client_cert(cert, key)?;
                builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                    format!("the client certificate {} does not go with the key {}: {e}", cert.display(), key.display())
                })?
            }
            _ => builder.with_no_client_auth(),
        };
        // PostgreSQL 17's direct TLS (sslnegotiation=direct) needs the ALPN name; older servers
        // ignore it
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        config.enable_sni = self.sni;
        Ok(MakeRustlsConnect::new(config))
    }

    /// The connection settings to try, in order: one, with the sslmode for tokio-postgres; or,
    /// where TLS is required and some hosts are socket directories (which never use TLS), one
    /// per host.
    pub fn plans(&self, pg: &tokio_postgres::Config) -> Vec<tokio_postgres::Config> {
        let is_socket = |h: &Host| !matches!(h, Host::Tcp(_));
        let hosts = pg.get_hosts();
        let mut one = pg.clone();
        if !hosts.is_empty() && hosts.iter().all(is_socket) {
            one.ssl_mode(SslMode::Disable);
            return vec![one];
        }
        one.ssl_mode(self.mode.pg());
        if self.mode.pg() != SslMode::Require || !hosts.iter().any(is_socket) {
            return vec![one];
        }
        (0..hosts.len())
            .map(|i| {
                let mut c = single_host(pg, i);
                c.ssl_mode(if is_socket(&hosts[i]) { SslMode::Disable } else { SslMode::Require });
                c
            })
            .collect()
    }

    /// A start-up or reconnect failure, in words, when TLS caused it.
    pub fn describe(&self, e: &tokio_postgres::Error) -> Option<String> {
        let tls = find_rustls_error(e)?;
        let mode = self.mode.name();
        Some(match tls {
            rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => format!(
                "TLS: the server certificate is not valid for the host name connected to (sslmode={mode} checks it): {tls}"
            ),
            rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext { expected, presented }) => {
                format!(
                    "TLS: the server certificate is not valid for the host name {:?} ({}; sslmode={mode} checks the \
                     name: connect with a name the certificate carries, or use sslmode=verify-ca)",
                    expected.to_str(),
                    if presented.is_empty() {
                        "it names no host".to_string()
                    } else {
                        format!("it is valid for {}", presented.join(", "))
                    }
                )
            }
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
                "TLS: the server certificate is not signed by {} (sslmode={mode}): {tls}",
                self.roots
            ),
            rustls::Error::InvalidCertificate(CertificateError::BadSignature) => format!(
                "TLS: a signature of the server's does not verify (a certificate signed by another CA of the same \
                 name as one of {}, or a handshake not signed by the certificate's key): {tls}",
                self.roots
            ),
            rustls::Error::InvalidCertificate(_) => {
                format!("TLS: the server certificate was refused (sslmode={mode}, {}): {tls}", self.roots)
            }
            rustls::Error::AlertReceived(_) => format!("TLS: the server refused the handshake: {tls}"),
            _ => format!("TLS handshake failed: {tls}"),
        })
    }
}

/// A connection failure in words when TLS caused it, without the settings' context (see
/// Settings::describe for the words that name the sslmode and the roots).
pub fn describe_plain(e: &tokio_postgres::Error) -> Option<String> {
    find_rustls_error(e).map(|r| format!("TLS: {r}"))
}

/// The rustls error under a connection error (tokio-postgres wraps tokio-rustls's io::Error).
fn find_rustls_error(e: &tokio_postgres::Error) -> Option<&rustls::Error> {
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(r) = c.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        cause = match c.downcast_ref::<std::io::Error>() {
            Some(io) => io.get_ref().map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => c.source(),
        };
    }
    None
}

fn load_roots(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::None => {}
        Roots::File(path) => {
            let certs = read_certs(path, "root certificate file")?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("root certificate file {} holds no usable certificate", path.display()));
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
                return Err(format!(
                    "no trusted root certificate found in the system's store{}; give the CA's certificate in \
                     sslrootcert (PGSSLROOTCERT) or ~/.postgresql/root.crt",
                    if why.is_empty() { String::new() } else { format!(" ({why})") }
                ));
            }
        }
    }
    Ok(store)
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    if !path.is_file() {
        return Err(format!("{what} {} does not exist", path.display()));
    }
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{what} {} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

fn load_client_cert(cert: &Path, key: &Path) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    let chain = read_certs(cert, "client certificate file")?;
    let meta = std::fs::metadata(key).map_err(|e| {
        format!("the client certificate {} has no usable private key file {}: {e}", cert.display(), key.display())
    })?;
    {
        // libpq's rule: no group or world access, except group read when root owns the file
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let mode = meta.permissions().mode();
        let loose = if meta.uid() == 0 { mode & 0o037 != 0 } else { mode & 0o077 != 0 };
        if loose {
            return Err(format!(
                "private key file {} has group or world access; it should be u=rw (0600) or less \
                 (u=rw,g=r (0640) when root owns it)",
                key.display()
            ));
        }
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        format!("cannot read the private key in {} (an unencrypted PEM key; sslpassword is not supported): {e}", key.display())
    })?;
    Ok((chain, key_der))
}

/// The verifier of every mode but verify-full. Without roots (require, allow, prefer without root
/// certificates) the certificate is not verified, as libpq does not; with roots (verify-ca, and
/// require with root certificates) the chain up to a root and the validity dates are, not the
/// host name. Either way the handshake's signature is checked, so the server must hold the
/// certificate's key.
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_cert_signed_by_trust_anchor(&cert, roots, intermediates, now, self.algorithms.all)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The settings with only the i-th host (its hostaddr and port too).
fn single_host(c: &tokio_postgres::Config, i: usize) -> tokio_postgres::Config {
    let mut one = tokio_postgres::Config::new();
    match &c.get_hosts()[i] {
        Host::Tcp(h) => one.host(h),
        Host::Unix(p) => one.host_path(p),
    };
    if let Some(addr) = c.get_hostaddrs().get(i) {
        one.hostaddr(*addr);
    }
    let ports = c.get_ports();
    if let Some(port) = ports.get(i).or(ports.first()) {
        one.port(*port);
    }
    if let Some(u) = c.get_user() {
        one.user(u);
    }
    if let Some(p) = c.get_password() {
        one.password(p);
    }
    if let Some(d) = c.get_dbname() {
        one.dbname(d);
    }
    if let Some(o) = c.get_options() {
        one.options(o);
    }
    if let Some(a) = c.get_application_name() {
        one.application_name(a);
    }
    if let Some(t) = c.get_connect_timeout() {
        one.connect_timeout(*t);
    }
    if let Some(t) = c.get_tcp_user_timeout() {
        one.tcp_user_timeout(*t);
    }
    one.keepalives(c.get_keepalives()).keepalives_idle(c.get_keepalives_idle());
    if let Some(t) = c.get_keepalives_interval() {
        one.keepalives_interval(t);
    }
    if let Some(n) = c.get_keepalives_retries() {
        one.keepalives_retries(n);
    }
    one.ssl_negotiation(c.get_ssl_negotiation())
        .target_session_attrs(c.get_target_session_attrs())
        .channel_binding(c.get_channel_binding());
    one
}

/// The connection string's TLS settings, which tokio-postgres does not know (all but sslmode and
/// sslnegotiation; sslmode only as disable, prefer and require): taken out of the string.
pub const TLS_KEYS: [&str; 5] = ["sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni"];

/// Splits the TLS settings out of a connection string (libpq's `key=value` form or a URL's query
/// parameters): the string without them, and them. A string this cannot read is left whole, for
/// tokio-postgres to say what is wrong with it.
pub fn split_tls_params(s: &str) -> (String, Vec<(String, String)>) {
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        let Some((base, query)) = s.split_once('?') else { return (s.to_string(), vec![]) };
        let (mut kept, mut tls) = (vec![], vec![]);
        for part in query.split('&') {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            match (percent_decode(k), percent_decode(v)) {
                (Some(k), Some(v)) if TLS_KEYS.contains(&k.as_str()) => tls.push((k, v)),
                _ => kept.push(part),
            }
        }
        let rest = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
        return (rest, tls);
    }
    // key = value, the value plain (up to whitespace) or 'quoted', with \ escaping either
    let (mut rest, mut tls) = (String::new(), vec![]);
    let mut chars = s.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else { break };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        if chars.next_if(|(_, c)| *c == '=').is_none() {
            return (s.to_string(), vec![]);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let quoted = chars.next_if(|(_, c)| *c == '\'').is_some();
        let mut value = String::new();
        while let Some(&(_, c)) = chars.peek() {
            if (quoted && c == '\'') || (!quoted && c.is_whitespace()) {
                break;
            }
            chars.next();
            if c == '\\' {
                if let Some((_, n)) = chars.next() {
                    value.push(n);
                }
            } else {
                value.push(c);
            }
        }
        let closed = !quoted || chars.next_if(|(_, c)| *c == '\'').is_some();
        if !closed || (!quoted && value.is_empty()) {
            return (s.to_string(), vec![]);
        }
        let end = chars.peek().map_or(s.len(), |&(i, _)| i);
        if TLS_KEYS.contains(&key.as_str()) {
            tls.push((key, value));
        } else {
            rest.push_str(&s[start..end]);
            rest.push(' ');
        }
    }
    (rest.trim_end().to_string(), tls)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(pairs: &[(&str, &str)], home: Option<&Path>) -> Result<Settings, String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::resolve(&|k: &str, _| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()), home)
    }

    #[test]
    fn sslmode_and_roots_resolve_as_libpq() {
        let s = resolve(&[], None).unwrap();
        assert_eq!((s.mode, &s.roots, &s.client, s.sni), (Mode::Prefer, &Roots::None, &None, true));
        assert_eq!(resolve(&[("sslmode", "require")], None).unwrap().roots, Roots::None);
        assert_eq!(resolve(&[("sslmode", "verify-ca")], None).unwrap().roots, Roots::System);
        let s = resolve(&[("sslmode", "verify-full"), ("sslrootcert", "/ca.pem")], None).unwrap();
        assert_eq!((s.mode, s.roots), (Mode::VerifyFull, Roots::File("/ca.pem".into())));
        // sslrootcert=system: verify-full by default, weaker modes refused
        assert_eq!(resolve(&[("sslrootcert", "system")], None).unwrap().mode, Mode::VerifyFull);
        let e = resolve(&[("sslrootcert", "system"), ("sslmode", "require")], None).unwrap_err();
        assert!(e.contains("weak sslmode \"require\""), "{e}");
        assert!(resolve(&[("sslmode", "verify")], None).unwrap_err().contains("verify-full"));
        assert!(!resolve(&[("sslsni", "0")], None).unwrap().sni);
        assert!(resolve(&[("sslcert", "/c.pem")], None).unwrap_err().contains("sslkey"));
        let s = resolve(&[("sslcert", "/c.pem"), ("sslkey", "/k.pem")], None).unwrap();
        assert_eq!(s.client, Some(("/c.pem".into(), "/k.pem".into())));
        // a key alone is no client certificate (libpq ignores it too)
        assert_eq!(resolve(&[("sslkey", "/k.pem")], None).unwrap().client, None);
    }

    #[test]
    fn the_files_in_home_are_the_defaults() {
        let home = std::env::temp_dir().join(format!("mf-mcp-tls-{}", std::process::id()));
        let dir = home.join(".postgresql");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("root.crt"), "").unwrap();
        std::fs::write(dir.join("postgresql.crt"), "").unwrap();
        let s = resolve(&[("sslmode", "require")], Some(&home));
        let disabled = resolve(&[("sslmode", "disable")], Some(&home)).unwrap().connector();
        std::fs::remove_dir_all(&home).unwrap();
        // nothing is read when TLS is not used
        assert!(disabled.is_ok());
        let s = s.unwrap();
        // require with a root file verifies the chain, as libpq's does
        assert_eq!(s.roots, Roots::File(dir.join("root.crt")));
        assert_eq!(s.client, Some((dir.join("postgresql.crt"), dir.join("postgresql.key"))));
    }

    #[test]
    fn a_missing_root_file_is_a_clear_error_but_not_for_disable() {
        let s = resolve(&[("sslmode", "verify-full"), ("sslrootcert", "/nonexistent/ca.pem")], None).unwrap();
        let e = s.connector().err().unwrap();
        assert!(e.contains("/nonexistent/ca.pem") && e.contains("does not exist"), "{e}");
        let s = resolve(&[("sslmode", "disable"), ("sslrootcert", "/nonexistent/ca.pem")], None).unwrap();
        assert!(s.connector().is_ok());
        assert!(resolve(&[("sslmode", "require")], None).unwrap().connector().is_ok());
    }

    #[test]
    fn sockets_never_use_tls() {
        let s = resolve(&[("sslmode", "verify-full")], None).unwrap();
        let mut c = tokio_postgres::Config::new();
        c.host_path("/run/pg").user("u");
        let plans = s.plans(&c);
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].get_ssl_mode(), SslMode::Disable);
        c.host("db.internal").port(5433).port(5434);
        let plans = s.plans(&c);
        assert_eq!(plans.len(), 2);
        assert_eq!((plans[0].get_ssl_mode(), plans[0].get_ports()), (SslMode::Disable, &[5433u16][..]));
        assert_eq!(plans[1].get_hosts(), &[Host::Tcp("db.internal".into())]);
        assert_eq!((plans[1].get_ssl_mode(), plans[1].get_ports()), (SslMode::Require, &[5434u16][..]));
        assert_eq!(plans[1].get_user(), Some("u"));
        let mut tcp = tokio_postgres::Config::new();
        tcp.host("a").host("b");
        let plans = s.plans(&tcp);
        assert_eq!((plans.len(), plans[0].get_ssl_mode()), (1, SslMode::Require));
        let prefer = resolve(&[], None).unwrap();
        assert_eq!(prefer.plans(&c).len(), 1);
    }
}
