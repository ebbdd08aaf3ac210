-- uqlite schema, migration 8: a UAD result's warnings (the reconstruction lost or changed a kept
-- claim; the claims came from the bundled SmolLM2), as uad_claims' column `warnings` gives them.

ALTER TABLE uq_uad ADD COLUMN warnings TEXT;   -- JSON array of texts; NULL: none
