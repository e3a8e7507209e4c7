"""The dependency graph of agents or workstreams."""
