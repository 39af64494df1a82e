"""Every chapter ends with an "Exercises for this chapter" box, generated from exercises/chapters.yaml."""

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("exercise_boxes", ROOT / "tools" / "exercise_boxes.py")
boxes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(boxes)


def test_mapping_covers_every_chapter_and_exercise():
    mapping = yaml.safe_load(boxes.MAPPING.read_text())
    exercises = {p.parent.name for p in (ROOT / "exercises").glob("*/checks.yaml")}
    listed = {e for ids in mapping.values() for e in ids}
    assert listed == exercises, f"unmapped: {exercises - listed}; unknown: {listed - exercises}"
    assert set(mapping) == set(boxes.chapter_files())
    assert all(mapping.values()), "every chapter lists at least one exercise"


def test_every_chapter_has_its_box_up_to_date():
    assert boxes.main(["--check"]) == 0
    mapping = yaml.safe_load(boxes.MAPPING.read_text())
    for label, path in boxes.chapter_files().items():
        text = path.read_text()
        assert text.count(boxes.BEGIN) == 1 and text.index(boxes.BEGIN) < text.index("## Key ideas")
        for ex in mapping[label]:
            assert f"<../exercises/{ex}/{ex}>" in text


def test_render_replaces_only_the_box():
    text = "# T\n\nbody\n\n## Key ideas\n\n* one\n"
    once = boxes.render(text, ["ex01_memory_budget"])
    twice = boxes.render(once.replace("ex01_memory_budget", "ex02_time_and_cost"), ["ex01_memory_budget"])
    assert twice == once and once.startswith("# T\n\nbody\n\n") and once.endswith("## Key ideas\n\n* one\n")


def _homes() -> list[tuple[str, str]]:
    """[(exercise id, 'C.K')]: each exercise's number is its home chapter (the first chapter, in book
    order, that lists it in exercises/chapters.yaml) and its place among that chapter's exercises."""
    mapping = yaml.safe_load(boxes.MAPPING.read_text())
    files = boxes.chapter_files()
    seen, out = set(), []
    for label in sorted(mapping, key=lambda lab: files[lab].name):
        chapter = int(files[label].name[:2])
        k = 0
        for ex in mapping[label]:
            if ex not in seen:
                seen.add(ex)
                k += 1
                out.append((ex, f"{chapter}.{k}"))
    return out


def test_exercises_are_numbered_and_listed_in_the_books_order():
    homes = _homes()
    for ex, number in homes:
        assert boxes.title(ex).startswith(f"Exercise {number}: "), (ex, boxes.title(ex), number)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    part = next(p for p in toc["parts"] if p.get("caption") == "Exercises")
    listed = [c["file"].split("/")[1] for c in part["chapters"]]
    assert listed == [ex for ex, _ in homes], "the Exercises part of _toc.yml follows the chapters' order"


def test_chapter_text_names_exercises_by_their_book_number():
    import re

    numbers = dict(_homes())
    for path in boxes.chapter_files().values():
        for m in re.finditer(r"\b[Ee]xercises? (\d+)(?![.\d])", path.read_text()):
            raise AssertionError(f"{path.name}: '{m.group(0)}' is an old flat exercise number; use C.K")
    assert numbers["ex05_littles_law"] == "1.1"
