"""Run more trials of `run.py` in parallel processes under a time box, then merge their CSVs.

    python -m benchmarks.unseen_world2.parallel OUTDIR DEADLINE_S WORLD:D:FIRST:WORKERS [WORLD:D:FIRST:WORKERS ...]

Worker w of a spec runs trials FIRST + w, FIRST + w + WORKERS, FIRST + w + 2·WORKERS, ... (the seeds are
`run.py`'s: trial t uses `default_rng([world_id, d, 100000 + t])`), each in its own results folder, and starts a
trial only while the time left exceeds 1.3 × its slowest trial so far. The stopping point is set by the clock
alone, never by a result. The merged `trials_WORLD_dD.csv` / `pairs_WORLD_dD.csv` in OUTDIR hold every finished
trial; they were copied to `results/device/` by hand (README). Give two calls disjoint FIRST ranges (stop 43 used
47 and 200: the first call never reached 200). `d384.py` refuses overlapping trial numbers between the check's sets
and the device ones, and within the device ones.
"""
import os
import subprocess
import sys
import time

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # the repository root: benchmarks.* importable when run as a file
sys.path.insert(0, ROOT)


def worker(world, d, trials, deadline):
    from benchmarks.unseen_world2 import run
    slowest = 0.0
    for t in trials:
        if time.time() + 1.3 * slowest > deadline:
            break
        t0 = time.time()
        run.trials(world, d, t, t + 1)
        slowest = max(slowest, time.time() - t0)


def main(outdir, deadline_s, specs):
    deadline = time.time() + deadline_s
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs, folders = [], []
    for spec in specs:
        world, d, first, workers = spec.split(":")
        d, first, workers = int(d), int(first), int(workers)
        for w in range(workers):
            folder = os.path.join(outdir, f"w_{world}_{d}_{w}")
            os.makedirs(folder, exist_ok=True)
            trials = list(range(first + w, first + 100000, workers))
            code = (f"import sys; sys.path.insert(0, {ROOT!r}); from benchmarks.unseen_world2 import parallel; "
                    f"parallel.worker({world!r}, {d}, {trials[:500]!r}, {deadline!r})")
            log = open(os.path.join(folder, "log.txt"), "w")
            procs.append(subprocess.Popen([sys.executable, "-c", code], env=dict(env, UW2_RES=folder),
                                          stdout=log, stderr=subprocess.STDOUT))
            folders.append((world, d, folder))
    while any(p.poll() is None for p in procs) and time.time() < deadline + 5:
        time.sleep(2)
    for p in procs:
        if p.poll() is None:
            p.kill()   # a trial still running at the deadline: its rows were never written
    for kind in ("trials", "pairs"):
        for world, d in sorted({(w, d) for w, d, _ in folders}):
            parts = [os.path.join(f, f"{kind}_{world}_d{d}.csv") for w, dd, f in folders if (w, dd) == (world, d)]
            frames = [pd.read_csv(p) for p in parts if os.path.exists(p)]
            if frames:
                merged = pd.concat(frames).sort_values(["trial"], kind="stable")
                merged.to_csv(os.path.join(outdir, f"{kind}_{world}_d{d}.csv"), index=False)
                print(kind, world, d, "finished trials:", merged["trial"].nunique(), flush=True)
    with open(os.path.join(outdir, "logs.txt"), "w") as out:
        for world, d, folder in folders:
            out.write(f"== {folder}\n" + open(os.path.join(folder, "log.txt")).read())


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3:])
