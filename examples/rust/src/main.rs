//! An agent's memory with the `postgres` and `pgvector` crates: capture facts with the
//! application's own embedding, let the extension review and promote them, and recall by vector.
//!
//! The database side is set up once by an administrator (see ../run.sh):
//! ```sql
//! CREATE EXTENSION memory_fabric CASCADE;
//! CREATE ROLE app LOGIN IN ROLE memory_fabric_agent;
//! SELECT memory_fabric.grant_tenant('app', 'acme');
//! ```
//! Run: `PGHOST=/path/to/socket/dir PGPORT=5432 PGDATABASE=db PGUSER=app cargo run`
//! It checks what it gets back and exits non-zero on anything unexpected.

use std::env;
use std::error::Error;
use std::process::ExitCode;

use pgvector::Vector;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, Row};

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

/// The application's model, registered for the tenant by its admin (examples/run.sh).
const MODEL: &str = "example/hash-64";
const DIMS: usize = 64;

/// Returns an error (and so a non-zero exit) when a condition does not hold.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

/// The application's own embedding (a stand-in for a real model): a hashed bag of words,
/// each word adding +1 or -1 to one of 64 dimensions, L2-normalised.
fn embed(text: &str) -> Vector {
    let mut v = vec![0f32; DIMS];
    let lower = text.to_lowercase();
    for word in lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = fnv1a(word.as_bytes());
        v[(h % DIMS as u64) as usize] += if h >> 63 == 1 { 1.0 } else { -1.0 };
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    Vector::from(v)
}

/// FNV-1a, 64 bits: stable across runs and platforms, unlike std's `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD) as a `Config`:
/// the `postgres` crate does not read it by itself. A host starting with '/' is a unix
/// socket directory.
fn config_from_env() -> Result<Config> {
    let mut config = Config::new();
    for host in env::var("PGHOST")
        .unwrap_or_else(|_| "localhost".into())
        .split(',')
    {
        if host.starts_with('/') {
            config.host_path(host);
        } else {
            config.host(host);
        }
    }
    if let Ok(port) = env::var("PGPORT") {
        config.port(port.parse().map_err(|e| format!("PGPORT={port}: {e}"))?);
    }
    let user = env::var("PGUSER")
        .or_else(|_| env::var("USER"))
        .map_err(|_| "set PGUSER")?;
    config.dbname(&env::var("PGDATABASE").unwrap_or_else(|_| user.clone()));
    config.user(&user);
    if let Ok(password) = env::var("PGPASSWORD") {
        config.password(password);
    }
    config.application_name("memory_fabric_example_rust");
    Ok(config)
}

/// What `review_candidate` decided.
#[derive(Debug)]
struct Review {
    status: String,
    reviewer: String,
    duplicate_of_id: Option<String>,
    proposed_tier: String,
    priority_score: f64,
}

/// What became of one fact that the agent wanted to remember.
#[derive(Debug)]
enum Outcome {
    Promoted {
        memory_id: String,
        review: Review,
    },
    /// Not promoted: a duplicate, a contradiction, rejected, or queued for a human reviewer.
    Held {
        candidate_id: String,
        review: Review,
    },
}

/// One row of `recall`.
#[derive(Debug)]
struct Recalled {
    memory_id: String,
    text: String,
    user_scope: Option<String>,
    score: f64,
    relevance: f64,
}

/// One session of the memory, pinned to one tenant.
struct Memory {
    client: Client,
    tenant: String,
}

impl Memory {
    fn connect(config: &Config, tenant: &str) -> Result<Self> {
        let mut client = config.connect(NoTls)?;
        // every call of a non-superuser acts for the tenant its session is pinned to
        client.execute(
            "SELECT set_config('memory_fabric.tenant_id', $1, false)",
            &[&tenant],
        )?;
        Ok(Memory {
            client,
            tenant: tenant.to_owned(),
        })
    }

    /// Appends a fact to the candidates log, with its embedding; returns the candidate id.
    fn capture(&mut self, source: &str, user: &str, text: &str) -> Result<String, postgres::Error> {
        let row = self.client.query_one(
            "SELECT id FROM memory_fabric.capture_memory(tenant_id => $1, text => $2, source => $3, \
             classification => 'INTERNAL', user_id => $4, embedding => $5, embedding_model => $6)",
            &[&self.tenant, &text, &source, &user, &embed(text), &MODEL],
        )?;
        row.try_get("id")
    }

    fn review(&mut self, candidate_id: &str) -> Result<Review, postgres::Error> {
        let row = self.client.query_one(
            "SELECT status, reviewer, duplicate_of_id, proposed_tier, priority_score::float8 AS priority_score \
             FROM memory_fabric.review_candidate($1)",
            &[&candidate_id],
        )?;
        Ok(Review {
            status: row.try_get("status")?,
            reviewer: row.try_get("reviewer")?,
            duplicate_of_id: row.try_get("duplicate_of_id")?,
            proposed_tier: row.try_get("proposed_tier")?,
            priority_score: row.try_get("priority_score")?,
        })
    }

    /// Promotes a reviewed candidate; returns the promoted memory's id.
    fn promote(&mut self, candidate_id: &str) -> Result<String, postgres::Error> {
        self.client
            .query_one("SELECT id FROM memory_fabric.promote($1)", &[&candidate_id])?
            .try_get("id")
    }

    /// capture -> review -> promote, when the automatic review cleared it for promotion.
    fn remember(&mut self, user: &str, text: &str) -> Result<Outcome, postgres::Error> {
        let candidate_id = self.capture("agent", user, text)?;
        let review = self.review(&candidate_id)?;
        if review.status == "pending_promotion" && review.reviewer == "auto" {
            let memory_id = self.promote(&candidate_id)?;
            Ok(Outcome::Promoted { memory_id, review })
        } else {
            Ok(Outcome::Held {
                candidate_id,
                review,
            })
        }
    }

    /// The user's memories nearest to the query, by the application's embedding.
    fn recall(
        &mut self,
        user: &str,
        query: &str,
        max: i32,
    ) -> Result<Vec<Recalled>, postgres::Error> {
        let rows = self.client.query(
            "SELECT memory_id, text, user_scope, score, relevance \
             FROM memory_fabric.recall($1, NULL::text, user_id => $2, query_embedding => $3, \
                                       query_embedding_model => $4, max_recalls => $5)",
            &[&self.tenant, &user, &embed(query), &MODEL, &max],
        )?;
        rows.iter().map(recalled).collect()
    }
}

fn recalled(row: &Row) -> Result<Recalled, postgres::Error> {
    Ok(Recalled {
        memory_id: row.try_get("memory_id")?,
        text: row.try_get("text")?,
        user_scope: row.try_get("user_scope")?,
        score: row.try_get("score")?,
        relevance: row.try_get("relevance")?,
    })
}

/// Expects `result` to fail with `state`, the way an application branches on an error.
fn expect_sqlstate<T: std::fmt::Debug>(
    result: Result<T, postgres::Error>,
    state: &SqlState,
) -> Result<String> {
    match result {
        Ok(v) => Err(format!("expected SQLSTATE {}, got {v:?}", state.code()).into()),
        Err(e) if e.code() == Some(state) => {
            let db = e
                .as_db_error()
                .ok_or("a database error without its fields")?;
            let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
            Ok(format!("{} {}{detail}", state.code(), db.message()))
        }
        Err(e) => Err(format!("expected SQLSTATE {}, got {e}", state.code()).into()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // postgres::Error says "db error"; the server's message is in its source
            let mut message = e.to_string();
            let mut source = e.source();
            while let Some(cause) = source {
                message = format!("{message}: {cause}");
                source = cause.source();
            }
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let (tenant, user) = ("acme", "cus_42");
    let mut memory = Memory::connect(&config_from_env()?, tenant)?;

    let facts = [
        "Customer prefers email over phone calls.",
        "Customer's billing cycle starts on the 5th of each month.",
        "Customer uses the Lisbon warehouse for returns.",
    ];
    let mut promoted = Vec::new();
    for fact in facts {
        match memory.remember(user, fact)? {
            Outcome::Promoted { memory_id, review } => {
                println!(
                    "{fact:?}: promoted as {memory_id} ({} tier, priority {:.2})",
                    review.proposed_tier, review.priority_score
                );
                promoted.push(memory_id);
            }
            held @ Outcome::Held { .. } => {
                return Err(format!("{fact:?} was not promoted: {held:?}").into())
            }
        }
    }

    // the same fact again is reviewed as a duplicate of the first and never promoted twice
    let again = memory.remember(user, facts[0])?;
    let Outcome::Held {
        candidate_id: duplicate,
        review,
    } = again
    else {
        return Err(format!("the same fact again was promoted: {again:?}").into());
    };
    ensure!(
        review.status == "duplicate_of",
        "the same fact again: {review:?}"
    );
    let Some(of) = review.duplicate_of_id else {
        return Err(format!("a duplicate without duplicate_of_id: {duplicate}").into());
    };
    ensure!(
        of == promoted[0],
        "{duplicate} is a duplicate of {of}, not of {}",
        promoted[0]
    );
    println!("again: {duplicate} is duplicate_of {of}");

    let rows = memory.recall(user, "when does the billing cycle start", 2)?;
    for r in &rows {
        println!(
            "recalled: {} {:?} score {:.3} relevance {:.3}",
            r.memory_id, r.text, r.score, r.relevance
        );
    }
    ensure!(
        rows.len() == 2,
        "recall with max_recalls => 2 returned {} rows",
        rows.len()
    );
    ensure!(
        rows[0].text == facts[1],
        "the top recall is not the billing fact: {:?}",
        rows[0]
    );
    ensure!(
        rows[0].memory_id == promoted[1],
        "the top recall is not {}: {:?}",
        promoted[1],
        rows[0]
    );

    // errors carry SQLSTATEs an application can branch on
    let bad_source = memory.capture("robot", user, "A fact from an unknown kind of source.");
    println!(
        "source 'robot': {}",
        expect_sqlstate(bad_source, &SqlState::INVALID_PARAMETER_VALUE)?
    );
    let promote_duplicate = memory.promote(&duplicate);
    println!(
        "promote the duplicate: {}",
        expect_sqlstate(
            promote_duplicate,
            &SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE
        )?
    );

    // another user of the same tenant sees none of this customer's memories
    let other = memory.recall("cus_7", "when does the billing cycle start", 8)?;
    println!("cus_7 recalls {} memories", other.len());
    ensure!(
        other
            .iter()
            .all(|r| r.user_scope.as_deref() != Some(user) && !promoted.contains(&r.memory_id)),
        "cus_7 recalls memories of {user}: {other:?}"
    );

    println!("ok");
    Ok(())
}
