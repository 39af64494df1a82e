"""Which file a result belongs to, and reading that file safely.

Every submission has an identity: its name relative to the folder it was found in (`alice.ipynb`
for `hwlib grade EX subs/` and for `hwlib grade EX subs/alice.ipynb` alike). Its output folder is
`OUT/submissions/<readable stem>-<first 10 hex digits of sha256(identity)>`: unique, the same in
every run whatever else is graded, and never shared by two files (two files with one identity in a
run are refused). The grader's own files (grades.csv, pass_rates.*) sit beside `submissions/`, where
no learner file name can reach.

`read_submission` checks the file's type and size before reading it: a FIFO, a device, a symbolic
link or a file over the size limit is refused without reading it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_NOTEBOOK_BYTES = 20 * 2**20
SUBMISSIONS = "submissions"


@dataclass(frozen=True)
class Submission:
    path: Path  # where the file is now
    identity: str  # its name in the class (relative to the folder it was found in)

    @property
    def folder_name(self) -> str:
        return folder_name(self.identity)


def folder_name(identity: str) -> str:
    """'Ålice Ünal.ipynb' -> 'lice_nal-3f5c0a9b1e' (readable part + hash of the whole identity)."""
    stem = identity[:-6] if identity.endswith(".ipynb") else identity
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-")[:40] or "submission"
    return f"{base}-{hashlib.sha256(identity.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"


def expand(paths) -> list[Submission]:
    """The submissions named by `paths`: each file, or every non-hidden entry of a folder (sorted;
    FIFOs, links and other non-files are kept so that they get a result saying why)."""
    subs = []
    for p in map(Path, paths):
        if p.is_dir() and not p.is_symlink():
            subs += [
                Submission(f, f.name)
                for f in sorted(p.iterdir())
                if not f.name.startswith(".") and not (f.is_dir() and not f.is_symlink())
            ]
        else:
            subs.append(Submission(p, p.name))
    seen: dict[str, Path] = {}
    for s in subs:
        if s.identity in seen:
            raise ValueError(
                f"two submissions are named {s.identity!r} ({seen[s.identity]} and {s.path}); "
                "grade them in separate runs with separate --out folders"
            )
        seen[s.identity] = s.path
    return subs


def read_submission(path: Path, limit: int = MAX_NOTEBOOK_BYTES) -> tuple[bytes | None, tuple | None]:
    """(bytes, None) or (None, (status code, reason)); never blocks and never reads more than limit."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return None, ("not_a_file", f"cannot read the file: {exc.strerror}")
    if stat.S_ISLNK(st.st_mode):
        return None, ("not_a_file", "a symbolic link, not a notebook file")
    if not stat.S_ISREG(st.st_mode):
        return None, ("not_a_file", "not a regular file (a folder, FIFO or device)")
    if st.st_size > limit:
        return None, ("too_large", f"the file is larger than {limit // 2**20} MiB")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return None, ("not_a_file", f"cannot read the file: {exc.strerror}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, ("not_a_file", "not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        return None, ("too_large", f"the file is larger than {limit // 2**20} MiB")
    return data, None


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
