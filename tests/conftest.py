"""Shared fixtures: a toy collection with known vectors, and an independent FD reference."""
import io
import os
from pathlib import Path

import mpmath
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

SHARED = Path(__file__).resolve().parents[1].parent / 'shared'
#: the package's notes that say what numbers are (not that something is wrong): graded qrels' relevance threshold,
#: pt.Experiment(baseline=)'s +/- columns of FD; tests that check "no warning" let these through (each is asserted in
#: its own test: test_table.py, test_experiment_rows.py)
INFORMATIVE_NOTES = r'graded qrels \(labels up to|.*"\+" / "-" columns count queries whose pseudo-value'


def reference_fd(x, y, dps=30, x_weights=None, y_weights=None):
    """FD from first principles in 30-digit arithmetic (mpmath), independent of the package: means,
    unbiased covariances, Σ₁^½ by a symmetric eigendecomposition, eigenvalues of Σ₁^½Σ₂Σ₁^½.
    Exact to double precision even for singular covariances; for small sets (d ≲ 20). With weights: the weighted
    mean and the covariance of ``numpy.cov(aweights=w)``, Σwᵢ(xᵢ−μ)(xᵢ−μ)ᵀ / (V₁ − V₂/V₁)."""
    with mpmath.workdps(dps):
        def stats(a, w):
            a = mpmath.matrix(np.asarray(a, dtype=np.float64).tolist())
            n, d = a.rows, a.cols
            w = [mpmath.mpf(1)] * n if w is None else [mpmath.mpf(float(v)) for v in w]
            v1, v2 = mpmath.fsum(w), mpmath.fsum(v * v for v in w)
            mu = [mpmath.fsum(w[i] * a[i, j] for i in range(n)) / v1 for j in range(d)]
            cov = mpmath.matrix(d, d)
            for j in range(d):
                for k in range(j, d):
                    cov[j, k] = cov[k, j] = (mpmath.fsum(w[i] * (a[i, j] - mu[j]) * (a[i, k] - mu[k]) for i in range(n))
                                             / (v1 - v2 / v1))
            return mu, cov
        mu1, s1 = stats(x, x_weights)
        mu2, s2 = stats(y, y_weights)
        evals, evecs = mpmath.eigsy(s1)
        root = evecs * mpmath.diag([mpmath.sqrt(max(e, 0)) for e in evals]) * evecs.T
        inner = root * s2 * root
        evals2, _ = mpmath.eigsy((inner + inner.T) / 2)
        tr_sqrt = mpmath.fsum(mpmath.sqrt(max(e, 0)) for e in evals2)
        mean_sq = mpmath.fsum((a - b) ** 2 for a, b in zip(mu1, mu2))
        tr = mpmath.fsum(s1[j, j] + s2[j, j] for j in range(len(mu1)))
        return float(mean_sq + tr - 2 * tr_sqrt)


def reference_fd_eigh(x, y):
    """FD from first principles in float64, independent of the package: np.cov, Σ₁^½ by eigh, eigenvalues of
    Σ₁^½Σ₂Σ₁^½. Accurate (≈1e-12) when both covariances are full rank and well conditioned."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    s1, s2 = np.cov(x, rowvar=False, ddof=1), np.cov(y, rowvar=False, ddof=1)
    s1, s2 = np.atleast_2d(s1), np.atleast_2d(s2)
    w, v = np.linalg.eigh(s1)
    root = (v * np.sqrt(np.clip(w, 0, None))) @ v.T
    inner = root @ s2 @ root
    lam = np.linalg.eigvalsh((inner + inner.T) / 2)
    diff = x.mean(0) - y.mean(0)
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.sqrt(np.clip(lam, 0, None)).sum())


class DictEncoder(pt.Transformer):
    """docno → doc_vec from a dict; docnos it does not know are left out of its output."""

    def __init__(self, vectors):
        self.vectors = vectors
        self.calls = 0

    def transform(self, inp):
        self.calls += 1
        known = inp[inp['docno'].isin(self.vectors.keys())]
        return known.assign(doc_vec=[self.vectors[d] for d in known['docno']])

    def __repr__(self):
        return f'DictEncoder({len(self.vectors)})'


@pytest.fixture
def toy():
    """60 docs d0..d59 with 6-d vectors; qrels for q1, q2 and q3 (q3 has no relevant doc); a run over q1..q4."""
    rng = np.random.default_rng(42)
    vectors = {f'd{i}': rng.normal(size=6) + (i // 10) for i in range(60)}
    qrels = pd.DataFrame([
        ('q1', 'd0', 2), ('q1', 'd1', 1), ('q1', 'd2', 0), ('q1', 'd3', 2),
        ('q2', 'd10', 1), ('q2', 'd11', 2), ('q2', 'd12', 1), ('q2', 'd13', 0),
        ('q3', 'd20', 0),
    ], columns=['qid', 'docno', 'label'])
    rows = []
    for q, base in (('q1', 0), ('q2', 10), ('q3', 20), ('q4', 30)):
        for r in range(10):
            rows.append((q, f'd{base + r}', 10.0 - r))
    run = pd.DataFrame(rows, columns=['qid', 'docno', 'score'])
    run.loc[(run.qid == 'q1') & (run.docno == 'd5'), 'score'] = 6.0  # tie with d4 (6.0): trec_eval puts d5 first
    return vectors, qrels, run


@pytest.fixture
def vec(toy):
    vectors = toy[0]
    return lambda *docnos: np.stack([vectors[d] for d in docnos])


@pytest.fixture
def two_queries(toy):
    """Qrels and a run over q1 and q2 only (both have relevant documents), PyTerrier column names."""
    vectors, qrels, run = toy
    qrels = qrels[qrels.qid.isin(['q1', 'q2'])].reset_index(drop=True)
    run = run[run.qid.isin(['q1', 'q2'])].reset_index(drop=True)
    return vectors, qrels, run


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    """Tiny random SPLADE, ColBERT and dense checkpoints (pipelines/tiny.py), and ColBERT's encoder and projection
    loaded from the checkpoint file itself (test_late_interaction.py's hand-written reference)."""
    from safetensors.torch import load_file
    from pyterrier_frechet.pipelines.tiny import tiny_colbert, tiny_encoder, tiny_masked_lm
    from transformers import BertConfig, BertModel
    root = tmp_path_factory.mktemp('pipeline-models')
    colbert = tiny_colbert(root / 'tiny-colbert')
    # the reference rebuilds the encoder from the checkpoint file itself, not through the package
    tensors = load_file(f'{colbert}/model.safetensors')
    bert = BertModel(BertConfig.from_pretrained(colbert), add_pooling_layer=False).eval()
    bert.load_state_dict({k[len('bert.'):]: v for k, v in tensors.items() if k.startswith('bert.')})
    return {'splade': tiny_masked_lm(root / 'tiny-splade'), 'colbert': colbert, 'dense': tiny_encoder(root / 'tiny-dense'),
            'linear': tensors['linear.weight'], 'bert': bert}


@pytest.fixture(scope='module')
def collection():
    """40 documents of random words from the tiny models' vocabulary, 3 topics and their qrels."""
    from pyterrier_frechet.data.bundled import Collection
    from pyterrier_frechet.pipelines.tiny import WORDS
    rng = np.random.default_rng(0)
    texts = {f'd{i}': ' '.join(rng.choice(WORDS, size=rng.integers(3, 9))) + (' .' if i % 3 == 0 else '') for i in range(40)}
    topics = pd.DataFrame({'qid': ['1', '2', '3'], 'query': ['shock wing', 'heat plate flow', 'mach number cone']})
    qrels = pd.DataFrame([('1', 'd1', 2), ('1', 'd5', 1), ('2', 'd7', 1), ('2', 'd9', 2), ('3', 'd11', 1), ('3', 'd30', 1), ('3', 'd2', 0)],
                         columns=['qid', 'docno', 'label'])
    return Collection('toy', topics, qrels, texts)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('PYTERRIER_FRECHET_CACHE', str(tmp_path / 'cache'))
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')


@pytest.fixture(autouse=True)
def _no_state_between_tests():
    """The package's process-wide state is the list in docs/state.md; every test starts from it as a fresh process
    would. The provider's qrels memo (the evaluation context of a pt.Experiment) starts and ends empty; the default
    encoder is None at the start (so no test sees another's), and a test that sets one must restore it (checked)."""
    from pyterrier_frechet.evaluation.provider import register
    from pyterrier_frechet.vectors import retrieval_models
    from pyterrier_frechet.vectors.sources import get_default_encoder
    memo = register().qrels_memo
    memo.clear()
    retrieval_models.forget()
    assert get_default_encoder() is None, 'an earlier test left a default encoder set'
    yield
    memo.clear()
    leaked = get_default_encoder()
    if leaked is not None:
        from pyterrier_frechet.vectors.sources import set_default_encoder
        set_default_encoder(None)  # so that the next test starts clean; this one fails
        pytest.fail(f'the test left the default encoder set ({leaked!r}): restore it (pf.default_encoder(...) as a context)')


def write_trec_files(folder, qrels=None, runs=None, vectors=None, vector_dtype=np.float64, sort_by_score=True):
    """Write the files the CLI reads into ``folder`` (returned): ``qrels.txt`` (``qid 0 docno label``), one
    ``runs/run.NAME.txt`` per run of ``runs`` (name -> frame of qid, docno, score; ``qid Q0 docno rank score tag``,
    queries in qid order, each by score descending when ``sort_by_score``, else in the frame's order) and the
    VectorStore pair ``vecs.npy`` / ``vecs.ids.txt`` of ``vectors`` (docno -> vector, rows in sorted docno order,
    as ``vector_dtype``)."""
    folder = Path(folder)
    if qrels is not None:
        with open(folder / 'qrels.txt', 'w') as f:
            for r in qrels.itertuples():
                f.write(f'{r.qid} 0 {r.docno} {r.label}\n')
    if runs is not None:
        (folder / 'runs').mkdir(exist_ok=True)
        for name, run in runs.items():
            with open(folder / 'runs' / f'run.{name}.txt', 'w') as f:
                for q, group in run.groupby('qid'):
                    if sort_by_score:
                        group = group.sort_values('score', ascending=False)
                    for rank, row in enumerate(group.itertuples()):
                        f.write(f'{q} Q0 {row.docno} {rank + 1} {float(row.score)!r} tag\n')
    if vectors is not None:
        ids = sorted(vectors)
        np.save(folder / 'vecs.npy', np.stack([vectors[i] for i in ids]).astype(vector_dtype))
        (folder / 'vecs.ids.txt').write_text('\n'.join(ids) + '\n')
    return folder


def needs_shared():
    return pytest.mark.skipif(not SHARED.exists() and not os.environ.get('CI'),
                              reason='needs ../shared (real data); CI has it')


def assert_cli_compare_is_the_api(stdout: str, runs, qrels, vectors_prefix, query_groups) -> None:
    """``compare --format csv --samples 200 --metrics FD@5 nDCG@5``'s table (``stdout``) equals
    ``pf.compare_systems`` on the same runs with ``query_groups``: differences, intervals and both p-values."""
    import pyterrier_frechet as pf
    table = pd.read_csv(io.StringIO(stdout))
    expected = pf.compare_systems(runs, qrels, [pf.FD(encoder=pf.VectorStore(str(vectors_prefix))) @ 5, 'nDCG@5'],
                                  n_samples=200, verbose=False, query_groups=query_groups)
    columns = ['diff', 'ci_low', 'ci_high', 'p_jackknife', 'p_normal']
    np.testing.assert_allclose(table[columns].to_numpy(float), expected[columns].to_numpy(float), rtol=1e-6)
