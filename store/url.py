"""Database URLs as people may see them: with the password replaced, whichever form it takes
(``postgresql://user:secret@host/db``, ``?password=secret``, or ``password=secret`` in a
key/value connection string). Status, logs, errors and ``config show`` print only this."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

HIDDEN = "***"
_KEY_VALUE = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def redacted(url: str) -> str:
    """``url`` with its password, if it has one, shown as ``***``."""
    if "://" not in url:
        return _KEY_VALUE.sub(lambda m: m.group(1) + HIDDEN, url)
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                netloc = f"{userinfo.split(':', 1)[0]}:{HIDDEN}@{host}"
        query = parts.query
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() == "password" for k, _ in pairs):
            query = urlencode([(k, HIDDEN if k.lower() == "password" else v) for k, v in pairs], safe="*/")
        if (netloc, query) == (parts.netloc, parts.query):
            return url
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return f"{url.split('://', 1)[0]}://{HIDDEN}"  # unreadable: show no part that could be the secret
