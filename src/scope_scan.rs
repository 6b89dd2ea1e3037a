//! Reading the scopes of promoted_scope_sq8 (sql/finalize.sql) without the executor: recall and
//! review's exact search bound every memory of a scope from it, and at a few hundred bytes an
//! entry the executor's work per row cost more than the reading (src/api/recall.rs). What an
//! index-only scan does, and no more: the statement's snapshot, a heap visit for entries on pages
//! not all-visible, the predicate lock a serializable transaction needs. Row-level security is
//! not applied here: callers pass only what they return to a query that applies it.

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::IntoDatum;

// PostgreSQL's, not in pgrx's bindings; called through pg_guard_ffi_boundary, so that an
// ERROR it raises unwinds as pgrx's own calls do.
extern "C-unwind" {
    fn PredicateLockPage(relation: pg_sys::Relation, blkno: pg_sys::BlockNumber, snapshot: pg_sys::Snapshot);
}

const INDEX: &str = "promoted_scope_sq8";

/// The index's columns, in its order: the scope's key (memory_fabric._scope_key()),
/// embedding_model, the code (_embedding_sq8); then, included: retracted_at, expires_at,
/// promoted_at, classification, consent_id, priority, id. Checked by name before a scan (the two
/// expressions have none of their own).
const KEYS: usize = 3;
const INCLUDED: [&str; 7] = ["retracted_at", "expires_at", "promoted_at", "classification", "consent_id", "priority", "id"];

/// One entry of promoted_scope_sq8, valid during the callback it is handed to. Its model and
/// code are read straight from the index tuple; its other columns once `read_all()` has
/// deformed it, and whether the statement's snapshot sees it once `visible()` has looked, so
/// that an entry the caller can rule out from its code costs neither.
pub struct Entry<'a> {
    itup: pg_sys::IndexTuple,
    desc: pg_sys::TupleDesc,
    values: &'a mut [pg_sys::Datum],
    nulls: &'a mut [bool],
    deformed: bool,
    seen: &'a mut Seen,
}

/// What the scan needs to tell whether the snapshot sees an entry: the heap, the scan (whose
/// current heap TID the entry points to), a slot and the visibility map's pinned page.
struct Seen {
    heap: pg_sys::Relation,
    scan: pg_sys::IndexScanDesc,
    slot: *mut pg_sys::TupleTableSlot,
    vm_buffer: pg_sys::Buffer,
    block: pg_sys::BlockNumber,
    /// The current entry's heap tuple was visited (it then holds the predicate lock).
    fetched: bool,
}

impl Entry<'_> {
    /// A key column (1-based), read without deforming the rest.
    fn key(&self, attnum: usize) -> Option<pg_sys::Datum> {
        // SAFETY: the tuple is the scan's current one, of this descriptor; its null bitmap
        // follows the fixed header when INDEX_NULL_MASK is set.
        unsafe {
            if (*self.itup).t_info as u32 & pg_sys::INDEX_NULL_MASK != 0 {
                let bits = (self.itup as *const u8).add(std::mem::size_of::<pg_sys::IndexTupleData>());
                let i = attnum - 1;
                if *bits.add(i >> 3) & (1 << (i & 7)) == 0 {
                    return None;
                }
            }
            Some(pg_sys::nocache_index_getattr(self.itup, attnum as i32, self.desc))
        }
    }

    pub fn model(&self) -> Option<&[u8]> {
        // SAFETY: a text datum of the current tuple
        self.key(2).map(|d| unsafe { varlena_bytes(d) })
    }

    /// The embedding's code (memory_fabric_core::sq8); None without an embedding.
    pub fn code(&self) -> Option<&[u8]> {
        // SAFETY: a bytea datum of the current tuple
        self.key(3).map(|d| unsafe { varlena_bytes(d) })
    }

    /// Whether the statement's snapshot sees the memory: the visibility map says its heap page
    /// is all-visible, or its heap tuple is visible (then visited, as an index-only scan does).
    /// The map is asked again for every entry, as an index-only scan asks: an answer kept from an
    /// earlier entry of the same page would count a row that another session inserted onto that
    /// page since, not committed yet (tests/isolation/specs/scope_scan_visibility.spec).
    pub fn visible(&mut self) -> bool {
        let s = &mut *self.seen;
        // SAFETY: the scan's current TID is this entry's; the slot and the map's page are the
        // scan's own, released by it.
        unsafe {
            let all_visible = pg_sys::visibilitymap_get_status(s.heap, s.block, &mut s.vm_buffer) as u32
                & pg_sys::VISIBILITYMAP_ALL_VISIBLE
                != 0;
            if all_visible {
                return true;
            }
            s.fetched = true;
            if !pg_sys::index_fetch_heap(s.scan, s.slot) {
                return false;
            }
            pg_sys::ExecClearTuple(s.slot);
            if (*s.scan).xs_heap_continue {
                error!("memory_fabric: non-MVCC snapshots are not supported in a scope scan");
            }
            true
        }
    }

    /// Deforms the entry, for the accessors below.
    pub fn read_all(&mut self) {
        if !self.deformed {
            // SAFETY: values and nulls have the descriptor's width
            unsafe { pg_sys::index_deform_tuple(self.itup, self.desc, self.values.as_mut_ptr(), self.nulls.as_mut_ptr()) };
            self.deformed = true;
        }
    }

    fn column(&self, c: usize) -> Option<pg_sys::Datum> {
        assert!(self.deformed, "an entry's columns are read after read_all()");
        (!self.nulls[c]).then(|| self.values[c])
    }

    fn bytes(&self, c: usize) -> Option<&[u8]> {
        // SAFETY: every column read this way is a varlena (text, bytea or numeric), and the
        // entry outlives the borrow.
        self.column(c).map(|d| unsafe { varlena_bytes(d) })
    }

    fn timestamp(&self, c: usize) -> Option<i64> {
        self.column(c).map(|d| d.value() as i64)
    }

    pub fn retracted_at(&self) -> Option<i64> {
        self.timestamp(KEYS)
    }

    pub fn expires_at(&self) -> Option<i64> {
        self.timestamp(KEYS + 1)
    }

    pub fn promoted_at(&self) -> Option<i64> {
        self.timestamp(KEYS + 2)
    }

    pub fn classification(&self) -> Option<&[u8]> {
        self.bytes(KEYS + 3)
    }

    pub fn has_consent(&self) -> bool {
        self.column(KEYS + 4).is_some()
    }

    /// The priority's numeric datum, with its bytes (to tell one value from another cheaply).
    pub fn priority(&self) -> Option<(pg_sys::Datum, &[u8])> {
        self.bytes(KEYS + 5).map(|b| (self.values[KEYS + 5], b))
    }

    pub fn id(&self) -> Option<&[u8]> {
        self.bytes(KEYS + 6)
    }
}

/// The key of a scope's entries in promoted_scope_sq8 (memory_fabric_core::sq8::scope_key), as
/// the index computes it for each promoted memory.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _scope_key(tenant_id: Option<&str>, user_id: Option<&str>, intent_scope: Option<&str>) -> Option<pgrx::Uuid> {
    Some(pgrx::Uuid::from_bytes(memory_fabric_core::sq8::scope_key(tenant_id?, user_id, intent_scope)))
}

extension_sql!(
    "REVOKE ALL ON FUNCTION memory_fabric._scope_key FROM PUBLIC;\n",
    name = "scope_key_privileges",
    requires = [_scope_key],
);

/// Whether `node` reads heap attribute `attnum`: a Var of it, maybe behind a relabelling or a
/// cast function (embedding::real[]: pgvector's vector_to_float4(vector, typmod, explicit)).
///
/// # Safety
/// `node` must be a valid expression tree (or null).
unsafe fn reads(node: *mut pg_sys::Node, attnum: pg_sys::AttrNumber) -> bool {
    use pgrx::is_a;
    let mut n = node;
    loop {
        if n.is_null() {
            return false;
        }
        if is_a(n, pg_sys::NodeTag::T_RelabelType) {
            n = (*(n as *mut pg_sys::RelabelType)).arg as *mut pg_sys::Node;
        } else if is_a(n, pg_sys::NodeTag::T_FuncExpr)
            && (*(n as *mut pg_sys::FuncExpr)).funcformat != pg_sys::CoercionForm::COERCE_EXPLICIT_CALL
        {
            // a cast's value is its first argument; the others, if any, are constants
            let args = pgrx::PgList::<pg_sys::Node>::from_pg((*(n as *mut pg_sys::FuncExpr)).args);
            if args.is_empty() || !args.iter_ptr().skip(1).all(|a| pgrx::is_a(a, pg_sys::NodeTag::T_Const)) {
                return false;
            }
            n = args.head().unwrap_or(std::ptr::null_mut());
        } else {
            return is_a(n, pg_sys::NodeTag::T_Var) && (*(n as *mut pg_sys::Var)).varattno == attnum;
        }
    }
}

/// Whether `node` is a call of memory_fabric.`name` on heap attributes `args`, in that order.
///
/// # Safety
/// `node` must be a valid expression tree (or null).
unsafe fn calls(node: *mut pg_sys::Node, ns: pg_sys::Oid, name: &[u8], args: &[pg_sys::AttrNumber]) -> bool {
    if node.is_null() || !pgrx::is_a(node, pg_sys::NodeTag::T_FuncExpr) {
        return false;
    }
    let f = node as *mut pg_sys::FuncExpr;
    let fname = pg_sys::get_func_name((*f).funcid);
    if fname.is_null() || pg_sys::get_func_namespace((*f).funcid) != ns || std::ffi::CStr::from_ptr(fname).to_bytes() != name {
        return false;
    }
    let list = pgrx::PgList::<pg_sys::Node>::from_pg((*f).args);
    list.len() == args.len() && list.iter_ptr().zip(args).all(|(a, n)| reads(a, *n))
}

/// Whether `rel` is promoted_scope_sq8 as sql/finalize.sql defines it, on `heap`, and ready to
/// be read: valid, ready and live (a build with CREATE INDEX CONCURRENTLY, or one that failed or
/// was cancelled, leaves it otherwise), with its key expressions, its predicate and its columns
/// in their places.
///
/// # Safety
/// `rel` and `heap` must be open relations, `rel` an index.
unsafe fn usable(rel: pg_sys::Relation, heap: pg_sys::Relation, ns: pg_sys::Oid) -> bool {
    let index = &*(*rel).rd_index;
    if !index.indisvalid || !index.indisready || !index.indislive || index.indrelid != (*heap).rd_id {
        return false;
    }
    // The definition was checked already for this row of pg_index: an index's columns,
    // expressions and predicate never change, and an index made again is another row (its
    // state, above, is asked every time: CREATE INDEX CONCURRENTLY updates that in place).
    let row = ((*rel).rd_id, (*(*(*rel).rd_indextuple).t_data).t_choice.t_heap.t_xmin);
    if CHECKED.with(|c| c.get() == Some(row)) {
        return true;
    }
    let ok = defined_as_expected(rel, heap, ns);
    if ok {
        CHECKED.with(|c| c.set(Some(row)));
    }
    ok
}

thread_local! {
    /// The row of pg_index (the index's OID and the row's xmin) whose definition usable() found
    /// to be promoted_scope_sq8's.
    static CHECKED: std::cell::Cell<Option<(pg_sys::Oid, pg_sys::TransactionId)>> = const { std::cell::Cell::new(None) };
}

/// Whether `rel` has promoted_scope_sq8's columns, key expressions and predicate.
///
/// # Safety
/// As usable().
unsafe fn defined_as_expected(rel: pg_sys::Relation, heap: pg_sys::Relation, ns: pg_sys::Oid) -> bool {
    let index = &*(*rel).rd_index;
    let desc = (*rel).rd_att;
    let attname = |i: usize| {
        let a = &*(*desc).attrs.as_ptr().add(i);
        std::ffi::CStr::from_ptr(a.attname.data.as_ptr()).to_bytes()
    };
    let shaped = index.indnkeyatts as usize == KEYS
        && index.indnatts as usize == KEYS + INCLUDED.len()
        && (*desc).natts as usize == KEYS + INCLUDED.len()
        && attname(1) == b"embedding_model"
        && INCLUDED.iter().enumerate().all(|(i, n)| attname(KEYS + i) == n.as_bytes());
    if !shaped {
        return false;
    }
    let table = (*heap).rd_id;
    let att = |n: &std::ffi::CStr| pg_sys::get_attnum(table, n.as_ptr());
    let keys = index.indkey.values.as_slice(KEYS);
    if keys[0] != 0 || keys[1] != att(c"embedding_model") || keys[2] != 0 {
        return false;
    }
    // as written in pg_index: the key expressions a list, the predicate one expression
    // (RelationGetIndexPredicate() would return it with _scope_fits, a SQL function, inlined)
    let stored = |attnum: u32| -> *mut pg_sys::Node {
        let mut isnull = false;
        let d = pg_sys::SysCacheGetAttr(
            pg_sys::SysCacheIdentifier::INDEXRELID as i32,
            (*rel).rd_indextuple,
            attnum as pg_sys::AttrNumber,
            &mut isnull,
        );
        if isnull {
            return std::ptr::null_mut();
        }
        pg_sys::stringToNode(pg_sys::text_to_cstring(d.cast_mut_ptr())) as *mut pg_sys::Node
    };
    let exprs = stored(pg_sys::Anum_pg_index_indexprs);
    if exprs.is_null() || !pgrx::is_a(exprs, pg_sys::NodeTag::T_List) {
        return false;
    }
    let exprs = pgrx::PgList::<pg_sys::Node>::from_pg(exprs as *mut pg_sys::List);
    let pred = stored(pg_sys::Anum_pg_index_indpred);
    let (tenant, user, intent, model) = (att(c"tenant_id"), att(c"user_id"), att(c"intent_scope"), att(c"embedding_model"));
    let embedding = att(c"embedding");
    exprs.len() == 2
        && calls(exprs.get_ptr(0).unwrap_or(std::ptr::null_mut()), ns, b"_scope_key", &[tenant, user, intent])
        && calls(exprs.get_ptr(1).unwrap_or(std::ptr::null_mut()), ns, b"_embedding_sq8", &[embedding])
        && calls(
            pred,
            ns,
            b"_scope_fits",
            &[
                tenant,
                user,
                intent,
                model,
                att(c"id"),
                att(c"classification"),
                att(c"consent_id"),
                embedding,
            ],
        )
}

/// Calls `f` with every entry of promoted_scope_sq8 under one of `keys` (scopes' keys,
/// memory_fabric_core::sq8::scope_key), key after key; `f` asks whether the statement's snapshot
/// sees it (Entry::visible). One scan, begun again for each key. Returns false, having called `f`
/// for nothing, when the index cannot be read (missing, not ready or not valid, or not defined as
/// sql/finalize.sql defines it): the caller then reads the scopes through the executor.
fn for_each_entry(keys: &[[u8; 16]], mut f: impl FnMut(&mut Entry<'_>)) -> bool {
    let name = std::ffi::CString::new(INDEX).expect("index names hold no NUL");
    // SAFETY: the relations are opened and locked before use and closed after; the scan, its
    // slot and the visibility-map pin are released at the end (and by the resource owner on an
    // error); the datums handed to `f` are read before the next entry is fetched.
    unsafe {
        let ns = pg_sys::get_namespace_oid(c"memory_fabric".as_ptr(), false);
        let index_oid = pg_sys::get_relname_relid(name.as_ptr(), ns);
        let table_oid = pg_sys::get_relname_relid(c"promoted_memory".as_ptr(), ns);
        if index_oid == pg_sys::InvalidOid || table_oid == pg_sys::InvalidOid || pg_sys::IndexGetRelation(index_oid, true) != table_oid {
            return false;
        }
        let heap = pg_sys::table_open(table_oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let rel = pg_sys::index_open(index_oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        // the index's state as of now, under the lock that keeps it from being dropped
        if !usable(rel, heap, ns) {
            pgrx::debug1!("memory_fabric: index \"memory_fabric.{INDEX}\" cannot be read now; the scopes are read through the executor");
            pg_sys::index_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
            pg_sys::table_close(heap, pg_sys::NoLock as pg_sys::LOCKMODE);
            return false;
        }
        let snapshot = pg_sys::GetActiveSnapshot();
        if snapshot.is_null() {
            error!("memory_fabric: no active snapshot to scan \"memory_fabric.{INDEX}\"");
        }
        let scan = pg_sys::index_beginscan(heap, rel, snapshot, 1, 0);
        (*scan).xs_want_itup = true;
        let width = (*(*scan).xs_itupdesc).natts as usize;
        let mut values = vec![pg_sys::Datum::from(0); width];
        let mut nulls = vec![true; width];
        let mut seen = Seen {
            heap,
            scan,
            slot: pg_sys::table_slot_create(heap, std::ptr::null_mut()),
            vm_buffer: pg_sys::InvalidBuffer as pg_sys::Buffer,
            block: 0,
            fetched: false,
        };
        // Predicate locks matter only to a serializable transaction (PredicateLockPage would
        // return at once otherwise), and one a heap page is enough.
        let serializable = pg_sys::XactIsoLevel == pg_sys::XACT_SERIALIZABLE as i32;
        let mut locked: Option<pg_sys::BlockNumber> = None;
        for (n, key) in keys.iter().enumerate() {
            if n > 0 {
                crate::inject::point("scope-scan-next-scope");
            }
            let key = pgrx::Uuid::from_bytes(*key);
            let mut sk: pg_sys::ScanKeyData = std::mem::zeroed();
            pg_sys::ScanKeyEntryInitialize(
                &mut sk,
                0,
                1,
                pg_sys::BTEqualStrategyNumber as pg_sys::StrategyNumber,
                pg_sys::InvalidOid,
                pg_sys::InvalidOid,
                pg_sys::Oid::from(pg_sys::F_UUID_EQ),
                key.into_datum().expect("a uuid datum"),
            );
            pg_sys::index_rescan(scan, &mut sk, 1, std::ptr::null_mut(), 0);
            loop {
                pgrx::check_for_interrupts!();
                let tid = pg_sys::index_getnext_tid(scan, pg_sys::ScanDirection::ForwardScanDirection);
                if tid.is_null() {
                    break;
                }
                let block = (((*tid).ip_blkid.bi_hi as u32) << 16) | (*tid).ip_blkid.bi_lo as u32;
                seen.block = block;
                seen.fetched = false;
                f(&mut Entry {
                    itup: (*scan).xs_itup,
                    desc: (*scan).xs_itupdesc,
                    values: &mut values,
                    nulls: &mut nulls,
                    deformed: false,
                    seen: &mut seen,
                });
                // every entry read holds a lock on its heap page, as in an index-only scan,
                // whether or not the caller looked further than its code
                if serializable && !seen.fetched && locked != Some(block) {
                    pg_sys::submodules::ffi::pg_guard_ffi_boundary(|| PredicateLockPage(heap, block, snapshot));
                    locked = Some(block);
                }
            }
        }
        if seen.vm_buffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::ReleaseBuffer(seen.vm_buffer);
        }
        pg_sys::ExecDropSingleTupleTableSlot(seen.slot);
        pg_sys::index_endscan(scan);
        pg_sys::index_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        pg_sys::table_close(heap, pg_sys::NoLock as pg_sys::LOCKMODE);
    }
    true
}

/// The entries of promoted_scope_sq8 for the tenant and every pair of a user and an intent given
/// (None: null), scope after scope; false when the index cannot be read now (for_each_entry).
#[must_use]
pub fn for_each_in_ranges(tenant: &str, users: &[Option<&str>], intents: &[Option<&str>], f: impl FnMut(&mut Entry<'_>)) -> bool {
    let keys: Vec<[u8; 16]> =
        users.iter().flat_map(|u| intents.iter().map(move |i| memory_fabric_core::sq8::scope_key(tenant, *u, *i))).collect();
    for_each_entry(&keys, f)
}

/// What for_each_in_ranges() would have offered, read through the executor instead, for when it
/// cannot read the index: the ids of the promoted memories of those scopes whose values fit it
/// (_scope_fits; the others are read apart by every caller), of `model` when one is given, with
/// the statement's snapshot. Every one is a candidate: the caller's exact comparison decides.
pub fn ids_in_ranges(tenant: &str, users: &[Option<&str>], intents: &[Option<&str>], model: Option<&str>) -> Vec<String> {
    const SQL: &str = "SELECT m.id FROM memory_fabric.promoted_memory m \
         WHERE m.tenant_id = $1 AND coalesce(m.user_id = $2, m.user_id IS NULL AND $2 IS NULL) \
           AND coalesce(m.intent_scope = $3, m.intent_scope IS NULL AND $3 IS NULL) \
           AND ($4::text IS NULL OR m.embedding_model = $4) \
           AND memory_fabric._scope_fits(m.tenant_id, m.user_id, m.intent_scope, m.embedding_model, m.id, \
                                         m.classification, m.consent_id, m.embedding) \
         ORDER BY m.id";
    use crate::spi::{plan, TEXT};
    pgrx::spi::Spi::connect(|client| {
        let p = plan(client, SQL, &[TEXT, TEXT, TEXT, TEXT], false);
        let mut out = Vec::new();
        for u in users {
            for i in intents {
                let rows = client
                    .select(&*p, None, &[tenant.into(), (*u).into(), (*i).into(), model.into()])
                    .unwrap_or_else(|e| error!("memory_fabric: cannot read the scope: {e}"));
                for r in rows {
                    pgrx::check_for_interrupts!();
                    if let Some(id) = crate::spi::col::<String>(&r, 1) {
                        out.push(id);
                    }
                }
            }
        }
        out
    })
}

/// The bytes of a varlena datum (text, bytea, numeric), decompressed if it was compressed.
///
/// # Safety
/// `d` must be a non-null varlena datum that stays valid while the slice is used.
unsafe fn varlena_bytes<'a>(d: pg_sys::Datum) -> &'a [u8] {
    use pgrx::varlena::{varatt_is_1b, varatt_is_1b_e, varatt_is_4b_u};
    let p: *mut pg_sys::varlena = d.cast_mut_ptr();
    // inline and uncompressed, as an index entry's values nearly always are: read in place
    let p = if varatt_is_4b_u(p) || (varatt_is_1b(p) && !varatt_is_1b_e(p)) { p } else { pg_sys::pg_detoast_datum_packed(p) };
    std::slice::from_raw_parts(pgrx::varlena::vardata_any(p) as *const u8, pgrx::varlena::varsize_any_exhdr(p))
}
