//! A job's status values (`uq_job.status`).

/// Job status values (`uq_job.status`).
pub const QUEUED: &str = "queued";
pub const RUNNING: &str = "running";
pub const DONE: &str = "done";
pub const FAILED: &str = "failed";
pub const CANCELLED: &str = "cancelled";

/// True for a status that no longer changes.
pub fn is_final(status: &str) -> bool {
    matches!(status, DONE | FAILED | CANCELLED)
}
