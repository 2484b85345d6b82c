"""Does the per-set interval caveat separate the query sets whose FD interval missed from those whose interval covered?

Up to commit cd2a9f0 ``pf.interval_caveat`` (and the report, the paper table's caption, ``eval``) printed, for each
evaluated set, one of three sentences from the spread of its relevant counts per query: "no query has more than 5"
(FD equals FD(per_query=5)), "FD intervals may be too narrow here", or — sd of log count ≥ 1.0 — "FD intervals are
probably too narrow here" (:func:`caveat_level`, that rule). A per-set alarm earns its place only if it separates
sets that miss from sets that cover; this script measured that it did not, and the package now states the measured
range instead (pyterrier_frechet/analyses/validity.py).

This script replays the recorded trials of the calibration worlds (``benchmarks/results/calibration-worlds/NAME.trials.csv.gz``:
the same seeded draws, ``benchmarks.calibrate_worlds.run``'s stream, no FD computed), classifies every trial's query
set as that caveat did (:func:`caveat_level`) and prints, per setting and class,
how often the default FD interval (``jackknife_log t``, for E[FD̂ₙ]) covered, pooled over systems, with the Clopper–
Pearson interval of that share over the sets (a set counts as covering in the share of its systems that covered).

    python -m benchmarks.caveat_separation [--out benchmarks/results/caveat-separation.csv]
"""
import argparse
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
#: (setting, world, d, queries, bootstrap samples per trial, systems or None): the recorded runs with a trials file,
#: FD's own relevant side (not the per_query=5 settings), arguments as benchmarks/results/calibration-worlds/README.md gives them
SETTINGS = [
    ('cranfield-384-43', 'cranfield', 384, 43, 0, None),
    ('scifact-384-43', 'scifact', 384, 43, 0, None),
    ('dl19runs-384-43', 'dl19-runs', 384, 43, 200, None),
    ('heavy-128-43', 'heavy', 128, 43, 200, None),
    ('sphere-128-43', 'sphere', 128, 43, 200, None),
    ('topics-128-43', 'topics', 128, 43, 200, None),
    ('independent-384-200', 'independent', 384, 200, 0, None),
    ('heavy-384-200', 'heavy', 384, 200, 0, None),
    ('sphere-384-200', 'sphere', 384, 200, 0, None),
    ('cranfield-384-200', 'cranfield', 384, 200, 0, None),
    ('independent-384-600', 'independent', 384, 600, 0, ['good', 'mid_a', 'mid_b', 'weak']),
]


def caveat_level(counts) -> tuple:
    """The class the caveat printed up to cd2a9f0 gave a set, from its relevant counts per query (queries with at
    least one): ``'few'`` (no query has more than 5), ``'probably'`` (sd of log count ≥ 1.0) or ``'may'``; and that sd."""
    counts = np.asarray(counts, dtype=np.float64)
    sd = float(np.log(counts).std())
    if counts.max() <= 5:
        return 'few', sd
    return ('probably' if sd >= 1.0 else 'may'), sd


def replay_counts(world, n: int, n_trials: int, n_samples: int, seed: int = 0):
    """The relevant count of every query of each trial's set, drawn as ``calibrate_worlds.run`` draws them (its rng
    ``default_rng([seed, n, 12])``: the set, then the bootstrap counts of that trial), and each set's mean nDCG@k of
    the first system (to check against the recorded trial: the same set)."""
    from benchmarks.calibrate_worlds import _draw_counts, ndcg_per_query
    rng = np.random.default_rng([seed, n, 12])
    out, ndcg = [], []
    for _ in range(n_trials):
        sample = world.draw(n, rng)
        index = {q: i for i, q in enumerate(sample.qids)}
        out.append(np.bincount([index[q] for q in sample.relevant_qid], minlength=n))
        ndcg.append(float(ndcg_per_query(sample, world.systems[0], world.k).mean()))
        if n_samples:
            _draw_counts(rng, n_samples, n)
    return out, ndcg


def cp(k: float, n: int, level: float = 0.95):
    """Clopper–Pearson interval of k successes in n (k rounded to the nearest integer)."""
    k = int(round(k))
    a = (1 - level) / 2
    low = scipy.stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    high = scipy.stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(low), float(high)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default=None)
    ap.add_argument('--only', nargs='*', default=None, help='settings to replay (default: all of SETTINGS)')
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    from benchmarks.worlds import make_world
    rows, per_set = [], []
    for name, world_name, d, n, n_samples, systems in SETTINGS:
        if args.only and name not in args.only:
            continue
        trials = pd.read_csv(ROOT / 'benchmarks' / 'results' / 'calibration-worlds' / f'{name}.trials.csv.gz')
        fd = trials[(trials.statistic == 'FD') & (trials.method == 'jackknife_log t') & (trials.estimand == 'E[FD_n]')]
        fd = fd.assign(cover=(fd.low <= fd.truth) & (fd.truth <= fd.high))
        n_trials = int(fd.trial.max()) + 1
        world = make_world(world_name, d=d, seed=0)
        if systems:
            world.systems = [s for s in world.systems if s in systems]
        n = min(n, world.max_queries) if world.max_queries else n
        counts, ndcg = replay_counts(world, n, n_trials, n_samples)
        recorded = trials[(trials.statistic == 'nDCG') & (trials.method == 't') & (trials.who == world.systems[0])
                          & (trials.estimand == 'population mean')].set_index('trial')['estimate']
        if not np.allclose(recorded.reindex(range(n_trials)).to_numpy(), ndcg, rtol=1e-9, atol=1e-12):
            raise SystemExit(f'{name}: the replayed sets are not the recorded ones (mean nDCG differs)')
        for t, c in enumerate(counts):
            level, sd = caveat_level(c[c > 0])
            covered = fd[fd.trial == t].cover
            per_set.append({'setting': name, 'trial': t, 'level': level, 'sd_log': sd, 'max_relevant': int(c.max()),
                            'cover': float(covered.mean()), 'systems': int(len(covered))})
    sets = pd.DataFrame(per_set)
    for (name, level), g in sets.groupby(['setting', 'level'], sort=False):
        k = float((g.cover * g.systems).sum())
        m = int(g.systems.sum())
        low, high = cp(k, m)
        rows.append({'setting': name, 'caveat': level, 'sets': len(g), 'sd_log': f'{g.sd_log.min():.2f}–{g.sd_log.max():.2f}',
                     'coverage': k / m, 'cp_low': low, 'cp_high': high,
                     'sets_all_covered': float((g.cover == 1).mean())})
    table = pd.DataFrame(rows)
    with pd.option_context('display.width', 200, 'display.max_columns', 20):
        print(table.to_string(index=False, float_format=lambda v: f'{v:.3f}'))
    # within a setting: does a larger spread go with more misses? (Spearman over sets)
    for name, g in sets.groupby('setting', sort=False):
        if g.sd_log.nunique() > 2 and g.cover.nunique() > 1:
            rho = scipy.stats.spearmanr(g.sd_log, g.cover).statistic
            print(f'{name}: Spearman(sd of log count, share of systems covered) over {len(g)} sets = {rho:+.2f}')
    if args.out:
        table.to_csv(args.out, index=False)
        sets.to_csv(args.out.replace('.csv', '.sets.csv'), index=False)


if __name__ == '__main__':
    main()
