"""The `toka` console script: hooks first, before anything heavy is imported.

`toka hook ...` runs on every tool call of an agent, so it is dispatched to toka_cli/hook.py
(standard library and the light client only) before the Typer app and its imports load; so is
`toka statusline` (toka_cli/statusline.py), which Claude Code runs after every turn, with its
older spelling `toka hook claude-code --statusline` (still named by settings.json files), and
`toka --version`. Every other command, and `--help` of those, goes to the Typer app in
toka_cli/main.py.
"""

from __future__ import annotations

import sys


def statusline_args(args: list[str]) -> list[str] | None:
    """The arguments of `toka statusline` when ``args`` run it: ``statusline ARGS``, or its older
    spelling ``hook claude-code --statusline`` (a ``--headroom`` beside it was always left
    unused); None when they run something else."""
    if args[:1] == ["statusline"]:
        return args[1:]
    if args[:1] == ["hook"] and sorted(a for a in args[1:] if a != "--headroom") == ["--statusline", "claude-code"]:
        return []
    return None


def main() -> None:
    args = sys.argv[1:]
    if args in (["--version"], ["-V"]):
        from daemon.version import VERSION

        print(f"toka {VERSION}")
        return
    helped = {"-h", "--help"} & set(args)
    if not helped and (line_args := statusline_args(args)) is not None:
        from toka_cli.statusline import main as statusline_main

        sys.exit(statusline_main(line_args))
    if len(args) >= 2 and args[0] == "hook" and not helped:
        from toka_cli.hook import main as hook_main

        sys.exit(hook_main(args[1:]))
    from toka_cli.main import main as app_main

    app_main()
