//! Process figures from /proc: memory (RSS, peak RSS), open file descriptors, threads.

/// Peak resident set size of this process (VmHWM), in MB.
pub fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

/// A memory figure of /proc/self/status (`field` e.g. "VmRSS:"), in MB.
pub fn status_mb(field: &str) -> f64 {
    status_field(
        &std::fs::read_to_string("/proc/self/status").unwrap_or_default(),
        field,
    ) / 1024.0
}

/// (RSS in MB, open fds, threads) of process `pid`.
pub fn proc_stats(pid: u32) -> (f64, usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (
        status_field(&status, "VmRSS:") / 1024.0,
        fds,
        status_field(&status, "Threads:") as usize,
    )
}

/// The number after `field` in a /proc status text (kB for memory); NaN when absent.
fn status_field(status: &str, field: &str) -> f64 {
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}
