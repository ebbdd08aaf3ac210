//! Tables of docs/reference.md generated from code (the scorer catalogue, the daemon's
//! settings): one check, used by each table's test.

use std::path::{Path, PathBuf};

/// docs/reference.md, from a crate directory one level below the repository's root.
pub fn reference_md(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir).join("../docs/reference.md")
}

/// Checks that the lines of `path` between the line `begin` and the line `end` are `want`.
/// With `UQ_BLESS=1` it writes `want` there instead. Panics otherwise, with `stale` (what is
/// out of date and the command that regenerates it) and the generated text: for tests.
pub fn check_section(path: &Path, begin: &str, end: &str, want: &str, stale: &str) {
    let doc = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let from = doc
        .find(&format!("{begin}\n"))
        .unwrap_or_else(|| panic!("{} lacks the line {begin}", path.display()))
        + begin.len()
        + 1;
    let to = from
        + doc[from..]
            .find(&format!("{end}\n"))
            .unwrap_or_else(|| panic!("{} lacks the line {end}", path.display()));
    if doc[from..to] == *want {
        return;
    }
    if std::env::var("UQ_BLESS").is_ok_and(|v| v == "1") {
        let updated = format!("{}{want}{}", &doc[..from], &doc[to..]);
        std::fs::write(path, updated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    panic!("{stale}. Generated:\n{want}");
}
