"""The one Typer factory, and the one place where errors become messages and exit codes.

Exit codes (DESIGN.md): 0 success, 1 failure, 2 usage or config error, 3 not found, 4 daemon
unavailable, 5 integrity failure, 6 conflict. ``TOKA_DEBUG=1`` re-raises, so the traceback shows.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from store.errors import TokaError


def report(error: TokaError) -> None:
    sys.stderr.write(error.lines())


class TokaGroup(TyperGroup):
    """Turns a TokaError raised anywhere below into ``error:``/``hint:`` and its exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TokaError as error:
            if os.environ.get("TOKA_DEBUG") == "1":
                raise
            report(error)
            raise typer.Exit(error.exit_code) from None
        except BrokenPipeError:
            # `toka events ... | head`: the reader left; that is not an error.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(0) from None


def make_app(help: str, name: str | None = None) -> typer.Typer:
    return typer.Typer(
        name=name,
        help=help,
        cls=TokaGroup,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
