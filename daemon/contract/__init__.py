"""What the daemon, its client, the CLI and the MCP server agree on, declared once: the kinds of
the log's events (``kinds.py``), the choices a request takes (``policies.py``: compression
policies, what happens at CRITICAL, the kinds of notes), an agent's lifecycle states and the one
order of how bad each is (``states.py``), the changes allowed between them and the built-in
``agent`` machine's, in one form (``transitions.py``), the context-fill figures
(``fill.py``), and the JSON results of the ops as TypedDicts (``results*.py``, the shapes of
docs/json.md).

It sits at the bottom of ``daemon/``: it imports nothing of the daemon (the client, which may not
import the server, imports it), only the store's bottom modules. Enums are ``StrEnum``: a member
is its string, so it serializes, compares and hashes as the bare value did.
"""
