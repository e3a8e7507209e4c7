"""What the daemon does when a spawned agent goes CRITICAL (``lifecycle.on_critical``, or the
agent's own ``--policy``): ``notify`` appends the lifecycle event only; ``handoff`` hands its
work to a successor. A module of its own: its section (daemon/lifecycle/settings.py) names the choices."""

ON_CRITICAL = ("notify", "handoff")
