"""`toka tui`: a Textual dashboard over the daemon, through the asyncio client only.

Nothing outside `toka_cli/commands/tui.py` imports this package, so Textual loads only for
`toka tui`.
"""
