"""Minimal reproduction: the cluster bootstrap interval of a per-query mean measure (nDCG@10) with query_groups.
A perfect run (nDCG@10 = 1 on every query): any bootstrap of the mean over queries must give [1, 1]."""
import pandas as pd
import pyterrier_frechet as pf

qids = [f'q{i}' for i in range(6)]
groups = {'q0': 'a', 'q1': 'b', 'q2': 'c', 'q3': 'c', 'q4': 'c', 'q5': 'c'}  # sizes 1, 1, 4
qrels = pd.DataFrame([(q, f'{q}_d', 1) for q in qids], columns=['qid', 'docno', 'label'])
run = pd.DataFrame([(q, f'{q}_d', 1.0) for q in qids], columns=['qid', 'docno', 'score'])
for qg in (None, groups):
    res = pf.bootstrap({'perfect': run}, qrels, ['nDCG@10'], n_samples=200, seed=0, verbose=False, query_groups=qg)
    print('query_groups' if qg else 'no groups   ', res.summary[['value', 'low', 'high', 'mean', 'std']].to_string(header=qg is None))

# The paired comparison inherits it: a perfect run against a run that finds nothing, ΔnDCG@10 = 1 on every query.
empty = pd.DataFrame([(q, f'{q}_other', 1.0) for q in qids], columns=['qid', 'docno', 'score'])
for qg in (None, groups):
    cmp = pf.compare_systems({'perfect': run, 'empty': empty}, qrels, ['nDCG@10'], n_samples=200, seed=0,
                             verbose=False, query_groups=qg)
    print('query_groups' if qg else 'no groups   ', cmp[['diff', 'ci_low', 'ci_high', 'interval']].to_string(header=qg is None))
