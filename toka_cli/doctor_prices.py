"""`toka doctor`'s check of prices: the models the log has usage of that no price covers.

Their calls and tokens are counted and shown as unpriced, never as free (docs/cost.md); the fix
is a price in config.toml, or a toka whose table has the model.
"""

from __future__ import annotations

from daemon.client.doctor import unpriced_usage
from daemon.client.sync import probe
from daemon.paths import Paths
from store.errors import TokaError
from toka_cli.doctor_check import Check

# How many unpriced models the detail names before it says how many more.
NAMED = 5


def prices_check(paths: Paths) -> Check:
    """A warning naming the models seen but unpriced; ok when every call was priced."""
    if not paths.socket.exists() or probe(paths).state != "running":
        return Check("prices", "ok", "not checked: the daemon is not running")
    try:
        totals = unpriced_usage(paths)
    except TokaError as exc:
        return Check("prices", "ok", f"not checked: {exc.message}")
    models = [model if model is not None else "(no model named)" for model in totals.get("unpriced_models") or []]
    if not models:
        return Check("prices", "ok", f"every call of {totals.get('calls', 0):,} was priced")
    named = ", ".join(models[:NAMED]) + (f" and {len(models) - NAMED} more" if len(models) > NAMED else "")
    calls = int(totals.get("unpriced_calls") or 0)
    first = next((m for m in models if m != "(no model named)"), "my-model")
    return Check(
        "prices",
        "warning",
        f"{calls:,} call{'' if calls == 1 else 's'} of models toka has no price for: {named}",
        f'toka config set models.prices \'{{"{first}": {{"input": 1.0, "output": 4.0}}}}\''
        " (USD per million tokens; see docs/cost.md)",
    )
