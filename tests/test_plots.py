"""The figures' content, inspected on the matplotlib Figure before it is saved: labels, title, legend entries,
tick labels that do not overlap (bounding boxes from a renderer), nothing outside the figure; and where the demo
writes them."""
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from pyterrier_frechet import demo
from pyterrier_frechet.analyses import plots
from pyterrier_frechet.analyses.outputs import MARKER
from pyterrier_frechet.cli import main

# the demo's three systems at demo-like costs; by hand, each is faster or better than each other one in FD@10, so
# all three are on the frontier; in MIXED, 'slow-worse' (120 ms, 0.65) is dominated by 'slow-good' (100 ms, 0.70)
DEMO = pd.DataFrame({'name': ['BM25 (PISA)', 'BM25 >> all-MiniLM-L6-v2', 'Dense (all-MiniLM-L6-v2)'],
                     'mrt': [2.1, 14.3, 6.2], 'FD@10': [0.9, 0.6, 0.7], 'nDCG@10': [0.35, 0.42, 0.38]})
MIXED = pd.DataFrame({'name': ['fast-bad', 'mid', 'slow-good', 'slow-worse'], 'mrt': [1.0, 10.0, 100.0, 120.0],
                      'nDCG@10': [0.30, 0.60, 0.70, 0.65]})


def _renderer(fig):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _labels(axis):
    """Visible, non-empty tick labels (major and minor) whose tick lies in the view (the figure drawn first: tick
    texts are set when drawn)."""
    _renderer(axis.figure)
    lo, hi = sorted(axis.get_view_interval())
    ticks = list(zip(axis.get_majorticklocs(), axis.get_major_ticks())) + \
        list(zip(axis.get_minorticklocs(), axis.get_minor_ticks()))
    return [t.label1 for loc, t in ticks if lo <= loc <= hi and t.label1.get_visible() and t.label1.get_text()]


def _overlaps(boxes):
    return [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]


def _check_layout(fig):
    """Tick labels of each axis pairwise disjoint; title, axis labels, tick labels and legends inside the figure."""
    renderer = _renderer(fig)
    ax = fig.axes[0]
    for axis in (ax.xaxis, ax.yaxis):
        labels = _labels(axis)
        assert len(labels) >= 2, f'too few tick labels: {[t.get_text() for t in labels]}'
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert _overlaps(boxes) == [], [t.get_text() for t in labels]
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts] + _labels(ax.xaxis) + _labels(ax.yaxis)
    boxes = [t.get_window_extent(renderer) for t in texts if t.get_text()]
    boxes += [leg.get_window_extent(renderer) for leg in fig.legends + ([ax.get_legend()] if ax.get_legend() else [])]
    box = fig.bbox
    for b in boxes:
        assert b.x0 >= box.x0 - 0.5 and b.y0 >= box.y0 - 0.5 and b.x1 <= box.x1 + 0.5 and b.y1 <= box.y1 + 0.5, (b, box)


def _legend_texts(fig):
    legends = fig.legends + [a.get_legend() for a in fig.axes if a.get_legend()]
    assert len(legends) == 1
    return [t.get_text() for t in legends[0].get_texts()], legends[0]


def test_pareto_figure_content():
    fig = plots.pareto_figure(DEMO, 'FD@10')
    ax = fig.axes[0]
    assert ax.get_xlabel() == 'mrt (lower is better, ms per query)'
    assert ax.get_ylabel() == 'FD@10 (lower is better)'
    assert ax.get_title().startswith('FD@10 against mrt: 3 of 3 systems on the Pareto frontier')
    texts, legend = _legend_texts(fig)
    assert texts == DEMO['name'].tolist()  # one entry per system, no empty or generic entry
    assert ax.get_xscale() == 'log'
    # round plain numbers on the cost axis (no 2×10^0 minor labels), all inside the data's range with its margin
    xt = [t.get_text() for t in _labels(ax.xaxis)]
    assert xt == ['2', '5', '10']
    _check_layout(fig)


def test_pareto_marks_dominated_hollow():
    fig = plots.pareto_figure(MIXED, 'nDCG@10')
    ax = fig.axes[0]
    assert ax.get_ylabel() == 'nDCG@10 (higher is better)'
    assert ax.get_title().startswith('nDCG@10 against mrt: 3 of 4 systems on the Pareto frontier')
    texts, legend = _legend_texts(fig)
    assert texts == MIXED['name'].tolist()
    # by hand: slow-worse (120 ms, 0.65) is dominated by slow-good (100 ms, 0.70); the others are not dominated
    filled = {name: len(h.get_facecolor()) > 0 and h.get_facecolor()[0][3] > 0
              for name, h in zip(texts, legend.legend_handles)}
    assert filled == {'fast-bad': True, 'mid': True, 'slow-good': True, 'slow-worse': False}
    # the frontier line passes through the frontier's points, in cost order
    (line,) = ax.get_lines()
    xs, ys = line.get_data()
    assert list(xs) == [1.0, 10.0, 100.0] and list(ys) == [0.30, 0.60, 0.70]
    assert [t.get_text() for t in _labels(ax.xaxis)] == ['1', '10', '100']
    _check_layout(fig)


@pytest.mark.parametrize('costs', [
    [3.1, 3.2, 3.3],                       # a tenth of a decade
    [2.1, 14.3, 6.2],                      # under a decade (where matplotlib's minor labels overlapped)
    [0.05, 3.0, 400.0, 9000.0],            # five decades
    [1e-3, 1.0, 1e3, 1e6, 1e7, 2.0, 5e4],  # ten decades
])
def test_log_tick_labels_never_overlap(costs):
    names = [f'system number {i}' for i in range(len(costs))]
    table = pd.DataFrame({'name': names, 'mrt': costs, 'nDCG@10': np.linspace(0.2, 0.5, len(costs))})
    fig = plots.pareto_figure(table, 'nDCG@10')
    assert _legend_texts(fig)[0] == names
    _check_layout(fig)


def test_many_systems_legend_inside_figure():
    n = 19  # the DL19 runs
    table = pd.DataFrame({'name': [f'run-{i:02d}-with-a-long-name' for i in range(n)],
                          'mrt': np.geomspace(1, 500, n), 'nDCG@10': np.linspace(0.3, 0.7, n)[::-1]})
    fig = plots.pareto_figure(table, 'nDCG@10')
    assert _legend_texts(fig)[0] == table['name'].tolist()
    _check_layout(fig)


def test_log_ticks_are_round_spaced_and_in_range():
    for lo, hi in [(1.8, 17.0), (2.7, 5.2), (0.5, 5000.0), (3.1, 3.2), (1e-3, 1e6), (40.0, 2000.0)]:
        ticks = plots.log_ticks(lo, hi)
        assert len(ticks) >= 2 and ticks == sorted(set(ticks))
        assert all(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks)
        gaps = np.diff(np.log10(ticks))
        assert (gaps >= 0.12 * np.log10(hi / lo) - 1e-12).all() and len(ticks) <= 8
        assert all(len(f'{t:g}') <= 6 for t in ticks)  # plain, short labels
    assert plots.log_ticks(1.8, 17.0) == [2.0, 5.0, 10.0]
    assert plots.log_ticks(0.5, 5000.0) == [1.0, 10.0, 100.0, 1000.0]
    assert plots.log_ticks(2.7, 5.2) == [3.0, 4.0, 5.0]
    assert plots.log_ticks(0.4, 24.0) == [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]  # the demo's range: 1 and 10 kept


def test_other_figures_content(tmp_path):
    """The bootstrap-interval and sparsification figures keep their layout rules too (inspected after saving)."""
    fig, ax = plots._figure((5, 3.5))
    assert fig.get_layout_engine() is not None  # constrained layout: labels kept inside the figure
    summary = pd.DataFrame({'measure': 'FD@10', 'name': ['a', 'b'], 'estimate': [0.2, 0.3], 'value': [0.2, 0.3],
                            'low': [0.1, 0.25], 'high': [0.3, 0.4], 'interval': 'percentile'})
    written = plots.bootstrap_intervals(summary, 'FD@10', tmp_path / 'boot')
    assert [Path(p).suffix for p in written] == ['.png', '.pdf']
    import matplotlib.image
    img = matplotlib.image.imread(written[0])
    assert img.shape[0] > 100 and img.shape[1] > 100 and img[..., :3].std() > 0.01  # drawn, not blank


def test_pareto_png_written(tmp_path):
    written = plots.pareto(DEMO, 'FD@10', tmp_path / 'p')
    import matplotlib.image
    img = matplotlib.image.imread(written[0])
    # 7.5 x 4.5 in at 200 dpi; bbox_inches='tight' crops to the drawn artists plus its 0.1 in pad on each side
    assert 1000 < img.shape[1] <= (7.5 + 0.2) * 200 and 600 < img.shape[0] <= (4.5 + 0.2) * 200


# --- scatter labels: readable when systems are close ---

def _text_boxes(fig):
    """The boxes of the axes' texts (the labels; an annotation's own text, without its leader line)."""
    from matplotlib.text import Text
    renderer = _renderer(fig)
    return [(t.get_text(), Text.get_window_extent(t, renderer)) for t in fig.axes[0].texts]


def test_scatter_labels_of_near_identical_systems_do_not_overlap():
    # three systems within 1e-6 of one another (one place on the plot), two 1e-5 apart, two a marker's width apart
    table = pd.DataFrame({'name': ['BM25', 'BM25+RM3', 'BM25 (PISA)', 'TAS-B', 'ColBERT', 'DPR', 'DPR-2', 'SPLADE'],
                          'nDCG@10': [0.5, 0.5 + 1e-6, 0.5 - 1e-6, 0.62, 0.62 + 1e-5, 0.3, 0.301, 0.45],
                          'FD@10': [0.2, 0.2, 0.2 + 1e-7, 0.1, 0.1, 0.15, 0.1505, 0.12]})
    fig = plots.scatter_figure(table, 'nDCG@10', 'FD@10')
    boxes = _text_boxes(fig)
    assert _overlaps([b for _, b in boxes]) == [], [t for t, _ in boxes]
    frame = fig.axes[0].get_window_extent(_renderer(fig))
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for _, b in boxes)
    # every system named once, by name (no key needed); the three at one place share one label, a name a line
    assert sorted(n for t, _ in boxes for n in t.split('\n')) == sorted(table['name']) and fig.legends == []
    assert 'BM25\nBM25+RM3\nBM25 (PISA)' in [t for t, _ in boxes]
    # a label's box covers no point
    pts = fig.axes[0].transData.transform(table[['nDCG@10', 'FD@10']].to_numpy())
    assert not any(b.contains(x, y) for _, b in boxes for x, y in pts)
    _check_layout(fig)


def test_scatter_labels_the_old_way_would_overlap():
    """The case above with each label at (3, 2) points from its point, as scatter drew them before: they overlap."""
    table = pd.DataFrame({'name': ['BM25', 'BM25+RM3', 'DPR'], 'nDCG@10': [0.5, 0.5 + 1e-6, 0.3],
                          'FD@10': [0.2, 0.2, 0.15]})
    fig = plots.scatter_figure(table, 'nDCG@10', 'FD@10')
    ax = fig.axes[0]
    for t in list(ax.texts):
        t.remove()
    old = [ax.annotate(n, (x, y), fontsize=6, xytext=(3, 2), textcoords='offset points')
           for n, x, y in zip(table['name'], table['nDCG@10'], table['FD@10'])]
    renderer = _renderer(fig)
    assert _overlaps([t.get_window_extent(renderer) for t in old[:2]]) != []


def test_scatter_numbers_a_crowd_with_a_key():
    """Forty long names at one place cannot be stacked beside it: the points are numbered (ranges for points at one
    place), a key below the axes names every system, and nothing overlaps or leaves the figure."""
    names = [f'a very long system name number {i}' for i in range(40)]
    table = pd.DataFrame({'name': names, 'nDCG@10': [0.5] * 39 + [0.6], 'FD@10': [0.2] * 39 + [0.1]})
    fig = plots.scatter_figure(table, 'nDCG@10', 'FD@10')
    boxes = _text_boxes(fig)
    assert sorted(t for t, _ in boxes) == ['1–39', '40'] and _overlaps([b for _, b in boxes]) == []
    (key,) = fig.legends
    assert [t.get_text() for t in key.get_texts()] == names
    _check_layout(fig)
    assert plots.number_ranges([1, 2, 3, 5, 7, 8]) == '1–3, 5, 7, 8'


# --- where the demo writes ---

def test_demo_figures_default_to_the_work_dir(tmp_path, monkeypatch):
    """WORK_DIR/figures, as the docs and --help say: beside the indexes, never the current directory."""
    monkeypatch.chdir(tmp_path / '..')
    assert demo.figures_folder(work_dir=tmp_path / 'work').path == (tmp_path / 'work' / 'figures').resolve()
    monkeypatch.setenv('PYTERRIER_FRECHET_CACHE', str(tmp_path / 'cache'))  # no work dir: the package's cache root
    assert demo.figures_folder().path == (tmp_path / 'cache' / 'figures').resolve()
    assert demo.figures_folder(tmp_path / 'mine', work_dir=tmp_path / 'work').path == (tmp_path / 'mine').resolve()


def test_demo_refuses_a_foreign_folder_before_any_work(tmp_path, monkeypatch):
    def no_work():
        raise AssertionError('the collection was loaded before the folder was checked')
    monkeypatch.setattr(demo, 'cranfield', no_work)
    (tmp_path / 'mine').mkdir()
    (tmp_path / 'mine' / 'thesis.tex').write_text('keep me')
    with pytest.raises(ValueError, match='holds files this package did not write'):
        demo.run_demo(None, str(tmp_path / 'work'), verbose=False, figures_dir=tmp_path / 'mine')
    # the default folder, WORK_DIR/figures, holding a file of the user's: refused, with the path it would have used
    (tmp_path / 'work' / 'figures').mkdir(parents=True)
    (tmp_path / 'work' / 'figures' / 'notes.txt').write_text('x')
    with pytest.raises(ValueError, match=r"figures_dir '.*work/figures'"):
        demo.run_demo(None, str(tmp_path / 'work'), verbose=False)
    assert main(['demo', '--work-dir', str(tmp_path / 'work'), '--quiet']) == 2
    assert (tmp_path / 'work' / 'figures' / 'notes.txt').read_text() == 'x'  # nothing touched
    assert main(['demo', '--work-dir', str(tmp_path / 'work'), '--figures', str(tmp_path / 'mine'), '--quiet']) == 2
    assert (tmp_path / 'mine' / 'thesis.tex').read_text() == 'keep me'


def test_demo_writes_marked_folder(tmp_path, monkeypatch, capsys):
    """run_demo's figure step, with the retrieval and evaluation replaced by a fixed table (the real run is in
    tests/test_demo.py): a new folder, WORK_DIR/figures, gets the four figures and the package's marker; a second
    run replaces them; the current directory stays empty; the command line prints the folder."""
    (tmp_path / 'cwd').mkdir()
    monkeypatch.chdir(tmp_path / 'cwd')

    class Stop(Exception):
        pass

    table = DEMO.assign(**{'FD@1': 1.0, 'FD(urr=True)@10': 0.5, 'RR@10': 0.5})

    class FakeEmbedder:
        n_encoded = 0
        name = 'fake'

    monkeypatch.setattr(demo, 'cranfield', lambda: type('C', (), {'texts': {}, 'topics': None, 'qrels': None})())
    monkeypatch.setattr(demo, 'Embedder', lambda *a, **k: FakeEmbedder())
    monkeypatch.setattr(demo.pipelines, 'bm25', lambda *a, **k: _Pipe())
    monkeypatch.setattr(demo.pipelines, 'dense_reranker', lambda *a, **k: _Pipe())
    monkeypatch.setattr(demo.pipelines, 'dense', lambda *a, **k: _Pipe())
    monkeypatch.setattr(demo.pt, 'Experiment', lambda *a, **k: table)
    result = demo.run_demo(None, str(tmp_path / 'work'), verbose=False)
    folder = tmp_path / 'work' / 'figures'
    assert sorted(Path(f).name for f in result.figures) == sorted(demo.figure_names())
    assert sorted(p.name for p in folder.iterdir()) == sorted(demo.figure_names() + [MARKER])
    assert result.frontiers['FD@10'] == DEMO['name'].tolist()
    assert sorted(result.figures) == sorted(str(folder.resolve() / n) for n in demo.figure_names())
    again = demo.run_demo(None, str(tmp_path / 'work'), verbose=False)  # a marked folder is accepted again
    assert sorted(again.figures) == sorted(result.figures)
    FakeEmbedder.cache = type('Cache', (), {'path': tmp_path / 'work' / 'embeddings'})()
    assert main(['demo', '--work-dir', str(tmp_path / 'work'), '--quiet']) == 0
    out = capsys.readouterr().out
    assert f'Pareto plots (PNG and PDF) in {folder.resolve()}: pareto_FD_10_mrt.png, pareto_nDCG_10_mrt.png' in out
    assert list((tmp_path / 'cwd').iterdir()) == []  # nothing written into the current directory


class _Pipe:
    def __rshift__(self, other):
        return self
