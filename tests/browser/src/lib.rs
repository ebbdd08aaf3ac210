//! Headless Chromium for the tests that look at pages as a reader does: the report's render
//! check (`daemon/tests/engine/report.rs`) and the highlighting and Datasette tests
//! (`tests/src/browser.rs`). One way to find the browser ([`find`]: `chromium-headless-shell`,
//! `chromium`, `chromium-browser` or `google-chrome`, the first on PATH, named on stderr once)
//! and one way to run it ([`Browser::run`]: headless, no sandbox, at most 120 s).
//!
//! `UQ_REQUIRE_BROWSER=1` (CI, `.ci/run`) makes a test that would skip without a browser fail
//! instead ([`find_or_skip`], [`required`]).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

/// The browsers looked for on PATH, in this order.
pub const BROWSERS: [&str; 4] = [
    "chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
];

/// How long one run may take.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// A headless browser found on PATH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Browser {
    /// Its name in [`BROWSERS`].
    pub name: &'static str,
    pub path: PathBuf,
}

/// The first of [`BROWSERS`] on PATH; the first call says on stderr which one the tests use.
pub fn find() -> Option<Browser> {
    let found = find_in(std::env::var_os("PATH")?.to_str()?);
    static SAID: Once = Once::new();
    SAID.call_once(|| match &found {
        Some(b) => eprintln!("browser: {} ({})", b.name, b.path.display()),
        None => eprintln!("browser: none of {} on PATH", BROWSERS.join(", ")),
    });
    found
}

/// The first of [`BROWSERS`] in the directories of `path` (a PATH value).
pub fn find_in(path: &str) -> Option<Browser> {
    BROWSERS.iter().find_map(|&name| {
        path.split(':')
            .filter(|d| !d.is_empty())
            .map(|d| Path::new(d).join(name))
            .find(|p| p.is_file())
            .map(|path| Browser { name, path })
    })
}

/// The message for a missing browser: `make setup` installs `chromium-headless-shell`.
fn missing() -> String {
    format!(
        "no {} on PATH: `make setup` installs chromium-headless-shell (apt-get install chromium-headless-shell)",
        BROWSERS.join(", ")
    )
}

/// The browser; panics (with how to install one) when none is on PATH.
pub fn require() -> Browser {
    find().unwrap_or_else(|| panic!("{}", missing()))
}

/// `UQ_REQUIRE_BROWSER=1` (set by `.ci/run`): a check that needs the browser fails instead of
/// skipping.
pub fn required() -> bool {
    std::env::var("UQ_REQUIRE_BROWSER").as_deref() == Ok("1")
}

/// The browser for an optional check named `what`: `None` (after saying on stderr that `what` is
/// skipped) when none is on PATH, a panic instead under `UQ_REQUIRE_BROWSER=1`.
pub fn find_or_skip(what: &str) -> Option<Browser> {
    let found = find();
    if found.is_none() {
        let msg = missing();
        assert!(!required(), "UQ_REQUIRE_BROWSER=1 and {msg}");
        eprintln!("SKIP {what}: {msg}");
    }
    found
}

impl Browser {
    /// Runs the browser headless with `args` on `url`, its profile in `profile`, for at most
    /// [`TIMEOUT`]; returns its stdout (e.g. the page's DOM with `--dump-dom`; a screenshot with
    /// `--screenshot=FILE`).
    pub fn run(&self, profile: &Path, args: &[String], url: &str) -> String {
        let mut child = Command::new(&self.path)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args)
            .arg(url)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.path.display()));
        let mut stdout = child.stdout.take().expect("piped stdout");
        let reader = std::thread::spawn(move || {
            let mut out = String::new();
            let _ = stdout.read_to_string(&mut out);
            out
        });
        let t = Instant::now();
        while child.try_wait().expect("wait for the browser").is_none() {
            if t.elapsed() > TIMEOUT {
                let _ = child.kill();
                panic!(
                    "{} did not finish in {} s",
                    self.path.display(),
                    TIMEOUT.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        reader.join().expect("the reader of the browser's stdout")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_browser_on_path_in_order() {
        let dir = std::env::temp_dir().join(format!("uq-browser-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let path = format!("{}:{}", a.display(), b.display());
        assert_eq!(find_in(&path), None);
        std::fs::write(b.join("google-chrome"), "").unwrap();
        assert_eq!(find_in(&path).unwrap().name, "google-chrome");
        std::fs::write(b.join("chromium"), "").unwrap();
        assert_eq!(find_in(&path).unwrap().name, "chromium");
        // The order of BROWSERS decides, not the order of PATH.
        std::fs::write(b.join("chromium-headless-shell"), "").unwrap();
        let found = find_in(&path).unwrap();
        assert_eq!(found.name, "chromium-headless-shell");
        assert_eq!(found.path, b.join("chromium-headless-shell"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
