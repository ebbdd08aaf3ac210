//! The daemon's side of the uqlite schema (sql/migrations): opening a user's database for
//! writing (WAL, busy timeout) and applying pending migrations, each in its own transaction.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};
use uq_core::schema::{APPLIED_VERSION, BOOTSTRAP, MIGRATIONS, RECORD};

/// How long a write waits for another connection's lock before failing, by default.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

static BUSY: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

/// Sets the process's busy timeout (setting `busy_timeout_ms`, from `Config::resolve`); the
/// first call wins.
pub fn set_busy_timeout(t: Duration) {
    let _ = BUSY.set(t);
}

/// The busy timeout in use: the one set, else [`BUSY_TIMEOUT`].
pub fn busy_timeout() -> Duration {
    BUSY.get().copied().unwrap_or(BUSY_TIMEOUT)
}

/// Opens `path` (which must exist) read-write with a busy timeout.
pub fn open(path: &Path) -> Result<Connection, String> {
    if !path.is_file() {
        return Err(format!(
            "database {} does not exist: give the path of an existing SQLite file",
            path.display()
        ));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open database {}: {e}", path.display()))?;
    conn.busy_timeout(busy_timeout())
        .map_err(|e| format!("cannot set a busy timeout on {}: {e}", path.display()))?;
    Ok(conn)
}

/// Checks that this process may still write `path` (its mode, owner, or a read-only mount may
/// have changed since it was opened). Never opens the file: closing a descriptor of a SQLite
/// file would drop the process's locks on it.
pub fn check_writable(path: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("database path {} holds a NUL byte", path.display()))?;
    // SAFETY: `c` is a valid NUL-terminated path; faccessat only reads it.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if rc == 0 {
        return Ok(());
    }
    Err(format!(
        "attempt to write a readonly database: {} is no longer writable by this daemon ({}): make it writable again (chmod u+w)",
        path.display(),
        std::io::Error::last_os_error()
    ))
}

/// Switches the database to WAL (so readers never block the job's writes and the other way
/// round), retrying while another connection holds it: the switch needs a moment alone.
pub fn ensure_wal(conn: &Connection) -> Result<(), String> {
    let deadline = std::time::Instant::now() + busy_timeout();
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(format!(
                    "the database stays in journal mode {mode:?}: uqlite jobs need WAL (an in-memory or read-only database cannot hold job results)"
                ))
            }
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(format!("cannot switch the database to WAL: {e}")),
        }
    }
}

/// Applies every migration not yet recorded in `uq_migrations`, oldest first. Returns the
/// schema version now in place.
pub fn migrate(conn: &mut Connection) -> Result<i64, String> {
    let fail = |e: rusqlite::Error| format!("cannot apply the uqlite schema: {e}");
    conn.execute_batch(BOOTSTRAP).map_err(fail)?;
    let applied: i64 = conn
        .query_row(APPLIED_VERSION, [], |r| r.get(0))
        .map_err(fail)?;
    let mut version = applied;
    for m in MIGRATIONS.iter().filter(|m| m.version > applied) {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        // Another connection may have applied it while this one waited for the lock.
        let now: i64 = tx
            .query_row(APPLIED_VERSION, [], |r| r.get(0))
            .map_err(fail)?;
        if now < m.version {
            tx.execute_batch(m.sql).map_err(|e| {
                format!(
                    "cannot apply uqlite migration {} ({}): {e}",
                    m.version, m.name
                )
            })?;
            tx.execute(RECORD, params![m.version, m.name])
                .map_err(fail)?;
        }
        tx.commit().map_err(fail)?;
        version = m.version;
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_apply_once_and_create_the_schema() {
        let dir = std::env::temp_dir().join(format!("uq-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.db");
        let _ = std::fs::remove_file(&path);
        Connection::open(&path).unwrap();
        let mut conn = open(&path).unwrap();
        ensure_wal(&conn).unwrap();
        assert_eq!(
            migrate(&mut conn).unwrap(),
            uq_core::schema::latest_version()
        );
        assert_eq!(
            migrate(&mut conn).unwrap(),
            uq_core::schema::latest_version()
        );
        let n: i64 = conn
            .query_row("SELECT count(*) FROM uq_migrations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, MIGRATIONS.len() as i64);
        for view in ["uq_jobs", "uq_scored_units", "uq_scored_answers"] {
            conn.query_row(&format!("SELECT count(*) FROM {view}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap();
        }
        assert!(open(&dir.join("missing.db"))
            .unwrap_err()
            .contains("does not exist"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
