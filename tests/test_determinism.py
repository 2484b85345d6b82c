"""The same seed gives identical numbers across runs and processes; different seeds differ."""
import subprocess
import sys
import textwrap

_SCRIPT = textwrap.dedent('''
    import sys, numpy as np, pandas as pd
    import pyterrier_frechet as pf
    from ir_measures import nDCG
    seed = int(sys.argv[1])
    rng = np.random.default_rng(123)  # the data are fixed; only the analysis seed varies
    vectors = {f'd{i}': rng.normal(size=5) for i in range(80)}
    qrels = pd.DataFrame([(f'q{q}', f'd{q * 8 + j}', int(rng.integers(0, 4))) for q in range(8) for j in range(6)],
                         columns=['qid', 'docno', 'label'])
    runs = {name: pd.DataFrame([(f'q{q}', f'd{int(x)}', float(-r)) for q in range(8)
                                for r, x in enumerate(rng.permutation(80)[:15])], columns=['qid', 'docno', 'score'])
            for name in 'abcd'}
    class Enc:
        def lookup(self, docnos):
            return np.stack([vectors[d] for d in docnos]), np.ones(len(docnos), dtype=bool)
        def __repr__(self):
            return 'Enc()'
    m = pf.FD(encoder=Enc()) @ 10
    boot = pf.bootstrap(runs, qrels, [m, nDCG @ 10], n_samples=30, seed=seed, verbose=False)
    sparse = pf.sparsify(runs, qrels, [m, nDCG @ 10], per_query=[1, 2], seeds=[seed], verbose=False)
    balanced = pf.balance_qrels(qrels, 2, seed=seed)
    groups = {n: n for n in runs}
    types = {'a': 'x', 'b': 'x', 'c': 'y', 'd': 'y'}
    pools = pf.simulate_pools(runs, qrels, [m, nDCG @ 10], groups, types, fraction=0.5, depth=15, repeats=4, seed=seed,
                              verbose=False)
    print(repr(np.concatenate([boot.samples[n][str(k)] for n in 'abcd' for k in (m, nDCG @ 10)]).tolist()))
    print(repr(sparse.kendall_tau.tolist()))
    print(repr(balanced.values.tolist()))
    print(repr(pools.pools.groups.tolist() + pools.taus.kendall_tau.tolist()))
''')


def _run(seed: int) -> str:
    out = subprocess.run([sys.executable, '-c', _SCRIPT, str(seed)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_same_seed_same_numbers_across_processes_different_seed_differs():
    first, second, other = _run(5), _run(5), _run(6)
    assert first == second
    boot1, sparse1, bal1, pool1 = first.splitlines()
    boot2, sparse2, bal2, pool2 = other.splitlines()
    assert boot1 != boot2 and bal1 != bal2 and pool1 != pool2
