//! TLS to PostgreSQL as libpq's sslmode, on rustls with its ring provider: the console's own,
//! smaller copy of the MCP server's `mcp/src/tls.rs` (no client certificates, no sslsni). A small
//! shared workspace crate used by both binaries would remove the duplication.
//!
//! | sslmode | TLS | the server's certificate |
//! |---|---|---|
//! | disable | never | - |
//! | allow, prefer (default) | when the server offers it | as require |
//! | require | always | the chain when there are root certificates (sslrootcert or ~/.postgresql/root.crt), else not checked |
//! | verify-ca | always | the chain against the roots (sslrootcert, ~/.postgresql/root.crt, else the system's) |
//! | verify-full | always | as verify-ca, and the host name |
//!
//! The handshake's signature is always checked. Unix sockets never use TLS.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

pub const MODES: [&str; 6] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/// Where the root certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    None,
    File(PathBuf),
    System,
}

/// The TLS settings, resolved as libpq resolves them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// One of MODES.
    pub mode: &'static str,
    pub roots: Roots,
}

impl Tls {
    /// `get(key, env_var)`: the connection string's value, else the variable's.
    pub fn resolve(get: &dyn Fn(&str, &str) -> Option<String>, home: Option<&Path>) -> Result<Tls, String> {
        let rootcert = get("sslrootcert", "PGSSLROOTCERT");
        let system = rootcert.as_deref() == Some("system");
        let mode = match get("sslmode", "PGSSLMODE") {
            None if system => "verify-full",
            None => "prefer",
            Some(m) => match MODES.iter().find(|x| **x == m) {
                Some(&x) if system && x != "verify-full" => {
                    return Err(format!("weak sslmode \"{x}\" may not be used with sslrootcert=system (use \"verify-full\")"))
                }
                Some(&x) => x,
                None => return Err(format!("invalid sslmode {m:?}: {}", MODES.join(", "))),
            },
        };
        let verifies = mode.starts_with("verify");
        let roots = match rootcert {
            Some(_) if system => Roots::System,
            Some(p) => Roots::File(PathBuf::from(p)),
            None => match home.map(|h| h.join(".postgresql/root.crt")).filter(|p| p.is_file()) {
                Some(p) => Roots::File(p),
                None if verifies => Roots::System,
                None => Roots::None,
            },
        };
        Ok(Tls { mode, roots })
    }

    fn pg_mode(&self) -> SslMode {
        match self.mode {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            _ => SslMode::Require,
        }
    }

    /// The rustls connector; reads the root certificates (nothing when sslmode is disable).
    pub fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let algorithms = provider.signature_verification_algorithms;
        let verifier: Arc<dyn ServerCertVerifier> = match (self.mode, &self.roots) {
            ("disable", _) | (_, Roots::None) => Arc::new(Checked { roots: None, algorithms }),
            ("verify-full", roots) => WebPkiServerVerifier::builder_with_provider(Arc::new(load_roots(roots)?), provider.clone())
                .build()
                .map_err(|e| format!("TLS root certificates: {e}"))?,
            (_, roots) => Arc::new(Checked { roots: Some(Arc::new(load_roots(roots)?)), algorithms }),
        };
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(MakeRustlsConnect::new(config))
    }

    /// The settings to try in order: sockets never use TLS, so where TLS is required and some
    /// hosts are sockets, one plan per host.
    pub fn plans(&self, pg: &tokio_postgres::Config) -> Vec<tokio_postgres::Config> {
        let socket = |h: &Host| !matches!(h, Host::Tcp(_));
        let hosts = pg.get_hosts();
        let mut one = pg.clone();
        if !hosts.is_empty() && hosts.iter().all(socket) {
            one.ssl_mode(SslMode::Disable);
            return vec![one];
        }
        one.ssl_mode(self.pg_mode());
        if self.pg_mode() != SslMode::Require || !hosts.iter().any(socket) {
            return vec![one];
        }
        (0..hosts.len())
            .map(|i| {
                // tokio-postgres has no setter that removes hosts: rebuild with the one host
                let mut only = tokio_postgres::Config::new();
                match &hosts[i] {
                    Host::Tcp(h) => only.host(h),
                    Host::Unix(p) => only.host_path(p),
                };
                if let Some(p) = pg.get_ports().get(i).or(pg.get_ports().first()) {
                    only.port(*p);
                }
                if let Some(d) = pg.get_dbname() {
                    only.dbname(d);
                }
                if let Some(o) = pg.get_options() {
                    only.options(o);
                }
                if let Some(a) = pg.get_application_name() {
                    only.application_name(a);
                }
                if let Some(t) = pg.get_connect_timeout() {
                    only.connect_timeout(*t);
                }
                only.ssl_mode(if socket(&hosts[i]) { SslMode::Disable } else { SslMode::Require });
                only
            })
            .collect()
    }
}

/// The rustls error under a connection error, in words, when TLS caused the failure.
pub fn describe(e: &tokio_postgres::Error) -> Option<String> {
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(r) = c.downcast_ref::<rustls::Error>() {
            return Some(format!("TLS: {r}"));
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
    let (certs, what) = match roots {
        Roots::None => return Ok(store),
        Roots::File(p) => {
            if !p.is_file() {
                return Err(format!("root certificate file {} does not exist", p.display()));
            }
            let certs = CertificateDer::pem_file_iter(p)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("cannot read root certificate file {}: {e}", p.display()))?;
            (certs, format!("root certificate file {}", p.display()))
        }
        Roots::System => (rustls_native_certs::load_native_certs().certs, "the system's trust store".to_string()),
    };
    if store.add_parsable_certificates(certs).0 == 0 {
        return Err(format!("{what} holds no usable certificate; give the CA's certificate in sslrootcert (PGSSLROOTCERT)"));
    }
    Ok(store)
}

/// Without roots (allow, prefer, require): the certificate is not verified, as libpq does not.
/// With roots (require with a root file, verify-ca): the chain and dates, not the host name. The
/// handshake's signature is verified in both cases.
#[derive(Debug)]
struct Checked {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Checked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
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

/// Takes the TLS keys (sslmode, sslrootcert) out of a connection string, which tokio-postgres
/// refuses or does not know in full; returns the rest and the pairs. Both libpq forms: key=value
/// (values optionally single-quoted, with backslash escapes) and URIs (query parameters).
pub fn split_params(s: &str) -> (String, Vec<(String, String)>) {
    const KEYS: [&str; 2] = ["sslmode", "sslrootcert"];
    let t = s.trim();
    if t.starts_with("postgres://") || t.starts_with("postgresql://") {
        let Some((base, query)) = t.split_once('?') else { return (t.to_string(), vec![]) };
        let (mut kept, mut tls) = (vec![], vec![]);
        for kv in query.split('&') {
            match kv.split_once('=') {
                Some((k, v)) if KEYS.contains(&k) => tls.push((k.to_string(), percent_decode(v))),
                _ => kept.push(kv),
            }
        }
        let rest = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
        return (rest, tls);
    }
    let (mut rest, mut tls) = (String::new(), vec![]);
    let mut chars = t.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() != Some(&'=') {
            // not key=value: leave it for tokio-postgres to refuse
            rest.push_str(&key);
            rest.push(' ');
            continue;
        }
        chars.next();
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let (mut value, mut raw) = (String::new(), String::new());
        if chars.peek() == Some(&'\'') {
            raw.push(chars.next().unwrap_or('\''));
            while let Some(c) = chars.next() {
                raw.push(c);
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            raw.push(n);
                            value.push(n);
                        }
                    }
                    '\'' => break,
                    _ => value.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        raw.push(c);
                        raw.push(n);
                        value.push(n);
                    }
                } else {
                    raw.push(c);
                    value.push(c);
                }
            }
        }
        if KEYS.contains(&key.as_str()) {
            tls.push((key, value));
        } else {
            rest.push_str(&format!("{key}={raw} "));
        }
    }
    (rest.trim_end().to_string(), tls)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(pairs: &[(&str, &str)]) -> Result<Tls, String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Tls::resolve(&|k, _| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()), None)
    }

    #[test]
    fn sslmode_and_roots_resolve_as_libpq() {
        assert_eq!(resolve(&[]).unwrap(), Tls { mode: "prefer", roots: Roots::None });
        assert_eq!(resolve(&[("sslmode", "require")]).unwrap().roots, Roots::None);
        assert_eq!(resolve(&[("sslmode", "verify-ca")]).unwrap().roots, Roots::System);
        let t = resolve(&[("sslmode", "verify-full"), ("sslrootcert", "/ca.pem")]).unwrap();
        assert_eq!(t, Tls { mode: "verify-full", roots: Roots::File("/ca.pem".into()) });
        assert_eq!(resolve(&[("sslrootcert", "system")]).unwrap().mode, "verify-full");
        assert!(resolve(&[("sslrootcert", "system"), ("sslmode", "require")]).unwrap_err().contains("weak sslmode"));
        assert!(resolve(&[("sslmode", "verify")]).unwrap_err().contains("invalid sslmode"));
        let e = resolve(&[("sslmode", "verify-ca"), ("sslrootcert", "/nonexistent/ca.pem")]).unwrap().connector().err().unwrap();
        assert!(e.contains("does not exist"), "{e}");
        assert!(resolve(&[("sslmode", "disable"), ("sslrootcert", "/nonexistent")]).unwrap().connector().is_ok());
        assert!(resolve(&[("sslmode", "require")]).unwrap().connector().is_ok());
    }

    #[test]
    fn tls_keys_come_out_of_the_string() {
        let (rest, tls) = split_params(r"host=db  sslmode = verify-full sslrootcert='/a b/c\'a.pem' application_name='x y'");
        assert_eq!(rest, "host=db application_name='x y'");
        assert_eq!(tls, vec![("sslmode".into(), "verify-full".into()), ("sslrootcert".into(), "/a b/c'a.pem".into())]);
        let (rest, tls) = split_params("postgresql://db:5433/mem?sslmode=verify-ca&application_name=a&sslrootcert=%2Fca.pem");
        assert_eq!(rest, "postgresql://db:5433/mem?application_name=a");
        assert_eq!(tls, vec![("sslmode".into(), "verify-ca".into()), ("sslrootcert".into(), "/ca.pem".into())]);
        assert_eq!(split_params("postgres://db/x?sslmode=require").0, "postgres://db/x");
    }

    #[test]
    fn sockets_never_use_tls() {
        let t = resolve(&[("sslmode", "verify-full")]).unwrap();
        let mut c = tokio_postgres::Config::new();
        c.host_path("/run/pg");
        assert_eq!(t.plans(&c)[0].get_ssl_mode(), SslMode::Disable);
        c.host("db.internal").port(5433).port(5434).dbname("agents");
        let plans = t.plans(&c);
        assert_eq!(plans.len(), 2);
        assert_eq!((plans[0].get_ssl_mode(), plans[0].get_ports()), (SslMode::Disable, &[5433u16][..]));
        assert_eq!((plans[1].get_ssl_mode(), plans[1].get_dbname()), (SslMode::Require, Some("agents")));
        let mut tcp = tokio_postgres::Config::new();
        tcp.host("a");
        assert_eq!(resolve(&[]).unwrap().plans(&tcp)[0].get_ssl_mode(), SslMode::Prefer);
    }
}
