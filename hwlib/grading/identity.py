"""Which file a result belongs to, and reading that file safely.

Every submission has an identity: its path relative to the folder it was found in (`alice.ipynb`
for `hwlib grade EX subs/` and for `hwlib grade EX subs/alice.ipynb` alike; `alice/ex01.ipynb` in a
GitHub Classroom layout of one folder per learner). Its output folder is
`OUT/submissions/<readable stem>-<first 10 hex digits of sha256(identity)>`: unique, the same in
every run whatever else is graded, and never shared by two files (two arguments with one identity get their folder's name in front; two
that still collide are refused). The grader's own files (grades.csv, pass_rates.*) sit beside `submissions/`, where
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
    try:
        raw = identity.encode("utf-8", "surrogateescape")  # a non-UTF-8 file name: its own bytes
    except UnicodeEncodeError:
        raw = identity.encode("utf-8", "surrogatepass")  # any other lone surrogate
    return f"{base}-{hashlib.sha256(raw).hexdigest()[:10]}"


def _walk(folder: Path, exclude) -> list[Path]:
    """Notebooks in the subfolders of `folder` (GitHub Classroom: one folder per learner), sorted;
    hidden names, .ipynb_checkpoints and the `exclude` folders (the grader's --out) are skipped."""
    found = []
    for sub in sorted(folder.iterdir()):
        if sub.name.startswith(".") or sub.name == "__pycache__" or sub.is_symlink() or not sub.is_dir():
            continue
        if any(_inside(sub, e) for e in exclude):
            continue
        for dirpath, dirnames, filenames in os.walk(sub):
            dirnames[:] = sorted(
                d for d in dirnames if not d.startswith(".") and not any(_inside(Path(dirpath) / d, e) for e in exclude)
            )
            found += [Path(dirpath) / f for f in sorted(filenames) if f.endswith(".ipynb") and not f.startswith(".")]
    return found


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
        return True
    except ValueError:
        return False


def expand(paths, exclude=()) -> list[Submission]:
    """The submissions named by `paths`: each file, or every non-hidden file of a folder (FIFOs,
    links and other non-files are kept so that they get a result saying why) and every notebook in
    its subfolders. A file's identity is its path relative to the folder it was found in
    (`alice/ex01.ipynb`): two learners' files of the same name in different folders are both graded.
    When two arguments yield the same identity, each is prefixed by its argument's folder name;
    files inside `exclude` (the grader's own --out) are never submissions."""
    groups = []
    for p in map(Path, paths):
        if p.is_dir() and not p.is_symlink():
            files = [
                f for f in sorted(p.iterdir()) if not f.name.startswith(".") and not (f.is_dir() and not f.is_symlink())
            ] + _walk(p, exclude)
            files = [f for f in files if not any(_inside(f, e) for e in exclude)]
            groups.append((p, [Submission(f, f.relative_to(p).as_posix()) for f in files]))
        else:
            groups.append((p.parent, [Submission(p, p.name)]))
    count: dict[str, int] = {}
    for _, subs in groups:
        for s in subs:
            count[s.identity] = count.get(s.identity, 0) + 1
    out: list[Submission] = []
    for base, subs in groups:
        for s in subs:
            if count[s.identity] > 1:
                s = Submission(s.path, f"{Path(os.path.abspath(base)).name}/{s.identity}")
            out.append(s)
    seen: dict[str, Path] = {}
    for s in out:
        if s.identity in seen and os.path.realpath(seen[s.identity]) != os.path.realpath(s.path):
            raise ValueError(
                f"two submissions are named {s.identity!r} ({seen[s.identity]} and {s.path}); "
                "grade them in separate runs with separate --out folders"
            )
        seen[s.identity] = s.path
    unique, dup = [], set()
    for s in out:
        if s.identity not in dup:
            dup.add(s.identity)
            unique.append(s)
    return unique


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
