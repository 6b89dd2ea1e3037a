//! The tools: one module per tool, each with its arguments (their JSON Schema comes from the
//! struct), its description for the model, its output schema and its SQL. This module holds what
//! they share: argument checks, the named-argument call builder, errors and results.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio_postgres::types::ToSql;
use tokio_postgres::Transaction;

use crate::config::Settings;

mod explain_recall;
mod memory_history;
mod recall;
mod remember;
mod review_status;

/// The longest string any argument may hold; longer ones are refused before the database sees
/// them (the database's own limits are smaller still: 16 KiB of text by default).
pub const MAX_STRING_BYTES: usize = 1 << 20;
/// The most all of a call's arguments may hold, serialised.
pub const MAX_ARGUMENTS_BYTES: usize = 4 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Remember,
    Recall,
    ReviewStatus,
    ExplainRecall,
    MemoryHistory,
}

impl ToolKind {
    pub const ALL: [ToolKind; 5] =
        [ToolKind::Remember, ToolKind::Recall, ToolKind::ReviewStatus, ToolKind::ExplainRecall, ToolKind::MemoryHistory];

    pub fn name(self) -> &'static str {
        match self {
            ToolKind::Remember => "remember",
            ToolKind::Recall => "recall",
            ToolKind::ReviewStatus => "review_status",
            ToolKind::ExplainRecall => "explain_recall",
            ToolKind::MemoryHistory => "memory_history",
        }
    }

    pub fn from_name(name: &str) -> Option<ToolKind> {
        ToolKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The functions of schema memory_fabric the tool calls: it is offered only when the role
    /// may execute every one of them.
    pub fn functions(self) -> &'static [&'static str] {
        match self {
            ToolKind::Remember => &["capture_memory", "review_candidate", "promote"],
            ToolKind::Recall => &["recall"],
            ToolKind::ReviewStatus => &["review_status"],
            ToolKind::ExplainRecall => &["explain_recall"],
            ToolKind::MemoryHistory => &["memory_history"],
        }
    }

    /// The tables of schema memory_fabric the tool reads itself: with a user or intent scope
    /// (--user, --intent), memory_history and explain_recall first read the memory's user and
    /// intent (as the role, under row-level security), so they are offered only to a role that
    /// may.
    pub fn tables(self, scoped: bool) -> &'static [&'static str] {
        match self {
            ToolKind::ExplainRecall if scoped => &["promoted_memory"],
            ToolKind::MemoryHistory if scoped => &["candidates", "promoted_memory"],
            _ => &[],
        }
    }

    pub fn describe(self) -> Tool {
        let (description, input, output, read_only) = match self {
            ToolKind::Remember => {
                (remember::DESCRIPTION, input_schema::<remember::Args>(), remember::output_schema(), false)
            }
            ToolKind::Recall => (recall::DESCRIPTION, input_schema::<recall::Args>(), recall::output_schema(), true),
            ToolKind::ReviewStatus => {
                (review_status::DESCRIPTION, input_schema::<review_status::Args>(), review_status::output_schema(), true)
            }
            ToolKind::ExplainRecall => {
                (explain_recall::DESCRIPTION, input_schema::<explain_recall::Args>(), explain_recall::output_schema(), true)
            }
            ToolKind::MemoryHistory => {
                (memory_history::DESCRIPTION, input_schema::<memory_history::Args>(), memory_history::output_schema(), true)
            }
        };
        let Value::Object(output) = output else { unreachable!("output schemas are objects") };
        Tool::new(self.name(), description, input).with_raw_output_schema(Arc::new(output)).with_annotations(
            ToolAnnotations::new().read_only(read_only).destructive(false).idempotent(read_only).open_world(false),
        )
    }

    /// Checks and converts the arguments; nothing here touches the database.
    pub fn parse(self, settings: &Settings, args: Option<JsonObject>) -> Result<Call, ToolError> {
        let args = Value::Object(args.unwrap_or_default());
        check_sizes(&args)?;
        Ok(match self {
            ToolKind::Remember => Call::Remember(remember::parse(settings, from_json(args)?)?),
            ToolKind::Recall => Call::Recall(recall::parse(settings, from_json(args)?)?),
            ToolKind::ReviewStatus => Call::ReviewStatus(review_status::parse(from_json(args)?)?),
            ToolKind::ExplainRecall => Call::ExplainRecall(explain_recall::parse(settings, from_json(args)?)?),
            ToolKind::MemoryHistory => Call::MemoryHistory(memory_history::parse(from_json(args)?)?),
        })
    }
}

/// A checked call, ready to run.
pub enum Call {
    Remember(remember::Call),
    Recall(recall::Call),
    ReviewStatus(review_status::Call),
    ExplainRecall(explain_recall::Call),
    MemoryHistory(memory_history::Call),
}

impl Call {
    /// Runs the call in the transaction (already pinned to the tenant).
    pub async fn run(self, tx: &Transaction<'_>, settings: &Settings, actor: &str) -> Result<Output, ToolError> {
        match self {
            Call::Remember(c) => remember::run(tx, settings, actor, c).await,
            Call::Recall(c) => recall::run(tx, settings, c).await,
            Call::ReviewStatus(c) => review_status::run(tx, c).await,
            Call::ExplainRecall(c) => explain_recall::run(tx, settings, c).await,
            Call::MemoryHistory(c) => memory_history::run(tx, settings, c).await,
        }
    }
}

/// A tool's answer: a line for people (and models) and the JSON object.
pub struct Output {
    pub summary: String,
    pub value: Value,
}

impl Output {
    pub fn into_result(self) -> CallToolResult {
        let text = format!("{}\n{}", self.summary, self.value);
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(self.value);
        r
    }
}

const LOST_HINT: &str = "The call was rolled back, unless the connection broke while it committed: check with recall or \
                         review_status before repeating it. The next call connects again.";

#[derive(Debug)]
pub enum ToolError {
    /// The arguments are wrong: missing, of the wrong type, out of range or too large.
    Arguments(String),
    /// PostgreSQL refused the call.
    Database { sqlstate: String, message: String, detail: Option<String>, hint: Option<String> },
    /// The connection is gone (or could not be made, or was refused at its checks); the next
    /// call connects again. The SQLSTATE is the server's when it said why (57P01: terminated by
    /// an administrator).
    Connection { sqlstate: String, message: String, hint: String },
    /// Anything else (a reply of an unexpected shape).
    Internal(String),
}

impl ToolError {
    pub fn from_pg(e: &tokio_postgres::Error) -> ToolError {
        match e.as_db_error() {
            Some(db) => ToolError::Database {
                sqlstate: db.code().code().to_string(),
                message: db.message().to_string(),
                detail: db.detail().map(str::to_string),
                hint: db.hint().map(str::to_string),
            },
            None if e.is_closed() => ToolError::lost(format!("the connection to PostgreSQL was lost ({e})")),
            None => ToolError::Internal(e.to_string()),
        }
    }

    pub fn lost(message: String) -> ToolError {
        ToolError::Connection { sqlstate: "08006".into(), message, hint: LOST_HINT.into() }
    }

    /// The error this call gets when its connection turned out to be gone.
    pub fn into_lost(self) -> ToolError {
        match self {
            ToolError::Database { sqlstate, message, .. } => {
                ToolError::Connection { sqlstate, message, hint: LOST_HINT.into() }
            }
            ToolError::Internal(m) => ToolError::lost(m),
            e => e,
        }
    }

    /// A connection error in words (the server's message when it sent one).
    pub fn describe(e: &tokio_postgres::Error) -> String {
        match e.as_db_error() {
            Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
            None => match std::error::Error::source(e) {
                Some(cause) => format!("{e}: {cause}"),
                None => e.to_string(),
            },
        }
    }

    pub fn into_result(self) -> CallToolResult {
        let (error, text) = match self {
            ToolError::Arguments(m) => {
                (json!({"kind": "invalid_arguments", "message": m}), format!("invalid arguments: {m}"))
            }
            ToolError::Database { sqlstate, message, detail, hint } => {
                let mut text = format!("PostgreSQL error {sqlstate}: {message}");
                if let Some(d) = &detail {
                    text.push_str(&format!("\nDETAIL: {d}"));
                }
                if let Some(h) = &hint {
                    text.push_str(&format!("\nHINT: {h}"));
                }
                (json!({"kind": "database", "sqlstate": sqlstate, "message": message, "detail": detail, "hint": hint}), text)
            }
            ToolError::Connection { sqlstate, message, hint } => (
                json!({"kind": "connection", "sqlstate": sqlstate, "message": message, "hint": hint}),
                format!("no connection to PostgreSQL ({sqlstate}): {message}\nHINT: {hint}"),
            ),
            ToolError::Internal(m) => (json!({"kind": "internal", "message": m}), format!("internal error: {m}")),
        };
        let value = json!({ "error": error });
        let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{text}\n{value}"))]);
        r.structured_content = Some(value);
        r
    }
}

fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut s = rmcp::handler::server::common::schema_for_type::<T>().as_ref().clone();
    s.remove("title");
    s.remove("$schema");
    Arc::new(s)
}

fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    serde_json::from_value(v).map_err(|e| ToolError::Arguments(e.to_string()))
}

/// Refuses huge strings (and huge argument sets) before anything else reads them.
fn check_sizes(args: &Value) -> Result<(), ToolError> {
    fn walk(v: &Value, path: &str) -> Result<(), ToolError> {
        match v {
            Value::String(s) if s.len() > MAX_STRING_BYTES => {
                Err(ToolError::Arguments(format!("{path} is {} bytes long; the limit is {MAX_STRING_BYTES} bytes", s.len())))
            }
            Value::Array(a) => a.iter().enumerate().try_for_each(|(i, x)| walk(x, &format!("{path}[{i}]"))),
            Value::Object(o) => o.iter().try_for_each(|(k, x)| {
                if k.len() > MAX_STRING_BYTES {
                    return Err(ToolError::Arguments(format!("a key in {path} is too long")));
                }
                walk(x, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") })
            }),
            _ => Ok(()),
        }
    }
    walk(args, "")?;
    let total = serde_json::to_string(args).map(|s| s.len()).unwrap_or(usize::MAX);
    if total > MAX_ARGUMENTS_BYTES {
        return Err(ToolError::Arguments(format!(
            "the arguments are {total} bytes long; the limit is {MAX_ARGUMENTS_BYTES} bytes"
        )));
    }
    Ok(())
}

/// The user a call acts for: the configured one (a call naming another is refused), else the
/// call's own.
fn user_for_call(settings: &Settings, asked: Option<String>) -> Result<Option<String>, ToolError> {
    match (&settings.user, asked) {
        (Some(fixed), Some(asked)) if *fixed != asked => Err(ToolError::Arguments(format!(
            "user_id {asked:?} is not allowed: this server acts for user_id {fixed:?} only (--user); leave user_id out"
        ))),
        (Some(fixed), _) => Ok(Some(fixed.clone())),
        (None, asked) => Ok(asked),
    }
}

/// An argument that may be left out or given as null, told apart: `Some(None)` is an explicit
/// null (for intent_id: no intent), `None` (with `#[serde(default)]`) left out.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    <Option<String> as serde::Deserialize>::deserialize(d).map(Some)
}

/// The intent a call acts for. With --intent the server is pinned to it: a call naming another
/// intent is refused, and so is a capture asking for none (null or ""), which would be recalled
/// under every intent; recall and explain_recall read the pinned intent (and, as always, the
/// cross-intent memories). Without --intent, the call's own (none: cross-intent).
fn intent_for_call(
    settings: &Settings,
    asked: Option<Option<String>>,
    capture: bool,
) -> Result<Option<String>, ToolError> {
    let Some(pin) = &settings.intent else { return Ok(asked.flatten()) };
    match asked {
        None => Ok(Some(pin.clone())),
        Some(Some(i)) if i == *pin => Ok(Some(pin.clone())),
        Some(Some(i)) if !i.is_empty() => Err(ToolError::Arguments(format!(
            "intent_id {i:?} is not allowed: this server is pinned to intent_id {pin:?} (--intent); leave intent_id out"
        ))),
        Some(none) if capture => Err(ToolError::Arguments(format!(
            "intent_id {} asks for a memory of no intent, which every intent would recall, and this server is pinned \
             to intent_id {pin:?} (--intent); leave intent_id out",
            if none.is_some() { "\"\"" } else { "null" }
        ))),
        Some(_) => Ok(Some(pin.clone())),
    }
}

/// Whether a memory or candidate of this user and intent is out of the server's scope: another
/// user than --user's, or another intent than --intent's. User-less and cross-intent ones are
/// in every scope, as recall shows them to every user and intent.
fn out_of_scope(settings: &Settings, user: Option<&str>, intent: Option<&str>) -> bool {
    let other = |fixed: &Option<String>, found: Option<&str>| fixed.as_deref().zip(found).is_some_and(|(f, x)| f != x);
    other(&settings.user, user) || other(&settings.intent, intent)
}

/// The error `function` gives for an unknown id, told for `id`: what an id out of the server's
/// scope gets, so that the answer says nothing of the memory (not even that it exists, or whose it
/// is). Asked of the extension itself with an id of the same shape that no row can have
/// (the call's transaction is rolled back after the error).
async fn as_if_unknown(
    tx: &Transaction<'_>,
    function: &str,
    id: &str,
    call: impl FnOnce(String) -> NamedArgs,
) -> ToolError {
    let prefix = id.split('_').next().filter(|p| !p.is_empty() && p.len() <= 8).unwrap_or("pm");
    let unknown = format!("{prefix}_00000000t000000_000000000000");
    match call(unknown.clone()).rows(tx, "to_jsonb(r)", function).await {
        Err(ToolError::Database { sqlstate, message, detail, hint }) => {
            let told = |s: String| s.replace(&unknown, id);
            ToolError::Database {
                sqlstate,
                message: told(message),
                detail: detail.map(told),
                hint: hint.map(told),
            }
        }
        Err(e) => e,
        Ok(_) => ToolError::Database {
            sqlstate: "P0002".into(),
            message: format!("{id:?} does not exist"),
            detail: None,
            hint: None,
        },
    }
}

/// An RFC 3339 timestamp (`2026-11-26T09:31:00Z`, `2026-11-26 09:31:00.5+01:00`), checked here so
/// that PostgreSQL's more liberal input ('now', 'yesterday', no zone) is never reached.
fn rfc3339(field: &str, s: &str) -> Result<String, ToolError> {
    let bad =
        || ToolError::Arguments(format!("{field} must be an RFC 3339 timestamp such as 2026-11-26T09:31:00Z, not {s:?}"));
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        if part.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(part).ok()?.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':'
    {
        return Err(bad());
    }
    let (y, mo, d) = (digits(0..4).ok_or_else(bad)?, digits(5..7).ok_or_else(bad)?, digits(8..10).ok_or_else(bad)?);
    let (h, mi, sec) = (digits(11..13).ok_or_else(bad)?, digits(14..16).ok_or_else(bad)?, digits(17..19).ok_or_else(bad)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if y == 0 || !(1..=12).contains(&mo) || d == 0 || d > days[mo as usize - 1] || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    let mut i = 19;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => {}
        [b'+' | b'-', _, _, b':', _, _] => {
            let (oh, om) = (digits(i + 1..i + 3).ok_or_else(bad)?, digits(i + 4..i + 6).ok_or_else(bad)?);
            if oh > 23 || om > 59 {
                return Err(bad());
            }
        }
        _ => return Err(bad()),
    }
    Ok(s.to_string())
}

/// A call with named arguments, only those given (so the function's own defaults apply to the
/// rest), every value a bound parameter with an explicit type.
#[derive(Default)]
struct NamedArgs {
    parts: Vec<String>,
    params: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl NamedArgs {
    fn add<T: ToSql + Sync + Send + 'static>(&mut self, name: &str, cast: &str, value: T) -> &mut Self {
        self.params.push(Box::new(value));
        self.parts.push(format!("{name} => ${}::{cast}", self.params.len()));
        self
    }

    fn opt<T: ToSql + Sync + Send + 'static>(&mut self, name: &str, cast: &str, value: Option<T>) -> &mut Self {
        if let Some(v) = value {
            self.add(name, cast, v);
        }
        self
    }

    /// `SELECT <select> FROM memory_fabric.<function>(<args>) AS r`
    fn sql(&self, select: &str, function: &str) -> String {
        format!("SELECT {select} FROM memory_fabric.{function}({}) AS r", self.parts.join(", "))
    }

    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
    }

    /// Every row's first column, a jsonb.
    async fn rows(&self, tx: &Transaction<'_>, select: &str, function: &str) -> Result<Vec<Value>, ToolError> {
        let rows = tx.query(&self.sql(select, function), &self.params()).await.map_err(|e| ToolError::from_pg(&e))?;
        rows.iter().map(|r| r.try_get::<_, Value>(0).map_err(|e| ToolError::from_pg(&e))).collect()
    }

    /// The one row the function returns.
    async fn row(&self, tx: &Transaction<'_>, select: &str, function: &str) -> Result<Value, ToolError> {
        let mut rows = self.rows(tx, select, function).await?;
        match rows.len() {
            1 => Ok(rows.remove(0)),
            n => Err(ToolError::Internal(format!("memory_fabric.{function}() returned {n} rows, not one"))),
        }
    }
}

/// A string field of a JSON object, for summaries.
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// JSON Schema for a string that may be null.
fn nullable(kind: &str) -> Value {
    json!({ "type": [kind, "null"] })
}

/// An object schema whose listed properties are described and whose others are allowed.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        for ok in ["2026-11-26T09:31:00Z", "2026-11-26 09:31:00.123456+01:00", "2024-02-29t00:00:00-05:30"] {
            assert!(rfc3339("as_of", ok).is_ok(), "{ok}");
        }
        for bad in [
            "now",
            "yesterday",
            "2026-11-26",
            "2026-11-26T09:31:00",
            "2026-02-30T00:00:00Z",
            "2026-11-26T25:00:00Z",
            "2026-11-26T09:31:00+0100",
            "2026-11-26T09:31:00.Z",
            "２026-11-26T09:31:00Z",
            "2026-11-26T09:31:00Z'; --",
        ] {
            assert!(rfc3339("as_of", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert!(check_sizes(&json!({"text": "x".repeat(MAX_STRING_BYTES)})).is_ok());
        let e = check_sizes(&json!({"a": {"b": ["x", "x".repeat(MAX_STRING_BYTES + 1)]}})).unwrap_err();
        assert!(matches!(e, ToolError::Arguments(m) if m.starts_with("a.b[1] is")));
    }

    #[test]
    fn the_configured_user_is_the_only_one() {
        let s = Settings { tenant: "t".into(), user: Some("u1".into()), intent: None, actor: None, dsn: None };
        assert_eq!(user_for_call(&s, None).unwrap().as_deref(), Some("u1"));
        assert_eq!(user_for_call(&s, Some("u1".into())).unwrap().as_deref(), Some("u1"));
        assert!(user_for_call(&s, Some("u2".into())).is_err());
        let s = Settings { user: None, ..s };
        assert_eq!(user_for_call(&s, Some("u2".into())).unwrap().as_deref(), Some("u2"));
    }

    #[test]
    fn the_pinned_intent_is_the_only_one() {
        let s = Settings { tenant: "t".into(), user: None, intent: Some("sales".into()), actor: None, dsn: None };
        let given = |i: &str| Some(Some(i.to_string()));
        for capture in [true, false] {
            assert_eq!(intent_for_call(&s, None, capture).unwrap().as_deref(), Some("sales"));
            assert_eq!(intent_for_call(&s, given("sales"), capture).unwrap().as_deref(), Some("sales"));
            let e = intent_for_call(&s, given("support.billing"), capture).unwrap_err();
            assert!(matches!(e, ToolError::Arguments(m) if m.contains("\"support.billing\"") && m.contains("--intent")));
        }
        // a capture of no intent would be recalled under every intent; a recall of none reads the pin
        assert!(intent_for_call(&s, Some(None), true).is_err());
        assert!(intent_for_call(&s, given(""), true).is_err());
        assert_eq!(intent_for_call(&s, Some(None), false).unwrap().as_deref(), Some("sales"));
        // without a pin, the call's own, as before
        let s = Settings { intent: None, ..s };
        assert_eq!(intent_for_call(&s, None, true).unwrap(), None);
        assert_eq!(intent_for_call(&s, Some(None), true).unwrap(), None);
        assert_eq!(intent_for_call(&s, given("x"), true).unwrap().as_deref(), Some("x"));
    }

    #[test]
    fn the_scope_of_a_memory() {
        let s = Settings { tenant: "t".into(), user: Some("u1".into()), intent: Some("i1".into()), actor: None, dsn: None };
        assert!(!out_of_scope(&s, Some("u1"), Some("i1")));
        assert!(!out_of_scope(&s, None, None)); // user-less, cross-intent: in every scope
        assert!(out_of_scope(&s, Some("u2"), None));
        assert!(out_of_scope(&s, None, Some("i2")));
        let open = Settings { user: None, intent: None, ..s };
        assert!(!out_of_scope(&open, Some("u2"), Some("i2")));
    }

    #[test]
    fn null_and_left_out_intents_differ() {
        let a: remember::Args = serde_json::from_value(json!({"text": "x"})).unwrap();
        assert_eq!(a.intent_id, None);
        let a: remember::Args = serde_json::from_value(json!({"text": "x", "intent_id": null})).unwrap();
        assert_eq!(a.intent_id, Some(None));
        let a: remember::Args = serde_json::from_value(json!({"text": "x", "intent_id": "i"})).unwrap();
        assert_eq!(a.intent_id, Some(Some("i".into())));
        assert!(serde_json::from_value::<remember::Args>(json!({"text": "x", "intent_id": 1})).is_err());
        let t = ToolKind::Remember.describe();
        assert_eq!(t.input_schema["properties"]["intent_id"]["type"], json!(["string", "null"]));
        assert_eq!(t.input_schema["required"], json!(["text"]));
    }

    #[test]
    fn every_tool_describes_itself() {
        for k in ToolKind::ALL {
            let t = k.describe();
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", k.name());
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 100), "{}", k.name());
            assert_eq!(ToolKind::from_name(k.name()), Some(k));
        }
    }

    #[test]
    fn named_args_bind_every_value() {
        let mut a = NamedArgs::default();
        a.add("tenant_id", "text", "t".to_string()).opt("user_id", "text", None::<String>).opt(
            "max_recalls",
            "int4",
            Some(3),
        );
        assert_eq!(
            a.sql("to_jsonb(r)", "recall"),
            "SELECT to_jsonb(r) FROM memory_fabric.recall(tenant_id => $1::text, max_recalls => $2::int4) AS r"
        );
    }
}
