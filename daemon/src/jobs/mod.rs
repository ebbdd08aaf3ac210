//! Background jobs over whole tables (`uq_score_table`, `uq_wait`, `uq_cancel`; `uqd score`).
//!
//! The job row lives in the user's database (`uq_job`); the extension creates it and asks the
//! daemon to run it (`job_start`). The daemon runs each job on its own thread (run.rs), writing
//! results into the same file in committed chunks (results.rs). A registry file beside the
//! completion cache (`jobs.json`) lists the databases with unfinished jobs, so a daemon started
//! after a kill or a reboot resumes them at once; `job_status` (what `uq_wait` polls) resumes an
//! unfinished job that no thread runs, too.

pub mod adapt;
pub mod cli;
pub mod create;
pub mod results;
pub mod rows;
pub mod run;
pub mod write;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use uq_core::protocol::JobInfo;

use crate::engine::Engine;
use crate::role_llms::LlmService;
use crate::store;

type Key = (PathBuf, i64);

/// The daemon's running jobs.
pub struct Jobs {
    engine: Arc<Engine>,
    llm: Arc<LlmService>,
    running: Mutex<HashMap<Key, Arc<AtomicBool>>>,
    /// Jobs whose run failed and whose failure could not be written into their database (it is
    /// read-only, full, or locked): reported by `status` as failed, not resumed by it.
    unrecorded: Mutex<HashMap<Key, String>>,
    registry: PathBuf,
    registry_lock: Mutex<()>,
}

/// A line on the daemon's log (stderr); a log that cannot be written (a full disk) is not an
/// error, unlike `eprintln!`, which panics.
pub fn log(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "uqd: {line}");
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A database path as the registry keeps it: absolute and canonical.
fn canonical(db: &str) -> Result<PathBuf, String> {
    if db.is_empty() {
        return Err("the database has no file (in-memory or temporary): jobs write their results into the database file, so open a file, e.g. sqlite3 results.db".into());
    }
    std::fs::canonicalize(db).map_err(|e| format!("cannot find database file {db}: {e}"))
}

impl Jobs {
    /// `registry`: the file listing databases with unfinished jobs.
    pub fn new(engine: Arc<Engine>, llm: Arc<LlmService>, registry: PathBuf) -> Arc<Jobs> {
        Arc::new(Jobs {
            engine,
            llm,
            running: Mutex::new(HashMap::new()),
            unrecorded: Mutex::new(HashMap::new()),
            registry,
            registry_lock: Mutex::new(()),
        })
    }

    /// Starts job `job_id` of `db` unless this daemon runs it already.
    pub fn start(self: &Arc<Self>, db: &str, job_id: i64) -> Result<JobInfo, String> {
        let path = canonical(db)?;
        self.register(&path, true);
        lock(&self.unrecorded).remove(&(path.clone(), job_id));
        self.spawn(path.clone(), job_id);
        Ok(self.info(&path, job_id)?.unwrap_or(JobInfo {
            job_id,
            status: uq_core::jobs::QUEUED.into(),
            done: 0,
            total: 0,
            errors: 0,
            message: Some("waiting for the job row to be committed".into()),
            running_here: true,
        }))
    }

    /// Job `job_id`'s row as this daemon reads it; an unfinished job that no thread runs is
    /// resumed. `None` when the daemon cannot see the row (yet).
    pub fn status(self: &Arc<Self>, db: &str, job_id: i64) -> Result<Option<JobInfo>, String> {
        let path = canonical(db)?;
        let info = self.info(&path, job_id)?;
        if let Some(i) = &info {
            let failure = lock(&self.unrecorded).get(&(path.clone(), job_id)).cloned();
            if let Some(message) = failure.filter(|_| !uq_core::jobs::is_final(&i.status)) {
                // Recorded as soon as the database takes writes again.
                let recorded = store::open(&path).and_then(|conn| {
                    write::finish(&conn, job_id, uq_core::jobs::FAILED, Some(&message))
                });
                if recorded.is_ok() {
                    lock(&self.unrecorded).remove(&(path.clone(), job_id));
                    return self.info(&path, job_id);
                }
                let mut i = i.clone();
                i.status = uq_core::jobs::FAILED.into();
                i.message = Some(message);
                return Ok(Some(i));
            }
            if !uq_core::jobs::is_final(&i.status) && !i.running_here {
                self.register(&path, true);
                self.spawn(path.clone(), job_id);
                return self.info(&path, job_id);
            }
        }
        Ok(info)
    }

    /// Cancels job `job_id`: the stored status becomes 'cancelled' and a running thread stops
    /// after its chunk in flight.
    pub fn cancel(self: &Arc<Self>, db: &str, job_id: i64) -> Result<Option<JobInfo>, String> {
        let path = canonical(db)?;
        if let Some(flag) = lock(&self.running).get(&(path.clone(), job_id)) {
            flag.store(true, Ordering::SeqCst);
        }
        let conn = store::open(&path)?;
        if write::job_info(&conn, job_id, false)?.is_some() {
            write::cancel(&conn, job_id)?;
        }
        self.info(&path, job_id)
    }

    fn info(&self, path: &Path, job_id: i64) -> Result<Option<JobInfo>, String> {
        let running_here = lock(&self.running).contains_key(&(path.to_path_buf(), job_id));
        let conn = store::open(path)?;
        let has_schema: bool = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'uq_job'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            > 0;
        if !has_schema {
            return Ok(None);
        }
        write::job_info(&conn, job_id, running_here)
    }

    fn spawn(self: &Arc<Self>, path: PathBuf, job_id: i64) {
        let key = (path.clone(), job_id);
        let cancel = {
            let mut running = lock(&self.running);
            if running.contains_key(&key) {
                return;
            }
            let flag = Arc::new(AtomicBool::new(false));
            running.insert(key.clone(), Arc::clone(&flag));
            flag
        };
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name(format!("uqd-job-{job_id}"))
            .spawn(move || {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run::run_job(&me.engine, &me.llm, &path, job_id, &cancel, &mut |_| {})
                }))
                .unwrap_or_else(|_| Err("internal error (panic) while running the job; please report it".into()));
                match &result {
                    Ok(status) => log(&format!("job {job_id} of {}: {status}", path.display())),
                    Err(e) => {
                        let message = format!(
                            "{e}. Fix the cause, then resume the job: uqd score {} --resume {job_id} (add --retry-errors to retry the rows in uq_job_error)",
                            path.display()
                        );
                        log(&format!("job {job_id} of {} failed: {message}", path.display()));
                        let recorded = store::open(&path).and_then(|conn| {
                            write::finish(&conn, job_id, uq_core::jobs::FAILED, Some(&message))
                        });
                        if let Err(e2) = recorded {
                            log(&format!("job {job_id}: cannot record the failure in {}: {e2}", path.display()));
                            lock(&me.unrecorded).insert((path.clone(), job_id), message);
                        }
                    }
                }
                lock(&me.running).remove(&(path.clone(), job_id));
                me.forget_if_finished(&path);
            });
        if let Err(e) = spawned {
            eprintln!("uqd: cannot start a thread for job {job_id}: {e}");
            lock(&self.running).remove(&key);
        }
    }

    /// Resumes every unfinished job of every registered database (at daemon start).
    pub fn resume_registered(self: &Arc<Self>) {
        for path in self.registered() {
            let ids = store::open(&path).and_then(|c| write::unfinished_jobs(&c));
            match ids {
                Ok(ids) if ids.is_empty() => self.register(&path, false),
                Ok(ids) => {
                    for id in ids {
                        eprintln!("uqd: resuming job {id} of {}", path.display());
                        self.spawn(path.clone(), id);
                    }
                }
                Err(e) => {
                    eprintln!("uqd: not resuming jobs of {}: {e}", path.display());
                    if !path.exists() {
                        self.register(&path, false);
                    }
                }
            }
        }
    }

    fn forget_if_finished(&self, path: &Path) {
        let running = lock(&self.running).keys().any(|(p, _)| p == path);
        if running {
            return;
        }
        if let Ok(ids) = store::open(path).and_then(|c| write::unfinished_jobs(&c)) {
            if ids.is_empty() {
                self.register(path, false);
            }
        }
    }

    fn registered(&self) -> BTreeSet<PathBuf> {
        let _g = lock(&self.registry_lock);
        std::fs::read_to_string(&self.registry)
            .ok()
            .and_then(|s| serde_json::from_str::<BTreeSet<PathBuf>>(&s).ok())
            .unwrap_or_default()
    }

    /// Adds (`on`) or removes a database in the registry (written atomically).
    fn register(&self, path: &Path, on: bool) {
        let _g = lock(&self.registry_lock);
        let mut set: BTreeSet<PathBuf> = std::fs::read_to_string(&self.registry)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let changed = if on {
            set.insert(path.to_path_buf())
        } else {
            set.remove(path)
        };
        if !changed {
            return;
        }
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.registry.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = self.registry.with_extension("json.tmp");
            std::fs::write(&tmp, serde_json::to_vec(&set).unwrap_or_default())?;
            std::fs::rename(&tmp, &self.registry)
        };
        if let Err(e) = write() {
            eprintln!(
                "uqd: cannot write the job registry {}: {e}",
                self.registry.display()
            );
        }
    }
}
