"""Text the grader writes is always valid UTF-8, whatever a submission holds.

A learner's answer string or markdown cell can hold a lone surrogate ("\\ud800", legal in JSON and in a
Python str, not encodable as UTF-8), and a file name from a tar export can hold bytes that are not
UTF-8 (Python keeps them as surrogates, PEP 383). `clean` turns every such code point into its
visible escape (`\\udcff`), so results.json, feedback.txt, grades.csv, the executed notebook and the
progress lines can always be written, and two different names stay different.
"""

from __future__ import annotations


def clean_str(s: str) -> str:
    """'a\\udcffb' -> 'a\\\\udcffb' (the escape as text); a str without surrogates is returned as is."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "backslashreplace").decode("utf-8")


def clean(obj, depth: int = 0):
    """`obj` (str, list, tuple, dict, nested) with every str passed through `clean_str`."""
    if isinstance(obj, str):
        return clean_str(obj)
    if depth > 50:
        return obj
    if isinstance(obj, dict):
        return type(obj)((clean(k, depth + 1), clean(v, depth + 1)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(clean(v, depth + 1) for v in obj)
    return obj
