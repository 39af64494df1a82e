"""Exercises and grading: learners self-check (`check`), instructors grade (`hwlib grade`).

* `hwlib.grading.quantity`  — read answers such as "2.6 GB", "≈ 12 hours", "$36" in SI units
* `hwlib.grading.spec`      — exercises/<id>/checks.yaml, hidden checks, expected values
* `hwlib.grading.compare`   — judge one answer against one check (outside the learner's kernel)
* `hwlib.grading.extract`   — injected cells that send answers out of the kernel as plain data
* `hwlib.grading.selfcheck` — `check("ex01_memory_budget")` inside a notebook
* `hwlib.grading.sandbox`, `runner`, `grader`, `results`, `cli` — the instructor's grader
* `hwlib.grading.identity`  — which file a result belongs to (folder names), safe file reading
* `hwlib.grading.classreport` — grades.csv (merged), learner ids, pass rates
* `hwlib.grading.gradescope` — Gradescope mode and the autograder zip
The format is documented in exercises/FORMAT.md.
"""

from .selfcheck import check, variant

__all__ = ["check", "variant"]
