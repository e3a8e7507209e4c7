"""Declared state machines and the state of every entity in each."""
