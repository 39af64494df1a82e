"""The Colab path: every chapter has an in-sync, output-free .ipynb pair whose hidden first cell
installs hwlib from the repository named in _config.yml (the one place the URL lives)."""
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
sys.path.insert(0, str(ROOT / "tools"))
import sync_pairs  # noqa: E402


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/*.md found"


def test_every_pair_in_sync():
    assert sync_pairs.problems() == []


def test_check_detects_drift(tmp_path, monkeypatch):
    md = tmp_path / "01_x.md"
    md.write_text(CHAPTERS[0].read_text())
    monkeypatch.setattr(sync_pairs, "CHAPTERS", tmp_path)
    monkeypatch.setattr(sync_pairs, "ROOT", tmp_path)
    assert any("missing" in p for p in sync_pairs.problems())
    sync_pairs.write_all()
    assert sync_pairs.problems() == []
    md.write_text(md.read_text() + "\nA new paragraph.\n")
    assert any("differs" in p for p in sync_pairs.problems())


def repository_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"]


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_colab_install_cell(md):
    nb = jupytext.read(md)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", []), "the install cell must be hidden in the book"
    assert 'if "google.colab" in sys.modules:' in first.source, "install only when running on Colab"
    urls = re.findall(r"git\+(\S+?)\"", first.source)
    assert urls == [repository_url()], f"install URL {urls} must match _config.yml repository.url"


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_quiz_answers_and_recap(md):
    text = md.read_text()
    assert text.count("```{quiz}") >= 2, "a short quiz (at least two questions)"
    assert text.count(":class: dropdown") >= 2, "at least two worked problems with hidden answers"
    assert "## Key ideas" in text, "a recap of key ideas"


def test_sync_script_check_mode():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "sync_pairs.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
