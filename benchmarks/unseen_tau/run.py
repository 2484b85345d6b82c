"""Truth + coverage trials for pyterrier_frechet's tau intervals (FD@10 vs nDCG@10) in the world of world.py.

Phase 1 (truth, own numpy code): TRUTH_SETS independent query sets of N_Q queries (stream 1); per set the mean
nDCG@10 and FD-hat_n of every system; truth = tau-b / tau_AP between the across-set means of nDCG and of -FD.
Monte Carlo error: bootstrap over the truth sets.
Phase 2 (trials): fresh query sets (stream 2, trial t uses queries t*N_Q ... t*N_Q+N_Q-1), pf.bootstrap with
n_samples=200, seed=t, then pf.tau_intervals; one CSV row per trial written immediately.
Stopping rule (fixed in advance): no new trial is started at or after --stop (UTC, default 21:45) or after
--max-trials trials.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

HERE = os.path.dirname(os.path.abspath(__file__))
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.tau import World, QuerySet, fd_many, tau_ap, K, NAMES  # noqa: E402

N_Q = 43
RES = os.path.join(HERE, "results")


def now_utc():
    return dt.datetime.now(dt.timezone.utc)


# ------------------------------------------------------------------------------------------------ package I/O
def to_package(qs: QuerySet, stream: int, tmpdir: str):
    qrels, runs, ids, vecs = [], {n: [] for n in NAMES}, [], []
    for qi, q in zip(qs.qidx, qs.queries):
        qid = f"q{qi}"
        dn = lambda j: f"s{stream}q{qi}d{j}"  # noqa: E731
        ids += [dn(j) for j in q["need"]]
        vecs.append(q["V"])
        judged = set(range(q["R"])) | set(np.unique(q["retrieved"]).tolist())
        for j in sorted(judged):
            qrels.append((qid, dn(j), int(q["labels"][j])))
        for si, name in enumerate(NAMES):
            for r, j in enumerate(q["retrieved"][si]):
                runs[name].append((qid, dn(j), float(K - r), r))
    qrels = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    runs = {n: pd.DataFrame(v, columns=["qid", "docno", "score", "rank"]) for n, v in runs.items()}
    prefix = os.path.join(tmpdir, "vecs")
    np.save(prefix + ".npy", np.concatenate(vecs).astype(np.float32))
    with open(prefix + ".ids.txt", "w") as f:
        f.write("\n".join(ids) + "\n")
    return qrels, runs, prefix


def own_point(qs: QuerySet, ddof: int):
    nd = qs.ndcg().mean(1)
    fd = fd_many(qs.rel_vectors(), [qs.ret_vectors(i) for i in range(len(NAMES))], ddof=ddof)
    return nd, fd


# ------------------------------------------------------------------------------------------------ truth
def truth_phase(world, n_sets: int, ddof: int, path: str):
    rows = []
    t0 = time.time()
    for s in range(n_sets):
        qs = QuerySet(world, 1, range(s * N_Q, (s + 1) * N_Q))
        nd, fd = own_point(qs, ddof)
        for i, n in enumerate(NAMES):
            rows.append((s, n, nd[i], fd[i]))
        if (s + 1) % 25 == 0 or s + 1 == n_sets:
            pd.DataFrame(rows, columns=["set", "system", "ndcg10", "fd10"]).to_csv(path, index=False)
            print(f"truth set {s + 1}/{n_sets}  {time.time() - t0:.0f}s", flush=True)
    return pd.DataFrame(rows, columns=["set", "system", "ndcg10", "fd10"])


def summarise_truth(df: pd.DataFrame, seed: int = 7, reps: int = 2000):
    nd = df.pivot(index="set", columns="system", values="ndcg10")[NAMES].to_numpy()
    fd = df.pivot(index="set", columns="system", values="fd10")[NAMES].to_numpy()
    mn, mf = nd.mean(0), fd.mean(0)
    tau = kendalltau(mn, -mf).statistic
    tap = {w: tau_ap(mn, -mf, iterate_over=w) for w in ("other", "ref")}
    rng = np.random.default_rng(seed)
    S = nd.shape[0]
    bt, bap = [], {"other": [], "ref": []}
    for _ in range(reps):
        ix = rng.integers(0, S, S)
        a, b = nd[ix].mean(0), fd[ix].mean(0)
        bt.append(kendalltau(a, -b).statistic)
        for w in bap:
            bap[w].append(tau_ap(a, -b, iterate_over=w))
    out = dict(n_sets=int(S), tau=float(tau), tau_mc_se=float(np.std(bt)),
               tau_mc_q025=float(np.quantile(bt, 0.025)), tau_mc_q975=float(np.quantile(bt, 0.975)),
               tau_ap_other=float(tap["other"]), tau_ap_other_mc_se=float(np.std(bap["other"])),
               tau_ap_ref=float(tap["ref"]), tau_ap_ref_mc_se=float(np.std(bap["ref"])))
    systems = pd.DataFrame(dict(system=NAMES, ndcg10=mn, ndcg10_se=nd.std(0, ddof=1) / np.sqrt(S),
                                ndcg10_sd_per_set=nd.std(0, ddof=1),
                                fd10=mf, fd10_se=fd.std(0, ddof=1) / np.sqrt(S), fd10_sd_per_set=fd.std(0, ddof=1)))
    # closeness: adjacent pairs in each truth ranking, gap / sd of the per-set paired difference (n = N_Q)
    close = []
    for col, arr, sign in (("ndcg10", nd, 1), ("fd10", fd, -1)):
        order = np.argsort(-sign * arr.mean(0))
        for a, b in zip(order[:-1], order[1:]):
            diff = arr[:, a] - arr[:, b]
            close.append(dict(measure=col, better=NAMES[a], worse=NAMES[b], gap=float(diff.mean()),
                              gap_mc_se=float(diff.std(ddof=1) / np.sqrt(S)),
                              sd_paired_diff_at_n=float(diff.std(ddof=1)),
                              gap_over_sd=float(abs(diff.mean()) / diff.std(ddof=1)),
                              p_reversed_at_n=float(np.mean(np.sign(diff) != np.sign(diff.mean())))))
    return out, systems, pd.DataFrame(close)


# ------------------------------------------------------------------------------------------------ trials
def one_trial(world, t: int, n_samples: int, ddof: int, truth: dict, tap_mode: str, resample: str = 'all'):
    import pyterrier_frechet as pf
    from pyterrier_frechet import FD
    from ir_measures import nDCG

    t0 = time.time()
    qs = QuerySet(world, 2, range(t * N_Q, (t + 1) * N_Q))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, runs, prefix = to_package(qs, 2, tmp)
        enc = pf.VectorStore(prefix)
        meas = [nDCG @ 10, FD(rel=1, encoder=enc) @ 10]
        with warnings.catch_warnings(record=True) as wlist:
            warnings.simplefilter("always")
            ev = pf.evaluate(runs, qrels, meas)
            t_b = time.time()
            boot = pf.bootstrap(runs, qrels, meas, n_samples=n_samples, seed=t, verbose=False, resample=resample)
            taus = pf.tau_intervals(boot, meas)
            t_boot = time.time() - t_b
        wtxt = " | ".join(sorted({f"{w.category.__name__}: {str(w.message)[:200]}" for w in wlist}))
    row = taus.iloc[0]
    # own point values on this set, and the package's point values
    nd_own, fd_own = own_point(qs, ddof)
    ev = ev.set_index("name").loc[NAMES]
    fd_col = [c for c in ev.columns if str(c).startswith("FD")][0]
    nd_col = [c for c in ev.columns if str(c).startswith("nDCG")][0]
    fd_pkg, nd_pkg = ev[fd_col].to_numpy(float), ev[nd_col].to_numpy(float)
    tau_own_sample = kendalltau(nd_pkg, -fd_pkg).statistic
    T, TA = truth["tau"], truth["tau_ap_" + tap_mode]
    out = dict(trial=t, seed=t, n_samples=n_samples, a=row["a"], b=row["b"], n_sys=int(row.get("n", len(NAMES))),
               kendall_tau=row["kendall_tau"], tau_low=row["tau_low"], tau_high=row["tau_high"],
               tau_ap=row["tau_ap"], tau_ap_low=row["tau_ap_low"], tau_ap_high=row["tau_ap_high"],
               truth_tau=T, truth_tau_ap=TA,
               cover_tau=bool(row["tau_low"] <= T <= row["tau_high"]),
               miss_tau=("truth_above" if T > row["tau_high"] else "truth_below" if T < row["tau_low"] else ""),
               cover_tau_ap=bool(row["tau_ap_low"] <= TA <= row["tau_ap_high"]),
               miss_tau_ap=("truth_above" if TA > row["tau_ap_high"] else "truth_below" if TA < row["tau_ap_low"]
                            else ""),
               tau_sample_from_evaluate=tau_own_sample,
               tau_ap_sample_other=tau_ap(nd_pkg, -fd_pkg, "other"), tau_ap_sample_ref=tau_ap(nd_pkg, -fd_pkg, "ref"),
               fd_maxrel_own_vs_pkg=float(np.max(np.abs(fd_own - fd_pkg) / np.abs(fd_pkg))),
               ndcg_maxabs_own_vs_pkg=float(np.max(np.abs(nd_own - nd_pkg))),
               n_rel_docs=int(sum(q["R"] for q in qs.queries)),
               sec_bootstrap=t_boot, sec_total=time.time() - t0, warnings=wtxt)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth-sets", type=int, default=300)
    ap.add_argument("--n-samples", type=int, default=200)
    ap.add_argument("--stop", default="21:45", help="UTC HH:MM; no trial starts at or after it")
    ap.add_argument("--max-trials", type=int, default=10_000)
    ap.add_argument("--ddof", type=int, default=1, help="covariance ddof matching the package (check_fd.py)")
    ap.add_argument("--tau-ap-mode", default="other", choices=["other", "ref"],
                    help="tau_AP convention matching the package's point estimate (check_fd.py)")
    ap.add_argument("--tag", default="main")
    ap.add_argument("--reuse-truth", action="store_true", help="read results/truth_sets_<truth-tag>.csv")
    ap.add_argument("--truth-tag", default=None, help="tag of the stored truth (default: --tag)")
    ap.add_argument("--resample", default="all", choices=["all", "needed"],
                    help="pf.bootstrap's resample= (added after the check): 'needed' computes FD on the first 200 "
                         "draws only, the same as 'all' with --n-samples 200. results/trials_lin.csv was measured with "
                         "the linearised tau route of commit 778d755 (not offered: pt_docs 'Calibration')")
    ap.add_argument("--first-trial", type=int, default=0, help="first trial index (extensions: continue after the last)")
    args = ap.parse_args()
    os.makedirs(RES, exist_ok=True)
    world = World()
    hh, mm = map(int, args.stop.split(":"))
    stop = now_utc().replace(hour=hh, minute=mm, second=0, microsecond=0)

    tpath = os.path.join(RES, f"truth_sets_{args.truth_tag or args.tag}.csv")
    t0 = time.time()
    if args.reuse_truth and os.path.exists(tpath):
        tdf = pd.read_csv(tpath)
    else:
        tdf = truth_phase(world, args.truth_sets, args.ddof, tpath)
    truth, systems, close = summarise_truth(tdf)
    truth["sec_truth"] = time.time() - t0
    truth["ddof"] = args.ddof
    truth["tau_ap_mode"] = args.tau_ap_mode
    systems.to_csv(os.path.join(RES, f"truth_systems_{args.tag}.csv"), index=False)
    close.to_csv(os.path.join(RES, f"truth_adjacent_{args.tag}.csv"), index=False)
    with open(os.path.join(RES, f"truth_{args.tag}.json"), "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps(truth, indent=1), flush=True)

    rpath = os.path.join(RES, f"trials_{args.tag}.csv")
    rows = []
    t = args.first_trial
    while t < args.first_trial + args.max_trials and now_utc() < stop:
        rows.append(one_trial(world, t, args.n_samples, args.ddof, truth, args.tau_ap_mode, args.resample))
        pd.DataFrame(rows).to_csv(rpath, index=False)
        r = rows[-1]
        cov = np.mean([x["cover_tau"] for x in rows])
        print(f"trial {t}: tau {r['kendall_tau']:.3f} [{r['tau_low']:.3f},{r['tau_high']:.3f}] truth {r['truth_tau']:.3f}"
              f" cover={r['cover_tau']} | tauAP {r['tau_ap']:.3f} [{r['tau_ap_low']:.3f},{r['tau_ap_high']:.3f}]"
              f" truth {r['truth_tau_ap']:.3f} cover={r['cover_tau_ap']} | {r['sec_total']:.0f}s | cov so far {cov:.3f}",
              flush=True)
        t += 1
    print(f"stopped after {t - args.first_trial} trials at {now_utc():%H:%M:%S} UTC", flush=True)


if __name__ == "__main__":
    main()
