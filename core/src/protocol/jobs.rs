//! The reply of the job requests (`job_start`, `job_status`, `job_cancel`).

use serde::{Deserialize, Serialize};

/// Result of the job requests: the job row as the daemon reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobInfo {
    pub job_id: i64,
    pub status: String,
    pub done: i64,
    pub total: i64,
    pub errors: i64,
    pub message: Option<String>,
    /// Whether this daemon is running the job now.
    pub running_here: bool,
}
