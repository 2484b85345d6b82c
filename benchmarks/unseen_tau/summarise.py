"""Coverage table from results/trials_<tag>.csv and results/truth_<tag>.json."""
import json, os, sys
import numpy as np, pandas as pd
from scipy.stats import beta, kendalltau
HERE = os.path.dirname(os.path.abspath(__file__))
tag = sys.argv[1] if len(sys.argv) > 1 else "main"
tags = tag.split("+")  # e.g. main+ext1: trials of several runs that share the truth of the first
df = pd.concat([pd.read_csv(os.path.join(HERE, "results", f"trials_{t}.csv")) for t in tags], ignore_index=True)
assert df.trial.is_unique, "overlapping trial indices"
truth = json.load(open(os.path.join(HERE, "results", f"truth_{tags[0]}.json")))
n = len(df)
rows = []
for name, lo, hi, est, tr, cov, miss in (("tau_b", "tau_low", "tau_high", "kendall_tau", "truth_tau", "cover_tau", "miss_tau"),
                                         ("tau_AP", "tau_ap_low", "tau_ap_high", "tau_ap", "truth_tau_ap", "cover_tau_ap", "miss_tau_ap")):
    c = df[cov].astype(bool)
    p = c.mean()
    m = df[miss].astype(object).fillna("")
    rows.append(dict(statistic=name, trials=n, truth=df[tr].iloc[0], coverage=p, binom_se=np.sqrt(p * (1 - p) / n),
                     cp95_low=beta.ppf(0.025, c.sum(), n - c.sum() + 1) if c.sum() > 0 else 0.0,
                     cp95_high=beta.ppf(0.975, c.sum() + 1, n - c.sum()) if c.sum() < n else 1.0,
                     misses=int((~c).sum()), truth_above=int((m == "truth_above").sum()),
                     truth_below=int((m == "truth_below").sum()),
                     mean_width=(df[hi] - df[lo]).mean(), mean_estimate=df[est].mean(),
                     sd_estimate=df[est].std(ddof=1), se_mean_estimate=df[est].std(ddof=1) / np.sqrt(n),
                     mean_high_minus_est=(df[hi] - df[est]).mean(), mean_est_minus_low=(df[est] - df[lo]).mean(),
                     nan_intervals=int(df[[lo, hi]].isna().any(axis=1).sum())))
out = pd.DataFrame(rows)
pd.set_option("display.width", 200)
print(out.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
out.to_csv(os.path.join(HERE, "results", f"coverage_{tag}.csv"), index=False)
print("truth:", json.dumps(truth))
print(f"sec per trial: mean {df.sec_total.mean():.1f} (bootstrap+tau_intervals {df.sec_bootstrap.mean():.1f}), "
      f"min {df.sec_total.min():.1f} max {df.sec_total.max():.1f}")
print("max FD rel diff own vs pf.evaluate:", df.fd_maxrel_own_vs_pkg.max(), " max nDCG abs diff:", df.ndcg_maxabs_own_vs_pkg.max())
print("package tau == tau from pf.evaluate values:", np.allclose(df.kendall_tau, df.tau_sample_from_evaluate),
      "| package tau_AP == own tau_AP('other') on pf.evaluate values:", np.allclose(df.tau_ap, df.tau_ap_sample_other))
print("estimate inside its own interval: tau", ((df.kendall_tau >= df.tau_low) & (df.kendall_tau <= df.tau_high)).mean(),
      " tau_AP", ((df.tau_ap >= df.tau_ap_low) & (df.tau_ap <= df.tau_ap_high)).mean())
w = df.warnings.astype(object).fillna("")
print("trials with warnings:", int((w != "").sum()))
for x in sorted(set(w[w != ""])): print("  ", x[:400])

# the sampling distribution of the point estimates at n = 43, from the truth sets (own code, no package)
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.tau import NAMES, tau_ap
ts = pd.read_csv(os.path.join(HERE, "results", f"truth_sets_{tags[0]}.csv"))
nd = ts.pivot(index="set", columns="system", values="ndcg10")[NAMES].to_numpy()
fd = ts.pivot(index="set", columns="system", values="fd10")[NAMES].to_numpy()
pt = np.array([kendalltau(a, -b).statistic for a, b in zip(nd, fd)])
pa = np.array([tau_ap(a, -b, "other") for a, b in zip(nd, fd)])
print(f"sample tau-b over the {len(pt)} truth sets (n=43): mean {pt.mean():.4f} (se {pt.std(ddof=1)/np.sqrt(len(pt)):.4f}) "
      f"sd {pt.std(ddof=1):.4f}; 2.5/97.5% {np.quantile(pt, .025):.3f} {np.quantile(pt, .975):.3f}; P(tau-hat >= truth) {np.mean(pt >= truth['tau'] - 1e-12):.3f}")
print(f"sample tau_AP over the truth sets: mean {pa.mean():.4f} (se {pa.std(ddof=1)/np.sqrt(len(pa)):.4f}) sd {pa.std(ddof=1):.4f}; "
      f"2.5/97.5% {np.quantile(pa, .025):.3f} {np.quantile(pa, .975):.3f}")
