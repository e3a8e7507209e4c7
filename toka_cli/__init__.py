"""The command line: a Typer app, one module per command group, talking to the daemon's client."""
