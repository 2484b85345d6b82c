"""The package's shape: layers, no import cycles, cheap import, tests that mirror the tree (a new measure added
through the documented path is tests/test_add_a_measure.py; what each measure declares, tests/test_definitions.py)."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from test_cli import files  # noqa: F401,F811  (the toy files fixture, used by name)

ROOT = Path(__file__).resolve().parents[1]

PACKAGE = Path(pf.__file__).resolve().parent
LAYERS = ('core', 'measures', 'evaluation', 'vectors', 'data', 'pipelines', 'analyses')
#: modules every layer may import: they import nothing of the package
LEAVES = ('pyterrier_frechet.extras', 'pyterrier_frechet.files', 'pyterrier_frechet.progress')


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return '.'.join(parts)


def _imports(path: Path):
    """Every import in the file, at any depth (function-level ones included), as absolute module names."""
    name = _module_name(path)
    package = name if path.name == '__init__.py' else name.rsplit('.', 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')
                base = base[:len(base) - node.level + 1]
                mod = '.'.join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.add(mod)
            out.update(f'{mod}.{a.name}' for a in node.names)  # "from . import plots" names a module
    return out


def _graph():
    modules = {_module_name(p): p for p in PACKAGE.rglob('*.py')}
    graph = {}
    for name, path in modules.items():
        deps = {d for d in _imports(path) if d in modules and d != name}
        graph[name] = deps
    return graph


def _longest_path(graph) -> int:
    memo = {}

    def depth(node, stack=()):
        if node in stack:
            raise AssertionError(f'import cycle: {" -> ".join(stack[stack.index(node):] + (node,))}')
        if node not in memo:
            memo[node] = 1 + max((depth(d, stack + (node,)) for d in graph[node]), default=0)
        return memo[node]

    return max(depth(n) for n in graph)


#: The longest import chain allowed. It moves only with a reason written here (the chain that grew, and why):
#: 15 — __main__ -> cli -> demo -> plots -> cost -> correlation -> evaluate -> provider -> answers -> measures.base
#: -> measures.resampling -> core.weighted -> core.downdate -> core.kernel -> core.threads (core.downdate, the
#: leave-outs' rank updates, sits between the re-weighted statistics and the shared kernel).
MAX_IMPORT_DEPTH = 15


def _longest_chain(graph):
    memo = {}

    def chain(node):
        if node not in memo:
            memo[node] = (node,) + max((chain(d) for d in graph[node]), key=len, default=())
        return memo[node]

    return max((chain(n) for n in graph), key=len)


def test_no_import_cycles_function_level_imports_included():
    graph = _graph()
    depth = _longest_path(graph)  # raises naming the cycle if there is one
    assert 3 <= depth <= MAX_IMPORT_DEPTH, (
        f'the import chain grew to {depth} > MAX_IMPORT_DEPTH = {MAX_IMPORT_DEPTH}: '
        + ' -> '.join(m.replace('pyterrier_frechet.', '') for m in _longest_chain(graph))
        + '; shorten it, or raise the cap with the reason written beside it')


def _private_imports(root: Path = PACKAGE):
    """(module, imported module, name) for every ``from <package module> import _name`` across modules (function-level
    imports included) of the package at ``root``; dunder names are not private."""
    def module_name(path):
        parts = list(path.relative_to(root.parent).with_suffix('').parts)
        return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)
    modules = {module_name(p): p for p in root.rglob('*.py')}
    out = []
    for name, path in modules.items():
        package = name if path.name == '__init__.py' else name.rsplit('.', 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split('.')
                mod = '.'.join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ''
            if not mod.startswith('pyterrier_frechet'):
                continue
            out.extend((name, mod, a.name) for a in node.names
                       if a.name.startswith('_') and not (a.name.startswith('__') and a.name.endswith('__')))
    return out


def test_no_module_imports_another_modules_private_names():
    # a name another module needs is part of its interface: public, with its one sentence (core/kernel.py holds the
    # linear algebra every FD route shares)
    assert _private_imports() == []


def test_the_private_import_check_sees_every_form(tmp_path):
    # the check itself, on a small package of the same name: function-level, relative and absolute private imports
    # are found; public names, dunders and other packages' private names are not
    root = tmp_path / 'pyterrier_frechet'
    (root / 'core').mkdir(parents=True)
    (root / '__init__.py').write_text('from . import core as _core, __version__\n')
    (root / 'core' / '__init__.py').write_text('')
    (root / 'core' / 'a.py').write_text('from os import _exit\nfrom .b import public\n\n\ndef f():\n    from .b import _hidden\n')
    (root / 'core' / 'b.py').write_text('from pyterrier_frechet.core.a import _other, __all__\nfrom ..core import _mod\n')
    assert sorted(_private_imports(root)) == [
        ('pyterrier_frechet.core.a', 'pyterrier_frechet.core.b', '_hidden'),
        ('pyterrier_frechet.core.b', 'pyterrier_frechet.core', '_mod'),
        ('pyterrier_frechet.core.b', 'pyterrier_frechet.core.a', '_other')]


#: What each layer may import from the package (besides itself), as the contributors' guide states it.
ALLOWED = {
    'core': set(),
    'measures': {'core'},
    'data': set(),
    'vectors': set(),
    'evaluation': {'core', 'measures', 'vectors'},
    'pipelines': {'vectors', 'data', 'evaluation'},
    'analyses': {'core', 'measures', 'evaluation', 'vectors'},
}


def test_the_guides_layer_table_is_the_one_checked():
    # docs/CONTRIBUTING.md "The layers" is the one statement of the layer order; pt_docs and __init__ point to it
    text = (ROOT / 'docs' / 'CONTRIBUTING.md').read_text(encoding='utf-8')
    rows = re.findall(r'^\| `(\w+)/` \| [^|]+ \| ([^|]+) \|$', text, re.M)
    stated = {layer: set(re.findall(r'`(\w+)`', deps)) for layer, deps in rows}
    assert stated == ALLOWED


def test_layers_import_only_downwards():
    graph = _graph()
    allowed = ALLOWED
    for module, deps in graph.items():
        parts = module.split('.')
        if len(parts) < 2 or parts[1] not in allowed:
            continue
        layer = parts[1]
        for dep in deps:
            if dep in LEAVES:  # they import nothing of the package (the optional-dependency check; opening
                continue  # compressed input files; silencing third parties' progress bars)
            dep_parts = dep.split('.')
            dep_layer = dep_parts[1] if len(dep_parts) > 1 else '<package>'
            assert dep_layer == layer or dep_layer in allowed[layer], f'{module} imports {dep} ({layer} -> {dep_layer})'
    assert all(graph[leaf] == set() for leaf in LEAVES)
    importers_of_cli = [m for m, deps in graph.items() if 'pyterrier_frechet.cli' in deps]
    assert importers_of_cli == ['pyterrier_frechet.__main__']


def test_numeric_cores_import_no_pandas_pyterrier_ir_measures_or_torch():
    # the cores are loaded without the package's __init__ (which registers measures with ir_measures)
    code = f'''
import sys, types, importlib, pkgutil
pkg = types.ModuleType('pyterrier_frechet'); pkg.__path__ = [{str(PACKAGE)!r}]; sys.modules['pyterrier_frechet'] = pkg
import pyterrier_frechet.core as core
for info in pkgutil.iter_modules(core.__path__):
    importlib.import_module('pyterrier_frechet.core.' + info.name)
print(sorted(m for m in ('pandas', 'pyterrier', 'ir_measures', 'torch') if m in sys.modules))
print(len([m for m in sys.modules if m.startswith('pyterrier_frechet.core.')]))
'''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split('\n')
    assert out[0] == '[]'
    assert int(out[1]) == len([p for p in (PACKAGE / 'core').glob('*.py') if p.name != '__init__.py'])


def test_a_weighted_side_is_refused_by_one_rule_in_one_place():
    """Every route (full set, congruence and downdate leave-outs, influence rows, bootstrap samples) builds a side
    through ``kernel.weighted_side``: no other module constructs a ``WeightedSide``, calls ``spread_normaliser``
    (except ``weighted.weighted_rows``, which forms the rows of a side its caller has already accepted), or writes
    the normaliser V₁ − V₂/V₁ inline (the rule was once written five times)."""
    import re
    inline = re.compile(r'\b(\w+)\s*-\s*\w+\s*/\s*\1\b')  # a − b / a
    offenders = []
    for path in PACKAGE.rglob('*.py'):
        where = str(path.relative_to(PACKAGE))
        if where == 'core/kernel.py':
            continue
        tree = ast.parse(path.read_text())
        exempt = {id(node) for func in ast.walk(tree)
                  if isinstance(func, ast.FunctionDef) and (where, func.name) == ('core/weighted.py', 'weighted_rows')
                  for node in ast.walk(func)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and id(node) not in exempt:
                name = getattr(node.func, 'id', getattr(node.func, 'attr', ''))
                if name in ('WeightedSide', 'spread_normaliser'):
                    offenders.append(f'{where}:{node.lineno}: {name}')
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split('#')[0]
            if inline.search(code) and not code.strip().startswith(('"', "'")):
                offenders.append(f'{where}:{lineno}: {line.strip()}')
    assert sorted(set(offenders)) == [], 'build the side with kernel.weighted_side'


def test_one_function_reads_the_callers_frames():
    """Issue 65: the package reads its callers' frames in one walk, ``evaluation.experiment_call.caller`` (the
    reasons and what upstream would need: docs/state.md, "Stack inspection"); a second walk anywhere fails here."""
    import re
    walks = re.compile(r'sys\._getframe|\.f_back\b|inspect\.(stack|currentframe|getouterframes)\b')
    found = []
    for path in PACKAGE.rglob('*.py'):
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef) and walks.search(ast.get_source_segment(path.read_text(), func) or ''):
                if not any(isinstance(inner, ast.FunctionDef) and inner is not func and walks.search(
                        ast.get_source_segment(path.read_text(), inner) or '') for inner in ast.walk(func)):
                    found.append(f'{path.relative_to(PACKAGE)}:{func.name}')
    assert found == ['evaluation/experiment_call.py:caller']


def test_every_temporary_file_and_folder_is_made_in_one_place():
    """Round seven: files made by write-then-rename kept mkstemp's 0600 wherever a caller forgot to re-mode them
    (the embedding cache's metadata); folders kept mkdtemp's 0700. files.temporary_file / temporary_folder give the
    umask's mode, and no other module makes a temporary file or folder."""
    import re
    makers = re.compile(r'\b(mkstemp|mkdtemp|NamedTemporaryFile|TemporaryDirectory|TemporaryFile)\(')
    found = [f'{path.relative_to(PACKAGE)}:{n}' for path in PACKAGE.rglob('*.py') if path.name != 'files.py'
             for n, line in enumerate(path.read_text().splitlines(), 1) if makers.search(line.split('#')[0])]
    assert found == []


def test_import_loads_no_heavy_module():
    code = ('import sys, pyterrier_frechet as pf; '
            'print(sorted(m for m in ("scipy.stats", "scipy.linalg", "torch", "sentence_transformers", "matplotlib", '
            '"pyterrier_frechet.core.frechet", "pyterrier_frechet.cli") if m in sys.modules)); '
            'print(pf.FD @ 10 in [pf.FD @ 10])')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split('\n')
    assert out[0] == '[]' and out[1] == 'True'


def test_no_module_compares_measure_names():
    import re
    compares = re.compile(r'\b(?!cls\b)\w+\.NAME\s*(==|!=|in\b|not\s+in\b)|\b(SET|VECTOR)_MEASURES\b')
    offenders = []
    for path in PACKAGE.rglob('*.py'):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if compares.search(line):
                offenders.append(f'{path.relative_to(PACKAGE)}:{lineno}: {line.strip()}')
    assert offenders == []


# --- the defects issue 14 listed, each with a test -------------------------------------------------------------

def test_report_accepts_measures_without_a_bootstrap_path(files, tmp_path, capsys):  # noqa: F811
    # was: exit 2 ("no fast path for FD(jackknife=True...)") after writing part of the folder, while eval accepted it
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']
    with pytest.warns(UserWarning, match=r'FD\(jackknife=True\)@3: in the results and correlations only; the '
                      r'bootstrap, comparison.* it resamples FD, CFD, DO, HSA'):  # left out, not silently
        assert main(['report', *data, '--metrics', 'FD(jackknife=True)@3', 'nDCG@3', '--samples', '120', '--per-query', '1',
                     '--seeds', '0', '--out', str(tmp_path / 'rep')]) == 0
    assert 'FD(jackknife=True)@3: in the results and correlations only' in (tmp_path / 'rep' / 'report.md').read_text()
    capsys.readouterr()
    assert main(['eval', *data, '--metrics', 'FD(jackknife=True)@3', 'nDCG@3', '--format', 'csv']) == 0
    evaluated = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).set_index('name')
    results = pd.read_csv(tmp_path / 'rep' / 'results.csv').set_index('name')
    assert results['FD(jackknife=True)@3'].to_dict() == pytest.approx(evaluated['FD(jackknife=True)@3'].to_dict(), rel=1e-12)
    assert set(pd.read_csv(tmp_path / 'rep' / 'bootstrap.csv').measure) == {'nDCG@3'}


def test_sparsify_with_missing_drop_labels_columns_like_every_other_command(files, capsys):  # noqa: F811
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--quiet']
    assert main(['sparsify', *data, '--metrics', 'FD@3', 'nDCG@3', '--missing', 'drop', '--per-query', '1', '--seeds', '0',
                 '--format', 'csv']) == 0
    assert set(pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out)).measure) == {'FD@3', 'nDCG@3'}


def test_bootstrap_module_is_not_shadowed_by_the_function():
    import importlib
    import types
    module = importlib.import_module('pyterrier_frechet.analyses.bootstrap')
    assert isinstance(module, types.ModuleType) and module.bootstrap is pf.bootstrap and callable(pf.bootstrap)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module('pyterrier_frechet.bootstrap')


def test_library_configures_no_logging_and_plots_choose_no_backend(tmp_path):
    code = f'''
import logging, sys
import pandas as pd
import pyterrier_frechet as pf
before = (logging.getLogger().handlers[:], logging.getLogger('pyterrier_frechet').level)
table = pd.DataFrame({{'name': list('abc'), 'nDCG@10': [0.1, 0.2, 0.3], 'FD@10': [3.0, 2.0, 1.0]}})
files = pf.plots.scatter(table, 'nDCG@10', 'FD@10', {str(tmp_path / 'fig')!r})
print('matplotlib.pyplot' in sys.modules, before == (logging.getLogger().handlers[:], logging.getLogger('pyterrier_frechet').level),
      sorted(f[-3:] for f in files))
'''
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ['False', 'True', "['pdf',", "'png']"]
    assert (tmp_path / 'fig.png').stat().st_size > 1000


# --- tests mirror the tree ---------------------------------------------------------------------------------------

TESTS = Path(__file__).resolve().parent


def _has_logic(source: str) -> bool:
    """False for a module that only re-exports names or holds constants and data: its top level is imports,
    assignments, its docstring, and at most an ``if __name__ == '__main__':`` guard. Anything else (a function, a
    class, a call, a loop) is logic, and gets a namesake test file."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # the docstring
            continue
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name)
                and node.test.left.id == '__name__'):
            continue
        return True
    return False


def _namesakes(modules):
    """module path -> the test file names that mirror it: ``pkg/x/jackknife.py`` -> ``test_jackknife.py`` (or
    ``test_x_jackknife.py``); a package's ``__init__.py`` -> ``test_<package>.py``. Where two modules share a basename
    (``evaluation/answers.py``, ``measures/answers.py``) the first in path order keeps ``test_answers.py`` and the
    others are ``test_<folder>_<module>.py`` (``test_measures_answers.py``)."""
    seen, out = set(), {}
    for path in sorted(modules):
        stem = path.parent.name if path.name == '__init__.py' else path.stem
        names = [f'test_{path.parent.name}_{stem}.py']
        if stem not in seen:
            names.insert(0, f'test_{stem}.py')
        seen.add(stem)
        out[path] = names
    return out


def test_the_logic_rule_tells_re_exports_and_data_from_code():
    assert not _has_logic('"""doc."""\nfrom .a import b  # noqa\nimport sys\n__all__ = ["b"]\nX: int = 3\nT = {"a": (1, 2)}\n')
    assert not _has_logic('import sys\nfrom .cli import main\nif __name__ == "__main__":\n    sys.exit(main())\n')
    assert _has_logic('def f():\n    return 1\n') and _has_logic('class A:\n    pass\n') and _has_logic('register()\n')
    assert _has_logic('import os\nif os.name == "nt":\n    X = 1\n')
    names = _namesakes([Path('p/x/answers.py'), Path('p/y/answers.py'), Path('p/y/__init__.py'), Path('p/__init__.py')])
    assert names == {Path('p/__init__.py'): ['test_p.py', 'test_p_p.py'],
                     Path('p/x/answers.py'): ['test_answers.py', 'test_x_answers.py'],
                     Path('p/y/__init__.py'): ['test_y.py', 'test_y_y.py'],
                     Path('p/y/answers.py'): ['test_y_answers.py']}


def test_every_module_with_logic_has_a_namesake_test_file():
    """Tests mirror the tree (docs/tests.md): a module with logic has a test file named after it, which holds the
    tests of that module; a new module gets its file when it is written."""
    modules = [p for p in PACKAGE.rglob('*.py') if 'pt_docs' not in p.relative_to(PACKAGE).parts]
    assert len(modules) > 40
    with_logic = {p: names for p, names in _namesakes(modules).items() if _has_logic(p.read_text())}
    assert len(with_logic) > 40
    missing = sorted(f'{p.relative_to(PACKAGE.parent)} -> tests/{names[0]}' for p, names in with_logic.items()
                     if not any((TESTS / n).exists() and 'def test_' in (TESTS / n).read_text() for n in names))
    assert missing == [], 'modules with logic and no namesake test file (holding tests):\n' + '\n'.join(missing)


def test_public_entry_points_take_at_most_ten_positional_or_keyword_parameters():
    # past their data arguments the options are keyword-only (def paper_table(runs, qrels, measures=..., *, ...)), as
    # scikit-learn and PyTerrier do: every public function, class constructor and public method of the package's
    # namespace, and of the modules it exposes (pf.plots, pf.runs, ...)
    import inspect
    offenders = []
    for name in pf.__all__:
        obj = getattr(pf, name)
        if inspect.isfunction(obj):
            found = [(name, obj)]
        elif inspect.isclass(obj):
            found = [(f'{name}.__init__', obj.__init__)] + [(f'{name}.{k}', v) for k, v in vars(obj).items()
                                                            if inspect.isfunction(v) and not k.startswith('_')]
        elif inspect.ismodule(obj):
            found = [(f'{name}.{k}', v) for k, v in vars(obj).items()
                     if inspect.isfunction(v) and not k.startswith('_') and v.__module__ == obj.__name__]
        else:
            continue
        for label, fn in found:
            try:
                params = inspect.signature(fn).parameters.values()
            except (TypeError, ValueError):
                continue
            n = sum(p.kind == p.POSITIONAL_OR_KEYWORD and p.name not in ('self', 'cls') for p in params)
            if n > 10:
                offenders.append((label, n))
    assert offenders == []
