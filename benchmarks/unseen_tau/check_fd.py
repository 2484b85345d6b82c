"""Which covariance (biased ddof=0 / unbiased ddof=1) the package's FD uses, and whether our nDCG@10 matches
ir_measures', on one query set of stream 3 (used nowhere else). Also times one small bootstrap (n_samples given)
and checks which tau_AP convention matches the package's point estimate."""
import os, sys, tempfile, time, warnings
import numpy as np
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repo root, run as a file
from benchmarks.worlds.tau import World, QuerySet, fd_many, tau_ap, NAMES
from benchmarks.unseen_tau.run import to_package, N_Q
from scipy.stats import kendalltau
import pyterrier_frechet as pf
from pyterrier_frechet import FD
from ir_measures import nDCG

n_samples = int(sys.argv[1]) if len(sys.argv) > 1 else 20
w = World()
qs = QuerySet(w, 3, range(N_Q))
with tempfile.TemporaryDirectory() as tmp:
    qrels, runs, prefix = to_package(qs, 3, tmp)
    enc = pf.VectorStore(prefix)
    meas = [nDCG @ 10, FD(rel=1, encoder=enc) @ 10]
    ev = pf.evaluate(runs, qrels, meas).set_index("name").loc[NAMES]
    print(ev)
    fdc = [c for c in ev.columns if str(c).startswith("FD")][0]
    ndc = [c for c in ev.columns if str(c).startswith("nDCG")][0]
    rel = qs.rel_vectors(); rets = [qs.ret_vectors(i) for i in range(len(NAMES))]
    for ddof in (0, 1):
        f = fd_many(rel, rets, ddof=ddof)
        print("ddof", ddof, "max rel diff", np.max(np.abs(f - ev[fdc].to_numpy()) / ev[fdc].to_numpy()))
    print("ndcg max abs diff", np.max(np.abs(qs.ndcg().mean(1) - ev[ndc].to_numpy())))
    nd, fd = ev[ndc].to_numpy(float), ev[fdc].to_numpy(float)
    print("sample tau", kendalltau(nd, -fd).statistic, "tau_ap other", tau_ap(nd, -fd, "other"), "ref", tau_ap(nd, -fd, "ref"))
    if n_samples > 0:
        t = time.time()
        with warnings.catch_warnings(record=True) as wl:
            warnings.simplefilter("always")
            boot = pf.bootstrap(runs, qrels, meas, n_samples=n_samples, seed=0, verbose=False)
            taus = pf.tau_intervals(boot, meas)
        print("bootstrap+tau_intervals", n_samples, "samples:", time.time() - t, "s")
        print(taus.T)
        for x in wl: print("WARNING", x.category.__name__, str(x.message)[:300])
        print("caveats", getattr(boot, "caveats", None))
