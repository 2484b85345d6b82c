"""The package's __init__ (pyterrier_frechet/__init__.py): every lazy name is the object of the module it names,
loaded on first access; unknown names are AttributeErrors; dir() and __all__ list them. (That the import itself
loads no heavy module is tests/test_architecture.py.)"""
import importlib
import subprocess
import sys

import ir_measures
import pytest

import pyterrier_frechet as pf


def test_every_lazy_name_is_its_module_object():
    for name, (module, attr) in pf._LAZY.items():
        target = importlib.import_module(f'pyterrier_frechet.{module}')
        assert getattr(pf, name) is (target if attr is None else getattr(target, attr)), name


def test_a_lazy_name_is_imported_on_first_access_only():
    code = ('import sys, pyterrier_frechet as pf; a = "pyterrier_frechet.analyses.shuffle" in sys.modules; '
            'f = pf.shuffle_check; print(a, "pyterrier_frechet.analyses.shuffle" in sys.modules, '
            'f is sys.modules["pyterrier_frechet.analyses.shuffle"].shuffle_check, "shuffle_check" in vars(pf))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ['False', 'True', 'True', 'True']  # then cached in the module's namespace


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="module 'pyterrier_frechet' has no attribute 'no_such_name'"):
        pf.no_such_name  # noqa: B018
    assert not hasattr(pf, 'bootstrap_naive')  # a module's function that is not exported


def test_dir_and_all_list_the_measures_and_the_lazy_names():
    assert set(pf._LAZY) <= set(dir(pf)) and set(pf._LAZY) <= set(pf.__all__)
    assert {'FD', 'CFD', 'DO', 'HSA', 'KID', 'AnswerFD', 'SetMeasureProvider'} <= set(pf.__all__)
    assert len(pf.__all__) == len(set(pf.__all__))


def test_importing_registers_the_measures_with_ir_measures():
    assert ir_measures.parse_measure('FD@10') == pf.FD @ 10 and ir_measures.parse_measure('HSA(bins=4)') == pf.HSA(bins=4)
