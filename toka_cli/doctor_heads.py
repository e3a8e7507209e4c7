"""`toka doctor`'s look at the signed tree heads (docs/tamper-evidence.md): whether the daemon
signs the log, and what of the heads file it did not trust."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from daemon.client.doctor import CLOCK_TIMEOUT_S
from daemon.client.sync import Client
from daemon.paths import Paths
from store.errors import TokaError
from toka_cli.doctor_check import Check

if TYPE_CHECKING:
    from daemon.client.results import Status


def heads_check(paths: Paths) -> Check:
    if not paths.socket.exists():
        return Check("heads", "ok", "the daemon is not running; it checks its heads when it starts")
    try:
        with Client(paths, autostart=False, timeout=CLOCK_TIMEOUT_S) as client:
            heads = cast("Status", client.call("status")).get("heads")
    except TokaError as exc:
        return Check("heads", "ok", f"not asked: {exc.message}")
    if heads is None:
        return Check("heads", "ok", "no heads are signed (store.signed_heads is off, or the log is in memory)")
    if heads.get("refused"):
        return Check(
            "heads",
            "problem",
            f"the daemon refuses to sign the log: {heads['refused']}",
            "toka verify; once you know why, toka heads --reset --yes",
        )
    if heads.get("untrusted"):
        return Check(
            "heads",
            "problem",
            f"{heads['untrusted']} lines at the end of {heads['file']} are not heads signed by this key",
            "toka verify names them; move the heads file aside only once you know who wrote them",
        )
    signed = "none yet" if heads["size"] is None else f"the latest covers {heads['size']} events"
    return Check("heads", "ok", f"signing: {signed}")
