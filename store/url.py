"""Database URLs as people may see them: with the password replaced, whichever form it takes
(``postgresql://user:secret@host/db``, ``?password=secret``, or ``password=secret`` in a
key/value connection string), and the passphrase of a client key (``sslpassword``). Status,
logs, errors and ``config show`` print only this."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

HIDDEN = "***"
# libpq's parameters that hold a secret: the password, and the passphrase of the client's key.
SECRET_KEYS = ("password", "sslpassword")
_KEY_VALUE = re.compile(r"(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def redacted(url: str) -> str:
    """``url`` with its password, if it has one, shown as ``***``."""
    shown = _redacted(url)
    for secret in secrets_in(url):  # what a URL too odd for urlsplit still shows (a "/" in it, say)
        shown = shown.replace(secret, HIDDEN)
    return shown


def _redacted(url: str) -> str:
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
        if any(k.lower() in SECRET_KEYS for k, _ in pairs):
            query = urlencode([(k, HIDDEN if k.lower() in SECRET_KEYS else v) for k, v in pairs], safe="*/")
        if (netloc, query) == (parts.netloc, parts.query):
            return url
        shown = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
        # urlunsplit writes a URL without a host as scheme:/path; libpq's form keeps the //.
        return shown if netloc else shown.replace(f"{parts.scheme}:", f"{parts.scheme}://", 1)
    except ValueError:
        return f"{url.split('://', 1)[0]}://{HIDDEN}"  # unreadable: show no part that could be the secret


def secrets_in(url: str) -> list[str]:
    """The password ``url`` carries, as written and percent-decoded, longest first; read leniently,
    so that a URL too malformed to parse still gives its password up (for :func:`scrubbed`)."""
    if "://" not in url:
        found = {m.group(2).strip("'") for m in _KEY_VALUE.finditer(url)}
    else:
        found = set()
        rest = url.split("://", 1)[1]
        head = re.split(r"[?#]", rest, maxsplit=1)[0]
        if "@" in head:
            userinfo = head.rsplit("@", 1)[0]
            if ":" in userinfo:
                found.add(userinfo.split(":", 1)[1])
        query = rest.split("?", 1)[1] if "?" in rest else ""
        pairs = parse_qsl(query.split("#")[0], keep_blank_values=True)
        found.update(v for k, v in pairs if k.lower() in SECRET_KEYS)
        found.update(m.group(1) for m in re.finditer(r"[?&](?:ssl)?password=([^&#]*)", rest, re.IGNORECASE))
    found |= {unquote(secret) for secret in found}
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def scrubbed(text: str, url: str) -> str:
    """``text`` (an error message, say) with ``url`` shown redacted and its password nowhere: libpq
    quotes the URL, or the part of it that it could not read, in some of its errors."""
    text = text.replace(url, redacted(url))
    for secret in secrets_in(url):
        text = text.replace(secret, HIDDEN)
    return text
