"""Every chapter ends with an "Exercises for this chapter" box, generated from exercises/chapters.yaml."""

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
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
