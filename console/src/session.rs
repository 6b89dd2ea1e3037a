//! Sessions: kept in memory on the server, found by a random id in an HttpOnly, SameSite=Strict
//! cookie. A session holds the operator's credentials (in memory only) and their connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;

pub const COOKIE: &str = "mf_session";
pub const LOGIN_COOKIE: &str = "mf_login";
/// At most this many sessions at once; a sign-in beyond it is refused.
pub const MAX_SESSIONS: usize = 10_000;

/// 32 random bytes from the operating system, as 64 hex digits.
pub fn random_token() -> String {
    let mut b = [0u8; 32];
    getrandom::getrandom(&mut b).expect("the operating system's random number generator");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Compares two tokens in constant time (for equal lengths).
pub fn same_token(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// A cookie's value from the request's Cookie headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
}

/// A Set-Cookie header value: HttpOnly, SameSite=Strict, Path=/, Secure when asked; `None`
/// expires it.
pub fn set_cookie(name: &str, value: Option<&str>, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match value {
        Some(v) => format!("{name}={v}; Path=/; HttpOnly; SameSite=Strict{secure}"),
        None => format!("{name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    }
}

/// Who is signed in, and how to connect as them.
pub struct Credentials {
    pub role: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("role", &self.role).field("password", &"<hidden>").finish()
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        // overwrite the password's bytes before the memory is freed (best effort)
        let bytes = unsafe { self.password.as_bytes_mut() };
        for b in bytes.iter_mut() {
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

/// What the session's role may do, as PostgreSQL said at sign-in.
#[derive(Debug, Clone, Copy, Default)]
pub struct Powers {
    pub reviewer: bool,
    pub admin: bool,
}

/// The parts of a session that change: behind the session's own lock, never held across a query.
#[derive(Debug, Default)]
pub struct State {
    pub tenant: Option<String>,
    pub flash: Option<Flash>,
    pub last_used: Option<Instant>,
    /// When PostgreSQL last checked the session's password (a connection opened with it).
    pub authenticated: Option<Instant>,
}

#[derive(Debug, Clone)]
pub enum Flash {
    Done(String),
    Failed(crate::db::PgError),
}

pub struct Session {
    pub id: String,
    pub credentials: Credentials,
    /// The role's name as PostgreSQL has it (current_user), also the name recorded as approver,
    /// editor or auditor: an operator cannot type another's.
    pub role: String,
    pub powers: Powers,
    pub csrf: String,
    pub created: Instant,
    pub state: Mutex<State>,
    /// The session's connection: one request at a time uses it; replaced when closed, and to
    /// authenticate again.
    pub conn: tokio::sync::Mutex<Option<crate::db::Conn>>,
    /// The live queue's connection (LISTEN memory_fabric) and the channel its notifications go
    /// out on to the session's event streams: opened by the first stream, again after a loss,
    /// closed with the session.
    pub listener: tokio::sync::Mutex<Option<(crate::db::Conn, tokio::sync::broadcast::Sender<crate::db::Live>)>>,
    /// The session's live-queue streams (--max-streams-per-session).
    pub streams: Arc<crate::limits::Gate>,
}

impl Session {
    pub fn tenant(&self) -> Option<String> {
        self.state.lock().unwrap().tenant.clone()
    }

    pub fn set_tenant(&self, t: Option<String>) {
        self.state.lock().unwrap().tenant = t;
    }

    pub fn flash(&self, f: Flash) {
        self.state.lock().unwrap().flash = Some(f);
    }

    pub fn take_flash(&self) -> Option<Flash> {
        self.state.lock().unwrap().flash.take()
    }

    /// How long since PostgreSQL last checked the session's password.
    pub fn since_authenticated(&self) -> Duration {
        let at = self.state.lock().unwrap().authenticated.unwrap_or(self.created);
        at.elapsed()
    }

    pub fn authenticated_now(&self) {
        self.state.lock().unwrap().authenticated = Some(Instant::now());
    }
}

/// Every live session, by id.
pub struct Store {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    pub idle: Duration,
    /// A session's absolute lifetime.
    pub max_age: Duration,
}

pub enum Lookup {
    Found(Arc<Session>),
    Expired,
    Unknown,
}

impl Store {
    pub fn new(idle: Duration, max_age: Duration) -> Store {
        Store { sessions: Mutex::new(HashMap::new()), idle, max_age }
    }

    /// Adds a session; false when the store is full.
    pub fn insert(&self, s: Arc<Session>) -> bool {
        let mut m = self.sessions.lock().unwrap();
        if m.len() >= MAX_SESSIONS {
            return false;
        }
        s.state.lock().unwrap().last_used = Some(Instant::now());
        m.insert(s.id.clone(), s);
        true
    }

    /// The session of the request's cookie, marked used; an expired one is removed.
    pub fn lookup(&self, headers: &HeaderMap) -> Lookup {
        let Some(id) = cookie(headers, COOKIE) else { return Lookup::Unknown };
        let mut m = self.sessions.lock().unwrap();
        let Some(s) = m.get(&id).cloned() else { return Lookup::Unknown };
        let now = Instant::now();
        let mut st = s.state.lock().unwrap();
        let idle_for = st.last_used.map(|t| now.duration_since(t)).unwrap_or_default();
        if idle_for > self.idle || now.duration_since(s.created) > self.max_age {
            drop(st);
            m.remove(&id);
            return Lookup::Expired;
        }
        st.last_used = Some(now);
        drop(st);
        Lookup::Found(s)
    }

    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().unwrap().remove(id)
    }

    /// Removes the sessions idle too long or too old; returns how many.
    pub fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut m = self.sessions.lock().unwrap();
        let before = m.len();
        m.retain(|_, s| {
            let last = s.state.lock().unwrap().last_used.unwrap_or(s.created);
            now.duration_since(last) <= self.idle && now.duration_since(s.created) <= self.max_age
        });
        before - m.len()
    }

    /// The sessions open now.
    pub fn all(&self) -> Vec<Arc<Session>> {
        self.sessions.lock().unwrap().values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.sessions.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn session(id: &str) -> Arc<Session> {
        Arc::new(Session {
            id: id.into(),
            credentials: Credentials { role: "ana".into(), password: "pw".into() },
            role: "ana".into(),
            powers: Powers { reviewer: true, admin: false },
            csrf: random_token(),
            created: Instant::now(),
            state: Mutex::new(State::default()),
            conn: tokio::sync::Mutex::new(None),
            listener: tokio::sync::Mutex::new(None),
            streams: crate::limits::Gate::new(4),
        })
    }

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let (a, b) = (random_token(), random_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(same_token(&a, &a.clone()));
        assert!(!same_token(&a, &b));
        assert!(!same_token(&a, &a[..63]));
        assert!(!same_token(&a, ""));
    }

    #[test]
    fn cookies_are_read_and_written_strictly() {
        let mut h = HeaderMap::new();
        h.append("cookie", HeaderValue::from_static("a=1; mf_session=abc ;b=2"));
        h.append("cookie", HeaderValue::from_static("mf_login=xyz"));
        assert_eq!(cookie(&h, COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&h, LOGIN_COOKIE).as_deref(), Some("xyz"));
        assert_eq!(cookie(&h, "mf"), None);
        let c = set_cookie(COOKIE, Some("abc"), false);
        assert_eq!(c, "mf_session=abc; Path=/; HttpOnly; SameSite=Strict");
        assert!(set_cookie(COOKIE, Some("abc"), true).ends_with("; Secure"));
        assert!(set_cookie(COOKIE, None, false).contains("Max-Age=0"));
    }

    #[test]
    fn idle_sessions_expire() {
        let store = Store::new(Duration::from_millis(50), Duration::from_secs(3600));
        let s = session("s1");
        assert!(store.insert(s.clone()));
        let mut h = HeaderMap::new();
        h.insert("cookie", HeaderValue::from_static("mf_session=s1"));
        assert!(matches!(store.lookup(&h), Lookup::Found(_)));
        std::thread::sleep(Duration::from_millis(80));
        assert!(matches!(store.lookup(&h), Lookup::Expired));
        assert!(matches!(store.lookup(&h), Lookup::Unknown));
        assert!(store.insert(session("s2")));
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(store.sweep(), 1);
        assert_eq!(store.len(), 0);
        assert!(format!("{:?}", s.credentials).contains("<hidden>"));
    }

    #[test]
    fn busy_sessions_end_at_their_absolute_lifetime() {
        let store = Store::new(Duration::from_secs(3600), Duration::from_millis(120));
        assert!(store.insert(session("s1")));
        let mut h = HeaderMap::new();
        h.insert("cookie", HeaderValue::from_static("mf_session=s1"));
        for _ in 0..4 {
            assert!(matches!(store.lookup(&h), Lookup::Found(_)));
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(60));
        assert!(matches!(store.lookup(&h), Lookup::Expired));
        // the default lifetime is a working day, not the 12 hours sessions once had
        let args: Vec<String> = vec![];
        let Ok(crate::config::Parsed::Run(cfg)) = crate::config::parse_args(&args, &|_| None) else { panic!("defaults") };
        assert_eq!(cfg.session_max_age, Duration::from_secs(8 * 3600));
    }
}
