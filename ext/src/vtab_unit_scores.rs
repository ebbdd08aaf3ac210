//! `uq_unit_scores(response, samples_json[, options_json])`: eponymous table-valued function
//! over the daemon's `score` op, one row per unit and scorer (`unit_idx`, `unit`, `scorer`,
//! `score`). A blank response (without caller-supplied `units`) → no rows, no daemon call.

use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConnection, VTabCursor,
};
use rusqlite::{ffi, Connection};

use crate::client::Client;
use crate::llms::Options;
use crate::{args, guard, sql_err};

const NAME: &str = "uq_unit_scores";
const COL_UNIT_IDX: c_int = 0;
const COL_UNIT: c_int = 1;
const COL_SCORER: c_int = 2;
const COL_SCORE: c_int = 3;
const COL_RESPONSE: c_int = 4;
const COL_SAMPLES: c_int = 5;
const COL_OPTIONS: c_int = 6;
/// Hidden argument columns in argument order; bit i of `idx_num` = argument i is given.
const ARG_COLS: [c_int; 3] = [COL_RESPONSE, COL_SAMPLES, COL_OPTIONS];
const REQUIRED: c_int = 0b011;

pub fn register(db: &Connection, client: Arc<Client>) -> rusqlite::Result<()> {
    const MODULE: Module<UnitScoresTab> = Module::eponymous_only_module();
    db.create_module(c"uq_unit_scores", &MODULE, Some(client))
}

#[repr(C)]
struct UnitScoresTab {
    base: ffi::sqlite3_vtab,
    client: Arc<Client>,
    /// The connection, to read `temp.uq_llms` (the table never outlives it).
    db: *mut ffi::sqlite3,
}

unsafe impl<'vtab> VTab<'vtab> for UnitScoresTab {
    type Aux = Arc<Client>;
    type Cursor = UnitScoresCursor<'vtab>;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Client>>,
        _module: &[u8],
        _database: &[u8],
        _table: &[u8],
        _args: &[&[u8]],
    ) -> rusqlite::Result<(Cow<'static, CStr>, Self)> {
        guard(NAME, || {
            let client = aux
                .cloned()
                .ok_or_else(|| sql_err(format!("{NAME}: no daemon client")))?;
            Ok((
                Cow::Borrowed(
                    c"CREATE TABLE x(unit_idx INTEGER, unit TEXT, scorer TEXT, score REAL, \
                      response HIDDEN, samples_json HIDDEN, options_json HIDDEN)",
                ),
                UnitScoresTab {
                    base: ffi::sqlite3_vtab::default(),
                    client,
                    // SAFETY: kept to run queries on this connection from xFilter.
                    db: unsafe { db.handle() },
                },
            ))
        })
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<bool> {
        guard(NAME, || {
            let mut found: [Option<usize>; 3] = [None; 3];
            let mut unusable = 0;
            for (i, c) in info.constraints().enumerate() {
                let Some(arg) = ARG_COLS.iter().position(|&col| col == c.column()) else {
                    continue;
                };
                if !c.is_usable() {
                    unusable |= 1 << arg;
                } else if c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ {
                    found[arg] = Some(i);
                }
            }
            let mut idx_num = 0;
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
            if idx_num & REQUIRED != REQUIRED {
                if unusable & REQUIRED & !idx_num != 0 {
                    return Ok(false); // another plan can supply the argument
                }
                return Err(sql_err(format!(
                    "{NAME}: pass the response and the samples, e.g. \
                     SELECT * FROM {NAME}(response, samples_json[, options_json])"
                )));
            }
            info.set_idx_num(idx_num);
            info.set_estimated_cost(1e6); // one daemon round trip
            info.set_estimated_rows(30);
            Ok(true)
        })
    }

    fn open(&'vtab mut self) -> rusqlite::Result<UnitScoresCursor<'vtab>> {
        Ok(UnitScoresCursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            tab: self,
            args: [None, None, None],
            units: Vec::new(),
            rows: Vec::new(),
            pos: 0,
        })
    }
}

/// One output row: index into `units`, scorer name, score.
struct Row {
    unit_idx: usize,
    scorer: String,
    score: f64,
}

#[repr(C)]
struct UnitScoresCursor<'vtab> {
    base: ffi::sqlite3_vtab_cursor,
    tab: &'vtab UnitScoresTab,
    /// The arguments as given (response, samples_json, options_json), for the hidden columns.
    args: [Option<String>; 3],
    units: Vec<String>,
    rows: Vec<Row>,
    pos: usize,
}

impl UnitScoresCursor<'_> {
    fn run(&mut self, idx_num: c_int, filters: &Filters<'_>) -> Result<(), String> {
        let mut given = filters.iter();
        let mut values: [Option<ValueRef<'_>>; 3] = [None; 3];
        for (arg, v) in values.iter_mut().enumerate() {
            if idx_num & (1 << arg) != 0 {
                *v = given.next();
            }
        }
        let null = ValueRef::Null;
        let response = args::required_text(
            NAME,
            "response",
            values[0].unwrap_or(null),
            "the answer text",
        )?;
        self.args[0] = Some(response.clone());
        let samples = args::samples(NAME, values[1].unwrap_or(null))?;
        self.args[1] = args::text(NAME, "samples_json", values[1].unwrap_or(null))?;
        let options = args::options(NAME, values[2])?;
        self.args[2] = values[2]
            .map(|v| args::text(NAME, "options_json", v))
            .transpose()?
            .flatten();
        // SAFETY: a non-owning handle on the connection running this query.
        let conn = unsafe { rusqlite::Connection::from_handle(self.tab.db) }
            .map_err(|e| format!("{NAME}: {e}"))?;
        let o = Options::new(&conn, NAME, options)?;
        if !args::has_units(&response, &o.parsed) {
            return Ok(());
        }
        let llm = o.score_uses_llm();
        let result = self
            .tab
            .client
            .score(response, samples, o.map, llm)
            .map_err(|e| o.used.error(NAME, e))?;
        if let Some(bad) = result
            .scores
            .iter()
            .find(|s| s.unit_idx >= result.units.len())
        {
            return Err(format!(
                "{NAME}: unexpected reply from uqd: unit_idx {} but {} units",
                bad.unit_idx,
                result.units.len()
            ));
        }
        self.units = result.units;
        self.rows = result
            .scores
            .into_iter()
            .map(|s| Row {
                unit_idx: s.unit_idx,
                scorer: s.scorer,
                score: s.score,
            })
            .collect();
        Ok(())
    }
}

unsafe impl VTabCursor for UnitScoresCursor<'_> {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        filters: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        guard(NAME, || {
            self.args = [None, None, None];
            self.units.clear();
            self.rows.clear();
            self.pos = 0;
            self.run(idx_num, filters).map_err(sql_err)
        })
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        guard(NAME, || {
            let row = &self.rows[self.pos];
            match i {
                COL_UNIT_IDX => ctx.set_result(&(row.unit_idx as i64)),
                COL_UNIT => ctx.set_result(&self.units[row.unit_idx]),
                COL_SCORER => ctx.set_result(&row.scorer),
                COL_SCORE => ctx.set_result(&row.score),
                COL_RESPONSE | COL_SAMPLES | COL_OPTIONS => {
                    ctx.set_result(&self.args[(i - COL_RESPONSE) as usize])
                }
                _ => Err(sql_err(format!("{NAME}: no column {i}"))),
            }
        })
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.pos as i64)
    }
}
