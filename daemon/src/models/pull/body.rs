//! The body of the hub's answer (see `download.rs`): written to the partial file, appended to
//! when resuming, and its SHA-256 checked against the hub's. A cut connection or a mismatch to
//! fetch again is `Ok(Err(why))`; what no retry mends is `Err`.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

/// Writes the body of `resp` into `part` from byte `offset` on (appending when resuming);
/// returns the file's size. `Ok(Err(why))`: the connection was cut first.
pub(super) async fn receive(
    resp: &mut reqwest::Response,
    path: &str,
    part: &Path,
    offset: u64,
) -> Result<Result<u64, String>, String> {
    let total = resp.content_length().map(|n| n + offset);
    let mut file = if offset > 0 {
        eprintln!("uqd models pull: {path}: resuming at byte {offset}");
        OpenOptions::new().append(true).open(part)
    } else {
        File::create(part)
    }
    .map_err(|e| format!("cannot write {}: {e}", part.display()))?;
    let mut got = offset;
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => {
                file.write_all(&bytes)
                    .map_err(|e| format!("cannot write {}: {e}", part.display()))?;
                got += bytes.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                let _ = file.flush();
                return Ok(Err(format!(
                    "connection cut after {got} of {} bytes ({})",
                    total.map_or("?".into(), |t| t.to_string()),
                    error_chain(&e)
                )));
            }
        }
    }
    file.sync_all()
        .map_err(|e| format!("cannot write {}: {e}", part.display()))?;
    drop(file);
    if let Some(t) = total {
        if got != t {
            return Ok(Err(format!("connection cut after {got} of {t} bytes")));
        }
    }
    Ok(Ok(got))
}

/// The SHA-256 of `part`, checked against the hub's when it gave one. A mismatch deletes the
/// file: a resumed one is fetched again whole (`Ok(Err(why))`), a whole one is an error.
pub(super) fn check_sha(
    url: &str,
    path: &str,
    part: &Path,
    offset: u64,
    expected: Option<String>,
) -> Result<Result<String, String>, String> {
    let sha = sha256_file(part)?;
    if let Some(want) = expected {
        if want != sha {
            let _ = fs::remove_file(part);
            if offset > 0 {
                // The kept bytes may be from another version of the file: once more, whole.
                return Ok(Err(
                    "the resumed file's SHA-256 is not the hub's; downloading it whole".into(),
                ));
            }
            return Err(format!(
                "{url}: the downloaded {path} has SHA-256 {sha}, not the hub's {want} (X-Linked-Etag): \
                 it was deleted and nothing was installed; run the command again, and if it fails the \
                 same way, the hub or a proxy between serves a different file"
            ));
        }
    }
    Ok(Ok(sha))
}

/// The SHA-256 of the file at `path`, in lowercase hex.
pub(super) fn sha256_file(path: &Path) -> Result<String, String> {
    let mut f = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// An error and its sources, `: `-separated.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}
