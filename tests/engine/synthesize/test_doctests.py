"""Every synthesize module's docstring examples hold (they document the rules the answerer
applies to questions and lines)."""
import doctest
import importlib
import pkgutil

import pytest

import docray.engine.synthesize as synthesize

MODULES = sorted(m.name for m in pkgutil.iter_modules(synthesize.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(f"docray.engine.synthesize.{name}")
    assert doctest.testmod(mod).failed == 0, name


def test_the_modules_are_found():
    assert {"extractive", "listed", "values"} <= set(MODULES)
