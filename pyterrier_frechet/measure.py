"""The ``FD`` measure: Fréchet Distance as an ir_measures :class:`~ir_measures.measures.Measure`.

As in ir_measures, a measure is its parameters, a docstring and a citation; the computation lives in
:mod:`pyterrier_frechet.provider`, registered with ir_measures when the package is imported.
"""
from ir_measures import measures
from ir_measures.measures.base import Agg, ParamInfo


class FDAgg(Agg):
    """Aggregates FD's per-query rows: they all carry the one set value, which is returned as is."""

    def __init__(self):
        self.values = set()

    def add(self, value):
        self.values.add(value)

    def result(self):
        if not self.values:
            return float('nan')
        if len(self.values) > 1:
            raise ValueError(f'FD rows of one evaluation carry different values {sorted(self.values)[:3]}: '
                             'FD is one number per query set and cannot be averaged over evaluations')
        return next(iter(self.values))


class _FD(measures.Measure):
    """
    Fréchet Distance (FD) between the embeddings of the judged-relevant documents of a query set and
    the embeddings of the top-k documents a system retrieved for the same queries. A Gaussian is
    fitted to each set (mean, unbiased covariance) and FD = ‖μ₁−μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½).
    Lower is better: 0 means the retrieved documents are distributed like the relevant ones.

    FD is one number per query *set*, not a per-query score. To fit ir_measures and
    ``pt.Experiment``, which average per-query values, the set value is reported for every query
    of the qrels, so the mean over queries *is* the set value. Per-query rows repeat that number;
    paired tests against a ``baseline`` are therefore meaningless for FD (constant differences:
    the p-value is NaN).

    Relevant set: the documents judged ``>= rel`` of the queries in the qrels (optionally at most
    ``per_query`` of them per query, highest grade first, random within a grade, ``seed``).
    Retrieved set: the top ``cutoff`` documents (score descending, ties by docno descending as in
    trec_eval) of each query that has at least one relevant document; with ``urr=True``, the first
    ``cutoff`` documents that have no judgment at all in the qrels (Unjudged Retrieved Results).

    Vectors come from the run's ``doc_vec`` column when present (retrieved side) and otherwise from
    ``encoder``: a transformer mapping ``docno`` to ``doc_vec`` (e.g. ``TextLookup(...) >> Embedder()``)
    or a :class:`~pyterrier_frechet.VectorStore`; without one, the encoder set with
    :func:`pyterrier_frechet.set_default_encoder` is used.

    .. cite:: arabzadeh2024frechet
       Negar Arabzadeh and Charles L. A. Clarke. 2024. Fréchet Distance for Offline Evaluation of
       Information Retrieval Systems with Sparse Labels. In Proceedings of EACL 2024.
       https://aclanthology.org/2024.eacl-long.26
    """
    __name__ = 'FD'
    NAME = __name__
    PRETTY_NAME = 'Fréchet Distance'
    SHORT_DESC = ('Distance between Gaussians fitted to the embeddings of the relevant documents and of '
                  'the retrieved documents of a query set (lower is better).')
    HIGHER_IS_BETTER = False
    SUPPORTED_PARAMS = {
        'cutoff': ParamInfo(dtype=int, required=False, desc='ranking cutoff threshold (top-k per query); all retrieved documents if omitted'),
        'rel': ParamInfo(dtype=int, default=1, desc='minimum relevance label to be considered relevant (inclusive)'),
        'urr': ParamInfo(dtype=bool, default=False, desc='use the first cutoff unjudged documents of each ranking (Unjudged Retrieved Results)'),
        'per_query': ParamInfo(dtype=int, required=False, desc='keep at most this many relevant documents per query (highest grade first, random within a grade)'),
        'seed': ParamInfo(dtype=int, default=0, desc='random seed of the per_query balancing'),
        'encoder': ParamInfo(default=None, desc='transformer or VectorStore giving doc_vec for a docno; None: the run\'s doc_vec and the default encoder'),
        'missing': ParamInfo(dtype=str, choices=['error', 'drop'], default='error', desc='documents without a vector: raise (error) or leave out with a logged count (drop)'),
    }

    def __call__(self, cutoff=None, **kwargs):
        """``FD(10)`` is ``FD@10``; keywords set the other parameters, e.g. ``FD(10, rel=2)``."""
        if cutoff is not None:
            kwargs['cutoff'] = cutoff
        return super().__call__(**kwargs)

    def validate_params(self):
        """As ir_measures does, but a bad parameter raises ValueError (ir_measures uses assert)."""
        try:
            super().validate_params()
        except AssertionError as ex:
            raise ValueError(f'{self}: {ex}') from ex

    def aggregator(self):
        return FDAgg()

    def _param_repr(self, v):
        # encoders print as their own repr (e.g. VectorStore('...') or TextLookup(...) >> Embedder('...')), which
        # also keeps two FD measures with different encoders distinct (ir_measures compares measures by repr).
        return repr(v)


FD = _FD()
measures.register(FD)
