//! A small framework for the extension's eponymous table-valued functions (`uq_generate`,
//! `uq_claims`, `uad_claims`, `uq_unit_scores`, `uq_sentences`, `uq_scorers`): output columns,
//! then one hidden column per argument (`SELECT * FROM f(a, b[, c])`); all rows are computed by
//! one call in `xFilter`.

use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::marker::PhantomData;
use std::sync::Arc;

use rusqlite::types::{Value, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConfig, VTabConnection,
    VTabCursor,
};
use rusqlite::{ffi, Connection};

use crate::client::Client;
use crate::glue::{guard, sql_err, step_over_rows};

/// One table-valued function.
pub trait TableFn: Sized + 'static {
    /// SQL name, for errors.
    const NAME: &'static str;
    /// `CREATE TABLE x(<output columns>, <one HIDDEN column per argument>)`.
    const SCHEMA: &'static CStr;
    /// Number of output (not hidden) columns.
    const N_OUT: usize;
    /// Number of arguments (hidden columns).
    const N_ARGS: usize;
    /// The first `N_REQUIRED` arguments must be given.
    const N_REQUIRED: usize;
    /// The error when required arguments are missing, after `NAME: `, e.g.
    /// `pass the arguments, e.g. SELECT * FROM uq_claims(text[, options_json])`.
    const MISSING_ARGS: &'static str;
    /// Planner cost of one call (default: one daemon round trip, possibly LLM calls).
    const ESTIMATED_COST: f64 = 1e7;
    /// Planner estimate of the number of rows.
    const ESTIMATED_ROWS: i64 = 10;
    /// Computed locally without side effects (no daemon call): marked innocuous, so that it
    /// may be used in triggers and views.
    const LOCAL: bool = false;
    /// The hidden columns echo TEXT arguments as TEXT, UTF-8 BLOBs decoded to TEXT (default:
    /// as given).
    const ARGS_AS_TEXT: bool = false;

    /// The SQLite module: eponymous only (no `CREATE VIRTUAL TABLE`).
    const MODULE: &'static Module<'static, FnTab<Self>> = &Module::eponymous_only_module();

    /// The rows (each `N_OUT` values) for the arguments (`N_ARGS` values; NULL when not given).
    fn rows(
        client: &Client,
        conn: &Connection,
        args: &[ValueRef<'_>],
    ) -> Result<Vec<Vec<Value>>, String>;
}

/// Registers table function `F` under its name. The functions computed locally keep the client
/// too, as [`FnTab`] does, but never call the daemon.
pub fn register<F: TableFn>(db: &Connection, client: &Arc<Client>) -> rusqlite::Result<()> {
    db.create_module(F::NAME, F::MODULE, Some(Arc::clone(client)))
}

/// A text column value, NULL when absent (a reply of an older daemon).
pub fn text_or_null(v: Option<&String>) -> Value {
    v.map_or(Value::Null, |t| Value::Text(t.clone()))
}

/// A unit's `start`, `end` and `alignment` columns (`uq_core::decompose::spans`): NULL, NULL,
/// NULL for a unit not placed in its answer.
pub fn span_values(span: Option<uq_core::decompose::spans::Span>) -> [Value; 3] {
    match span {
        Some(s) => [int(s.start), int(s.end), Value::Real(s.alignment)],
        None => [Value::Null, Value::Null, Value::Null],
    }
}

/// An INTEGER output value (saturating).
pub fn int(n: impl TryInto<i64>) -> Value {
    Value::Integer(n.try_into().unwrap_or(i64::MAX))
}

/// A REAL output value; NULL when absent or not finite.
pub fn real(x: Option<f64>) -> Value {
    match x {
        Some(x) if x.is_finite() => Value::Real(x),
        _ => Value::Null,
    }
}

#[repr(C)]
pub struct FnTab<F: TableFn> {
    base: ffi::sqlite3_vtab,
    client: Arc<Client>,
    /// The connection, to read `temp.uq_llms` (the table never outlives it).
    db: *mut ffi::sqlite3,
    phantom: PhantomData<F>,
}

unsafe impl<'vtab, F: TableFn> VTab<'vtab> for FnTab<F> {
    type Aux = Arc<Client>;
    type Cursor = FnCursor<'vtab, F>;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Client>>,
        _module: &[u8],
        _database: &[u8],
        _table: &[u8],
        _args: &[&[u8]],
    ) -> rusqlite::Result<(Cow<'static, CStr>, Self)> {
        guard(F::NAME, || {
            if F::LOCAL {
                db.config(VTabConfig::Innocuous)?;
            }
            let client = aux
                .cloned()
                .ok_or_else(|| sql_err(format!("{}: no daemon client", F::NAME)))?;
            Ok((
                Cow::Borrowed(F::SCHEMA),
                FnTab {
                    base: ffi::sqlite3_vtab::default(),
                    client,
                    // SAFETY: kept to run queries on this connection from xFilter.
                    db: unsafe { db.handle() },
                    phantom: PhantomData,
                },
            ))
        })
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<bool> {
        guard(F::NAME, || {
            let mut found: Vec<Option<usize>> = vec![None; F::N_ARGS];
            let mut unusable = 0u32;
            for (i, c) in info.constraints().enumerate() {
                let col = c.column();
                if col < F::N_OUT as c_int || col >= (F::N_OUT + F::N_ARGS) as c_int {
                    continue;
                }
                let arg = col as usize - F::N_OUT;
                if !c.is_usable() {
                    unusable |= 1 << arg;
                } else if c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ {
                    found[arg] = Some(i);
                }
            }
            let required = (1u32 << F::N_REQUIRED) - 1;
            let mut idx_num = 0u32;
            let mut argv = 0;
            for (arg, constraint) in found.iter().enumerate() {
                if let Some(i) = *constraint {
                    idx_num |= 1 << arg;
                    argv += 1;
                    let mut u = info.constraint_usage(i);
                    u.set_argv_index(argv);
                    u.set_omit(true);
                }
            }
            // An argument given from another table of the join (`FROM t, f(t.a, t.b, t.o)`),
            // optional ones included: a plan without it would run without that argument, so it
            // is refused, and a plan with this function inside that loop supplies it.
            if unusable & !idx_num != 0 {
                return Ok(false);
            }
            if idx_num & required != required {
                return Err(sql_err(format!("{}: {}", F::NAME, F::MISSING_ARGS)));
            }
            info.set_idx_num(idx_num as c_int);
            info.set_estimated_cost(F::ESTIMATED_COST);
            info.set_estimated_rows(F::ESTIMATED_ROWS);
            Ok(true)
        })
    }

    fn open(&'vtab mut self) -> rusqlite::Result<FnCursor<'vtab, F>> {
        Ok(FnCursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            tab: self,
            args: vec![Value::Null; F::N_ARGS],
            rows: Vec::new(),
            pos: 0,
        })
    }
}

#[repr(C)]
pub struct FnCursor<'vtab, F: TableFn> {
    base: ffi::sqlite3_vtab_cursor,
    tab: &'vtab FnTab<F>,
    /// The arguments as given, for the hidden columns.
    args: Vec<Value>,
    rows: Vec<Vec<Value>>,
    pos: usize,
}

unsafe impl<F: TableFn> VTabCursor for FnCursor<'_, F> {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        filters: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        guard(F::NAME, || {
            self.rows.clear();
            self.pos = 0;
            let mut given = filters.iter();
            let mut values: Vec<ValueRef<'_>> = vec![ValueRef::Null; F::N_ARGS];
            for (arg, v) in values.iter_mut().enumerate() {
                if idx_num & (1 << arg) != 0 {
                    *v = given.next().unwrap_or(ValueRef::Null);
                }
            }
            self.args = values
                .iter()
                .map(|v| match *v {
                    ValueRef::Blob(b) if F::ARGS_AS_TEXT => std::str::from_utf8(b)
                        .map_or_else(|_| Value::Blob(b.to_vec()), |t| Value::Text(t.to_owned())),
                    v => Value::try_from(v).unwrap_or(Value::Null),
                })
                .collect();
            // SAFETY: a non-owning handle on the connection running this query.
            let conn = unsafe { Connection::from_handle(self.tab.db) }?;
            let rows = F::rows(&self.tab.client, &conn, &values).map_err(sql_err)?;
            if let Some(bad) = rows.iter().find(|r| r.len() != F::N_OUT) {
                return Err(sql_err(format!(
                    "{}: internal error: a row of {} values for {} columns; please report it",
                    F::NAME,
                    bad.len(),
                    F::N_OUT
                )));
            }
            self.rows = rows;
            Ok(())
        })
    }

    step_over_rows!();

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        guard(F::NAME, || {
            let i =
                usize::try_from(i).map_err(|_| sql_err(format!("{}: no column {i}", F::NAME)))?;
            if i < F::N_OUT {
                ctx.set_result(&self.rows[self.pos][i])
            } else if i < F::N_OUT + F::N_ARGS {
                ctx.set_result(&self.args[i - F::N_OUT])
            } else {
                Err(sql_err(format!("{}: no column {i}", F::NAME)))
            }
        })
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.pos as i64)
    }
}
