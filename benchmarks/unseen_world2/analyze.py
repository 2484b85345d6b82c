"""Summarise results/*.csv into coverage / level / power tables (markdown to stdout, CSVs to results/)."""
import os, glob, itertools
import numpy as np, pandas as pd
HERE = os.path.dirname(os.path.abspath(__file__)); RES = os.path.join(HERE, "results")
SYS = ["A", "B", "C", "D"]; MEAS = ["FD", "FDpq5", "nDCG"]
PAIRS = [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]

cov_rows, sys_rows, pair_rows, test_rows, agree_rows, truth_rows = [], [], [], [], [], []
for ft in sorted(glob.glob(os.path.join(RES, "trials_*_d*.csv"))):
    key = os.path.basename(ft)[len("trials_"):-4]
    world, dd = key.rsplit("_d", 1); d = int(dd)
    ftr = os.path.join(RES, f"truth_{key}.csv")
    if not os.path.exists(ftr):
        continue
    tr = pd.read_csv(ftr); R = len(tr)
    T = pd.read_csv(ft); P = pd.read_csv(os.path.join(RES, f"pairs_{key}.csv"))
    nt = T.trial.nunique()
    truth, tse = {}, {}
    for s in SYS:
        for m in MEAS:
            x = tr[f"{s}_{m}"]; truth[(s, m)] = x.mean(); tse[(s, m)] = x.std(ddof=1) / np.sqrt(R)
            truth_rows.append(dict(world=world, d=d, R=R, system=s, measure=m, truth=x.mean(), mc_se=tse[(s, m)], sd_over_sets=x.std(ddof=1)))
    T["truth"] = [truth[(s, m)] for s, m in zip(T.system, T.measure)]
    T["mc_se"] = [tse[(s, m)] for s, m in zip(T.system, T.measure)]
    T["cov"] = (T.low <= T.truth) & (T.truth <= T.high)
    T["above"] = T.truth > T.high; T["below"] = T.truth < T.low
    T["hw"] = (T.high - T.low) / 2
    for m in MEAS:
        S = T[T.measure == m]
        per_t = S.groupby("trial")["cov"].mean()
        miss = (~S["cov"]).sum()
        cov_rows.append(dict(world=world, d=d, measure=m, trials=nt, interval=",".join(sorted(S.interval.unique())),
                             coverage=S["cov"].mean(), se_clustered=per_t.std(ddof=1) / np.sqrt(len(per_t)),
                             misses=int(miss), truth_above=int(S.above.sum()), truth_below=int(S.below.sum()),
                             median_halfwidth=S.hw.median(), max_mc_se_truth=S.mc_se.max(),
                             mean_value_minus_truth=(S.value - S.truth).mean(),
                             width_ratio=np.mean([S[S.system == s].hw.median() / 1.96 / tr[f"{s}_{m}"].std(ddof=1) for s in SYS])))
        for s in SYS:
            Ss = S[S.system == s]
            sys_rows.append(dict(world=world, d=d, measure=m, system=s, coverage=Ss["cov"].mean(),
                                 above=int(Ss.above.sum()), below=int(Ss.below.sum()), truth=truth[(s, m)],
                                 mc_se=tse[(s, m)], median_halfwidth=Ss.hw.median(), mean_value=Ss.value.mean()))
    F = T[T.measure == "FD"]
    agree_rows.append(dict(world=world, d=d, trials=nt,
                           max_rel_own_vs_evaluate=(abs(F.own - F.evaluate) / abs(F.evaluate)).max(),
                           max_rel_own_vs_bootstrap_value=(abs(F.own - F.value) / abs(F.value)).max()))
    # pairs
    for m in MEAS:
        for a, b in PAIRS:
            dx = tr[f"{a}_{m}"] - tr[f"{b}_{m}"]
            dtruth = 0.0 if (a, b) == ("A", "B") else dx.mean()
            S = P[(P.measure == m) & (P.a == a) & (P.b == b)]
            if len(S) == 0:
                continue
            covd = (S.ci_low <= dtruth) & (dtruth <= S.ci_high)
            rej = S.p < 0.05
            pair_rows.append(dict(world=world, d=d, measure=m, pair=f"{a}-{b}", trials=len(S), truth_diff=dtruth,
                                  mc_estimate=dx.mean(), mc_se=dx.std(ddof=1) / np.sqrt(R), test=",".join(S.test.unique()),
                                  interval=",".join(S.interval.unique()),
                                  diff_coverage=covd.mean(), above=int((dtruth > S.ci_high).sum()), below=int((dtruth < S.ci_low).sum()),
                                  median_halfwidth=((S.ci_high - S.ci_low) / 2).median(),
                                  sd_diff_over_sets=dx.std(ddof=1),
                                  width_ratio=((S.ci_high - S.ci_low) / 2).median() / 1.96 / dx.std(ddof=1),
                                  reject_rate=rej.mean(), reject_se=np.sqrt(max(rej.mean() * (1 - rej.mean()), 1e-12) / len(S))))

cov = pd.DataFrame(cov_rows); syst = pd.DataFrame(sys_rows); pairs = pd.DataFrame(pair_rows)
agree = pd.DataFrame(agree_rows); truths = pd.DataFrame(truth_rows)
for name, df in [("coverage", cov), ("coverage_by_system", syst), ("pairs", pairs), ("fd_agreement", agree), ("truths", truths)]:
    df.to_csv(os.path.join(RES, f"summary_{name}.csv"), index=False)
fmt = lambda df: df.to_markdown(index=False, floatfmt=".4g")
print("## Coverage (pooled over systems)\n"); print(fmt(cov))
print("\n## Coverage by system\n"); print(fmt(syst))
print("\n## Paired: difference-interval coverage and rejection rate (p<0.05, default test)\n"); print(fmt(pairs))
if len(pairs):
    dc = pairs[pairs.measure != "nDCG"].groupby(["world", "d", "measure"]).apply(
        lambda g: pd.Series(dict(pairs_trials=int(g.trials.sum()), pooled_diff_coverage=(g.diff_coverage * g.trials).sum() / g.trials.sum())),
        include_groups=False).reset_index()
    print("\n## ΔFD coverage pooled over the 6 pairs\n"); print(fmt(dc))
print("\n## Own FD vs package FD(rel=2)@10\n"); print(fmt(agree))
