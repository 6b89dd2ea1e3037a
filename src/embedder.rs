//! The embedders: the built-in models, as capture, review's re-embedding and recall by text use
//! them when no vector and no memory_fabric.embedding_function is given; the SQL function that
//! setting names; and the register of each tenant's models and their dimensions.
//!
//! Two models, chosen by the setting memory_fabric.builtin_model:
//! - `sentence-transformers/all-MiniLM-L6-v2` (core/src/minilm/): semantic, 384 dimensions, its
//!   weights installed by scripts/install_model.sh in the folder memory_fabric.model_dir
//!   (default: $(pg_config --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2) and
//!   memory-mapped read-only, so every backend shares one copy in the page cache;
//! - `memory_fabric/hash-384-v1` (core/src/embed.rs): lexical feature hashing, no files.
//!
//! The rule when the weights are missing: `auto` (the default) uses the semantic model when its
//! files are there and the hashing one otherwise, saying so once per backend in the server log;
//! naming the semantic model explicitly makes every embedding fail with 58P01 until they are
//! installed. Weights that are there but damaged fail with 58030 under either setting: a broken
//! install is never silently replaced by another model.

use crate::error::raise;
use crate::gucs;
use crate::spi::{plan, INT4, TEXT};
use memory_fabric_core::{embed, minilm, Error, Kind};
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub const HASH: &str = embed::MODEL;
pub const SEMANTIC: &str = minilm::MODEL;
/// The dimensions of both built-in models' vectors.
const BUILTIN_DIMENSIONS: usize = embed::DIMENSIONS;
const AUTO: &str = "auto";

/// The loaded semantic model, with the folder it came from: loaded once per backend, again only
/// if memory_fabric.model_dir names another folder.
static LOADED: Mutex<Option<(PathBuf, Arc<minilm::MiniLm>)>> = Mutex::new(None);
/// The folder `auto` found empty, logged once per backend.
static FELL_BACK: Mutex<Option<PathBuf>> = Mutex::new(None);
/// Review's learned judge, with the folder it came from: None when its file (or the semantic
/// model it runs on) is not installed there, which is logged once per backend and folder.
static JUDGE: Mutex<Option<(PathBuf, Option<Arc<minilm::Judge>>)>> = Mutex::new(None);

/// The folder the semantic model's files are read from.
pub fn model_dir() -> PathBuf {
    if let Some(d) = gucs::get(&gucs::MODEL_DIR) {
        return PathBuf::from(d);
    }
    let mut buf = [0 as std::ffi::c_char; pg_sys::MAXPGPATH as usize];
    // SAFETY: my_exec_path is the backend's NUL-terminated executable path; get_share_path writes
    // a NUL-terminated path of at most MAXPGPATH bytes into buf.
    let share = unsafe {
        pg_sys::get_share_path(std::ptr::addr_of!(pg_sys::my_exec_path) as *const std::ffi::c_char, buf.as_mut_ptr());
        std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    };
    Path::new(&share).join("extension/memory_fabric/all-MiniLM-L6-v2")
}

/// Whether the semantic model's files are present in `dir` (not whether they are sound).
fn installed(dir: &Path) -> bool {
    minilm::FILES.iter().all(|(f, _)| dir.join(f).is_file())
}

/// The semantic model, loaded from `dir` on first use.
fn semantic(dir: &Path) -> Arc<minilm::MiniLm> {
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((d, m)) = loaded.as_ref() {
        if d == dir {
            return m.clone();
        }
    }
    if !installed(dir) {
        raise(Error::new(Kind::UndefinedFile, format!("the weights of {SEMANTIC} are not installed in \"{}\"", dir.display()))
            .detail(format!("memory_fabric.builtin_model is set to {SEMANTIC}, which needs model.safetensors and vocab.txt there."))
            .hint("Run scripts/install_model.sh (scripts/setup.sh does), or set memory_fabric.builtin_model to auto or memory_fabric/hash-384-v1."));
    }
    let m = minilm::MiniLm::load(dir).unwrap_or_else(|e| {
        raise(Error::new(Kind::FileDamaged, format!("cannot load {SEMANTIC} from \"{}\"", dir.display()))
            .detail(format!("{e}."))
            .hint("Reinstall the weights with scripts/install_model.sh, which checks their checksums."))
    });
    let m = Arc::new(m);
    *loaded = Some((dir.to_owned(), m.clone()));
    m
}

/// Review's learned judge (core/data/JUDGE.md) and the semantic model it runs on, loaded from
/// memory_fabric.model_dir on first use. None when either file is missing there: review then
/// decides by its rules, and the server log says so once per backend. A file that is there but
/// damaged, or not the judge this build was tested with (its SHA-256), fails with 58030.
pub fn judge() -> Option<(Arc<minilm::MiniLm>, Arc<minilm::Judge>)> {
    let dir = model_dir();
    let judge = {
        let mut loaded = JUDGE.lock().unwrap_or_else(|p| p.into_inner());
        match loaded.as_ref() {
            Some((d, j)) if *d == dir => j.clone(),
            _ => {
                let path = dir.join(minilm::JUDGE_FILE);
                let j = if installed(&dir) && path.is_file() {
                    let j = minilm::Judge::load(&path, Some(minilm::JUDGE_SHA256)).unwrap_or_else(|e| {
                        raise(Error::new(Kind::FileDamaged, format!("cannot load review's judge from \"{}\"", path.display()))
                            .detail(format!("{e}."))
                            .hint("Reinstall it with scripts/install_model.sh, which checks its checksum."))
                    });
                    Some(Arc::new(j))
                } else {
                    pgrx::log!(
                        "memory_fabric: review's judge ({}, on {SEMANTIC}) is not installed in \"{}\"; review decides contradictions and duplicates by its rules",
                        minilm::JUDGE_FILE,
                        dir.display()
                    );
                    None
                };
                *loaded = Some((dir.clone(), j.clone()));
                j
            }
        }
    }?;
    Some((semantic(&dir), judge))
}

/// The setting's value, checked: 22023 for a name that is not a built-in model.
fn setting() -> String {
    let v = gucs::get(&gucs::BUILTIN_MODEL).unwrap_or_else(|| AUTO.to_owned());
    if v != AUTO && v != HASH && v != SEMANTIC {
        raise(Error::invalid(format!("unknown built-in embedding model \"{v}\""))
            .detail(format!("memory_fabric.builtin_model must be {AUTO}, {SEMANTIC} or {HASH}.")));
    }
    v
}

/// The built-in model in force: the model name capture records for a vector it makes itself.
pub fn builtin_model() -> &'static str {
    match setting().as_str() {
        HASH => HASH,
        SEMANTIC => SEMANTIC,
        _ => {
            let dir = model_dir();
            if installed(&dir) {
                SEMANTIC
            } else {
                let mut said = FELL_BACK.lock().unwrap_or_else(|p| p.into_inner());
                if said.as_deref() != Some(dir.as_path()) {
                    pgrx::log!(
                        "memory_fabric: the weights of {SEMANTIC} are not installed in \"{}\"; the built-in embedder is {HASH}",
                        dir.display()
                    );
                    *said = Some(dir);
                }
                HASH
            }
        }
    }
}

/// Embeds `text` with the built-in model `model` (one of HASH and SEMANTIC).
pub fn embed_with(model: &str, text: &str) -> Vec<f32> {
    if model == SEMANTIC {
        semantic(&model_dir()).embed(text)
    } else {
        embed::embed(text)
    }
}

/// Embeds `text` with the built-in model in force; returns the vector and the model's name.
pub fn embed_builtin(text: &str) -> (Vec<f32>, &'static str) {
    let model = builtin_model();
    (embed_with(model, text), model)
}

const MODEL_DIMS: &str = "SELECT dimensions, xmin::text::bigint \
     FROM memory_fabric.embedding_models WHERE tenant_id = $1 AND model = $2";
const MODEL_REGISTER: &str = "INSERT INTO memory_fabric.embedding_models (tenant_id, model, dimensions) \
     VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
const EMBED_FN: &str = "SELECT quote_ident(n.nspname) || '.' || quote_ident(p.proname) \
     FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
     WHERE p.oid = pg_catalog.to_regprocedure($1 || '(text)')";

thread_local! {
    // (tenant, model) → dimension. A registration is append-only and never changes, so a value
    // read from a committed row holds for the life of the backend.
    static DIMENSIONS: std::cell::RefCell<std::collections::HashMap<(String, String), i32>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// The dimension registered for (tenant, model), and whether this transaction wrote it (not
/// committed yet); None for a model the tenant never used.
fn read_dimensions(client: &SpiClient<'_>, tenant: &str, model: &str) -> Option<(i32, bool)> {
    client
        .select(&*plan(client, MODEL_DIMS, &[TEXT, TEXT], false), Some(1), &[tenant.into(), model.into()])
        .and_then(|t| {
            if t.is_empty() {
                return Ok(None);
            }
            let (d, xmin) = t.first().get_two::<i32, i64>()?;
            // Written by this transaction (or one of its subtransactions): not committed yet.
            let mine = xmin.is_none_or(|x| unsafe {
                pg_sys::TransactionIdIsCurrentTransactionId(pg_sys::TransactionId::from_inner(x as u32))
            });
            Ok(d.map(|d| (d, mine)))
        })
        .unwrap_or_else(|e| error!("memory_fabric: cannot read embedding models: {e}"))
}

/// The dimensions a vector of (tenant, model) must have, without registering anything: the
/// built-in models' own, else the one its first vector registered, else None.
pub fn known_dimensions(client: &SpiClient<'_>, tenant: &str, model: &str) -> Option<i32> {
    if model == HASH || model == SEMANTIC {
        return Some(BUILTIN_DIMENSIONS as i32);
    }
    let key = (tenant.to_owned(), model.to_owned());
    DIMENSIONS
        .with(|m| m.borrow().get(&key).copied())
        .or_else(|| read_dimensions(client, tenant, model).map(|(d, _)| d))
}

/// The dimension registered for (tenant, model), registering `dims` if the model is new.
pub fn registered_dimensions(client: &mut SpiClient<'_>, tenant: &str, model: &str, dims: i32) -> i32 {
    let key = (tenant.to_owned(), model.to_owned());
    if let Some(d) = DIMENSIONS.with(|m| m.borrow().get(&key).copied()) {
        return d;
    }
    let read = |client: &SpiClient<'_>| read_dimensions(client, tenant, model);
    let found = read(client).or_else(|| {
        let ins = plan(client, MODEL_REGISTER, &[TEXT, TEXT, INT4], true);
        client
            .update(&*ins, None, &[tenant.into(), model.into(), dims.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot register embedding model: {e}"));
        // Lost a race with another first capture of this model: theirs decides.
        read(client)
    });
    match found {
        Some((d, false)) => {
            DIMENSIONS.with(|m| m.borrow_mut().insert(key, d));
            d
        }
        // our own, not yet committed registration: do not cache it (it may roll back)
        Some((d, true)) => d,
        None => dims,
    }
}

const MODEL_REGISTRATION: &str = "SELECT dimensions, registered_by IS NOT NULL, xmin::text::bigint \
     FROM memory_fabric.embedding_models WHERE tenant_id = $1 AND model = $2";
const MODEL_AUTHORIZE_NEW: &str = "INSERT INTO memory_fabric.embedding_models (tenant_id, model, dimensions, registered_by) \
     VALUES ($1, $2, $3, pg_catalog.pg_get_userbyid($4))";
const MODEL_AUTHORIZE: &str = "UPDATE memory_fabric.embedding_models SET registered_by = pg_catalog.pg_get_userbyid($3) \
     WHERE tenant_id = $1 AND model = $2 AND registered_by IS NULL";

thread_local! {
    // (tenant, model) a tenant admin registered for callers' vectors, with its dimension, read
    // from a committed row: registered_by is write-once, so it holds for the life of the backend.
    static REGISTERED: std::cell::RefCell<std::collections::HashMap<(String, String), i32>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// A model's row in the register: its dimension, whether a tenant admin registered it for
/// callers' vectors, and whether this transaction wrote the row (not committed yet).
fn read_registration(client: &SpiClient<'_>, tenant: &str, model: &str) -> Option<(i32, bool, bool)> {
    client
        .select(&*plan(client, MODEL_REGISTRATION, &[TEXT, TEXT], false), Some(1), &[tenant.into(), model.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read embedding models: {e}"))
        .into_iter()
        .next()
        .and_then(|r| {
            let d = crate::spi::col::<i32>(&r, 1)?;
            let registered = crate::spi::col::<bool>(&r, 2).unwrap_or(false);
            let xmin = crate::spi::col::<i64>(&r, 3);
            let mine = xmin.is_none_or(|x| unsafe {
                pg_sys::TransactionIdIsCurrentTransactionId(pg_sys::TransactionId::from_inner(x as u32))
            });
            Some((d, registered, mine))
        })
}

/// The dimension of `model`'s vectors when a tenant admin has registered it for callers' vectors
/// (register()); None otherwise, also for a row that only fixes a dimension.
pub fn registered_for_callers(client: &SpiClient<'_>, tenant: &str, model: &str) -> Option<i32> {
    let key = (tenant.to_owned(), model.to_owned());
    if let Some(d) = REGISTERED.with(|m| m.borrow().get(&key).copied()) {
        return Some(d);
    }
    match read_registration(client, tenant, model) {
        Some((d, true, false)) => {
            REGISTERED.with(|m| m.borrow_mut().insert(key, d));
            Some(d)
        }
        Some((d, true, true)) => Some(d),
        _ => None,
    }
}

/// Registers `model` for callers' vectors of `dims` dimensions for the tenant, as the calling
/// role: a new row, or the row a vector already fixed the dimension of. 22023 for a built-in
/// model's name; 55000 when the model's dimension is fixed at another value. Returns whether the
/// model was registered before.
pub fn register(client: &mut SpiClient<'_>, tenant: &str, model: &str, dims: i32) -> bool {
    if model == HASH || model == SEMANTIC {
        raise(Error::invalid(format!("embedding model name \"{model}\" is reserved"))
            .detail("That name belongs to a built-in embedder, whose vectors only the extension makes."));
    }
    crate::xact::lock(client, "model", &[Some(tenant), Some(model)]);
    let role = crate::role::caller();
    match read_registration(client, tenant, model) {
        Some((d, _, _)) if d != dims => raise(
            Error::wrong_state(format!("embedding model \"{model}\" has {d} dimensions for tenant \"{tenant}\""))
                .detail(format!("{dims} were given; a model's dimension is fixed by its first vector and never changes."))
                .hint("Register the new vectors under another model name."),
        ),
        Some((_, true, _)) => true,
        Some((_, false, _)) => {
            client
                .update(&*plan(client, MODEL_AUTHORIZE, &[TEXT, TEXT, crate::spi::OID], true), None, &[tenant.into(), model.into(), role.into()])
                .unwrap_or_else(|e| error!("memory_fabric: cannot register embedding model: {e}"));
            false
        }
        None => {
            client
                .update(
                    &*plan(client, MODEL_AUTHORIZE_NEW, &[TEXT, TEXT, INT4, crate::spi::OID], true),
                    None,
                    &[tenant.into(), model.into(), dims.into(), role.into()],
                )
                .unwrap_or_else(|e| error!("memory_fabric: cannot register embedding model: {e}"));
            false
        }
    }
}

/// The function named by memory_fabric.embedding_function, schema-qualified, and the model name
/// its vectors are recorded under (memory_fabric.embedding_model, else that qualified name).
pub fn embedding_function(client: &SpiClient<'_>, func: &str) -> (String, String) {
    let qualified: Option<String> = client
        .select(&*plan(client, EMBED_FN, &[TEXT], false), Some(1), &[func.into()])
        .and_then(|t| if t.is_empty() { Ok(None) } else { t.first().get_one::<String>() })
        .unwrap_or_else(|e| error!("memory_fabric: cannot resolve embedding function: {e}"));
    let Some(qualified) = qualified else {
        raise(Error::invalid(format!("embedding function \"{func}\" does not exist"))
            .detail("memory_fabric.embedding_function must name a function taking one text argument.")
            .hint("Create the function, or reset memory_fabric.embedding_function to use the built-in embedder."));
    };
    let model = gucs::get(&gucs::EMBEDDING_MODEL).unwrap_or_else(|| qualified.clone());
    (qualified, model)
}

/// Embeds text with a function resolved by embedding_function().
pub fn embed_text(client: &SpiClient<'_>, qualified: &str, text: &str) -> Vec<f32> {
    let sql = format!("SELECT ({qualified}($1))::real[]");
    let v: Option<Vec<Option<f32>>> = client
        .select(sql.as_str(), Some(1), &[text.into()])
        .and_then(|t| t.first().get_one::<Vec<Option<f32>>>())
        .unwrap_or_else(|e| error!("memory_fabric: embedding function failed: {e}"));
    let Some(v) = v else {
        raise(Error::invalid(format!("embedding function {qualified} returned NULL")));
    };
    v.into_iter()
        .map(|x| x.unwrap_or_else(|| raise(Error::invalid(format!("embedding function {qualified} returned a NULL element")))))
        .collect()
}

/// Embeds text with the SQL function named by memory_fabric.embedding_function.
pub fn embed_with_function(client: &SpiClient<'_>, func: &str, text: &str) -> (Vec<f32>, String) {
    let (qualified, model) = embedding_function(client, func);
    (embed_text(client, &qualified, text), model)
}

/// The name of the HNSW index memory_fabric.create_embedding_index() makes for model $1's vectors
/// of $2 dimensions: a stable function of the model's exact name, within PostgreSQL's 63 bytes
/// whatever the model is called.
const HNSW_INDEX_NAME: &str = "'promoted_hnsw_' || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(\
     pg_catalog.convert_to($1, 'UTF8')), 'hex'), 16) || '_' || $2::text";

/// The name of the HNSW index create_embedding_index() makes for `model`'s vectors of `dims`
/// dimensions.
pub fn hnsw_index_name(client: &SpiClient<'_>, model: &str, dims: i32) -> String {
    client
        .select(&format!("SELECT {HNSW_INDEX_NAME}"), Some(1), &[model.into(), dims.into()])
        .and_then(|t| t.first().get_one::<String>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot hash the model's name: {e}"))
        .unwrap_or_default()
}

/// Whether create_embedding_index() has made the HNSW index for `model`'s vectors of `dims`
/// dimensions: one kept statement, as review asks it for every candidate with a vector.
pub fn has_hnsw_index(client: &SpiClient<'_>, model: &str, dims: i32) -> bool {
    let sql = format!(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.relname = {HNSW_INDEX_NAME} \
         AND c.relnamespace = 'memory_fabric'::pg_catalog.regnamespace)"
    );
    let p = plan(client, &sql, &[TEXT, INT4], false);
    client
        .select(&*p, Some(1), &[model.into(), dims.into()])
        .and_then(|t| t.first().get_one::<bool>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot read the catalog: {e}"))
        .unwrap_or(false)
}

/// An embedding quantised to a byte a dimension, with the bounds of its rounding
/// (memory_fabric_core::sq8): the key of promoted_scope_sq8, which recall reads to find the
/// memories worth scoring exactly. NULL for an array with a null element.
#[pg_extern(immutable, parallel_safe, strict)]
#[search_path(pg_catalog, pg_temp)]
fn _embedding_sq8(embedding: pgrx::Array<'_, f32>) -> Option<Vec<u8>> {
    let v: Option<Vec<f32>> = embedding.iter().collect();
    memory_fabric_core::sq8::encode(&v?)
}
