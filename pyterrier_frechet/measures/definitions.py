"""The measures of this package, as ir_measures :class:`~ir_measures.measures.Measure` objects: ``FD``
(Fréchet Distance) and its companions over the same two sets of embeddings (``FDInf``, ``KID``,
``KNNPrecision``, ``KNNRecall``), and the score-histogram measures ``DO`` and ``HSA``.

As in ir_measures, a measure is its parameters, a docstring and a citation. Each also declares what it is
(:mod:`pyterrier_frechet.measures.base`: its input, orientation, set-valued or not, resampling) and computes its
value from its inputs through a pure numpy core (:mod:`pyterrier_frechet.core`), imported when first used. Selecting
the inputs from qrels and runs is :mod:`pyterrier_frechet.evaluation`'s work.
"""
import hashlib
from typing import Dict, List

import numpy as np

from ir_measures.measures.base import ParamInfo

from .base import VECTOR_PARAMS, HistogramMeasure, VectorMeasure, register_measure
from .resampling import VECTOR_STATS, Resampling, leave_out_weights


class Gaussian(Resampling):
    """FD: per-query counts, sums and cross-products re-weighted (:func:`~pyterrier_frechet.core.weighted.weighted_fds`);
    leave-outs by downdating the totals (:func:`~pyterrier_frechet.core.weighted.leave_out_fds`)."""
    name = 'gaussian'
    statistics = VECTOR_STATS
    # FD over n queries is biased upwards (10–400× the population FD in the calibration worlds) and no interval for
    # the population FD reached its coverage at d = 384: the jackknife interval of log FD, for E[FD̂ₙ]
    interval = 'jackknife_log'
    estimand = 'E[FD̂ₙ] at this number of queries'
    paired_test = 'jackknife'
    grouped_jackknife = True

    shares_samples = True  # the relevant side of each sample, factored once for every run

    def samples(self, measure, stats, weights, engine, pbar=None):
        return engine.weighted_fds(stats.rel, weights, [stats.ret], [weights], stats.shift, pbar)

    def samples_of_runs(self, measure, stats, weights, engine, pbar=None):
        """Every run's samples with the relevant side of each sample made and factored once for all of them
        (:func:`~pyterrier_frechet.core.weighted.shared_weighted_fds`), where the runs share one relevant side (the
        evaluation's memo: :attr:`~pyterrier_frechet.evaluation.vector_statistics.VectorStatistics.shared`) and the
        engine is numpy; else one run at a time."""
        from ..core.weighted import shared_weighted_fds, streamed
        if engine.name != 'numpy' or len(stats) < 2:
            return super().samples_of_runs(measure, stats, weights, engine, pbar)
        made = {}
        for name, make in stats.items():
            st = make()
            first = next(iter(made.values()), st)
            if st.shared is None or st.rel is not first.rel:  # no shared relevant side: one run at a time
                return super().samples_of_runs(measure, stats, weights, engine, pbar)
            # the retrieved side's cross-products formed pass by pass (a few ms each), not held for every run
            made[name] = st._replace(ret=streamed(st.ret))
        first = next(iter(made.values()))
        values = shared_weighted_fds(first.rel, [st.ret for st in made.values()], weights, first.shift, pbar)
        return dict(zip(made, values))

    def leave_out(self, measure, stats, groups, n_groups, engine, pbar=None):
        from ..core.weighted import leave_out_fds, relevant_leave_outs
        relevant = None
        if engine.fd_batch is None and getattr(stats, 'shared', None) is not None:
            # the relevant side's leave-outs, made once per evaluation and grouping for every run and measure
            groups = np.asarray(groups)
            key = ('leave-outs', n_groups, hashlib.blake2b(groups.astype(np.int64).tobytes(), digest_size=16).digest())
            relevant = stats.shared(key, lambda: relevant_leave_outs(stats.rel, stats.units, groups, n_groups,
                                                                     stats.shift))
        return leave_out_fds(stats.rel, stats.ret, stats.units, groups, n_groups, stats.shift, fd_batch=engine.fd_batch,
                             pbar=pbar, relevant=relevant)


    def swapped(self, measure, stats_a, stats_b, swaps, engine):
        """Each run's retrieved sets per query, the relevant side shared: FD of (A's parts where kept, B's where
        swapped) minus FD of the opposite, re-weighting both runs' per-query statistics."""
        keep = 1.0 - swaps
        full = np.ones_like(swaps)
        parts = [stats_a.ret, stats_b.ret]
        return (engine.weighted_fds(stats_a.rel, full, parts, [keep, swaps], stats_a.shift)
                - engine.weighted_fds(stats_a.rel, full, parts, [swaps, keep], stats_a.shift))

    def influence(self, measure, stats):
        """∂FD/∂w_q in closed form (:func:`~pyterrier_frechet.core.influence.fd_influence`): one r × r
        eigen-decomposition per run instead of one eigenvalue solve per query left out."""
        from ..core.influence import fd_influence, relevant_factor
        relevant = None
        if getattr(stats, 'shared', None) is not None:  # the relevant side's factor, once for every run and measure
            relevant = stats.shared(('influence factor',), lambda: relevant_factor(stats.rel, stats.units, stats.shift))
        return fd_influence(stats.rel, stats.ret, stats.units, stats.shift, relevant)


class Conditional(Gaussian):
    """CFD: the same per-query statistics, as within-query scatter and per-query means
    (:func:`~pyterrier_frechet.core.conditional.conditional_fds`, :func:`~pyterrier_frechet.core.conditional.conditional_leave_out`)."""
    name = 'conditional'
    backends = ('numpy',)
    shares_samples = False  # its samples are conditional_fds', one run at a time
    samples_of_runs = Resampling.samples_of_runs
    influence = Resampling.influence  # no closed form here: its rows take the exact leave-outs
    swapped = Resampling.swapped  # no randomisation test

    def samples(self, measure, stats, weights, engine, pbar=None):
        from ..core.conditional import conditional_fds
        return conditional_fds(stats.rel, stats.ret, weights, pbar)

    def leave_out(self, measure, stats, groups, n_groups, engine, pbar=None):
        from ..core.conditional import conditional_leave_out
        return conditional_leave_out(stats.rel, stats.ret, stats.units, groups, n_groups, pbar)


class Term(Resampling):
    """One of FD's two terms (``FD(term='mean')``, ``FD(term='cov')``) through FD's own resampling: the mean term
    ‖μ₁ − μ₂‖² from the same weighted counts and sums (:func:`~pyterrier_frechet.core.weighted.mean_terms`, its
    influence :func:`~pyterrier_frechet.core.influence.mean_term_influence`), the covariance term as FD's value less
    it — so in every sample, leave-out, swap and influence the two terms sum to FD's, the interval and the paired test
    are FD's own methods on the same draws and leave-outs, and no second FD route exists."""
    statistics = VECTOR_STATS
    grouped_jackknife = True
    shares_samples = True

    def __init__(self, fd: Resampling, term: str):
        if term not in ('mean', 'cov'):
            raise ValueError(f"term must be 'mean' or 'cov', got {term!r}")
        self.fd, self.term = fd, term
        self.name = f'{fd.name} ({term} term)'
        self.interval, self.paired_test, self.backends = fd.interval, fd.paired_test, fd.backends
        self.estimand = f'E[{term} term of FD̂ₙ] at this number of queries'

    def _of(self, fd_values, mean_values):
        return mean_values if self.term == 'mean' else fd_values - mean_values

    @staticmethod
    def _means(stats, rel_weights, ret_parts, ret_weights):
        from ..core.weighted import mean_terms
        return mean_terms(stats.rel, rel_weights, ret_parts, ret_weights)

    def samples(self, measure, stats, weights, engine, pbar=None):
        mean = self._means(stats, weights, [stats.ret], [weights])
        if self.term == 'mean':
            if pbar is not None:
                pbar.update(len(weights))
            return mean
        return self._of(self.fd.samples(measure, stats, weights, engine, pbar), mean)

    def samples_of_runs(self, measure, stats, weights, engine, pbar=None):
        made = {}

        def keep(name, make):  # each run's statistics made once, for FD's samples and for the mean term
            def made_once():
                made[name] = make()
                return made[name]
            return made_once
        if self.term == 'mean':
            return {name: self.samples(measure, make(), weights, engine, pbar) for name, make in stats.items()}
        values = self.fd.samples_of_runs(measure, {n: keep(n, m) for n, m in stats.items()}, weights, engine, pbar)
        return {name: self._of(values[name], self._means(made[name], weights, [made[name].ret], [weights]))
                for name in values}

    def leave_out(self, measure, stats, groups, n_groups, engine, pbar=None):
        weights = leave_out_weights(stats.units, groups, n_groups)  # O(groups · queries · d)
        mean = self._means(stats, weights, [stats.ret], [weights])
        if self.term == 'mean':
            return mean
        return self._of(self.fd.leave_out(measure, stats, groups, n_groups, engine, pbar), mean)

    def swapped(self, measure, stats_a, stats_b, swaps, engine):
        keep, full = 1.0 - swaps, np.ones_like(swaps)
        parts = [stats_a.ret, stats_b.ret]
        mean = (self._means(stats_a, full, parts, [keep, swaps]) - self._means(stats_a, full, parts, [swaps, keep]))
        return mean if self.term == 'mean' else self._of(self.fd.swapped(measure, stats_a, stats_b, swaps, engine), mean)

    def influence(self, measure, stats):
        from ..core.influence import mean_term_influence
        mean = mean_term_influence(stats.rel, stats.ret, stats.units)
        if mean is None or self.term == 'mean':
            return mean
        fd = self.fd.influence(measure, stats)
        return None if fd is None else fd - mean

    def __repr__(self):
        return f'Term({self.fd!r}, {self.term!r})'


#: The resamplings of FD and CFD (see :mod:`.resampling`), and of FD's two terms.
GAUSSIAN = Gaussian()
CONDITIONAL = Conditional()
TERMS = {term: Term(GAUSSIAN, term) for term in ('mean', 'cov')}


class _FD(VectorMeasure):
    """
    Fréchet Distance (FD) between the embeddings of the judged-relevant documents of a query set and
    the embeddings of the top-k documents a system retrieved for the same queries. A Gaussian is
    fitted to each set (mean, unbiased covariance) and FD = ‖μ₁−μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½).
    Lower is better: 0 means the retrieved documents are distributed like the relevant ones.

    FD is one number per query *set*, not a per-query score. To fit ir_measures and ``pt.Experiment``, which
    average per-query rows and run paired t-tests on them (``baseline=``), each query with a relevant document gets
    its centred jackknife pseudo-value r_q = FD + c·(mean₋ − FD₋q) (FD₋q: FD without q's documents, computed by
    downdating the totals; c = n − 1 for n such queries; above 500 of them, 200 seeded groups are left out instead):
    the mean of the rows *is* FD, and the paired t-test of two systems' rows is the jackknife t-test of their FD
    difference — ``compare``'s default test with a t reference (:mod:`pyterrier_frechet.evaluation.experiment_rows`;
    its level: ``calibrate --level``). The rows are not per-query effectiveness: a row says how much FD leans on that
    query. The same holds for FD(weighting='query') and CFD. ``rows='influence'`` builds them from each query's
    first-order influence on FD instead (closed form, one eigen-decomposition per run; a more conservative test:
    pt_docs "Calibration"). Where a leave-out is undefined (a side left with fewer
    than 2 vectors) the rows repeat FD with a warning that a paired test on them is meaningless.
    ``FD(jackknife=True)`` instead reports Tukey's pseudo-values p_q = n·FD − (n−1)·FD₋q, whose mean p̄ is the
    jackknife bias-corrected FD. Every one of the M qrels queries gets a row, whatever other measures share the
    call (otherwise ir_measures fills 0 in): with M > n a query without relevant documents gets the mean and a
    unit mean + c'(r_q − mean), c' = √(M(M−1)/(n(n−1))), so the mean over the M rows is unchanged and the paired
    t statistic is the jackknife's, on M−1 degrees of freedom instead of n−1
    (:func:`pyterrier_frechet.evaluation.provider.qrels_rows`; ``pt.Experiment(baseline=...)`` warns so). FD(jackknife=True) with fewer than 2 such queries,
    or a query whose removal leaves a set with fewer than 2 vectors, is refused with the reason (never a silent NaN).

    ``weighting='query'`` fits both Gaussians with per-document weights so that every query has total weight 1 on
    each side — each of its n_q relevant documents weighs 1/n_q, each of its k_q retrieved documents 1/k_q — with
    the weighted mean and covariance of ``numpy.cov(..., aweights=w)``. With the default ``'document'`` weighting the
    relevant set weighs queries by their number of judgments (3 to 219 relevant per query on DL19) and the
    retrieved set by k each, so the query mix, not only the system, moves FD.

    ``term='mean'`` and ``term='cov'`` report FD's two terms on their own: the mean term ‖μ₁ − μ₂‖² (how far the
    centre of the retrieved set is from the relevant set's) and the covariance term Tr(Σ₁ + Σ₂ − 2(Σ₁^½Σ₂Σ₁^½)^½) (how
    differently the two sets spread: a retrieved set narrower than the relevant set raises it as much as a broader
    one). They sum to FD exactly, take every other parameter, and go through FD's own resampling (bootstrap,
    jackknife rows, paired tests) — read them beside FD to see which term moves it (pt_docs "When FD and nDCG disagree").

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
    RESAMPLING = GAUSSIAN
    SOURCE_PRECISION = True  # reduce_set promotes float32 vectors to float64 a chunk of rows at a time
    SUPPORTED_PARAMS = {
        **VECTOR_PARAMS,
        'jackknife': ParamInfo(dtype=bool, default=False, desc='report the value as the jackknife bias-corrected FD: the mean '
                               'of Tukey\'s per-query pseudo-values (the default rows are centred on FD itself)'),
        'rows': ParamInfo(dtype=str, choices=['leave-out', 'influence'], default='leave-out',
                          desc="per-query rows under ir_measures and pt.Experiment: 'leave-out', the centred jackknife "
                               "pseudo-values from exact leave-one-query-out FDs; 'influence', the same from each "
                               "query's first-order influence (the infinitesimal jackknife: one eigen-decomposition per "
                               'run instead of one per query; a more conservative paired test, see the Calibration page)'),
        'weighting': ParamInfo(dtype=str, choices=['document', 'query'], default='document',
                               desc="'document': every document weighs 1 (the paper's FD); 'query': every query weighs 1 on "
                                    'each side (its n relevant documents 1/n each, its k retrieved 1/k each)'),
        'term': ParamInfo(dtype=str, choices=['fd', 'mean', 'cov'], default='fd',
                          desc="'fd': FD itself; 'mean': its mean term ‖μ₁ − μ₂‖² (how far the retrieved set's centre is "
                               "from the relevant set's); 'cov': its covariance term Tr(Σ₁ + Σ₂ − 2(Σ₁^½Σ₂Σ₁^½)^½) (how "
                               'differently the two sets spread). The two terms sum to FD, with the same intervals and '
                               'paired tests'),
    }

    def validate_params(self):
        super().validate_params()
        if self['weighting'] == 'query' and self['jackknife']:
            raise ValueError(f"{self}: jackknife=True is not available with weighting='query'; use the bootstrap's "
                             "jackknife intervals (pf.bootstrap) instead")
        if self['term'] != 'fd' and self['jackknife']:
            raise ValueError(f"{self}: jackknife=True is not available with term={self['term']!r}; its rows and the "
                             "bootstrap's jackknife intervals are the term's own without it")
        if self['rows'] == 'influence' and self['jackknife']:
            raise ValueError(f"{self}: rows='influence' is not available with jackknife=True, whose rows are Tukey's "
                             "pseudo-values from exact leave-outs; use one of the two")

    def query_weighted(self) -> bool:
        return self['weighting'] == 'query'

    def decomposition(self):
        if self['term'] != 'fd' or self['jackknife']:
            return None
        params = {k: v for k, v in self.params.items() if k not in ('term', 'rows')}
        spread = {k: v for k, v in params.items() if k in SpreadRatio.SUPPORTED_PARAMS}
        within = {k: v for k, v in spread.items() if k != 'weighting'}
        return (FD(**params, term='mean'), FD(**params, term='cov'), SpreadRatio(**spread),
                SpreadRatio(**within, scope='query'))

    def rows_by_influence(self) -> bool:
        return self['rows'] == 'influence'

    def query_statistic(self, relevant, rel_qids, retrieved, ret_qids) -> float:
        from ..core.frechet import frechet_terms_weighted
        from ..core.weighted import query_weights
        return self._term(frechet_terms_weighted(relevant, query_weights(rel_qids), retrieved, query_weights(ret_qids)))

    def _term(self, terms) -> float:
        """The value this measure reports from FD's two terms (:class:`~pyterrier_frechet.core.kernel.FDTerms`)."""
        return terms.fd if self['term'] == 'fd' else getattr(terms, self['term'])

    def is_set_valued(self) -> bool:
        return not self['jackknife']

    def resampling(self):
        return None if self['jackknife'] else self._resampling()  # pseudo-values per query: no set to re-weight

    def _resampling(self) -> Resampling:
        return self.RESAMPLING if self['term'] == 'fd' else TERMS[self['term']]

    def reduce_relevant(self, relevant):
        from ..core.frechet import reduce_set
        return reduce_set(relevant)  # the same for every run evaluated on the same qrels: the evaluation reuses it

    def statistic(self, relevant, retrieved) -> float:
        from ..core.frechet import ReducedSet, check_vectors, frechet_terms_reduced, reduce_set
        rel = relevant if isinstance(relevant, ReducedSet) else reduce_set(relevant)
        if self['term'] == 'mean':  # the means alone: no factor of the retrieved set
            diff = rel.mean - check_vectors(retrieved).mean(axis=0)
            return float(diff @ diff)
        return self._term(frechet_terms_reduced(rel, reduce_set(retrieved)))

    def per_query_values(self, relevant, rel_qids, retrieved, ret_qids, queries: List[str]) -> Dict[str, float]:
        from ..core.jackknife import jackknife_pseudo_values
        from .resampling import numpy_engine
        # the leave-outs of FD's resampling, as the bootstrap, compare and the default rows take them
        return jackknife_pseudo_values(relevant, rel_qids, retrieved, ret_qids, queries,
                                       lambda sides, groups, n: self._resampling().leave_out(self, sides, groups, n,
                                                                                             numpy_engine()))


FD = register_measure(_FD())


class _CFD(VectorMeasure):
    """
    Conditional Fréchet Distance given the query: compares each query's retrieved documents with *that query's*
    relevant documents, where FD compares the pooled sets and cannot see which query a document serves (handing
    every ranking to another query leaves FD unchanged). With per-query means m_q and the pooled within-query
    covariances W of each side, CFD = (1/|Q|) Σ_q ‖m_q^rel − m_q^ret‖² + Tr(W_rel + W_ret − 2(W_rel^½ W_ret W_rel^½)^½),
    over the queries with both relevant and retrieved vectors — the conditional Fréchet distance of Soloveitchik
    et al. with the query identity as the condition (:mod:`pyterrier_frechet.core.conditional`). 0 when every
    query's retrieved documents are distributed like its relevant ones; lower is better. The same two sets and
    parameters as FD. The bootstrap re-weights its per-query statistics exactly (a query drawn w times counts as
    w queries).

    .. cite:: soloveitchik2021cfid
       Michael Soloveitchik, Tzvi Diskin, Efrat Morin and Ami Wiesel. 2021. Conditional Frechet Inception
       Distance. arXiv:2103.11521.
    """
    __name__ = 'CFD'
    NAME = __name__
    PRETTY_NAME = 'Conditional Fréchet Distance'
    SHORT_DESC = ("Fréchet distance between each query's relevant and retrieved documents, given the query "
                  '(lower is better).')
    HIGHER_IS_BETTER = False
    RESAMPLING = CONDITIONAL

    def needs_query_ids(self) -> bool:
        return True

    def query_statistic(self, relevant, rel_qids, retrieved, ret_qids) -> float:
        from ..core.conditional import conditional_frechet_distance
        return conditional_frechet_distance(relevant, rel_qids, retrieved, ret_qids)


CFD = register_measure(_CFD())


class _SpreadRatio(VectorMeasure):
    """
    How widely the retrieved documents spread against the relevant documents: Tr Σ_retrieved / Tr Σ_relevant, the
    ratio of the two sets' total variances (the traces of the covariances FD fits; with ``weighting='query'``, FD's
    query-weighted covariances). 1: the retrieved set spreads as much as the relevant set; below 1 it is narrower (a
    tight neighbourhood of the query), above 1 broader. Neither direction is better: it says which way FD's covariance
    term (``FD(term='cov')``) goes, and so why a system with more relevant documents at the top can still have the
    higher FD. The same two sets and parameters as FD; one number per query set (``pt.Experiment`` repeats it on
    every row, with a warning under ``baseline=``).

    ``scope='query'``: the same ratio within queries, Σ_q Tr Σ_retrieved,q / Σ_q Tr Σ_relevant,q over the queries with
    at least 2 relevant and 2 retrieved vectors — whether each query's retrieved documents spread like its relevant
    ones. The pooled ratio mixes that with how the queries' topics spread, which both sets share: with unit-length
    vectors and many topics it stayed at 0.99–1.03 for every system of Cranfield, SciFact, Vaswani and DL19, while the
    per-query ratio separated them (DL19: BM25 1.14–1.19, neural runs 0.69–0.94; pt_docs "When FD and nDCG disagree").
    """
    __name__ = 'SpreadRatio'
    NAME = __name__
    PRETTY_NAME = 'Spread ratio'
    SHORT_DESC = ('Total variance of the retrieved embeddings over that of the relevant ones (1: the same spread; '
                  'below: narrower; neither direction is better).')
    HIGHER_IS_BETTER = True  # ir_measures needs an orientation; this measure has none (see the docstring)
    ORIENTED = False
    SUPPORTED_PARAMS = {
        **VECTOR_PARAMS,
        'weighting': ParamInfo(dtype=str, choices=['document', 'query'], default='document',
                               desc="FD's weighting: 'document' (every document weighs 1) or 'query' (every query 1)"),
        'scope': ParamInfo(dtype=str, choices=['set', 'query'], default='set',
                           desc="'set': the two pooled sets' total variances (FD's covariances); 'query': within each "
                                'query, summed over the queries with 2 or more vectors on both sides'),
    }

    def validate_params(self):
        super().validate_params()
        if self['scope'] == 'query' and self['weighting'] == 'query':
            raise ValueError(f"{self}: scope='query' compares each query with itself; weighting='query' has nothing "
                             'to weigh there: use one of the two')

    def query_weighted(self) -> bool:
        return self['weighting'] == 'query'

    def needs_query_ids(self) -> bool:
        return self.query_weighted() or self['scope'] == 'query'

    def statistic(self, relevant, retrieved) -> float:
        from ..core.frechet import total_variance
        return total_variance(retrieved) / total_variance(relevant)

    def query_statistic(self, relevant, rel_qids, retrieved, ret_qids) -> float:
        from ..core.frechet import query_total_variances, total_variance
        from ..core.weighted import query_weights
        if self['scope'] == 'query':
            rel_q, rel_tr = query_total_variances(relevant, rel_qids)
            ret_q, ret_tr = query_total_variances(retrieved, ret_qids)
            common, i, j = np.intersect1d(rel_q, ret_q, return_indices=True)
            both = np.isfinite(rel_tr[i]) & np.isfinite(ret_tr[j])
            if not both.any():
                return float('nan')
            return float(ret_tr[j][both].sum() / rel_tr[i][both].sum())
        return total_variance(retrieved, query_weights(ret_qids)) / total_variance(relevant, query_weights(rel_qids))


SpreadRatio = register_measure(_SpreadRatio())


_HISTOGRAM_DOC = """
    Scores: each query's ranking (its top ``cutoff``, in trec_eval order) is normalised to [0, 1] on its own —
    min-max of the scores (``norm='minmax'``), or of the ranks, first = 1 and last = 0 (``norm='rank'``, as the
    paper does for TREC runs). A query whose scores are all equal (or that has one document, for ranks) has no
    normalisation and is left out with a logged count. The normalised scores of the judged documents of every
    query with at least one relevant document are pooled into two histograms over ``bins`` equal bins: relevant
    (label >= ``rel``) and non-relevant (judged below ``rel``; with ``unjudged='nonrel'``, unjudged retrieved
    documents too). Only scored (retrieved) documents count. Supported bins B': both histograms non-zero.

    One number per query set, repeated on every query of the qrels: ``pt.Experiment`` shows it as is and warns
    that a paired test (``baseline=``) on the repeated value is meaningless (compare systems with ``compare``).
"""

_HISTOGRAM_CITE = """
    .. cite:: krstovski2015histogram
       Kriste Krstovski, David A. Smith and Michael J. Kurtz. 2015. Evaluating Retrieval Models through
       Histogram Analysis. In Proceedings of SIGIR 2015. https://doi.org/10.1145/2766462.2767815
"""


class _DO(HistogramMeasure):
    __doc__ = """
    Distributional Overlap (DO): Σ over supported bins of log min(h_R, h_NR), Eq. 1 of Krstovski et al. —
    how much the scores a system gives relevant and non-relevant documents overlap. Lower is better. 0 when
    no bin holds both. DO sums log counts, so it grows with the number of scored judged documents: compare
    systems on the same queries, qrels and depth only.
""" + _HISTOGRAM_DOC + _HISTOGRAM_CITE
    __name__ = 'DO'
    NAME = __name__
    PRETTY_NAME = 'Distributional Overlap'
    SHORT_DESC = 'Overlap of the histograms of normalised scores of relevant and non-relevant documents (lower is better).'
    HIGHER_IS_BETTER = False

    def statistic(self, histograms) -> float:
        from ..core.histogram import distributional_overlap
        return distributional_overlap(histograms)


class _HSA(HistogramMeasure):
    __doc__ = """
    Histogram Slope Analysis (HSA): the least-squares slope of log(h_R / h_NR) against the bin centre over the
    supported bins, Eq. 2 of Krstovski et al. — how steeply the share of relevant documents rises with the
    score. Higher is better. NaN (with a warning) when fewer than two bins are supported.
""" + _HISTOGRAM_DOC + _HISTOGRAM_CITE
    __name__ = 'HSA'
    NAME = __name__
    PRETTY_NAME = 'Histogram Slope Analysis'
    SHORT_DESC = 'Slope of the log ratio of relevant to non-relevant score histograms (higher is better).'
    HIGHER_IS_BETTER = True

    def statistic(self, histograms) -> float:
        from ..core.histogram import histogram_slope
        return histogram_slope(histograms)


DO = register_measure(_DO())
HSA = register_measure(_HSA())


_VECTOR_DOC = """
    The two sets are FD's (see ``FD``): the judged-relevant documents of the query set, and the top ``cutoff``
    (or, with ``urr=True``, the first ``cutoff`` unjudged) retrieved documents of each of its queries, with
    vectors from the run's ``doc_vec`` or the ``encoder``. One number per query set.
"""


class _FDInf(VectorMeasure):
    __doc__ = """
    FD∞: FD extrapolated to infinitely many samples. Both sets are subsampled (seeded by ``seed``) to
    ``points`` fractions between ``min_fraction`` and 1, FD is fitted linearly against 1/fraction, and the
    intercept is reported. Removes most of FD's upward bias from small sets, so FD∞ compares query sets
    of different sizes more fairly than FD. Lower is better.
""" + _VECTOR_DOC + """
    .. cite:: chong2020unbiased
       Min Jin Chong and David Forsyth. 2020. Effectively Unbiased FID and Inception Score and Where to Find
       Them. In Proceedings of CVPR 2020. https://arxiv.org/abs/1911.07023
"""
    __name__ = 'FDInf'
    NAME = __name__
    PRETTY_NAME = 'FD extrapolated to infinitely many samples'
    SHORT_DESC = 'FD with its small-sample bias extrapolated away (lower is better).'
    HIGHER_IS_BETTER = False
    SUPPORTED_PARAMS = {
        **VECTOR_PARAMS,
        'seed': ParamInfo(dtype=int, default=0, desc='random seed of the per_query balancing and of the subsamples'),
        'points': ParamInfo(dtype=int, default=10, desc='subsample fractions in the fit'),
        'min_fraction': ParamInfo(dtype=float, default=0.5, desc='smallest subsample, as a fraction of each set'),
    }

    def statistic(self, relevant, retrieved) -> float:
        from ..core.extrapolation import fd_infinity
        return fd_infinity(relevant, retrieved, points=self['points'], min_fraction=self['min_fraction'], seed=self['seed']).value


class _KID(VectorMeasure):
    __doc__ = """
    Kernel distance (KID): the unbiased estimate of the squared maximum mean discrepancy between the two sets
    under the polynomial kernel (xᵀy/d + 1)^``degree``. Unbiased whatever the set sizes: ≈ 0 (possibly slightly
    negative) when the retrieved documents are distributed like the relevant ones. Lower is better.
""" + _VECTOR_DOC + """
    .. cite:: binkowski2018demystifying
       Mikołaj Bińkowski, Danica J. Sutherland, Michael Arbel and Arthur Gretton. 2018. Demystifying MMD GANs.
       In Proceedings of ICLR 2018. https://arxiv.org/abs/1801.01401
"""
    __name__ = 'KID'
    NAME = __name__
    PRETTY_NAME = 'Kernel distance'
    SHORT_DESC = 'Unbiased squared MMD between relevant and retrieved embeddings, cubic polynomial kernel (lower is better).'
    HIGHER_IS_BETTER = False
    SUPPORTED_PARAMS = {**VECTOR_PARAMS, 'degree': ParamInfo(dtype=int, default=3, desc='degree of the polynomial kernel')}

    def statistic(self, relevant, retrieved) -> float:
        from ..core.kid import kernel_distance
        return kernel_distance(relevant, retrieved, degree=self['degree'])


_KNN_CITE = """
    .. cite:: kynkaanniemi2019improved
       Tuomas Kynkäänniemi, Tero Karras, Samuli Laine, Jaakko Lehtinen and Timo Aila. 2019. Improved Precision
       and Recall Metric for Assessing Generative Models. In Proceedings of NeurIPS 2019. https://arxiv.org/abs/1904.06991
"""


class _KNNPrecision(VectorMeasure):
    __doc__ = """
    k-NN precision (fidelity): the share of retrieved vectors inside the support of the relevant set, the union
    of balls around each relevant vector reaching its ``k``-th nearest relevant neighbour. Are the retrieved
    documents like relevant ones? Higher is better.
""" + _VECTOR_DOC + _KNN_CITE
    __name__ = 'KNNPrecision'
    NAME = __name__
    PRETTY_NAME = 'k-NN precision'
    SHORT_DESC = 'Share of retrieved embeddings inside the k-NN support of the relevant ones (higher is better).'
    HIGHER_IS_BETTER = True
    _SIDE = 'precision'  # the field of core.knn.PrecisionRecall reported
    SUPPORTED_PARAMS = {**VECTOR_PARAMS, 'k': ParamInfo(dtype=int, default=3, desc='neighbour whose distance sets each ball')}

    def statistic(self, relevant, retrieved) -> float:
        from ..core.knn import knn_precision_recall
        return getattr(knn_precision_recall(relevant, retrieved, k=self['k']), self._SIDE)


class _KNNRecall(_KNNPrecision):
    __doc__ = """
    k-NN recall (coverage): the share of relevant vectors inside the support of the retrieved set. Does the
    system find every kind of relevant document, or only typical ones? Higher is better.
""" + _VECTOR_DOC + _KNN_CITE
    __name__ = 'KNNRecall'
    NAME = __name__
    PRETTY_NAME = 'k-NN recall'
    SHORT_DESC = 'Share of relevant embeddings inside the k-NN support of the retrieved ones (higher is better).'
    _SIDE = 'recall'


FDInf = register_measure(_FDInf())
KID = register_measure(_KID())
KNNPrecision = register_measure(_KNNPrecision())
KNNRecall = register_measure(_KNNRecall())
