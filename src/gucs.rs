//! Every setting of memory_fabric, in one place. All names start with `memory_fabric.`.

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::ffi::CString;

/// SQL function `name(text)` returning `vector` or `real[]` used to embed captured text when the
/// caller passes no vector. Unset: the built-in embedder. Superuser-only, because the function
/// runs inside every capture.
pub static EMBEDDING_FUNCTION: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Model name recorded for vectors made by `memory_fabric.embedding_function`. Unset: the
/// function's qualified name. Change it whenever the function's output changes.
pub static EMBEDDING_MODEL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Which built-in embedder capture, re-embedding and recall by text use when no vector and no
/// embedding function is given: `auto` (the semantic model where its weights are installed, else
/// the hashing one), `sentence-transformers/all-MiniLM-L6-v2` or `memory_fabric/hash-384-v1`.
/// Superuser-only: review compares a candidate only with memories of its own model, so a writer
/// choosing its model could step around deduplication.
pub static BUILTIN_MODEL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"auto"));

/// The folder holding the semantic model's model.safetensors and vocab.txt. Unset: the one
/// scripts/install_model.sh installs, under the server's share directory. Superuser-only.
pub static MODEL_DIR: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// SQL function `name(text, text)` returning boolean: does the first statement contradict the
/// second? Used by review instead of the built-in assertion heuristic. Superuser-only.
pub static CONTRADICTION_FUNCTION: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Scopes with at most this many promoted memories of a model are searched without an index (every
/// row compared, or above 2000 rows ranked by the quantised embeddings); larger ones through the
/// model's HNSW index with an iterative scan, when create_embedding_index() made one.
pub static EXACT_SEARCH_LIMIT: GucSetting<i32> = GucSetting::<i32>::new(20_000);

/// The tenant this transaction acts for (SET LOCAL memory_fabric.tenant_id = '…'). Required of
/// every non-superuser role, for every function and for row-level security; unset or empty
/// fails closed.
pub static TENANT_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// The intent this transaction is pinned to (SET LOCAL memory_fabric.intent_id = '…'), if any: a
/// capture must name it, a recall may name it or none (the cross-intent memories). Narrows a role
/// further than its tenant grant, as the tenant pin narrows a shared role; the MCP server sets it
/// for an agent started with --intent.
pub static INTENT_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Injection points this session waits at (src/inject.rs), comma-separated: for the isolation
/// specs only. Superuser-only.
pub static INJECTION_POINTS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Record what every recall returned in memory_fabric.recall_log (never on a hot standby).
pub static LOG_RECALLS: GucSetting<bool> = GucSetting::<bool>::new(false);

pub fn init() {
    GucRegistry::define_string_guc(
        c"memory_fabric.embedding_function",
        c"SQL function used to embed captured text when no vector is given.",
        c"A function taking text and returning vector or real[]. Empty means the built-in embedder.",
        &EMBEDDING_FUNCTION,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.embedding_model",
        c"Model name recorded for vectors made by memory_fabric.embedding_function.",
        c"Empty means the function's qualified name.",
        &EMBEDDING_MODEL,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.builtin_model",
        c"Built-in embedding model used when no vector and no embedding function is given.",
        c"auto (the semantic model where its weights are installed, else the hashing one), sentence-transformers/all-MiniLM-L6-v2 or memory_fabric/hash-384-v1.",
        &BUILTIN_MODEL,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.model_dir",
        c"Folder holding the semantic built-in model's weights.",
        c"Empty means extension/memory_fabric/all-MiniLM-L6-v2 under the server's share directory.",
        &MODEL_DIR,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.contradiction_function",
        c"SQL function judging whether two statements contradict each other.",
        c"A function (text, text) returning boolean. Empty means the built-in assertion heuristic.",
        &CONTRADICTION_FUNCTION,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.tenant_id",
        c"The tenant this transaction acts for.",
        c"Set it with SET LOCAL in each transaction; unset or empty denies every tenant.",
        &TENANT_ID,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.intent_id",
        c"The intent this transaction is pinned to, if any.",
        c"Set it with SET LOCAL; captures must name this intent and recalls this intent or none. Unset or empty: no pin.",
        &INTENT_ID,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_fabric.injection_points",
        c"Injection points this session waits at, for the isolation tests.",
        c"Comma-separated names (src/inject.rs); each waits for a share lock on an advisory key. Never set outside tests.",
        &INJECTION_POINTS,
        GucContext::Suset,
        GucFlags::NO_SHOW_ALL,
    );
    GucRegistry::define_bool_guc(
        c"memory_fabric.log_recalls",
        c"Record what every recall returned in memory_fabric.recall_log.",
        c"Skipped on a hot standby, where nothing can be written.",
        &LOG_RECALLS,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_fabric.exact_search_limit",
        c"Largest scope review searches without the model's HNSW index.",
        c"Larger scopes use the index made by memory_fabric.create_embedding_index() for the model, when there is one.",
        &EXACT_SEARCH_LIMIT,
        0,
        1_000_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    unsafe {
        pgrx::pg_sys::MarkGUCPrefixReserved(c"memory_fabric".as_ptr());
    }
}

/// A string setting's value, with the empty string read as unset.
pub fn get(setting: &GucSetting<Option<CString>>) -> Option<String> {
    setting
        .get()
        .and_then(|c| c.into_string().ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// A string setting's value exactly as set, with the empty string read as unset.
pub fn get_exact(setting: &GucSetting<Option<CString>>) -> Option<String> {
    setting.get().and_then(|c| c.into_string().ok()).filter(|s| !s.is_empty())
}
