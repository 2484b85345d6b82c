"""k-NN precision / recall (core/knn.py): a hand-computed case and a brute-force reference."""
import numpy as np
import pytest

from pyterrier_frechet.core.knn import knn_precision_recall

def test_knn_precision_recall_by_hand():
    # relevant on a line at 0, 1, 2, 3 (k = 1: every radius is 1); retrieved at 0.5, 2.9 and 10.
    rel = np.array([[0.0], [1.0], [2.0], [3.0]])
    ret = np.array([[0.5], [2.9], [10.0]])
    # precision: 0.5 and 2.9 lie within 1 of a relevant point, 10 does not → 2/3.
    # retrieved radii (k = 1): 0.5 → 2.4, 2.9 → 2.4, 10 → 7.1. recall: 0 (0.5 from 0.5), 1, 2, 3 all covered → 1.
    pr = knn_precision_recall(rel, ret, k=1)
    assert pr.precision == pytest.approx(2 / 3) and pr.recall == 1.0
    # k = 2: relevant radii 2, 1, 1, 2 (to the 2nd neighbour); 10 is 7 from 3 → still outside: precision 2/3.
    # retrieved radii: 0.5 → 9.5 (to 10), 2.9 → 7.1, 10 → 9.5: everything covered → recall 1.
    assert knn_precision_recall(rel, ret, k=2) == pytest.approx((2 / 3, 1.0))


def test_knn_precision_recall_against_brute_force():
    rng = np.random.default_rng(4)
    rel, ret = rng.normal(size=(40, 3)), rng.normal(loc=0.7, size=(25, 3))
    k = 3

    def radius(s, i):
        return sorted(np.linalg.norm(s[i] - s[j]) for j in range(len(s)) if j != i)[k - 1]

    rr = [radius(rel, i) for i in range(len(rel))]
    gr = [radius(ret, i) for i in range(len(ret))]
    precision = np.mean([any(np.linalg.norm(g - rel[i]) <= rr[i] for i in range(len(rel))) for g in ret])
    recall = np.mean([any(np.linalg.norm(r - ret[i]) <= gr[i] for i in range(len(ret))) for r in rel])
    assert knn_precision_recall(rel, ret, k=k) == pytest.approx((precision, recall), abs=1e-15)
    with pytest.raises(ValueError, match='k = 25'):
        knn_precision_recall(rel, ret, k=25)
