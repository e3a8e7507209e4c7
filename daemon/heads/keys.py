"""The Ed25519 key tree heads are signed with: ``heads.key`` in the config dir, never in the database.

Created on the daemon's first start as a PKCS#8 PEM file of mode 0600 (``openssl pkey -in
heads.key -pubout`` shows its public half). A key that others may read is refused: whoever can
read it can sign a rewritten log. ``cryptography`` is imported here and only when a head is
signed or checked, so a CLI start-up never pays for it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from store.errors import ConfigError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


class HeadKey:
    """A signing key and its public half (32 bytes, shown as hex in every head)."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self._private = private
        self.public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)


def load_key(path: Path, create: bool = True) -> HeadKey | None:
    """The key at ``path``, made first when it is missing and ``create``; None when it is
    missing and not ``create``."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        load_pem_private_key,
    )

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        if not create:
            return None
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:  # another daemon made it first: use that one
            return load_key(path, create=False)
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
            out.flush()
            os.fsync(out.fileno())
        return HeadKey(key)
    except OSError as exc:
        raise ConfigError(f"cannot open the head key {path}: {exc.strerror}", "it must be a plain file") from None
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise ConfigError(
                f"the head key {path} is open to others (mode {stat.filemode(info.st_mode)}, uid {info.st_uid})",
                f"make it yours alone: chmod 600 {path} (and check who else could have read it)",
            )
        data = source.read()
    try:
        private = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{path} is not a PEM Ed25519 key ({exc})", "move it aside: a new one is made") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise ConfigError(f"{path} holds a key that is not Ed25519", "move it aside: a new one is made")
    return HeadKey(private)


def signature_holds(public: bytes, signature: bytes, message: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True
