"""d = 384 in both worlds of this check, on the package's current defaults (lead engineer, stop 43).

The check itself ran 18 (graded) and 47 (aniso) query sets at d = 384 on the normal reference; `parallel.py` ran
more on a 16-core machine with the defaults of stop 42 (t(n − 1) reference for FD, the t interval for nDCG@10):
`results/device/` (graded trials 18 …, aniso 47 … and 200 …; the trial seeds are `run.py`'s, disjoint from the
earlier ones). The earlier intervals are re-read on t(n − 1) exactly as `t_reference.py` does (log-scale half-width
× t/z; ΔFD half-width × t/z; p re-read on t(42)); their nDCG@10 intervals (percentile, 200 resamples) are left out,
since the default is now the t interval, which `ndcg_interval.py` measured on 1000 sets per world.

    python -m benchmarks.unseen_world2.d384

Truth = mean of the own values over the reference sets, as in every table here: 4000 sets for aniso
(`truth_aniso_d384_r4000.csv.gz`; the 400 of `truth_aniso_d384.csv` put E[FD(per_query=5)] 0.8 % lower, 1.7 SE),
the check's 400 for graded.
"""
import glob
import os

import numpy as np
import pandas as pd
from scipy import stats

import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.unseen_world2.t_reference import N, p_on_t, widen_about

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, 'results')


def sets(world, kind):
    """The d = 384 rows of ``kind`` ('trials' or 'pairs'): earlier ones re-read on t(n − 1), device ones as recorded."""
    old = pd.read_csv(os.path.join(RES, f'{kind}_{world}_d384.csv')).assign(source='check (re-read on t)')
    new = [pd.read_csv(p) for p in sorted(glob.glob(os.path.join(RES, 'device', f'{kind}_{world}_d384_*.csv')))]
    assert not any(set(x.trial) & set(y.trial) for i, x in enumerate(new) for y in new[i + 1:]), 'device batches overlap'
    new = pd.concat(new).assign(source='device (recorded)')
    assert not set(old.trial) & set(new.trial), 'trial seeds overlap'
    if kind == 'trials':
        old = old[old.measure != 'nDCG'].copy()
        low, high = widen_about(np.log(old.value), np.log(old.low), np.log(old.high))
        old['low'], old['high'] = np.exp(low), np.exp(high)
    else:
        old['ci_low'], old['ci_high'] = widen_about(old['diff'], old.ci_low, old.ci_high)
        old['p'] = p_on_t(old.p)
    return pd.concat([old, new], ignore_index=True)


def truth_file(world):
    """The reference sets' own values: 4000 sets where they were run on (aniso: ``UW2_RES=DIR python run.py truth aniso
    384 4000``, whose first 400 are the 400 of ``truth_aniso_d384.csv`` to the last digit), else the check's 400."""
    more = os.path.join(RES, f'truth_{world}_d384_r4000.csv.gz')
    return more if os.path.exists(more) else os.path.join(RES, f'truth_{world}_d384.csv')


def cover_se(cover: pd.Series, trial: pd.Series) -> float:
    """Standard error of a coverage over rows clustered in query sets (the systems of one set share its queries)."""
    per_set = cover.groupby(trial.values).mean()
    return float(per_set.std(ddof=1) / np.sqrt(len(per_set)))


def scored(kind):
    """(world, measure label, rows with their truth) for ``kind`` 'trials' (truth E[value at 43 queries]) or 'pairs'
    (truth the difference of those; nDCG's pairs only from the device sets, the earlier ones used the percentile)."""
    measures = (('FD', 'FD@10'), ('FDpq5', 'FD(per_query=5)@10'),
                ('nDCG', 'nDCG@10 (t)' if kind == 'trials' else 'nDCG@10 (device sets)'))
    for world in ('graded', 'aniso'):
        truth = pd.read_csv(truth_file(world)).mean()
        rows = sets(world, kind)
        for measure, label in measures:
            r = rows[rows.measure == measure].copy()
            if kind == 'pairs':
                r = r[r.source == 'device (recorded)'] if measure == 'nDCG' else r
                r['truth'] = [truth[f'{a}_{measure}'] - truth[f'{b}_{measure}'] for a, b in zip(r.a, r.b)]
            else:
                r['truth'] = [truth[f'{s}_{measure}'] for s in r.system]
            yield world, measure, label, r


def main():
    tq = stats.t.ppf(0.975, N - 1)
    print('Truths: ' + ', '.join(f'{w} {os.path.basename(truth_file(w))}' for w in ('graded', 'aniso')) + '\n')
    print('| world | measure | query sets | coverage (SE over sets) | interval above / below the truth '
          '| √mean SE_J² / SD over sets (log scale; nDCG linear) | SD of (θ̂ − truth)/SE_J | Spearman ρ(θ̂, SE_J) |')
    print('|---|---|---|---|---|---|---|---|')
    for world, measure, label, r in scored('trials'):
        cover = (r.low <= r.truth) & (r.truth <= r.high)
        if measure == 'nDCG':   # linear-scale t interval
            se, sd = (r.high - r.low) / (2 * tq), r.groupby('system').value.transform('std')
        else:
            se = np.log(r.high / r.low) / (2 * tq)
            sd = np.log(r.value).groupby(r.system).transform('std')
        scale = (lambda x: x) if measure == 'nDCG' else np.log
        dev = scale(r.value) - scale(r.truth)
        rho = stats.spearmanr(dev - dev.groupby(r.system).transform('mean'), se).correlation
        print(f'| {world} | {label} | {r.trial.nunique()} | {cover.mean():.3f} ({cover_se(cover, r.trial):.3f}) '
              f'| {(r.low > r.truth).sum()} / {(r.high < r.truth).sum()} | {np.sqrt(np.mean(se ** 2 / sd ** 2)):.2f} '
              f'| {(dev / se).std():.2f} | {rho:+.2f} |')
    print('\nΔFD intervals and the default paired test (A and B equal in law):\n')
    print('| world | measure | query sets | ΔFD coverage (SE) | level A–B (α 0.05) | mean power, other pairs |')
    print('|---|---|---|---|---|---|')
    for world, measure, label, r in scored('pairs'):
        equal = (r.a == 'A') & (r.b == 'B')
        cover = (r.ci_low <= r.truth) & (r.truth <= r.ci_high)
        print(f'| {world} | {label} | {r.trial.nunique()} | {cover.mean():.3f} ({cover_se(cover, r.trial):.3f}) '
              f'| {(r.p[equal] < 0.05).mean():.3f} | {(r.p[~equal] < 0.05).mean():.2f} |')


if __name__ == '__main__':
    main()
