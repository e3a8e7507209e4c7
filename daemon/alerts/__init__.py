"""Alerts: an ``alert`` event when an agent crosses WARNING or CRITICAL or the active 5-hour block
crosses a configured limit, and the user's command run with each, rate-limited, off the daemon's
path."""
