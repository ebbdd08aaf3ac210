//! What a SQL object is ([`SqlObject`]: its signature, summary, where it runs and how it is
//! registered), and the `const` constructors of [`super::OBJECTS`]'s rows, which check at compile
//! time that each signature agrees with the registered arities.

use std::os::raw::c_int;
use std::sync::Arc;

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

use crate::client::Client;
use crate::glue::ScalarFn;
use crate::tvf::{self, TableFn};
use Runs::{Daemon, Local};

/// One SQL object: how it is called, what it does and how it is registered. docs/reference.md's
/// function index is generated from these (`reference.rs` checks it).
// Registration reads `name` and `kind`; the rest is for the reference's check, a test.
#[cfg_attr(not(test), allow(dead_code))]
pub struct SqlObject {
    pub name: &'static str,
    /// How it is called, optional arguments in brackets, e.g.
    /// `uq_highlight(response, units_json[, options_json])`. Its arguments are the registered
    /// arities (checked when `OBJECTS` is compiled) and each is named in its reference section.
    pub signature: &'static str,
    /// What it gives, in one line (the function index's summary).
    pub summary: &'static str,
    pub runs: Runs,
    pub kind: Kind,
}

/// Where an object's work is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// In the extension, from the arguments and the database.
    Local,
    /// By `uqd`: the object sends it a request (starting it on first use).
    Daemon,
}

pub enum Kind {
    /// A scalar function, registered once per number of arguments.
    Scalar {
        arities: &'static [c_int],
        flags: FunctionFlags,
        f: ScalarFn,
    },
    /// An aggregate function: `create(db, name, n, flags)` registers it with `n` arguments.
    Aggregate {
        arities: &'static [c_int],
        flags: FunctionFlags,
        create: fn(&Connection, &'static str, c_int, FunctionFlags) -> rusqlite::Result<()>,
    },
    /// A virtual-table module (a table-valued function is an eponymous one).
    Module(fn(&Connection, &Arc<Client>) -> rusqlite::Result<()>),
}

/// Computed locally from the arguments alone: deterministic, and innocuous (usable in triggers
/// and views).
pub(super) const PURE: FunctionFlags = FunctionFlags::SQLITE_UTF8
    .union(FunctionFlags::SQLITE_DETERMINISTIC)
    .union(FunctionFlags::SQLITE_INNOCUOUS);
/// Daemon-backed, or with side effects: the results depend on the loaded model or the
/// database, so not deterministic.
pub(super) const PLAIN: FunctionFlags = FunctionFlags::SQLITE_UTF8;

/// The name of a signature: what comes before `(`.
const fn name_of(signature: &'static str) -> &'static str {
    let b = signature.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] != b'(' {
        i += 1;
    }
    match std::str::from_utf8(b.split_at(i).0) {
        Ok(name) => name,
        Err(_) => panic!("a signature's name is not UTF-8"),
    }
}

/// (required, all) arguments of a signature: `f(a, b[, c])` → (2, 3), `f()` → (0, 0).
pub(super) const fn arg_counts(signature: &str) -> (usize, usize) {
    let b = signature.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] != b'(' {
        i += 1;
    }
    let (mut commas, mut named, mut required) = (0, false, usize::MAX);
    while i < b.len() {
        match b[i] {
            b',' => commas += 1,
            b'[' if required == usize::MAX => required = commas + named as usize,
            c if c.is_ascii_alphanumeric() || c == b'_' => named = true,
            _ => {}
        }
        i += 1;
    }
    let all = if named { commas + 1 } else { 0 };
    (
        if required == usize::MAX {
            all
        } else {
            required
        },
        all,
    )
}

/// Whether `arities` are exactly the signature's: its required count up to all its arguments.
const fn arities_match(signature: &str, arities: &[c_int]) -> bool {
    let (required, all) = arg_counts(signature);
    if arities.len() != all - required + 1 {
        return false;
    }
    let mut i = 0;
    while i < arities.len() {
        if arities[i] < 0 || arities[i] as usize != required + i {
            return false;
        }
        i += 1;
    }
    true
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub(super) const fn scalar(
    signature: &'static str,
    summary: &'static str,
    runs: Runs,
    arities: &'static [c_int],
    flags: FunctionFlags,
    f: ScalarFn,
) -> SqlObject {
    assert!(
        arities_match(signature, arities),
        "a scalar's signature does not match its arities"
    );
    SqlObject {
        name: name_of(signature),
        signature,
        summary,
        runs,
        kind: Kind::Scalar { arities, flags, f },
    }
}

/// An aggregate: all of them are computed locally ([`PURE`]).
pub(super) const fn aggregate(
    signature: &'static str,
    summary: &'static str,
    arities: &'static [c_int],
    create: fn(&Connection, &'static str, c_int, FunctionFlags) -> rusqlite::Result<()>,
) -> SqlObject {
    assert!(
        arities_match(signature, arities),
        "an aggregate's signature does not match its arities"
    );
    SqlObject {
        name: name_of(signature),
        signature,
        summary,
        runs: Local,
        kind: Kind::Aggregate {
            arities,
            flags: PURE,
            create,
        },
    }
}

/// The table-valued function `F`: its signature names it and has its arguments.
pub(super) const fn table_fn<F: TableFn>(
    signature: &'static str,
    summary: &'static str,
) -> SqlObject {
    assert!(
        same(name_of(signature), F::NAME),
        "a table function's signature does not start with its name"
    );
    let (required, all) = arg_counts(signature);
    assert!(
        required == F::N_REQUIRED && all == F::N_ARGS,
        "a table function's signature does not match its N_REQUIRED and N_ARGS"
    );
    SqlObject {
        name: F::NAME,
        signature,
        summary,
        runs: if F::LOCAL { Local } else { Daemon },
        kind: Kind::Module(tvf::register::<F>),
    }
}
