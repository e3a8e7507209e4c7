"""Retention: collecting payloads past their keep-by date, checkpoints."""
