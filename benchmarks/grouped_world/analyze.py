"""Tables from results/: coverage, level, power, widths with binomial SEs. Prints markdown.

    python -m benchmarks.grouped_world.analyze > benchmarks/grouped_world/results/summary.md
"""
import glob, os, re
import numpy as np
import pandas as pd
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.grouped import SYSTEMS, LEVEL_PAIR

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')


def pse(x):
    x = np.asarray(x, float)
    p = x.mean()
    return f'{p:.3f} ± {np.sqrt(p * (1 - p) / len(x)):.3f}'


def cse(df, col):
    """Pooled over systems or pairs: the standard error from the per-trial fractions (they share the trial)."""
    per = df.groupby('trial')[col].mean()
    return f'{df[col].mean():.3f} ± {per.std(ddof=1) / np.sqrt(len(per)) if len(per) > 1 else float("nan"):.3f}'


COMPACT = []
for tp in sorted(glob.glob(os.path.join(R, 'truth_*.csv')), key=lambda p: ('interact' in p, int(re.findall(r'd(\d+)', p)[0]), int(re.findall(r'G(\d+)', p)[0]))):
    tag = os.path.basename(tp)[6:-4]
    sp, pp = os.path.join(R, f'trials_{tag}_systems.csv'), os.path.join(R, f'trials_{tag}_pairs.csv')
    if not os.path.exists(sp):
        continue
    tr = pd.read_csv(tp)
    S = pd.read_csv(sp)
    P = pd.read_csv(pp)
    T = S.trial.nunique()
    if T == 0:
        continue
    dd, gg = re.findall(r'd(\d+)_G(\d+)', tag)[0]
    print(f'\n### world {"interact" if "interact" in tag else "shared"}, d = {dd}, G = {gg} '
          f'(truth: {len(tr)} reference sets, n mean {tr.n.mean():.1f} (range {tr.n.min()}–{tr.n.max()}); '
          f'trials: {T}, n mean {S.n.mean():.1f})\n')
    truth_fd = {s: tr[f'fd_{s}'].mean() for s in SYSTEMS}
    se_fd = {s: tr[f'fd_{s}'].std() / np.sqrt(len(tr)) for s in SYSTEMS}
    truth_nd = {s: tr[f'ndcg_{s}'].mean() for s in SYSTEMS}
    se_nd = {s: tr[f'ndcg_{s}'].std() / np.sqrt(len(tr)) for s in SYSTEMS}
    pairs = sorted({(a, b) for a, b in zip(P.a, P.b)})
    truth_d = {(a, b): (tr[f'fd_{a}'] - tr[f'fd_{b}']).mean() for a, b in pairs}
    se_d = {(a, b): (tr[f'fd_{a}'] - tr[f'fd_{b}']).std() / np.sqrt(len(tr)) for a, b in pairs}
    print('Truth (Monte Carlo mean ± its standard error): ' + '; '.join(
        f'{s}: E[FD_n] {truth_fd[s]:.4f} ± {se_fd[s]:.4f}, E[nDCG@10] {truth_nd[s]:.3f} ± {se_nd[s]:.3f}'
        for s in SYSTEMS) + '\n')
    S['truth'] = [truth_fd[s] if m == 'FD@10' else truth_nd[s] for s, m in zip(S.system, S.measure)]
    S['cover'] = (S.low <= S.truth) & (S.truth <= S.high)
    # the conditional target E[FD | n] (n varies with the topics drawn): least squares FD ~ a + b/n on the reference sets
    coef = {s: np.polyfit(1.0 / tr.n, tr[f'fd_{s}'], 1) for s in SYSTEMS}
    S['truth_n'] = [np.polyval(coef[s], 1.0 / n) if m == 'FD@10' else np.nan for s, m, n in zip(S.system, S.measure, S.n)]
    S['cover_n'] = (S.low <= S.truth_n) & (S.truth_n <= S.high)
    S['width'] = S.high - S.low
    P['truth'] = [truth_d[(a, b)] for a, b in zip(P.a, P.b)]
    P['cover'] = (P.ci_low <= P.truth) & (P.truth <= P.ci_high)
    P['width'] = P.ci_high - P.ci_low
    P['reject'] = P.p_default < 0.05
    agree = (S[S.measure == 'FD@10'].value - S[S.measure == 'FD@10'].own_value).abs() / S[S.measure == 'FD@10'].own_value
    print(f'Package FD vs own numpy FD: max relative difference {agree.max():.1e}.\n')
    print('| query_groups | FD cover E[FD_n] (all systems) | ' + ' | '.join(f'{s}' for s in SYSTEMS)
          + ' | FD cover E[FD_n given n] | FD width (mean) | nDCG@10 cover | nDCG high > 1 | nDCG width |')
    print('|' + '---|' * (7 + len(SYSTEMS)))
    for g in (1, 0):
        f = S[(S.grouped == g) & (S.measure == 'FD@10')]
        nd = S[(S.grouped == g) & (S.measure == 'nDCG@10')]
        print(f'| {"yes" if g else "no"} | {cse(f, "cover")} | ' + ' | '.join(
            f'{f[f.system == s].cover.mean():.2f}' for s in SYSTEMS)
              + f' | {cse(f, "cover_n")} | {f.width.mean():.4f} | {pse(nd.cover)} | {(nd.high > 1).mean():.2f} | {nd.width.mean():.3f} |')
    print('\nPairs (ΔFD = FD(a) − FD(b); default test p_' + str(P.test.iloc[0]) + ' at 0.05):\n')
    print('| pair | E[ΔFD_n] ± MCSE | groups: cover | groups: reject | groups: width | no groups: cover | no groups: reject | no groups: width |')
    print('|---|---|---|---|---|---|---|---|')
    for a, b in pairs:
        row = f'| {a}–{b}{" (identical: level)" if (a, b) == LEVEL_PAIR else ""} | {truth_d[(a, b)]:+.4f} ± {se_d[(a, b)]:.4f} |'
        for g in (1, 0):
            x = P[(P.grouped == g) & (P.a == a) & (P.b == b)]
            row += f' {pse(x.cover)} | {pse(x.reject)} | {x.width.mean():.4f} |'
        print(row)
    for g in (1, 0):
        x = P[(P.grouped == g)]
        nl = x[~((x.a == LEVEL_PAIR[0]) & (x.b == LEVEL_PAIR[1]))]
        lv = x[(x.a == LEVEL_PAIR[0]) & (x.b == LEVEL_PAIR[1])]
        f = S[(S.grouped == g) & (S.measure == 'FD@10')]
        nd = S[(S.grouped == g) & (S.measure == 'nDCG@10')]
        COMPACT.append(f'| {"interact" if "interact" in tag else "shared"} | {dd} | {S.n.mean():.0f} ({gg}) | {T} | '
                       f'{"yes" if g else "no"} | {cse(f, "cover")} | {cse(f, "cover_n")} | {f.width.mean():.4f} | '
                       f'{cse(x, "cover")} | {x.width.mean():.4f} | {pse(lv.reject)} | {cse(nl, "reject")} | '
                       f'{pse(nd.cover)} | {nd.width.mean():.3f} | {(nd.high > 1).mean():.2f} |')
        print(f'\nAll pairs, query_groups={"yes" if g else "no"}: ΔFD cover {cse(x, "cover")}; power (non-identical pairs) '
              f'{cse(nl, "reject")}; identical pair level {x[(x.a == LEVEL_PAIR[0]) & (x.b == LEVEL_PAIR[1])].reject.mean():.3f}')
    w = pd.read_csv(os.path.join(R, f'trials_{tag}_warnings.csv'))
    if len(w):
        print('\nWarnings (trials in which each appeared):\n')
        for (g, c, msg), n in w.groupby(['grouped', 'call', 'message']).size().items():
            print(f'- query_groups={"yes" if g else "no"}, {c}: "{msg}" — {n} of {T}')

print('\n### All configurations\n')
print('| world | d | n (G) | trials | query_groups | FD cover E[FD_n] | FD cover E[FD_n given n] | FD width | ΔFD cover | '
      'ΔFD width | level (C–C2) | power (9 pairs) | nDCG@10 cover | nDCG width | nDCG high > 1 |')
print('|' + '---|' * 15)
print('\n'.join(COMPACT))
