"""Where /save may write and /load may read: only beneath the worker's roots.

The roots are the folders given with --root (repeatable) or $TCOD_WORKER_ROOTS (os.pathsep-separated);
without either, the directory the worker was started in. `tcod run` starts its workers with
--root RUN_DIR. A path is resolved (symlinks followed, `..` removed) before the check, so neither a
symlink inside a root nor `root/../x` reaches outside it.
"""

from __future__ import annotations

import os

from .errors import BadRequest


def resolve_roots(given: list[str] | None, env: str | None, cwd: str | None = None) -> list[str]:
    roots = list(given or []) or [r for r in (env or "").split(os.pathsep) if r] or [cwd or os.getcwd()]
    return [os.path.realpath(r) for r in roots]


def inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or a relative and an absolute path
        return False


def confine(path: str, roots: list[str], what: str) -> str:
    """The real path of `path` when it lies beneath one of `roots`; else a 400 naming the roots."""
    if "\x00" in path:
        raise BadRequest(f"{what} path contains a NUL byte")
    real = os.path.realpath(path)
    if any(inside(real, r) for r in roots):
        return real
    raise BadRequest(f"{what} path {path} is outside this worker's roots ({', '.join(roots)}); "
                     f"start the worker with --root DIR for each folder it may {what} (tcod run passes its run folder)")
