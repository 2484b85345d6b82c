"""Binomial p-values for A-B rejection counts; trial-clustered SE of pooled ΔFD coverage."""
import os, numpy as np, pandas as pd
from scipy.stats import binomtest
RES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
pr = pd.read_csv(os.path.join(RES, "summary_pairs.csv")); rows = []
for _, r in pr[pr.pair == "A-B"].iterrows():
    k = int(round(r.reject_rate * r.trials))
    rows.append(dict(world=r.world, d=r.d, measure=r.measure, test=r.test, trials=r.trials, rejections=k, rate=r.reject_rate,
                     p_binom_greater_than_005=binomtest(k, int(r.trials), 0.05, alternative="greater").pvalue))
lv = pd.DataFrame(rows); lv.to_csv(os.path.join(RES, "summary_level_binom.csv"), index=False)
print(lv.to_markdown(index=False, floatfmt=".3g"))
rows = []
for w in ["graded", "aniso"]:
    for d in [128, 384]:
        P = pd.read_csv(os.path.join(RES, f"pairs_{w}_d{d}.csv")); tr = pd.read_csv(os.path.join(RES, f"truth_{w}_d{d}.csv"))
        for m in ["FD", "FDpq5"]:
            S = P[P.measure == m].copy()
            S["truth"] = [0.0 if (a, b) == ("A", "B") else (tr[f"{a}_{m}"] - tr[f"{b}_{m}"]).mean() for a, b in zip(S.a, S.b)]
            S["cov"] = (S.ci_low <= S.truth) & (S.truth <= S.ci_high)
            pt = S.groupby("trial")["cov"].mean()
            rows.append(dict(world=w, d=d, measure=m, trials=len(pt), pooled_diff_coverage=S["cov"].mean(),
                             se_clustered=pt.std(ddof=1) / np.sqrt(len(pt)),
                             truth_above=int((S.truth > S.ci_high).sum()), truth_below=int((S.truth < S.ci_low).sum())))
dc = pd.DataFrame(rows); dc.to_csv(os.path.join(RES, "summary_diff_coverage_pooled.csv"), index=False)
print(); print(dc.to_markdown(index=False, floatfmt=".4g"))
