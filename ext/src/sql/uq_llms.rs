//! `temp.uq_llms(name TEXT PRIMARY KEY, config TEXT)`: the connection's registry of named LLM
//! configs (docs/reference.md, "temp.uq_llms"), a writable virtual table in the manner of
//! sqlite-rembed's `rembed_clients`. The extension creates it when it is loaded
//! (`CREATE VIRTUAL TABLE IF NOT EXISTS temp.uq_llms USING uq_llms_module()`). Options name its
//! LLMs (options.rs resolves them); llm_config.rs checks their configs.
//!
//! The rows live outside the table object (a schema reset disconnects and reconnects virtual
//! tables): in a process-wide store keyed by connection and table, cleared by `CREATE VIRTUAL
//! TABLE` and dropped with the last module registration of the connection. The table does not
//! take part in transactions: a ROLLBACK does not undo a registration.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{c_int, CStr};
use std::sync::{Mutex, PoisonError};

use rusqlite::types::ValueRef;
use rusqlite::vtab::{
    ConflictMode, Context, CreateVTab, Filters, IndexInfo, Inserts, Module, UpdateVTab, Updates,
    VTab, VTabConnection, VTabCursor, VTabKind,
};
use rusqlite::{ffi, Connection};

use crate::glue::{guard, sql_err, step_over_rows};
use crate::llm_config::{insert_example, lit, parse_config, CREATE_SQL};

const NAME: &str = "uq_llms";
/// The module's name (in [`CREATE_SQL`]).
pub const MODULE_NAME: &str = "uq_llms_module";
/// The declared columns of `temp.uq_llms`.
const SCHEMA: &CStr = c"CREATE TABLE x(name TEXT PRIMARY KEY, config TEXT)";
const COL_NAME: c_int = 0;
const COL_CONFIG: c_int = 1;

pub fn register(db: &Connection) -> rusqlite::Result<()> {
    const MODULE: Module<LlmsTab> = Module::update_module();
    // SAFETY: the handle is only used as a key (and compared), never dereferenced here.
    let key = unsafe { db.handle() } as usize;
    store().refs.entry(key).and_modify(|n| *n += 1).or_insert(1);
    db.create_module(MODULE_NAME, &MODULE, Some(LlmsAux { db: key }))?;
    // Not fatal: without the table, the functions still work with inline LLM configs, and a
    // name in the options gets an error that shows how to create it.
    let _ = db.execute_batch(CREATE_SQL);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Rows and their store

#[derive(Clone)]
struct Entry {
    rowid: i64,
    name: String,
    config: String,
}

#[derive(Default)]
struct Rows {
    entries: Vec<Entry>,
    next_rowid: i64,
}

#[derive(Default)]
struct Store {
    /// (connection handle, "schema.table") → rows.
    tables: HashMap<(usize, String), Rows>,
    /// Module registrations alive per connection handle.
    refs: HashMap<usize, usize>,
}

static STORE: Mutex<Option<Store>> = Mutex::new(None);

struct StoreGuard(std::sync::MutexGuard<'static, Option<Store>>);

impl std::ops::Deref for StoreGuard {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0.as_ref().expect("initialised")
    }
}

impl std::ops::DerefMut for StoreGuard {
    fn deref_mut(&mut self) -> &mut Store {
        self.0.as_mut().expect("initialised")
    }
}

fn store() -> StoreGuard {
    let mut g = STORE.lock().unwrap_or_else(PoisonError::into_inner);
    g.get_or_insert_with(Store::default);
    StoreGuard(g)
}

/// Module client data: one per registration of the module on a connection. When the last one
/// of a connection goes (the connection closes), its rows go too.
struct LlmsAux {
    db: usize,
}

impl Drop for LlmsAux {
    fn drop(&mut self) {
        let mut s = store();
        let last = match s.refs.get_mut(&self.db) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            _ => true,
        };
        if last {
            s.refs.remove(&self.db);
            let db = self.db;
            s.tables.retain(|(d, _), _| *d != db);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation

/// The registered name: non-blank TEXT.
fn check_name(v: ValueRef<'_>) -> Result<String, String> {
    let example = insert_example("gpt");
    let name = match v {
        ValueRef::Null => {
            return Err(format!(
                "{NAME}: name is NULL; give every LLM a name, e.g. {example}"
            ))
        }
        ValueRef::Text(b) => String::from_utf8(b.to_vec())
            .map_err(|e| format!("{NAME}: name is not valid UTF-8 ({e}); pass UTF-8 text"))?,
        _ => {
            return Err(format!(
                "{NAME}: name must be TEXT; pass a name such as 'gpt', e.g. {example}"
            ))
        }
    };
    if name.trim().is_empty() {
        return Err(format!(
            "{NAME}: name is empty; pass a name such as 'gpt', e.g. {example}"
        ));
    }
    Ok(name)
}

/// A TEXT config value, validated.
fn check_config(name: &str, v: ValueRef<'_>) -> Result<String, String> {
    let text = match v {
        ValueRef::Null => {
            return Err(format!(
                "{NAME}: config of LLM {} is NULL; pass a JSON object of LLM settings, e.g. {}",
                lit(name),
                insert_example(name)
            ))
        }
        ValueRef::Text(b) => String::from_utf8(b.to_vec())
            .map_err(|e| format!("{NAME}: config is not valid UTF-8 ({e})"))?,
        _ => {
            return Err(format!(
                "{NAME}: config of LLM {} must be TEXT holding a JSON object, e.g. {}",
                lit(name),
                insert_example(name)
            ))
        }
    };
    parse_config(name, &text).map_err(|e| format!("{NAME}: {e}"))?;
    Ok(text)
}

// ---------------------------------------------------------------------------------------------
// The virtual table

#[repr(C)]
struct LlmsTab {
    base: ffi::sqlite3_vtab,
    db: *mut ffi::sqlite3,
    key: (usize, String),
}

impl LlmsTab {
    fn new(
        db: &mut VTabConnection,
        database: &[u8],
        table: &[u8],
        args: &[&[u8]],
    ) -> rusqlite::Result<Self> {
        if !args.is_empty() {
            return Err(sql_err(format!(
                "{NAME}: the module takes no arguments: {CREATE_SQL}"
            )));
        }
        // SAFETY: the handle is kept to read the conflict policy of INSERT/UPDATE on this
        // connection; the table never outlives its connection.
        let handle = unsafe { db.handle() };
        let key = (
            handle as usize,
            format!(
                "{}.{}",
                String::from_utf8_lossy(database),
                String::from_utf8_lossy(table)
            ),
        );
        Ok(LlmsTab {
            base: ffi::sqlite3_vtab::default(),
            db: handle,
            key,
        })
    }

    fn with_rows<T>(&self, f: impl FnOnce(&mut Rows) -> T) -> T {
        let mut s = store();
        f(s.tables.entry(self.key.clone()).or_default())
    }

    fn conflict_mode(&self) -> ConflictMode {
        // SAFETY: called from xUpdate on this table's connection.
        ConflictMode::from(unsafe { ffi::sqlite3_vtab_on_conflict(self.db) })
    }

    /// Checks `name` and `config` and stores them in the row `rowid` (None: a new row), applying
    /// the statement's conflict policy when another row has that name. Returns the row's rowid.
    fn put(
        &self,
        rowid: Option<i64>,
        name: ValueRef<'_>,
        config: ValueRef<'_>,
    ) -> Result<i64, String> {
        let name = check_name(name)?;
        let config = check_config(&name, config)?;
        let mode = self.conflict_mode();
        self.with_rows(|rows| {
            if let Some(other) = rows
                .entries
                .iter()
                .position(|e| e.name == name && Some(e.rowid) != rowid)
            {
                match mode {
                    ConflictMode::Replace => {
                        let old = rows.entries.remove(other);
                        if rowid.is_none() {
                            // INSERT OR REPLACE keeps the row (and its place) of the old name.
                            rows.entries.insert(
                                other,
                                Entry {
                                    rowid: old.rowid,
                                    name,
                                    config,
                                },
                            );
                            return Ok(old.rowid);
                        }
                    }
                    ConflictMode::Ignore => return Ok(rowid.unwrap_or(rows.entries[other].rowid)),
                    _ => {
                        return Err(format!(
                            "{NAME}: an LLM named {} is already registered; change it with \
                             UPDATE temp.uq_llms SET config = '…' WHERE name = {}, or use INSERT OR \
                             REPLACE",
                            lit(&name),
                            lit(&name)
                        ))
                    }
                }
            }
            match rowid {
                Some(r) => match rows.entries.iter_mut().find(|e| e.rowid == r) {
                    Some(e) => {
                        e.name = name;
                        e.config = config;
                        Ok(r)
                    }
                    None => Err(format!("{NAME}: no row {r} to update")),
                },
                None => {
                    rows.next_rowid += 1;
                    let r = rows.next_rowid;
                    rows.entries.push(Entry {
                        rowid: r,
                        name,
                        config,
                    });
                    Ok(r)
                }
            }
        })
    }
}

unsafe impl<'vtab> VTab<'vtab> for LlmsTab {
    type Aux = LlmsAux;
    type Cursor = LlmsCursor<'vtab>;

    fn connect(
        db: &mut VTabConnection,
        _aux: Option<&LlmsAux>,
        _module: &[u8],
        database: &[u8],
        table: &[u8],
        args: &[&[u8]],
    ) -> rusqlite::Result<(Cow<'static, CStr>, Self)> {
        guard(NAME, || {
            let tab = LlmsTab::new(db, database, table, args)?;
            tab.with_rows(|_| ());
            Ok((Cow::Borrowed(SCHEMA), tab))
        })
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<bool> {
        guard(NAME, || {
            let n = self.with_rows(|r| r.entries.len());
            info.set_estimated_cost(n.max(1) as f64);
            info.set_estimated_rows(n.max(1) as i64);
            Ok(true)
        })
    }

    fn open(&'vtab mut self) -> rusqlite::Result<LlmsCursor<'vtab>> {
        Ok(LlmsCursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            tab: self,
            rows: Vec::new(),
            pos: 0,
        })
    }
}

impl CreateVTab<'_> for LlmsTab {
    const KIND: VTabKind = VTabKind::Default;

    /// `connect`, on an empty registry.
    fn create(
        db: &mut VTabConnection,
        aux: Option<&LlmsAux>,
        module: &[u8],
        database: &[u8],
        table: &[u8],
        args: &[&[u8]],
    ) -> rusqlite::Result<(Cow<'static, CStr>, Self)> {
        let (schema, tab) = Self::connect(db, aux, module, database, table, args)?;
        store().tables.insert(tab.key.clone(), Rows::default());
        Ok((schema, tab))
    }

    fn destroy(&self) -> rusqlite::Result<()> {
        store().tables.remove(&self.key);
        Ok(())
    }
}

impl UpdateVTab<'_> for LlmsTab {
    fn delete(&mut self, arg: ValueRef<'_>) -> rusqlite::Result<()> {
        guard(NAME, || {
            let rowid = arg.as_i64().map_err(|e| sql_err(format!("{NAME}: {e}")))?;
            self.with_rows(|rows| rows.entries.retain(|e| e.rowid != rowid));
            Ok(())
        })
    }

    fn insert(&mut self, args: &Inserts<'_>) -> rusqlite::Result<i64> {
        guard(NAME, || {
            // args: old rowid (NULL), new rowid, name, config.
            let v: Vec<ValueRef<'_>> = args.iter().collect();
            self.put(None, v[2], v[3]).map_err(sql_err)
        })
    }

    fn update(&mut self, args: &Updates<'_>) -> rusqlite::Result<()> {
        guard(NAME, || {
            // args: old rowid, new rowid, name, config.
            let v: Vec<ValueRef<'_>> = args.iter().collect();
            let old = v[0].as_i64().map_err(|e| sql_err(format!("{NAME}: {e}")))?;
            if v[1].as_i64().ok() != Some(old) {
                return Err(sql_err(format!(
                    "{NAME}: the rowid of a registration cannot be changed; update name or config"
                )));
            }
            self.put(Some(old), v[2], v[3]).map(drop).map_err(sql_err)
        })
    }
}

#[repr(C)]
struct LlmsCursor<'vtab> {
    base: ffi::sqlite3_vtab_cursor,
    tab: &'vtab LlmsTab,
    /// Snapshot taken by `filter`.
    rows: Vec<Entry>,
    pos: usize,
}

unsafe impl VTabCursor for LlmsCursor<'_> {
    fn filter(
        &mut self,
        _idx_num: c_int,
        _idx_str: Option<&str>,
        _args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        guard(NAME, || {
            self.rows = self.tab.with_rows(|r| r.entries.clone());
            self.pos = 0;
            Ok(())
        })
    }

    step_over_rows!();

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        guard(NAME, || {
            let row = &self.rows[self.pos];
            match i {
                COL_NAME => ctx.set_result(&row.name),
                COL_CONFIG => ctx.set_result(&row.config),
                _ => Err(sql_err(format!("{NAME}: no column {i}"))),
            }
        })
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.rows[self.pos].rowid)
    }
}
