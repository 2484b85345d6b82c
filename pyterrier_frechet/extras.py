"""Optional dependencies, grouped as the package's pip extras, and one clear error when one is missing.

The base install scores runs (``pt.Experiment``, ``ir_measures.calc_aggregate``, ``pf.evaluate``, the CLI's ``eval``,
``bootstrap``, ``compare``, ...) with precomputed vectors or the default :class:`~pyterrier_frechet.Embedder`.
Retrieval pipelines and figures need more (from a clone of the repository: the package is not on PyPI yet)::

    pip install -e '.[pipelines]'   # pyterrier-pisa, pyterrier-splade, pyterrier-dr
    pip install -e '.[plots]'       # matplotlib
    pip install -e '.[demo]'        # both: what python -m pyterrier_frechet demo needs

This module imports nothing of the package, so every layer may use it.
"""
import importlib
from types import ModuleType

#: extra -> the modules it provides (import name -> distribution name on PyPI)
EXTRAS = {
    'pipelines': {'pyterrier_pisa': 'pyterrier-pisa', 'pyterrier_splade': 'pyterrier-splade',
                  'pyterrier_dr': 'pyterrier-dr'},
    'plots': {'matplotlib': 'matplotlib'},
    'ray': {'ray': 'ray[data]'},
    'openvino': {'openvino': 'openvino'},
}
#: what ``python -m pyterrier_frechet demo`` needs: both (its missing-extra error names ``[demo]``)
EXTRAS['demo'] = {**EXTRAS['pipelines'], **EXTRAS['plots']}


class MissingExtra(ImportError, ValueError):
    """An optional dependency is not installed; the message names the pip extra that installs it. An ImportError
    (what a missing module is) and a ValueError (what the package's and the CLI's error handling catch)."""


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` for ``what`` (e.g. ``'pipelines.bm25'``), or raise :class:`MissingExtra` naming the extra
    that installs it (:func:`install_hint`)."""
    top = module.split('.')[0]
    if top not in EXTRAS.get(extra, {}):
        raise ValueError(f'{module!r} is not provided by the extra {extra!r}: {sorted(EXTRAS)}')
    try:
        return importlib.import_module(module)
    except ImportError as ex:
        if ex.name is not None and ex.name.split('.')[0] != top:
            raise  # the module is there but one of its own imports failed: that is not a missing extra
        raise MissingExtra(f'{what} needs {EXTRAS[extra][top]} ({top} cannot be imported), which the '
                           f'[{extra}] extra installs: {install_hint(extra, EXTRAS[extra].values())}', name=top) from ex


def install_hint(extra: str, distributions) -> str:
    """How to install an extra, as it works today: from the clone (the package is not on PyPI yet), or the
    distributions themselves into any install."""
    import shlex
    return (f"pip install -e '.[{extra}]' in the repository's clone (pyterrier-frechet is not on PyPI yet), or "
            f"pip install {' '.join(shlex.quote(d) for d in sorted(set(distributions)))}")
