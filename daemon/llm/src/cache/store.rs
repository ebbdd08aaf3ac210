//! The cache file: a SQLite database in WAL mode, opened (and rebuilt when corrupt), read and
//! written one sample at a time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::LlmError;
use crate::logprobs::TokenLogprob;

/// The schema version of the cache file (its `user_version`), also the `v` of every key.
pub(super) const SCHEMA_VERSION: i64 = 1;
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// One cached sample.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedSample {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub logprobs: Option<Vec<TokenLogprob>>,
    pub model: String,
    /// UTC, ISO-8601 (`2025-01-31T12:00:00.000Z`); set by the cache on insert.
    pub created_at: String,
}

/// The cache file.
pub struct CompletionCache {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for CompletionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionCache")
            .field("path", &self.path)
            .finish()
    }
}

impl CompletionCache {
    /// Opens (creating if needed) the cache file at `path`, in WAL mode. A file that is not a
    /// SQLite database or is corrupt (a crash, a disk error, another program) is only a cache:
    /// it is moved aside to `<path>.corrupt-<unix time>`, a warning is logged on stderr, and an
    /// empty cache is built in its place.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref();
        match Self::open_file(path) {
            Err((_, Some(e))) => {
                let aside = PathBuf::from(format!(
                    "{}.corrupt-{}",
                    path.display(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                ));
                std::fs::rename(path, &aside).map_err(|e2| {
                    LlmError::Cache(format!(
                        "completion cache {} is corrupt ({e}) and cannot be moved aside ({e2}): delete it",
                        path.display()
                    ))
                })?;
                for suffix in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "uqd: warning: completion cache {} was corrupt ({e}); moved it to {} and started an empty cache",
                    path.display(),
                    aside.display()
                );
                Self::open_file(path).map_err(|(e, _)| e)
            }
            other => other.map_err(|(e, _)| e),
        }
    }

    /// Opens the file; an error comes with the SQLite error when the file is corrupt.
    fn open_file(path: &Path) -> Result<Self, (LlmError, Option<rusqlite::Error>)> {
        let path = path.to_path_buf();
        let fail = |what: &str, e: rusqlite::Error| {
            let corrupt = matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
            );
            let err = LlmError::Cache(format!(
                "completion cache {}: {what}: {e}. Fix: make the file's directory writable, or point the cache \
                 at another path",
                path.display()
            ));
            (err, corrupt.then_some(e))
        };
        let plain = |e: LlmError| (e, None);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                plain(LlmError::Cache(format!(
                    "cannot create the cache directory {}: {e}",
                    dir.display()
                )))
            })?;
        }
        let conn = Connection::open(&path).map_err(|e| fail("cannot open", e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| fail("cannot set busy_timeout", e))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| fail("cannot switch to WAL (is it a SQLite file?)", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(plain(LlmError::Cache(format!(
                "completion cache {}: journal_mode is {mode}, not wal (is the file on a filesystem without shared memory?)",
                path.display()
            ))));
        }
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| fail("cannot read", e))?;
        if version > SCHEMA_VERSION {
            return Err(plain(LlmError::Cache(format!(
                "completion cache {} has schema version {version}, newer than this build's {SCHEMA_VERSION}: use a newer \
                 uqlite or another cache file",
                path.display()
            ))));
        }
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS requests (
                 request_hash TEXT PRIMARY KEY,
                 request_json TEXT NOT NULL,
                 created_at TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS completions (
                 request_hash TEXT NOT NULL,
                 sample_index INTEGER NOT NULL,
                 text TEXT NOT NULL,
                 prompt_tokens INTEGER NOT NULL,
                 completion_tokens INTEGER NOT NULL,
                 logprobs TEXT,
                 model TEXT NOT NULL,
                 created_at TEXT NOT NULL,
                 PRIMARY KEY (request_hash, sample_index));
             PRAGMA user_version = 1;",
        )
        .map_err(|e| fail("cannot create the tables", e))?;
        Ok(CompletionCache {
            path,
            conn: Mutex::new(conn),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn err(&self, what: &str, e: impl std::fmt::Display) -> LlmError {
        LlmError::Cache(format!(
            "completion cache {}: {what}: {e}",
            self.path.display()
        ))
    }

    /// Sample `index` of the request with hash `hash`, if cached.
    pub fn get(&self, hash: &str, index: usize) -> Result<Option<CachedSample>, LlmError> {
        let conn = self.lock();
        let row = conn
            .query_row(
                "SELECT text, prompt_tokens, completion_tokens, logprobs, model, created_at
                 FROM completions WHERE request_hash = ?1 AND sample_index = ?2",
                params![hash, index as i64],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err("cannot read", e))?;
        let Some((text, pt, ct, lp, model, created_at)) = row else {
            return Ok(None);
        };
        let logprobs = match lp {
            None => None,
            Some(s) => {
                Some(serde_json::from_str(&s).map_err(|e| self.err("corrupt logprobs entry", e))?)
            }
        };
        Ok(Some(CachedSample {
            text,
            prompt_tokens: pt.max(0) as u64,
            completion_tokens: ct.max(0) as u64,
            logprobs,
            model,
            created_at,
        }))
    }

    /// Stores sample `index` (the first writer of a key wins; later writes are ignored).
    pub fn put(
        &self,
        hash: &str,
        request_json: &str,
        index: usize,
        sample: &CachedSample,
    ) -> Result<(), LlmError> {
        let logprobs = match &sample.logprobs {
            None => None,
            Some(lp) => {
                Some(serde_json::to_string(lp).map_err(|e| self.err("cannot encode logprobs", e))?)
            }
        };
        let mut conn = self.lock();
        let tx = conn
            .transaction()
            .map_err(|e| self.err("cannot write", e))?;
        tx.execute(
            "INSERT OR IGNORE INTO requests (request_hash, request_json, created_at)
             VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            params![hash, request_json],
        )
        .map_err(|e| self.err("cannot write", e))?;
        tx.execute(
            "INSERT OR IGNORE INTO completions
             (request_hash, sample_index, text, prompt_tokens, completion_tokens, logprobs, model, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            params![
                hash,
                index as i64,
                sample.text,
                sample.prompt_tokens.min(i64::MAX as u64) as i64,
                sample.completion_tokens.min(i64::MAX as u64) as i64,
                logprobs,
                sample.model
            ],
        )
        .map_err(|e| self.err("cannot write", e))?;
        tx.commit().map_err(|e| self.err("cannot commit", e))
    }

    /// Number of cached samples.
    pub fn len(&self) -> Result<u64, LlmError> {
        let conn = self.lock();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM completions", [], |r| r.get(0))
            .map_err(|e| self.err("cannot count", e))?;
        Ok(n.max(0) as u64)
    }

    pub fn is_empty(&self) -> Result<bool, LlmError> {
        Ok(self.len()? == 0)
    }
}
