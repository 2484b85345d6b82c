"""Cost next to quality: the Pareto frontier, orientation-aware, on tables worked out by hand."""
import pandas as pd
import pytest

from pyterrier_frechet import plots
from pyterrier_frechet.analyses.cost import pareto_frontier

TABLE = pd.DataFrame({
    'name': ['fast-bad', 'mid', 'slow-good', 'slow-worse', 'tie-mid'],
    'mrt': [1.0, 10.0, 100.0, 120.0, 10.0],
    'nDCG@10': [0.30, 0.60, 0.70, 0.65, 0.60],
    'FD@10': [0.50, 0.20, 0.30, 0.10, 0.20],
})


def test_higher_is_better_metric():
    # slow-worse is slower and worse than slow-good; mid and tie-mid are equal (neither dominates the other)
    got = pareto_frontier(TABLE, 'nDCG@10')
    assert got.loc[got.pareto, 'name'].tolist() == ['fast-bad', 'mid', 'slow-good', 'tie-mid']


def test_lower_is_better_metric_is_oriented():
    # FD: lower is better. slow-good (0.30 at 100 ms) is dominated by mid (0.20 at 10 ms); slow-worse has the best FD
    got = pareto_frontier(TABLE, 'FD@10')
    assert got.loc[got.pareto, 'name'].tolist() == ['fast-bad', 'mid', 'slow-worse', 'tie-mid']


def test_other_cost_column_and_bad_input():
    t = TABLE.assign(cost_usd=[5.0, 1.0, 2.0, 3.0, 4.0])
    got = pareto_frontier(t, 'nDCG@10', cost='cost_usd')
    assert got.loc[got.pareto, 'name'].tolist() == ['mid', 'slow-good']
    with pytest.raises(ValueError, match="no column"):
        pareto_frontier(TABLE.drop(columns='mrt'), 'nDCG@10')
    with pytest.raises(ValueError, match='no finite'):
        pareto_frontier(TABLE.assign(mrt=[1.0, None, 3.0, 4.0, 5.0]), 'nDCG@10')


def test_plot_files(tmp_path):
    files = plots.pareto(TABLE, 'FD@10', tmp_path / 'p')
    assert sorted(p.rsplit('/', 1)[1] for p in files) == ['p.pdf', 'p.png']
