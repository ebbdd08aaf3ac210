//! The protocol version check: on its first request, each connection pings the daemon and
//! compares the daemon's `protocol` (`uq_core::protocol::PROTOCOL_VERSION` of its build) with
//! this extension's, so that a daemon left running from another build is named, with the fix,
//! instead of failing on a request or reply of another shape. Once per connection: a reconnect
//! (after a restart of the daemon) checks again.

use std::path::Path;

use serde_json::Value;
use uq_core::protocol::PROTOCOL_VERSION;

/// How to replace the daemon by the one of the extension's build.
const FIX: &str = "stop it with `dist/uqd stop` (same UQ_SOCKET), and the next call starts the \
                   uqd beside uq0.so (or UQ_DAEMON=/path/to/uqd)";

/// Checks the result of a `ping` (`info`) of the daemon at `socket`: its protocol version must
/// be this extension's. An old daemon sends none.
pub fn check(socket: &Path, info: &Value) -> Result<(), String> {
    let version = info.get("version").and_then(Value::as_str).unwrap_or("?");
    match info.get("protocol").and_then(Value::as_u64) {
        Some(p) if p == u64::from(PROTOCOL_VERSION) => Ok(()),
        Some(p) => Err(format!(
            "uqd at {} speaks protocol version {p} (uqd {version}), but this extension speaks \
             version {PROTOCOL_VERSION}: they come from different builds; {FIX}",
            socket.display()
        )),
        None => Err(format!(
            "uqd at {} (uqd {version}) does not say which protocol version it speaks: it is \
             older than this extension (protocol version {PROTOCOL_VERSION}); {FIX}",
            socket.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_protocol_versions_must_match() {
        let s = Path::new("/run/uqd.sock");
        assert_eq!(
            check(s, &json!({"version": "1", "protocol": PROTOCOL_VERSION})),
            Ok(())
        );
        let e = check(s, &json!({"version": "9.9", "protocol": 999})).unwrap_err();
        assert!(
            e.contains("protocol version 999 (uqd 9.9)") && e.contains("uqd stop"),
            "{e}"
        );
        let e = check(s, &json!({"version": "0.1.0"})).unwrap_err();
        assert!(
            e.contains("does not say") && e.contains("/run/uqd.sock"),
            "{e}"
        );
    }
}
