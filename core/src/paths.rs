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

/// Refuses a socket path another user could control (docs/reference.md, "The daemon"): its
/// directory, when it exists, must belong to this user (or root), not be writable by others
/// unless sticky (as /tmp), and not be another user's symbolic link; an existing socket file must
/// belong to this user and not be a symbolic link. Checked before connecting, before starting a
/// daemon, and before binding, so that nothing planted there by another user is used.
pub fn check_socket_path(socket: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let fix = "remove it (another user may have planted it to intercept your daemon) or choose another socket with UQ_SOCKET";
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::symlink_metadata(dir) {
            Ok(link) => {
                if link.file_type().is_symlink() && link.uid() != me && link.uid() != 0 {
                    return Err(format!(
                        "the socket directory {} is a symbolic link owned by uid {} (you are uid {me}): uqlite does not follow another user's links; {fix}",
                        dir.display(),
                        link.uid()
                    ));
                }
                let m = std::fs::metadata(dir).map_err(|e| {
                    format!("cannot inspect the socket directory {}: {e}", dir.display())
                })?;
                if !m.is_dir() {
                    return Err(format!(
                        "the socket directory {} is not a directory: {fix}",
                        dir.display()
                    ));
                }
                if m.uid() != me && m.uid() != 0 {
                    return Err(format!(
                        "the socket directory {} belongs to uid {}, not to you (uid {me}): {fix}",
                        dir.display(),
                        m.uid()
                    ));
                }
                if m.mode() & 0o022 != 0 && m.mode() & 0o1000 == 0 {
                    return Err(format!(
                        "the socket directory {} is writable by other users (mode {:o}) and not sticky, so another user could replace the socket: chmod 700 it, or choose another socket with UQ_SOCKET",
                        dir.display(),
                        m.mode() & 0o7777
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(format!(
                    "cannot inspect the socket directory {}: {e}",
                    dir.display()
                ))
            }
        }
    }
    if let Ok(m) = std::fs::symlink_metadata(socket) {
        if m.file_type().is_symlink() {
            return Err(format!(
                "the socket {} is a symbolic link (owned by uid {}): uqlite only uses a socket file of its own; {fix}",
                socket.display(),
                m.uid()
            ));
        }
        if m.uid() != me {
            return Err(format!(
                "the socket {} belongs to uid {}, not to you (uid {me}): {fix}",
                socket.display(),
                m.uid()
            ));
        }
    }
    Ok(())
}
