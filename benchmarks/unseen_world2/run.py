"""Driver.
  python -m benchmarks.unseen_world2.run truth  WORLD D R        -> benchmarks/unseen_world2/results/truth_WORLD_dD.csv (R reference query sets, own code only)
  python -m benchmarks.unseen_world2.run trials WORLD D T0 T1    -> appends trials T0..T1-1 to results/trials_WORLD_dD.csv and
                                           results/pairs_WORLD_dD.csv (package output + own values)
"""
import sys, os, time, tempfile, shutil
import numpy as np, pandas as pd
HERE = os.path.dirname(os.path.abspath(__file__))
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.graded import WORLDS, SYSTEMS
from benchmarks.unseen_world2.own import own_values, to_package

N = 43
WID = {"graded": 1, "aniso": 2}
RES = os.environ.get("UW2_RES", os.path.join(HERE, "results"))  # UW2_RES: write elsewhere (parallel jobs)


def draw(W, rng):
    return [W.sample_query(rng, i) for i in range(N)]


def mname(m):
    m = str(m)
    if m.startswith("nDCG"):
        return "nDCG"
    return "FDpq5" if "per_query" in m else "FD"


def truth(wname, d, R):
    W = WORLDS[wname](d)
    rows = []
    t0 = time.time()
    for r in range(R):
        rng = np.random.default_rng([WID[wname], d, r])
        qs = draw(W, rng)
        v = own_values(qs, rng)
        row = {"ref": r}
        row.update({f"{s}_{m}": val for (s, m), val in v.items()})
        rows.append(row)
        if r % 50 == 0:
            print(f"truth {wname} d={d} r={r} {time.time()-t0:.0f}s", flush=True)
    pd.DataFrame(rows).to_csv(os.path.join(RES, f"truth_{wname}_d{d}.csv"), index=False)


def trials(wname, d, T0, T1):
    import pyterrier_frechet as pf
    from pyterrier_frechet import FD
    from ir_measures import nDCG
    W = WORLDS[wname](d)
    ft = os.path.join(RES, f"trials_{wname}_d{d}.csv")
    fp = os.path.join(RES, f"pairs_{wname}_d{d}.csv")
    for t in range(T0, T1):
        t0 = time.time()
        rng = np.random.default_rng([WID[wname], d, 100000 + t])
        qs = draw(W, rng)
        own = own_values(qs, rng)
        tmp = tempfile.mkdtemp(dir=os.environ.get("UW2_TMP"))
        try:
            prefix = os.path.join(tmp, "v")
            qrels, runs = to_package(qs, prefix)
            enc = pf.VectorStore(prefix)
            meas = [FD(rel=2, encoder=enc) @ 10, FD(rel=2, per_query=5, seed=t, encoder=enc) @ 10, nDCG @ 10]
            ev = pf.evaluate(runs, qrels, meas)
            b = pf.bootstrap(runs, qrels, meas, n_samples=200, seed=t, verbose=False).summary
            c = pf.compare_systems(runs, qrels, meas, n_samples=200, verbose=False)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        evcols = {mname(col): col for col in ev.columns if col not in ("name", "no_vector_relevant", "no_vector_retrieved")}
        rows = []
        for _, r in b.iterrows():
            m = mname(r["measure"]); s = r["name"]
            evv = float(ev.loc[ev["name"] == s, evcols[m]].iloc[0])
            rows.append(dict(trial=t, system=s, measure=m, value=r["value"], low=r["low"], high=r["high"],
                             interval=r["interval"], own=own[(s, m)], evaluate=evv))
        prow = []
        for _, r in c.iterrows():
            m = mname(r["measure"]); test = r["test"]
            prow.append(dict(trial=t, a=r["a"], b=r["b"], measure=m, diff=r["diff"], ci_low=r["ci_low"],
                             ci_high=r["ci_high"], interval=r["interval"], test=test, p=r["p_" + test]))
        pd.DataFrame(rows).to_csv(ft, mode="a", header=not os.path.exists(ft), index=False)
        pd.DataFrame(prow).to_csv(fp, mode="a", header=not os.path.exists(fp), index=False)
        print(f"trial {wname} d={d} t={t} {time.time()-t0:.1f}s", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "truth":
        truth(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        trials(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
