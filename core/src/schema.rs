//! The uqlite schema (sql/migrations/*.sql), applied on demand by the extension and by `uqd`,
//! each migration once, in order, recorded in `uq_migrations`. The appliers live with their
//! SQLite bindings (ext/src/uq_init.rs, daemon/src/store.rs); this module only lists them.

/// One migration: its version (1, 2, …), name and SQL.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "init",
        sql: include_str!("../../sql/migrations/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "origin_verify",
        sql: include_str!("../../sql/migrations/0002_origin_verify.sql"),
    },
    Migration {
        version: 3,
        name: "calibration",
        sql: include_str!("../../sql/migrations/0003_calibration.sql"),
    },
    Migration {
        version: 4,
        name: "grounded",
        sql: include_str!("../../sql/migrations/0004_grounded.sql"),
    },
    Migration {
        version: 5,
        name: "spans",
        sql: include_str!("../../sql/migrations/0005_spans.sql"),
    },
    Migration {
        version: 6,
        name: "answer_text",
        sql: include_str!("../../sql/migrations/0006_answer_text.sql"),
    },
    Migration {
        version: 7,
        name: "eval",
        sql: include_str!("../../sql/migrations/0007_eval.sql"),
    },
    Migration {
        version: 8,
        name: "uad_warnings",
        sql: include_str!("../../sql/migrations/0008_uad_warnings.sql"),
    },
    Migration {
        version: 9,
        name: "logprobs",
        sql: include_str!("../../sql/migrations/0009_logprobs.sql"),
    },
];

/// The schema version after every migration.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Creates `uq_migrations` when missing (run before reading the applied version).
pub const BOOTSTRAP: &str = "CREATE TABLE IF NOT EXISTS uq_migrations(
  version INTEGER PRIMARY KEY, name TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))";

/// Reads the applied version (`SELECT coalesce(max(version), 0) FROM uq_migrations`).
pub const APPLIED_VERSION: &str = "SELECT coalesce(max(version), 0) FROM uq_migrations";

/// Records a migration as applied (parameters: version, name).
pub const RECORD: &str = "INSERT INTO uq_migrations(version, name) VALUES (?1, ?2)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.name);
            assert!(!m.sql.trim().is_empty());
        }
        assert_eq!(latest_version(), MIGRATIONS.len() as i64);
    }
}
