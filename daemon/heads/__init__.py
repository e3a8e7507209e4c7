"""Signed tree heads: the log's Merkle root, signed and kept outside the database (docs/tamper-evidence.md)."""
