"""Semantic recall: embeddings of the events worth recalling, made by a local model after they
commit, and the query's embedding for search (docs/recall.md)."""
