"""`toka integrate AGENT`: toka written into an agent's own configuration, and taken out again.

- ``claude_hooks.py``: Claude Code's ``settings.json``: a hook per event, and the status line.
- ``mcp_servers.py``: the ``toka`` MCP server in Claude Code's ``.claude.json`` / ``.mcp.json``,
  and what every file change shares (the diff, the atomic write).
- ``codex_config.py``: Codex's ``config.toml``: the ``toka`` MCP server and ``notify``.
- ``codex_hooks.py``: Codex's ``hooks.json``: a hook per event, and its trust in ``config.toml``.
- ``executable.py``: the absolute path of this toka that every entry runs, and whether an entry's
  command can be run at all (doctor's check).

Every entry runs toka by its absolute path: an agent does not start hooks or servers with the
shell's PATH of the moment, so a bare ``toka`` fails as soon as the venv is not on it.
"""
