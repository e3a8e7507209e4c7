"""What toka gives back to the agent: the context a hook answers with (docs/injection.md)."""
