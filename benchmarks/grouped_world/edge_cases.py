"""How query_groups= treats odd inputs (tiny d = 8 world, one system pair). Prints each outcome."""
import warnings
import numpy as np
import pyterrier_frechet as pf
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import DictEncoder, Space, draw_query_set, frames

warnings.simplefilter('ignore')


qs = draw_query_set(Space(8), 6, np.random.default_rng(3), systems={'A': (1.0, 0.3, 1.0), 'B': (0.0, 0.5, 0.8)})
qrels, runs, vecs, groups = frames(qs, systems={'A': 0, 'B': 0})
m = pf.FD(encoder=DictEncoder(vecs)) @ 10
print('n =', len(groups), 'G =', len(set(groups.values())))


def show(label, qg, **kw):
    try:
        r = pf.bootstrap(runs, qrels, [m], n_samples=50, seed=0, verbose=False, query_groups=qg, **kw)
        s = r.summary.iloc[0]
        print(f'{label}: OK low={s.low:.5f} high={s.high:.5f} interval={s.interval!r}')
    except Exception as e:
        print(f'{label}: {type(e).__name__}: {e}')


show('true groups', groups)
show('no groups', None)
show('every query its own group', {q: q for q in groups})
show('one group for all', {q: 'x' for q in groups})
g2 = dict(groups); g2.pop(next(iter(g2)))
show('a judged query missing', g2)
g3 = dict(groups); g3['not_a_query'] = 'zz'
show('an extra qid not in the qrels', g3)
g4 = {q: (None if i == 0 else g) for i, (q, g) in enumerate(groups.items())}
show('a None group label', g4)
g5 = {q: float('nan') if i == 0 else g for i, (q, g) in enumerate(groups.items())}
show('a NaN group label', g5)
import pandas as pd
show('a Series', pd.Series(groups))
show('a frame qid/group', pd.DataFrame({'qid': list(groups), 'group': list(groups.values())}))
show('a frame with other column names', pd.DataFrame({'query': list(groups), 'topic': list(groups.values())}))
show('true groups + population=1000', groups, population=1000)
show('true groups + jackknife=exact', groups, jackknife='exact')
show('true groups + interval=percentile', groups, interval='percentile')
