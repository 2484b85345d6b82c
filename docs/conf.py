"""Sphinx configuration for a standalone build of ``pyterrier_frechet/pt_docs`` (the pages PyTerrier's
documentation includes from the installed package, as it does pyterrier-dr's and pyterrier-caching's):

    sphinx-build -W -n -c docs pyterrier_frechet/pt_docs build/docs

The build refuses stale generated pages (``docs/generate.py --check``): run ``python docs/generate.py`` after
changing a measure, the CLI or a figure. PyTerrier's own ``cite`` directive (used in the measures' docstrings) is
stood in for by a minimal one here.
"""
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (docs/generate.py)

_stale = generate.stale()
if _stale:
    raise RuntimeError(f'stale generated docs: {", ".join(_stale)}; run: python docs/generate.py')

project = 'pyterrier-frechet'
author = 'pyterrier-frechet contributors'
copyright = '2024-2026, ' + author

extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon']
master_doc = 'index'
exclude_patterns = ['_generated']  # included by measures.rst and cli.rst, not pages of their own
autodoc_member_order = 'bysource'
autodoc_typehints = 'description'
autodoc_typehints_description_target = 'documented'
html_theme = 'alabaster'

# -n (nitpicky): every reference must resolve, except to the libraries this package builds on (no intersphinx:
# the build works offline) and to typing constructs.
nitpick_ignore_regex = [
    (r'py:.*', r'(pd|pandas|np|numpy|pt|pyterrier|ir_measures|scipy|torch|matplotlib|typing|collections|pathlib|'
               r'threadpoolctl|ray|transformers|sentence_transformers|pyterrier_caching|pyterrier_dr|'
               r'pyterrier_pisa|pyterrier_splade|openvino)(\..*)?'),
    (r'py:class', r'(Path|Optional|Sequence|Iterable|Callable|Dict|List|Tuple|Union|Any|Mapping|NamedTuple|'
                  r'DataFrame|Series|ndarray|Transformer|Measure|ModuleType|optional|callable|iterable|'
                  r'default|int|float|str|bool|object|dict|list|tuple)'),
]


class _Cite(Directive):
    """``.. cite:: KEY`` with the reference as content (PyTerrier's documentation has its own richer one)."""
    required_arguments = 1
    has_content = True
    option_spec = {'citation': str, 'link': str}

    def run(self):
        text = ' '.join(line.strip() for line in self.content) or self.options.get('citation', self.arguments[0])
        return [nodes.paragraph('', '', nodes.strong('', 'Reference: '), nodes.Text(text))]


def _existing_object(target: str, module: str, cls: str) -> bool:
    """Does ``target`` name an object of this package (or a builtin), as written or relative to the module (and
    class) whose docstring refers to it?"""
    import builtins
    import importlib
    if hasattr(builtins, target):
        return True
    if '.' not in target and any(hasattr(m, target) for n, m in list(sys.modules.items())
                                 if n.startswith('pyterrier_frechet.')):
        return True  # a name in the module that defines the documented object (documented under pf.NAME)
    candidates = [target] + ([f'{module}.{cls}.{target}', f'{module}.{target}'] if module else [])
    for dotted in candidates:
        parts = dotted.split('.')
        if parts[0] != 'pyterrier_frechet':
            continue
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module('.'.join(parts[:i]))
            except ImportError:
                continue
            try:
                for attr in parts[i:]:
                    obj = getattr(obj, attr)
                return True
            except AttributeError:
                break
    return False


def _undocumented_internal(app, env, node, contnode):
    """A reference to an object that exists in the package but has no page of its own (a private helper, a module
    not in the API reference) renders as code; a reference to something that does not exist still fails the
    nitpicky build."""
    if node.get('refdomain') != 'py':
        return None
    target = node.get('reftarget', '')
    if _existing_object(target, node.get('py:module') or '', node.get('py:class') or ''):
        return contnode
    return None


def setup(app):
    app.add_directive('cite', _Cite)
    app.connect('missing-reference', _undocumented_internal)
