"""Coverage / level / power tables from results/*.csv -> stdout (markdown)."""
import glob, re, numpy as np, pandas as pd
R = 'benchmarks/unseen_world/results/'
def se(p, k): return np.sqrt(max(p * (1 - p), 1 / k) / k) if k else np.nan
print('| world | d | n | trials | FD cov pooled (SE) | per system A/B/C/D | miss truth above/below | ΔFD cov (SE) | level A-B FD (SE) | power FD C-D/A-D/A-C | nDCG cov (SE) | nDCG level A-B | max MC SE of truth / median interval half-width |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for f in sorted(glob.glob(R + 'trials_*_intervals.csv')):
    tag = re.match(r'.*trials_(.*)_intervals.csv', f).group(1)
    world, d, n = re.match(r'(.*)_d(\d+)_n(\d+)', tag).groups()
    try: tr = pd.read_csv(R + f'truth_{tag}.csv')
    except FileNotFoundError: continue
    b = pd.read_csv(f); c = pd.read_csv(R + f'trials_{tag}_pairs.csv'); T = b.trial.nunique()
    mfd = {s: tr[f'FD_{s}'].mean() for s in 'ABCD'}; mnd = {s: tr[f'nDCG_{s}'].mean() for s in 'ABCD'}
    sefd = max(tr[f'FD_{s}'].std() / np.sqrt(len(tr)) for s in 'ABCD')
    fb = b[b.measure == 'FD'].copy(); fb['truth'] = fb.system.map(mfd)
    fb['cov'] = (fb.low <= fb.truth) & (fb.truth <= fb.high)
    above = (fb.truth > fb.high).mean(); below = (fb.truth < fb.low).mean()
    per = '/'.join(f"{fb[fb.system == s]['cov'].mean():.2f}" for s in 'ABCD')
    nb = b[b.measure == 'nDCG'].copy(); nb['truth'] = nb.system.map(mnd)
    ncov = ((nb.low <= nb.truth) & (nb.truth <= nb.high)).mean()
    fc = c[c.measure == 'FD'].copy(); fc['truth'] = [mfd[a] - mfd[bb] for a, bb in zip(fc.a, fc.b)]
    dcov = ((fc.low <= fc.truth) & (fc.truth <= fc.high)).mean()
    lev = (fc[(fc.a == 'A') & (fc.b == 'B')].p < 0.05).mean()
    pw = '/'.join(f"{(fc[(fc.a == a) & (fc.b == bb)].p < 0.05).mean():.2f}" for a, bb in [('C', 'D'), ('A', 'D'), ('A', 'C')])
    nc = c[c.measure == 'nDCG']; nlev = (nc[(nc.a == 'A') & (nc.b == 'B')].p < 0.05).mean()
    hw = ((fb.high - fb.low) / 2).median()
    def cse(x, g):  # SE clustered by trial (systems / pairs of one trial are not independent)
        m = x.groupby(g).mean(); return max(m.std(ddof=1), 1e-9) / np.sqrt(len(m))
    k = len(fb)
    print(f"| {world} | {d} | {n} | {T} | {fb['cov'].mean():.3f} ({cse(fb['cov'], fb.trial):.3f}) | {per} | {above:.3f}/{below:.3f} | "
          f"{dcov:.3f} ({cse(((fc.low <= fc.truth) & (fc.truth <= fc.high)), fc.trial):.3f}) | {lev:.3f} ({se(lev, T):.3f}) | {pw} | {ncov:.3f} ({cse(((nb.low <= nb.truth) & (nb.truth <= nb.high)), nb.trial):.3f}) | {nlev:.2f} | {sefd:.2g} / {hw:.2g} |")
