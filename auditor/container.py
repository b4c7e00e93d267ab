"""The Docker image's entrypoint: run ``auditor`` as the owner of the folder it writes to.

``docker run -v "$PWD/out:/out" auditor demo --out /out`` must work whether ``out`` already
exists (owned by you) or Docker creates it (owned by root, because the daemon makes missing
bind-mount sources as root). The image therefore starts as root and, before anything is read,
switches to the user and group that own the output folder — ``--out`` if given (its first
existing ancestor when it does not exist yet), else the working directory (``/data``, where
``reports/<time>`` would go) — so the report files belong to whoever owns the mount:

- a folder you created (``mkdir -p out``, or ``-v "$PWD:/data" -w /data``): the run is yours,
  files are yours, and the process is not root;
- a folder Docker created as root: only root can write there, so the run stays root and the
  files are root's, like the folder;
- ``docker run --user "$(id -u):$(id -g)" ...``: the image does not start as root, nothing is
  switched, ``auditor`` runs as given (it then needs a writable output folder).

``HOME`` is set to that user's home from the passwd database, or ``/tmp`` for a uid the image
does not know. The switch is ``setgroups([]) + setgid + setuid`` and then ``exec`` (exit codes
and signals pass straight through).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence

PROGRAM = "auditor"
# argparse accepts unambiguous prefixes: no other option of any subcommand starts with --o
_OUT_FLAGS = ("--out", "--ou", "--o")


def output_folder(argv: Sequence[str], cwd: Path) -> Path:
    """The folder a run writes into: ``--out DIR`` / ``--out=DIR`` (relative to ``cwd``), else
    ``cwd``; the first existing ancestor when it does not exist yet."""
    out: str | None = None
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if flag not in _OUT_FLAGS:
            continue
        if eq:
            out = value
        elif i + 1 < len(argv):
            out = argv[i + 1]
    path = cwd / out if out else cwd  # an absolute ``out`` replaces ``cwd``
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def run_as(argv: Sequence[str], cwd: Path) -> tuple[int, int]:
    """(uid, gid) the run switches to: the owner of :func:`output_folder`."""
    st = output_folder(argv, cwd).stat()
    return st.st_uid, st.st_gid


def _home_of(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_dir or "/tmp"
    except KeyError:
        return "/tmp"


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if os.geteuid() == 0:
        uid, gid = run_as(args, Path.cwd())
        if uid != 0:
            try:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
            except PermissionError:  # root without CAP_SETUID/CAP_SETGID (--cap-drop ALL)
                print(f"auditor: error: the container cannot switch to the owner "
                      f"({uid}:{gid}) of {output_folder(args, Path.cwd())}: no SETUID/SETGID "
                      f"capability; run it as that user: docker run --user {uid}:{gid} ...",
                      file=sys.stderr)
                sys.exit(2)
            os.environ["HOME"] = _home_of(uid)
    os.execvp(PROGRAM, [PROGRAM, *args])


if __name__ == "__main__":  # pragma: no cover
    main()
