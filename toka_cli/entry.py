"""The `toka` console script: hooks first, before anything heavy is imported.

`toka hook ...` runs on every tool call of an agent, so it is dispatched to toka_cli/hook.py
(standard library and the light client only) before the Typer app and its imports load; so is
`toka statusline` (toka_cli/statusline.py), which Claude Code runs after every turn, and
`toka --version`. Every other
command, and `--help` of those two, goes to the Typer app in toka_cli/main.py.
"""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args in (["--version"], ["-V"]):
        from daemon.version import VERSION

        print(f"toka {VERSION}")
        return
    if len(args) >= 2 and args[0] == "hook" and not {"-h", "--help"} & set(args):
        from toka_cli.hook import main as hook_main

        sys.exit(hook_main(args[1:]))
    if args and args[0] == "statusline" and not {"-h", "--help"} & set(args):
        from toka_cli.statusline import main as statusline_main

        sys.exit(statusline_main(args[1:]))
    from toka_cli.main import main as app_main

    app_main()
