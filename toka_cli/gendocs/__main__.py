"""``python -m toka_cli.gendocs``: rewrite the completion scripts and the man page."""

from toka_cli.gendocs import main

main()
