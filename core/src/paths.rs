//! Per-user location of the daemon socket, shared by the extension and `uqd`.

use std::path::PathBuf;

/// `$UQ_SOCKET` if set; else `$XDG_RUNTIME_DIR/uqlite/uqd.sock`; else `/tmp/uqlite-<uid>/uqd.sock`.
pub fn default_socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os("UQ_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        return PathBuf::from(dir).join("uqlite").join("uqd.sock");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    PathBuf::from(format!("/tmp/uqlite-{uid}")).join("uqd.sock")
}
