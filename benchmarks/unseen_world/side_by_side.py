"""FD@10's default interval and test beside FD(per_query=5)@10's, on the same query sets of every setting measured.

Reads results/trials_{world}_d{D}_n{N}_{intervals,pairs}.csv (FD@10 and nDCG@10: trials.py) and
results/variant_per_query5_{world}_d{D}_n{N}{,_pairs}.csv (variant_trials.py), keeps the trials both files hold
(variant_trials.py draws trials.py's sets in the same order, so trial t is the same query set in both) and prints one
markdown row per setting: coverage of each interval of its own truth (pooled over the 4 systems; SE clustered by
trial), ΔFD coverage over the 6 pairs, the equal pair's rejection rate (level) and the mean rejection rate over the
3 unequal pairs C–D, A–D, A–C (power), each at α = 0.05 unadjusted.

    python -m benchmarks.unseen_world.side_by_side
"""
import glob
import re

import numpy as np
import pandas as pd

R = 'benchmarks/unseen_world/results/'
UNEQUAL = [('C', 'D'), ('A', 'D'), ('A', 'C')]


def clustered_se(hit: pd.Series, trial: pd.Series) -> float:
    """SE of a rate whose units (systems or pairs of one trial) share a query set: the trials' means' SE."""
    means = hit.groupby(trial).mean()
    return float(means.std(ddof=1) / np.sqrt(len(means))) if len(means) > 1 else float('nan')


def coverage(frame: pd.DataFrame) -> str:
    hit = (frame.low <= frame.truth) & (frame.truth <= frame.high)
    return f'{hit.mean():.3f} ({clustered_se(hit, frame.trial):.3f})'


def tests(pairs: pd.DataFrame) -> tuple:
    """(ΔFD coverage, level, mean power) of a pairs frame with columns a, b, low, high, truth, p."""
    hit = (pairs.low <= pairs.truth) & (pairs.truth <= pairs.high)
    level = (pairs[(pairs.a == 'A') & (pairs.b == 'B')].p < 0.05).mean()
    power = np.mean([(pairs[(pairs.a == a) & (pairs.b == b)].p < 0.05).mean() for a, b in UNEQUAL])
    return f'{hit.mean():.3f}', f'{level:.3f}', f'{power:.2f}'


def rows():
    for f in sorted(glob.glob(R + 'variant_per_query5_*_n*[0-9].csv')):
        tag = re.match(r'.*variant_per_query5_(.*)\.csv', f).group(1)
        world, d, n = re.match(r'(.*)_d(\d+)_n(\d+)', tag).groups()
        try:
            fd = pd.read_csv(R + f'trials_{tag}_intervals.csv')
            fd_pairs = pd.read_csv(R + f'trials_{tag}_pairs.csv')
            truth = pd.read_csv(R + f'truth_{tag}.csv')
            pq = pd.read_csv(f)
            pq_pairs = pd.read_csv(R + f'variant_per_query5_{tag}_pairs.csv')
        except FileNotFoundError:
            continue
        common = sorted(set(fd.trial) & set(pq.trial) & set(pq_pairs.trial))
        keep = lambda frame: frame[frame.trial.isin(common)].copy()  # noqa: E731
        fd, fd_pairs, pq, pq_pairs = keep(fd), keep(fd_pairs), keep(pq), keep(pq_pairs)
        mean_fd = {s: truth[f'FD_{s}'].mean() for s in 'ABCD'}
        mean_ndcg = {s: truth[f'nDCG_{s}'].mean() for s in 'ABCD'}
        fd_i = fd[fd.measure == 'FD'].assign(truth=lambda x: x.system.map(mean_fd))
        ndcg_i = fd[fd.measure == 'nDCG'].assign(truth=lambda x: x.system.map(mean_ndcg))
        fd_p = fd_pairs[fd_pairs.measure == 'FD'].assign(
            truth=lambda x: [mean_fd[a] - mean_fd[b] for a, b in zip(x.a, x.b)])
        ndcg_p = fd_pairs[fd_pairs.measure == 'nDCG']
        d_fd, lev_fd, pow_fd = tests(fd_p)
        d_pq, lev_pq, pow_pq = tests(pq_pairs)
        pow_ndcg = np.mean([(ndcg_p[(ndcg_p.a == a) & (ndcg_p.b == b)].p < 0.05).mean() for a, b in UNEQUAL])
        yield (f'| {world} | {d} | {n} | {len(common)} | {coverage(fd_i)} | **{coverage(pq)}** | {coverage(ndcg_i)} | '
               f'{d_fd} / {d_pq} | {lev_fd} / {lev_pq} | {pow_fd} / **{pow_pq}** / {pow_ndcg:.2f} |')


if __name__ == '__main__':
    print('| world | d | n | trials | FD@10 interval (SE) | FD(per_query=5)@10 interval (SE) | nDCG@10 interval (SE) | '
          'ΔFD coverage FD@10 / pq5 | level A–B FD@10 / pq5 | mean power C–D, A–D, A–C: FD@10 / pq5 / nDCG (normal) |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for row in rows():
        print(row)
