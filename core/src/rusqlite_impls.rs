//! uq-core's database traits implemented for a rusqlite connection, once for the daemon and the
//! extension: [`impl_source_db!`](crate::impl_source_db) (retrieving sources) and
//! [`impl_job_db!`](crate::impl_job_db) (creating a job). uq-core does not link rusqlite (the
//! two Cargo workspaces build it differently: bundled, and as a loadable extension), so these
//! are macros: their expansion names the invoking crate's `rusqlite`, which must be one of its
//! dependencies.

/// Implements [`SourceDb`](crate::retrieve::SourceDb) for a newtype over a rusqlite connection
/// (`struct Db<'a>(&'a Connection)`): [`TABLE_SQL`](crate::retrieve::TABLE_SQL),
/// [`COLUMNS_SQL`](crate::retrieve::COLUMNS_SQL) and the search run on `self.0`, each text cell
/// (a table's `CREATE` statement, a passage) read by `cell`, a
/// `Fn(&rusqlite::Row<'_>, usize) -> rusqlite::Result<Option<String>>` (the daemon reads TEXT,
/// the extension also decodes BLOBs and writes out numbers).
///
/// ```text
/// uq_core::impl_source_db!(Db<'_>, cell = |r: &Row<'_>, i: usize| r.get::<_, Option<String>>(i));
/// ```
#[macro_export]
macro_rules! impl_source_db {
    ($db:ty, cell = $cell:expr) => {
        impl $crate::retrieve::SourceDb for $db {
            fn table_sql(
                &mut self,
                name: &str,
            ) -> ::std::result::Result<
                ::std::option::Option<::std::string::String>,
                ::std::string::String,
            > {
                let row = self
                    .0
                    .query_row($crate::retrieve::TABLE_SQL, [name], |r| ($cell)(r, 0));
                rusqlite::OptionalExtension::optional(row)
                    .map(::std::option::Option::flatten)
                    .map_err(|e| e.to_string())
            }

            fn columns(
                &mut self,
                name: &str,
            ) -> ::std::result::Result<
                ::std::vec::Vec<::std::string::String>,
                ::std::string::String,
            > {
                let mut st = self
                    .0
                    .prepare($crate::retrieve::COLUMNS_SQL)
                    .map_err(|e| e.to_string())?;
                let cols = st
                    .query_map([name], |r| r.get::<_, ::std::string::String>(0))
                    .and_then(|rows| rows.collect::<::std::result::Result<::std::vec::Vec<_>, _>>())
                    .map_err(|e| e.to_string())?;
                Ok(cols)
            }

            fn search(
                &mut self,
                sql: &str,
                query: &str,
                limit: usize,
            ) -> ::std::result::Result<
                ::std::vec::Vec<(i64, ::std::option::Option<::std::string::String>)>,
                ::std::string::String,
            > {
                let mut st = self.0.prepare(sql).map_err(|e| e.to_string())?;
                let limit = i64::try_from(limit).unwrap_or(i64::MAX);
                let rows = st
                    .query_map(rusqlite::params![query, limit], |r| {
                        Ok((r.get::<_, i64>(0)?, ($cell)(r, 1)?))
                    })
                    .and_then(|rows| rows.collect::<::std::result::Result<::std::vec::Vec<_>, _>>())
                    .map_err(|e| e.to_string())?;
                Ok(rows)
            }
        }
    };
}

/// Implements [`JobDb`](crate::jobs::JobDb) for a newtype over a rusqlite connection
/// (`struct Db<'a>(&'a Connection)`, or `&'a mut Connection`): `texts`, `integer` and
/// `insert_job` run on `self.0`, and the impl's other methods are the ones given (`migrate`,
/// and `resolve_options` where it differs).
///
/// ```text
/// uq_core::impl_job_db! {
///     impl JobDb for Db<'_> {
///         fn migrate(&mut self) -> Result<(), String> { store::migrate(self.0).map(drop) }
///     }
/// }
/// ```
#[macro_export]
macro_rules! impl_job_db {
    (impl JobDb for $db:ty { $($methods:tt)* }) => {
        impl $crate::jobs::JobDb for $db {
            fn texts(
                &mut self,
                sql: &str,
                params: &[&str],
            ) -> ::std::result::Result<
                ::std::vec::Vec<::std::string::String>,
                ::std::string::String,
            > {
                let mut st = self.0.prepare(sql).map_err(|e| e.to_string())?;
                let rows = st.query_map(rusqlite::params_from_iter(params), |r| {
                    r.get::<_, ::std::string::String>(0)
                });
                rows.and_then(::std::iter::Iterator::collect)
                    .map_err(|e| e.to_string())
            }

            fn integer(
                &mut self,
                sql: &str,
            ) -> ::std::result::Result<i64, ::std::string::String> {
                self.0
                    .query_row(sql, [], |r| r.get(0))
                    .map_err(|e| e.to_string())
            }

            fn insert_job(
                &mut self,
                j: &$crate::jobs::NewJob,
            ) -> ::std::result::Result<i64, ::std::string::String> {
                let values =
                    rusqlite::params![j.source_table, j.columns_json, j.options_json, j.total];
                self.0
                    .execute($crate::jobs::INSERT_JOB, values)
                    .map_err(|e| e.to_string())?;
                Ok(self.0.last_insert_rowid())
            }

            $($methods)*
        }
    };
}
