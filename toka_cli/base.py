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

try:  # Typer carries its own copy of Click from 0.2x on; before, it used Click's
    from typer._click.exceptions import NoArgsIsHelpError
    from typer._click.exceptions import UsageError as BadCommandLine
except ImportError:  # pragma: no cover - older Typer
    from click.exceptions import NoArgsIsHelpError  # type: ignore[assignment]
    from click.exceptions import UsageError as BadCommandLine  # type: ignore[assignment]

from store.errors import TokaError, UsageError


def report(error: TokaError) -> None:
    sys.stderr.write(error.lines())


def usage_error(error: BadCommandLine) -> TokaError:
    """A bad command line as toka says everything else: ``error:`` and a ``hint:``, exit 2."""
    message = error.format_message().strip().rstrip(".")
    message = message[:1].lower() + message[1:]
    path = error.ctx.command_path if error.ctx is not None else "toka"
    return UsageError(message, f"`{path} -h` shows its arguments and options")


class TokaGroup(TyperGroup):
    """Turns a TokaError raised anywhere below into ``error:``/``hint:`` and its exit code, and
    a bad command line (Click's usage errors) into the same form."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except NoArgsIsHelpError:
            raise  # the help, on stderr, exit 2
        except BadCommandLine as error:
            report(usage_error(error))
            raise typer.Exit(2) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except NoArgsIsHelpError:
            raise
        except BadCommandLine as error:
            report(usage_error(error))
            raise typer.Exit(2) from None
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


def make_app(help: str, name: str | None = None, cls: type[TokaGroup] = TokaGroup) -> typer.Typer:
    return typer.Typer(
        name=name,
        help=help,
        cls=cls,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
