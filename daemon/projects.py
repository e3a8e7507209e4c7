"""What a ``--project`` filter matches, for every command that takes one (reports, sessions)."""

from __future__ import annotations

import posixpath


def in_project(project: str | None, wanted: str, repository: str | None = None) -> bool:
    """Whether a session run in ``project`` (its working directory) of ``repository`` is in
    ``wanted``: an absolute path it ran in or under, or the name of its folder or repository."""
    if wanted.startswith("/"):
        root = posixpath.normpath(wanted)
        return project is not None and (project == root or project.startswith(root.rstrip("/") + "/"))
    name = posixpath.basename(project.rstrip("/")) if project else None
    return wanted in (name, repository)
