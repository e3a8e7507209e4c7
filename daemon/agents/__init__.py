"""Agents and their lifecycle: the projection of spawns and state changes, usage figures and
context windows, and the lifecycle that moves agents as their context fills."""
