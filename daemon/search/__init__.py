"""Full-text search over the log (the index lives in the store)."""
