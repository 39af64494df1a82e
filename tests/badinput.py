"""Shared bad-input test pattern: every public function of a calculator module refuses bad input
with an error naming the argument, and no public function is left without such a case."""

import inspect

import pytest


def make_tests(module, cases, require_all=True):
    """Return (parametrised test, coverage test) for `cases` = [(func, kwargs, needle), ...]."""

    @pytest.mark.parametrize("func, kwargs, needle", cases, ids=[f"{f.__name__}-{n}" for f, _, n in cases])
    def test_bad_input_names_the_argument(func, kwargs, needle):
        with pytest.raises((ValueError, KeyError)) as info:
            func(**kwargs)
        assert needle in str(info.value)

    def test_every_public_function_has_a_bad_input_case():
        public = {
            n
            for n, f in inspect.getmembers(module, inspect.isfunction)
            if f.__module__ == module.__name__ and not n.startswith("_")
        }
        assert public <= {f.__name__ for f, _, _ in cases} or not require_all, (
            f"no bad-input case for: {sorted(public - {f.__name__ for f, _, _ in cases})}"
        )

    return test_bad_input_names_the_argument, test_every_public_function_has_a_bad_input_case
