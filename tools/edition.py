"""One home for where the book lives and which edition it is: everything derived from _config.yml
(`repository.url`, `repository.branch`, `html.baseurl`, `edition.on_index`) and hwlib.__version__.

    python tools/edition.py            # rewrite every derived line (then: python tools/make_colab.py)
    python tools/edition.py --check    # exit 1 and name each stale file (`make lint` runs it)

An edition is a version tag, v<hwlib.__version__>. Every install command the book prints names it:
`hwlib==X.Y.Z` once that release is on the package index (`edition.on_index: true`), until then the
tag's git URL, `hwlib @ git+<repository.url>@vX.Y.Z`. What this rewrites:

* the hidden Colab install cell of every chapter, exercise source, calculators.md and gallery.md, and
  every other `pip install "hwlib…"` in them, README.md and intro.md (extras such as `[gpu-cuda12]` kept);
* the intro's clone command (`git clone --branch vX.Y.Z <repository.url>`, `cd <name>`);
* CITATION.cff (`repository-code`, `url`) and pyproject.toml's `[project.urls]`.

The Colab notebooks' own install cell comes from `install_spec` too (tools/make_colab.py).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
VERSION_RE = re.compile(r'^__version__ = "(\d+\.\d+\.\d+)"', re.M)
# A quoted pip requirement naming hwlib: "hwlib", "hwlib[gpu-cuda12]", "hwlib==0.3.0", "hwlib @ git+URL@v0.3.0".
PIP_SPEC = re.compile(r'(?P<cmd>\bpip install (?:-q )?)"hwlib(?P<extras>\[[\w,-]+\])?(?: @ git\+[^"\s]+|==[\w.]+)?"')
CLONE = re.compile(r"git clone (?:--branch \S+ )?https://\S+ && cd \S+")


@dataclass(frozen=True)
class Edition:
    """Where the book lives and which edition this is (all read from _config.yml and hwlib/__init__.py)."""

    repo_url: str  # https://github.com/OWNER/NAME, no trailing slash
    baseurl: str  # the published book, with a trailing slash
    version: str  # hwlib.__version__
    on_index: bool  # is hwlib==version installable from the package index?

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    @property
    def repo_name(self) -> str:
        return self.repo_url.rstrip("/").rsplit("/", 1)[-1]

    def install_spec(self, extras: str = "") -> str:
        """The requirement an install command names: this edition, never whatever is on a branch."""
        if self.on_index:
            return f"hwlib{extras}=={self.version}"
        return f"hwlib{extras} @ git+{self.repo_url}@{self.tag}"

    def clone(self) -> str:
        return f"git clone --branch {self.tag} {self.repo_url} && cd {self.repo_name}"

    @property
    def urls(self) -> dict[str, str]:
        """pyproject.toml's [project.urls]."""
        return {
            "Homepage": self.baseurl,
            "Source": self.repo_url,
            "Changelog": f"{self.baseurl}changelog.html",
            "Errata": f"{self.baseurl}errata.html",
            "Issues": f"{self.repo_url}/issues",
        }


def load(root: Path = ROOT) -> Edition:
    cfg = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    repo = (cfg.get("repository") or {}).get("url", "").rstrip("/")
    base = ((cfg.get("html") or {}).get("baseurl") or "").rstrip("/") + "/"
    if not re.fullmatch(r"https://\S+/\S+", repo):
        raise SystemExit(f"edition: _config.yml repository.url must be https://HOST/OWNER/NAME; got {repo!r}")
    if base == "/" or not base.startswith("https://"):
        raise SystemExit(f"edition: _config.yml html.baseurl must be the published book's https address; got {base!r}")
    init = root / "hwlib" / "__init__.py"
    if init.is_file():
        found = VERSION_RE.search(init.read_text(encoding="utf-8"))
        if not found:
            raise SystemExit('edition: hwlib/__init__.py has no line __version__ = "X.Y.Z"')
        version = found.group(1)
    else:  # a scratch book (tools/try_chapter.sh) without the package's source: the installed hwlib
        import hwlib

        version = hwlib.__version__
    on_index = (cfg.get("edition") or {}).get("on_index", False)
    if not isinstance(on_index, bool):
        raise SystemExit(f"edition: _config.yml edition.on_index must be true or false; got {on_index!r}")
    return Edition(repo, base, version, on_index)


# --- the derived files ----------------------------------------------------------------------------------
def pages(root: Path) -> list[Path]:
    """The sources whose install commands name the edition."""
    found = sorted(root.glob("chapters/*.md")) + sorted(root.glob("exercises/*/source.md"))
    found += [root / n for n in ("calculators.md", "gallery.md", "intro.md", "README.md")]
    return [p for p in found if p.is_file()]


def rewrite_page(text: str, ed: Edition) -> str:
    text = PIP_SPEC.sub(lambda m: f'{m["cmd"]}"{ed.install_spec(m["extras"] or "")}"', text)
    return CLONE.sub(ed.clone(), text)


def rewrite_citation(text: str, ed: Edition) -> str:
    text = re.sub(r"^repository-code: .*$", f'repository-code: "{ed.repo_url}"', text, flags=re.M)
    if re.search(r"^url: ", text, flags=re.M):
        return re.sub(r"^url: .*$", f'url: "{ed.baseurl}"', text, flags=re.M)
    return text.replace("repository-code:", f'url: "{ed.baseurl}"\nrepository-code:', 1)


def rewrite_pyproject(text: str, ed: Edition) -> str:
    head, sep, rest = text.partition("[project.urls]\n")
    if not sep:
        raise SystemExit("edition: pyproject.toml has no [project.urls] table")
    lines = rest.split("\n")
    keep = 0
    while keep < len(lines) and (lines[keep].startswith("#") or re.match(r"^\w+ = ", lines[keep])):
        keep += 1
    comments = [ln for ln in lines[:keep] if ln.startswith("#")]
    table = [f'{k} = "{v}"' for k, v in ed.urls.items()]
    return head + sep + "\n".join(comments + table + lines[keep:])


def derived(root: Path = ROOT, ed: Edition | None = None) -> dict[Path, str]:
    """Every derived file and the text it should have."""
    ed = ed or load(root)
    out = {p: rewrite_page(p.read_text(encoding="utf-8"), ed) for p in pages(root)}
    cff = root / "CITATION.cff"
    out[cff] = rewrite_citation(cff.read_text(encoding="utf-8"), ed)
    pyproject = root / "pyproject.toml"
    out[pyproject] = rewrite_pyproject(pyproject.read_text(encoding="utf-8"), ed)
    return out


def stale(root: Path = ROOT) -> list[Path]:
    return [p for p, text in derived(root).items() if p.read_text(encoding="utf-8") != text]


def write(root: Path = ROOT) -> list[Path]:
    written = []
    for path, text in derived(root).items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str]) -> int:
    root = ROOT
    if "--check" in argv:
        bad = stale(root)
        for path in bad:
            print(
                f"{path.relative_to(root)} does not match _config.yml / hwlib.__version__ (run: python tools/edition.py)"
            )
        return 1 if bad else 0
    for path in write(root):
        print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
