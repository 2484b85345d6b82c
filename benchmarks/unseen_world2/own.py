"""Own (independent) implementations: FD, per_query subsampling, nDCG@10, and the
conversion of sampled queries into package inputs."""
import os
import numpy as np
import pandas as pd

from benchmarks.worlds.graded import SYSTEMS


def gauss(X):
    return X.mean(0), np.cov(X, rowvar=False, ddof=1)


def _psd_sqrt(S):
    w, U = np.linalg.eigh(S)
    return (U * np.sqrt(np.clip(w, 0, None))) @ U.T


def fd_from_stats(m1, S1h, trS1, m2, S2):
    """FD with S1^1/2 precomputed: ||m1-m2||^2 + Tr S1 + Tr S2 - 2 Tr (S1h S2 S1h)^1/2."""
    M = S1h @ S2 @ S1h
    ev = np.linalg.eigvalsh((M + M.T) / 2)
    return float(((m1 - m2) ** 2).sum() + trS1 + np.trace(S2) - 2 * np.sqrt(np.clip(ev, 0, None)).sum())


def rel_side(queries, per_query=None, rng=None):
    out = []
    for q in queries:
        idx = np.where(q["labels"] >= 2)[0]
        if per_query is not None and len(idx) > per_query:
            keep = []
            for g in sorted(set(q["labels"][idx]), reverse=True):
                gi = idx[q["labels"][idx] == g]
                gi = rng.permutation(gi)
                keep.extend(gi[: per_query - len(keep)])
                if len(keep) >= per_query:
                    break
            idx = np.array(keep)
        out.append(q["V"][idx])
    return np.vstack(out)


def ret_side(queries, s):
    return np.vstack([q["V"][q["runs"][s][0][:10]] for q in queries if (q["labels"] >= 2).any()])


def ndcg10(q, s):
    lab = np.clip(q["labels"], 0, None).astype(float)
    docs = q["runs"][s][0][:10]
    disc = 1.0 / np.log2(np.arange(2, 12))
    dcg = (lab[docs] * disc[: len(docs)]).sum()
    ideal = np.sort(lab)[::-1][:10]
    idcg = (ideal * disc[: len(ideal)]).sum()
    return dcg / idcg if idcg > 0 else 0.0


def own_values(queries, rng):
    """Own FD@10, FD(per_query=5)@10 for all systems and mean nDCG@10 per system."""
    res = {}
    for meas, pq in (("FD", None), ("FDpq5", 5)):
        R = rel_side(queries, pq, rng)
        m1, S1 = gauss(R)
        S1h = _psd_sqrt(S1); tr1 = np.trace(S1)
        for s in SYSTEMS:
            m2, S2 = gauss(ret_side(queries, s))
            res[(s, meas)] = fd_from_stats(m1, S1h, tr1, m2, S2)
    for s in SYSTEMS:
        res[(s, "nDCG")] = float(np.mean([ndcg10(q, s) for q in queries]))
    return res


def to_package(queries, prefix):
    """Write a VectorStore at prefix and return (qrels, runs)."""
    qrows, vec, seen = [], [], {}
    runs = {s: [] for s in SYSTEMS}
    for qi, q in enumerate(queries):
        qid = str(qi)
        for j, (did, lab) in enumerate(zip(q["ids"], q["labels"])):
            if did not in seen:
                seen[did] = len(vec); vec.append(q["V"][j])
            if lab >= 0:
                qrows.append((qid, did, int(lab)))
        for s in SYSTEMS:
            docs, sc = q["runs"][s]
            for dj, scv in zip(docs, sc):
                runs[s].append((qid, q["ids"][dj], float(scv)))
    X = np.array(vec, dtype=np.float64)
    np.save(prefix + ".npy", X)
    with open(prefix + ".ids.txt", "w") as f:
        f.write("\n".join(seen.keys()) + "\n")
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    runs = {s: pd.DataFrame(r, columns=["query_id", "doc_id", "score"]) for s, r in runs.items()}
    return qrels, runs
