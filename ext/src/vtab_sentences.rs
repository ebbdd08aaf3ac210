//! `uq_sentences(text)`: eponymous table-valued function, one row per sentence (`idx` from 0,
//! `sentence`), split locally by `uq_core::decompose::split_sentences`. NULL/empty → no rows.

use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::marker::PhantomData;

use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConfig, VTabConnection,
    VTabCursor,
};
use rusqlite::{ffi, Connection};

use crate::{args, guard, sql_err};

const NAME: &str = "uq_sentences";
const COL_IDX: c_int = 0;
const COL_SENTENCE: c_int = 1;
const COL_TEXT: c_int = 2;

pub fn register(db: &Connection) -> rusqlite::Result<()> {
    const MODULE: Module<SentencesTab> = Module::eponymous_only_module();
    db.create_module(c"uq_sentences", &MODULE, None)
}

#[repr(C)]
struct SentencesTab {
    base: ffi::sqlite3_vtab,
}

unsafe impl<'vtab> VTab<'vtab> for SentencesTab {
    type Aux = ();
    type Cursor = SentencesCursor<'vtab>;

    fn connect(
        db: &mut VTabConnection,
        _aux: Option<&()>,
        _module: &[u8],
        _database: &[u8],
        _table: &[u8],
        _args: &[&[u8]],
    ) -> rusqlite::Result<(Cow<'static, CStr>, Self)> {
        guard(NAME, || {
            db.config(VTabConfig::Innocuous)?;
            Ok((
                Cow::Borrowed(c"CREATE TABLE x(idx INTEGER, sentence TEXT, text HIDDEN)"),
                SentencesTab {
                    base: ffi::sqlite3_vtab::default(),
                },
            ))
        })
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<bool> {
        guard(NAME, || {
            let mut found = None;
            let mut unusable = false;
            for (i, c) in info.constraints().enumerate() {
                if c.column() != COL_TEXT {
                    continue;
                }
                if !c.is_usable() {
                    unusable = true;
                } else if c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ {
                    found = Some(i);
                }
            }
            match found {
                Some(i) => {
                    let mut u = info.constraint_usage(i);
                    u.set_argv_index(1);
                    u.set_omit(true);
                    info.set_idx_num(1);
                    info.set_estimated_cost(10.0);
                    info.set_estimated_rows(10);
                    Ok(true)
                }
                None if unusable => Ok(false),
                None => Err(sql_err(format!(
                    "{NAME}: pass the text, e.g. SELECT idx, sentence FROM {NAME}('First. Second.')"
                ))),
            }
        })
    }

    fn open(&'vtab mut self) -> rusqlite::Result<SentencesCursor<'vtab>> {
        Ok(SentencesCursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            text: None,
            rows: Vec::new(),
            pos: 0,
            phantom: PhantomData,
        })
    }
}

#[repr(C)]
struct SentencesCursor<'vtab> {
    base: ffi::sqlite3_vtab_cursor,
    text: Option<String>,
    rows: Vec<String>,
    pos: usize,
    phantom: PhantomData<&'vtab SentencesTab>,
}

unsafe impl VTabCursor for SentencesCursor<'_> {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        guard(NAME, || {
            self.pos = 0;
            self.rows.clear();
            self.text = None;
            if idx_num == 1 && !args.is_empty() {
                let value = args.iter().next().expect("one argument");
                self.text = args::text(NAME, "text", value).map_err(sql_err)?;
            }
            if let Some(text) = self.text.as_deref().filter(|t| !t.is_empty()) {
                self.rows = uq_core::decompose::split_sentences(text);
            }
            Ok(())
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
        guard(NAME, || match i {
            COL_IDX => ctx.set_result(&(self.pos as i64)),
            COL_SENTENCE => ctx.set_result(&self.rows[self.pos]),
            COL_TEXT => ctx.set_result(&self.text),
            _ => Err(sql_err(format!("{NAME}: no column {i}"))),
        })
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.pos as i64)
    }
}
