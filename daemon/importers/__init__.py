"""Parsers that turn other agents' transcripts into toka events (one module per source format)."""
