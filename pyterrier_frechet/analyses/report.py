"""``report``: every analysis for one qrels file and a set of runs, as a markdown report with its tables
(markdown in the report, CSV beside it) and figures (PNG in the report, PDF beside it). The report is computed as a
list of :class:`~pyterrier_frechet.analyses.render.Section` objects, one function per section, then rendered by
:class:`~pyterrier_frechet.analyses.render.Report`."""
import logging
import time
import warnings
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence

import pandas as pd
import pyterrier as pt

from .outputs import OutputFolder, markdown_text, report_paths
from .render import Bullets, Figure, Report, Section, Table, Text
from ..evaluation.evaluate import NO_VECTOR_COLUMNS, check_labels_distinct, evaluate, with_options
from ..evaluation.relevance import graded_threshold_note
from ..measures.base import column_label, higher_is_better, is_set_measure, registered_measures, resampling
from ..measures.resampling import PAIRED_TESTS
from ..vectors.sources import using_encoder
from . import plots
from ..core.intervals import interval_method
from .bootstrap import EXACT_DRAWS, TAU_DRAWS, bootstrap, bootstrappable, printed_summary
from .correlation import agreement_notes, correlations, tau_intervals
from .discrimination import discriminative_power
from .robustness import sparsify, summarise
from .table import WHICH_FD, PaperTable
from .anatomy import extra_measures, fd_anatomy, notes as anatomy_notes
from .disagreement import MARK as CONTRADICTS, describe, disagreements, pair_text
from .options import DEFAULT_TEST, TEST_TEXT, ResamplingOptions
from .significance import LEAVE_OUT_TESTS, compare_with, resample_for

#: The level at which the report's paired comparisons call a difference (Holm-corrected over their number).
ALPHA = 0.05

logger = logging.getLogger(__name__)


class _Sections:
    """The report's sections in turn: the progress bar names the one running, and each one's wall time is kept for
    the report's last section and the log."""

    def __init__(self, progress):
        self.progress, self.times, self._name, self._start = progress, {}, None, None

    def start(self, name: str) -> None:
        self.stop()
        self._name, self._start = name, time.perf_counter()
        self.progress.set_description(f'report: {name}')

    def stop(self) -> None:
        if self._name is not None:
            self.times[self._name] = time.perf_counter() - self._start
            logger.info('report: %s took %.1f s', self._name, self.times[self._name])
            self.progress.update()
            self._name = None


def write_report(runs: Dict[str, pd.DataFrame], qrels: pd.DataFrame, measures, out, *, encoder=None,
                 n_samples: Optional[int] = None, seed: int = 0, ci: float = 0.95, per_query: Sequence[int] = (1, 5, 10),
                 seeds: Sequence[int] = (0, 1, 2, 3, 4), baseline: Optional[str] = None, qrels_name: str = 'qrels',
                 verbose: bool = True, test: str = DEFAULT_TEST, population: Optional[int] = None,
                 query_groups=None, rel: Optional[int] = None, missing: Optional[str] = 'drop') -> Path:
    """Write ``out/report.md`` with its CSV tables and PNG/PDF figures: results, correlations, bootstrap intervals,
    paired comparisons and sparsified judgments for ``runs`` on ``qrels``; and the paper table
    (:class:`~pyterrier_frechet.analyses.table.PaperTable` of the same results) as ``table.md``, ``table.tex`` and
    ``table.csv``.

    ``out`` must be a new folder, an empty one or the folder of an earlier report (marked by
    ``.pyterrier-frechet-outputs.json``, :mod:`pyterrier_frechet.analyses.outputs`); anything else is refused before the
    work, with nothing touched. The report is built in a staging folder and moved in only when complete; replacing
    an earlier report removes only the files its marker lists, so a failure leaves ``out`` as it was and files
    others put there stay. Measures without a resampling (:func:`~pyterrier_frechet.measures.base.resampling`:
    FD's jackknife, and the registered measures that declare none) appear in the results and correlations only,
    named in a warning and in the report (:func:`not_resampled_note`). ``encoder``: the vector source of vector measures that
    name none. ``qrels_name``: how the report names the qrels (e.g. their path).

    One bootstrap pass per run and measure serves every section (intervals, τ intervals, discriminative power, the
    paired comparisons). ``test``: the paired comparisons' p-value (:func:`~pyterrier_frechet.analyses.significance.compare_systems`):
    ``'jackknife'`` (default) or ``'normal'`` (1000 resamples resolve Holm's correction for any number of runs), or
    ``'bootstrap'`` (the
    count p-value; ``n_samples`` must resolve Holm's first step, refused before any work otherwise).
    ``n_samples``: default :func:`~pyterrier_frechet.analyses.options.default_samples` (1000; for ``'bootstrap'`` the
    smallest count that resolves Holm's first step over the comparisons asked). ``population``: the N queries the
    qrels' queries were drawn from without replacement, when those N are the population of interest
    (:func:`~pyterrier_frechet.analyses.bootstrap.bootstrap`): the intervals and the jackknife/normal tests carry the
    finite-population correction 1 − n/N, and the bootstrap section's caption says so. ``query_groups``: queries
    that are not independent, in these groups (:func:`~pyterrier_frechet.analyses.bootstrap.bootstrap`): every
    section resamples and leaves out whole groups, and the captions say so. ``rel`` and ``missing``: as
    :func:`~pyterrier_frechet.paper_table` (``--rel``, ``--missing``; default ``missing='drop'``: documents without a
    vector are left out and counted in the results and in the paper table's cells).
    """
    plots.check_available('write_report (the report\'s figures)')
    measures = with_options(measures, rel=rel, missing=missing)
    check_labels_distinct(measures)
    # every option checked before any work: the test, the population, the query groups over the judged queries, the
    # baseline among the runs, and a resample count able to pass Holm's first step over the comparisons (α = 0.05,
    # Holm-corrected) and discriminative power's uncorrected tests
    options = ResamplingOptions(n_samples=n_samples, seed=seed, ci=ci, alpha=ALPHA, test=test, population=population,
                                query_groups=query_groups, baseline=baseline).for_runs(runs, qrels, discrimination=True,
                                                                                  tau_draws=TAU_DRAWS)
    note = not_resampled_note(measures)
    if note:  # a warning, not a log line: shown whatever --missing drop does to the package's logging
        warnings.warn(note, stacklevel=2)
    folder = out if isinstance(out, OutputFolder) else OutputFolder(out, 'report folder', report_paths)
    with folder.staging() as work:
        with using_encoder(encoder):
            _write(work, _Job(runs, qrels, measures, options, per_query, seeds, qrels_name, verbose, work / 'figures'))
        folder.commit(work, replace=True)
    return folder.path / 'report.md'


def not_resampled_note(measures) -> str:
    """The sentence naming the measures the bootstrap sections leave out ('' when none is)."""
    left = [column_label(m) for m in measures if resampling(m) is None]
    if not left:
        return ''
    return (f'{", ".join(left)}: in the results and correlations only; the bootstrap, comparison, discriminative-power '
            'and sparsification sections leave them out (the bootstrap has no exact resampling for them; it resamples '
            f'{", ".join(m.NAME for m in registered_measures() if m.resampling() is not None)} and per-query measures)')


def _dependence_note(boot) -> str:
    """What the intervals assume about the queries: independent, or the query groups given."""
    if boot.query_groups is None:
        return ('The intervals assume independent queries; queries that share topics make them too narrow (name the '
                'groups: `query_groups=`, `--query-groups`), and so did synthetic heavy-tailed (multivariate t), '
                'unnormalised embeddings in the calibration worlds and, at d = 384, unit-norm worlds in which a few '
                'queries hold most of the relevant documents (FD coverage 0.83–0.89); real MiniLM vectors '
                'of Cranfield and SciFact, normalised or not, were covered (pt_docs "Calibration").')
    n_groups = boot.n_query_groups
    return (f'**Query groups**: the {len(boot.queries)} queries were resampled and left out in the {n_groups} groups '
            'given (`query_groups`: the cluster bootstrap and the cluster jackknife, with a Student t reference on '
            f'G − 1 = {n_groups - 1} degrees of freedom), for queries that share topics; every section below uses the '
            'same groups.')


def _undrawn_note(boot) -> str:
    """Which measures the bootstrap computed on the first draws only (their interval and test read leave-outs)."""
    partial = [m for m in dict.fromkeys(boot.summary['measure']) if not boot.on_every_draw(m)]
    if not partial:
        return ''
    anchored = [m for m in partial if boot.is_anchored(m)]
    note = (f' {", ".join(f"`{m}`" for m in partial)} {"is" if len(partial) == 1 else "are"} on the first '
            f'{TAU_DRAWS} draws only, which τ\'s interval below reads (the count its coverage was measured with): '
            'its interval and test read its leave-one-query-out values (`mean`, `std` and `n_valid` are of those '
            'draws).')
    if anchored:
        note += (f' {", ".join(f"`{m}`" for m in anchored)}: computed on the first {EXACT_DRAWS} of them, the other '
                 'draws its resamples linearised from those leave-outs and shifted to the computed ones\' mean (for '
                 'every system whose leave-outs leave each judged query out alone; pt_docs "Calibration").')
    return note


def _interval_notes(summary: pd.DataFrame) -> str:
    """Which measures each interval method serves and what it is an interval for."""
    named = summary[['interval', 'method']].drop_duplicates('interval').itertuples(index=False)
    return ' '.join(f'{", ".join(summary.loc[summary.interval == text, "measure"].unique())}: `{text}` intervals, '
                    f'for {interval_method(method).estimand}.' for text, method in named)


class _Job(NamedTuple):
    """What every section of one report reads: the inputs, the checked options, the figures folder."""
    runs: Dict[str, pd.DataFrame]
    qrels: pd.DataFrame
    measures: list
    options: ResamplingOptions
    per_query: Sequence[int]
    seeds: Sequence[int]
    qrels_name: str
    verbose: bool
    figures: Path


def _write(out: Path, job: _Job) -> None:
    # results, bootstrap, what moves FD, paper table, writing; comparisons; discriminative power, sparsified judgments
    sections = 5 + (len(job.runs) >= 2) + 2 * (len(job.runs) >= 3)
    with pt.tqdm(total=sections, desc='report', unit='section', disable=not job.verbose) as progress:
        clock = _Sections(progress)
        Report(tuple(_sections(job, clock))).write(out)
        clock.stop()


def _sections(job: _Job, clock: _Sections) -> List[Section]:
    """Every section of the report, computed in turn (figures drawn as they go); the last one says how long each
    took."""
    runs, options = job.runs, job.options
    clock.start('results')
    job.figures.mkdir()
    # the results and "What moves FD" in one pass: FD's mean terms and spread ratios beside the measures asked for
    extra = [m for m in extra_measures(job.measures) if column_label(m) not in {column_label(x) for x in job.measures}]
    try:
        evaluated = evaluate(runs, job.qrels, job.measures + extra, verbose=job.verbose)
    except ValueError:  # the refusal names the measures the user asked for, as every other entry point's does
        evaluate(runs, job.qrels, job.measures, verbose=job.verbose)
        raise
    table = evaluated.drop(columns=[column_label(m) for m in extra])
    sections = [_title(job), _results(table)]
    if len(table) >= 3:
        sections.append(_correlations(job, table))
    boot_measures = bootstrappable(job.measures)
    clock.start('bootstrap')
    boot = bootstrap(runs, job.qrels, boot_measures, options=options, verbose=job.verbose,
                     resample=resample_for(options.test))
    taus = tau_intervals(boot, boot_measures, options.ci)
    sections.append(_bootstrap(job, boot, taus))
    if len(runs) >= 3:
        clock.start('discriminative power')
        sections.append(_discrimination(job, boot, boot_measures))
    pairs = None
    if len(runs) >= 2:
        clock.start('paired comparisons')
        pairs = compare_with(runs, job.qrels, boot_measures, options, job.verbose, boot)
        sections.append(_comparisons(options, pairs, boot_measures))
        sections.append(_disagreements(pairs, boot_measures))
    clock.start('what moves FD')
    anatomy = fd_anatomy(runs, job.qrels, job.measures, baseline=options.baseline, point=evaluated,
                         verbose=job.verbose)
    if len(anatomy):
        sections.append(_anatomy(anatomy, options.baseline))
    # the paper table: values, intervals, Holm-corrected marks and τ from the results above (no new statistics)
    clock.start('paper table')
    sections.append(_paper_table(job, boot, pairs, taus if len(taus) else None, table, anatomy))
    if len(runs) >= 3:
        # FDInf, KID and k-NN P/R are left out here: each costs tens of FD computations per run and qrels
        clock.start('sparsified judgments')
        sections.append(_sparsified(job, boot_measures, table))
    clock.start('writing')
    return sections + [_times(dict(clock.times))]


def _title(job: _Job) -> Section:
    labels = [column_label(m) for m in job.measures]
    lower = [column_label(m) for m in job.measures if not higher_is_better(m)]
    blocks = [Text(f'Qrels: {markdown_text(job.qrels_name)}; {len(job.runs)} runs; metrics: '
                   + ', '.join(f'`{m}`' for m in labels) + '.' + (f' Lower is better for {", ".join(lower)}.' if lower else ''))]
    graded = graded_threshold_note(job.qrels, job.measures)
    if graded:
        blocks.append(Text(markdown_text(graded[0].upper() + graded[1:]) + '.'))
    return Section('FD evaluation report', tuple(blocks), level=1)


def _results(table: pd.DataFrame) -> Section:
    blocks = [Table(table, 'results')]
    if set(NO_VECTOR_COLUMNS) <= set(table.columns) and table[list(NO_VECTOR_COLUMNS)].to_numpy().any():
        blocks.append(Text(f'Documents without a vector were left out (`missing=drop`): '
                           f'{int(table["no_vector_relevant"].max())} relevant and {int(table["no_vector_retrieved"].sum())} '
                           'retrieved over all runs (columns `no_vector_relevant`, `no_vector_retrieved`, per run); every '
                           'section uses the same selection.'))
    return Section('Results', tuple(blocks))


def _correlations(job: _Job, table: pd.DataFrame) -> Section:
    labels = [column_label(m) for m in job.measures]
    set_labels = [column_label(m) for m in job.measures if is_set_measure(m)]
    others = [column_label(m) for m in job.measures if not is_set_measure(m)]
    corr = correlations(table, labels)
    blocks = [Text('Kendall τ-b, Spearman and Pearson; lower-is-better metrics are negated first, so a positive '
                   'coefficient means agreement. τ_AP: the ranking by the other metric against the reference ranking '
                   '`tau_ap_reference` (the classical per-query measure), top-weighted by the ranking under test.'),
              Bullets(tuple(agreement_notes(table, job.measures))),
              Table(corr, 'correlations')]
    for fd in set_labels:
        for ref in others[:1]:
            name = f'scatter_{plots.slug(fd)}_vs_{plots.slug(ref)}'
            plots.scatter(table, ref, fd, job.figures / name)
            blocks.append(Figure(f'{fd} vs {ref}', name))
    return Section('Correlations across systems', tuple(blocks))


def _bootstrap(job: _Job, boot, taus: pd.DataFrame) -> Section:
    options, summary = job.options, boot.summary
    samples, test, population, ci = options.n_samples, options.test, options.population, options.ci
    how_many = (f' (the default for the {test} test' + (', the smallest count that resolves Holm\'s first step over '
                'the comparisons asked)' if test == 'bootstrap' else ')') if options.chosen else '')
    left_out = not_resampled_note(job.measures)
    blocks = [Text(f'{samples} samples{how_many} over {len(boot.queries)} queries (seed {options.seed}), '
                   f'{ci:.0%} intervals. `value` is each measure on the evaluated query set (FD as the paper defines it). '
                   + _interval_notes(summary) + _undrawn_note(boot) + ' E[FD̂ₙ] is not the population FD, which FD over a '
                   'finite query set overestimates many times over and which no interval we measured covers at d = 384 '
                   '(pt_docs "Calibration"). ' + _dependence_note(boot) + ''.join(f' {note}.' for note in boot.caveats)
                   + (f' {left_out}.' if left_out else '')
                   + ('' if population is None else
                      f' **Finite population** (`population={population}`): the {len(boot.queries)} queries are taken as '
                      f'a draw without replacement from {population} queries that are themselves the population of '
                      'interest, so every interval is for query sets drawn from those queries and its variance is '
                      f'multiplied by 1 − n/N = {1 - len(boot.queries) / population:.3g} (the jackknife and normal tests '
                      'too); this is wrong when the queries stand for a larger query population.')),
              Table(printed_summary(summary), 'bootstrap')]
    data = ()
    if len(taus):
        blocks += [Text(f'Kendall τ and τ_AP (top-weighted; the second measure, the classical one, is the reference '
                        f'ranking, as in the correlations above) across the runs with {ci:.0%} percentile intervals over '
                        f'the first {int(taus["draws"].min())} bootstrap draws, for τ between the runs\' expected values '
                        f'at {len(boot.queries)} queries (lower-is-better measures negated; calibration: pt_docs '
                        '"Calibration"):'),
                   Bullets(tuple(f'τ({row.a}, {row.b}) = {row.kendall_tau:.3f} [{row.tau_low:.3f}, {row.tau_high:.3f}], '
                                 f'τ_AP = {row.tau_ap:.3f} [{row.tau_ap_low:.3f}, {row.tau_ap_high:.3f}]'
                                 for row in taus.itertuples()))]
        data = (('tau_intervals', taus),)
    for measure in summary['measure'].unique():
        name = f'bootstrap_{plots.slug(measure)}'
        plots.bootstrap_intervals(summary, measure, job.figures / name)
        blocks.append(Figure(f'bootstrap {measure}', name))
    return Section('Bootstrap over queries', tuple(blocks), data)


def _discrimination(job: _Job, boot, boot_measures) -> Section:
    test, n = job.options.test, len(job.runs)
    power = discriminative_power(boot, [column_label(m) for m in boot_measures], test=test)
    plots.asl_curves(power.asl, job.figures / 'asl')
    return Section('Discriminative power', (
        Text(f'The share of the {n * (n - 1) // 2} pairs of runs each measure separates at α = 0.05 with '
             f'{TEST_TEXT[test]}, uncorrected (Sakai 2006\'s count of separated pairs, on the paired tests below), and '
             'the achieved-significance-level curves (`asl.csv`; column `test`).'),
        Table(power.summary, 'discriminative_power'), Figure('ASL curves', 'asl')), (('asl', power.asl),))


def _comparisons(options: ResamplingOptions, pairs: pd.DataFrame, boot_measures) -> Section:
    counts = (pairs.assign(significant=pairs['better'] != '').groupby('measure', sort=False)['significant']
              .agg(comparisons='size', significant='sum').reset_index())
    baseline = options.baseline
    what = f'each run against {markdown_text(baseline)}' if baseline else 'every pair of runs'
    # each measure's own test (compare_systems' default): its resampling's, or the normal one where that needs no leave-outs
    own_test = {column_label(m): resampling(m).paired_test if resampling(m).paired_test in LEAVE_OUT_TESTS else 'normal'
                for m in boot_measures}
    own = {kind: ', '.join(c for c, t in own_test.items() if t == kind) for kind in PAIRED_TESTS}
    parts = [text for kind, text in (
        ('jackknife', f'the jackknife t-test of the difference for {own["jackknife"]} (`p_jackknife`)'),
        ('t', f'the paired t-test for {own["t"]} (`p_t`: `scipy.stats.ttest_rel` on the per-query values)'),
        ('normal', f'the normal approximation of the resampled differences for {own["normal"]} (`p_normal`)'))
        if own[kind]]
    read = {'jackknife': f'p from each measure\'s own test (column `test`): {"; ".join(parts)} — none quantised by the '
                         'number of samples; level and power: `calibrate --level`',
            'normal': 'p from the normal approximation of the resampled differences (`p_normal`: not quantised by '
                      'the number of samples; level and power: `calibrate --level`)',
            'bootstrap': 'p from the count of resampled differences beyond 0 (`p_bootstrap`)'}[options.test]
    blocks = [Text(f'Paired differences for {what}, on the query draws of the samples above; {read}; Holm\'s correction '
                   f'over each measure\'s comparisons, α = {options.alpha} (`comparisons.csv` has every row).'),
              Table(counts, 'comparisons_summary')]
    if baseline:
        blocks.append(Table(pairs, floatfmt='.4f'))
    return Section('Paired comparisons', tuple(blocks), (('comparisons', pairs),))


def _disagreements(pairs: pd.DataFrame, boot_measures) -> Section:
    found = disagreements(pairs, warn=False, measures=boot_measures)
    if len(found):
        warnings.warn(describe(found), UserWarning, stacklevel=3)
        blocks = (Text(f'{len(found)} pair{"s" if len(found) != 1 else ""} where an FD measure and a classical measure '
                       'both call the difference significant (Holm-corrected, as above) but in opposite directions; the '
                       f'paper table marks these FD cells {CONTRADICTS}. FD compares where the retrieved documents lie '
                       'and how they spread with the relevant documents, the classical measures count relevant documents '
                       'near the top: the section "What moves FD" below says which of FD\'s terms moved (pt_docs '
                       '"When FD and nDCG disagree").'),
                  Bullets(tuple(markdown_text(pair_text(r)) for r in found.itertuples())))
    else:
        blocks = (Text('No FD measure and classical measure both call a difference significant in opposite directions '
                       '(`disagreements.csv` is empty).'),)
    return Section('Where FD and the classical measures disagree', blocks, (('disagreements', found),))


def _anatomy(anatomy: pd.DataFrame, baseline: Optional[str]) -> Section:
    against = (f'against {markdown_text(baseline)}, which term moved FD (`moved_by`) and by how much; '
               if baseline else '')
    return Section('What moves FD', (
        Text('FD = mean term ‖μ₁ − μ₂‖² (`FD(term=\'mean\')`: how far the centre of the retrieved documents is from the '
             'relevant documents\') + covariance term (`FD(term=\'cov\')`: how differently they spread). Per system '
             f'and FD measure: the two terms; {against}and the spread ratio Tr Σ_retrieved / Tr Σ_relevant '
             '(`SpreadRatio`: below 1 the retrieved set is narrower than the relevant set, as a system returning a '
             'tight neighbourhood of the query makes it; either way the covariance term grows), pooled and within '
             'queries (`spread_within`, `SpreadRatio(scope=\'query\')`: with unit-length vectors and many topics the '
             'pooled ratio stays near 1 while the per-query one separates systems).'),
        Bullets(tuple(markdown_text(n) for n in anatomy_notes(anatomy))),
        Table(anatomy.drop(columns=['note']), 'anatomy', floatfmt='.4g')))


def _paper_table(job: _Job, boot, pairs: Optional[pd.DataFrame], taus: Optional[pd.DataFrame],
                 table: pd.DataFrame, anatomy: Optional[pd.DataFrame] = None) -> Section:
    options = job.options
    paper = PaperTable.from_results(boot, job.measures, comparisons=pairs, tau=taus, baseline=options.baseline,
                                    alpha=options.alpha, ci=options.ci, seed=options.seed, point=table, anatomy=anatomy)
    return Section('The paper table', (
        Text('Every section above in one table for a paper: `table.md`, `table.tex` (booktabs, with the short caption) '
             'and `table.csv` (long form, with the counts of documents left out per cell).'),
        paper, Text('**Notes** (the long caption): ' + markdown_text(paper.caption(long=True))),
        Text(markdown_text(WHICH_FD))), documents=(('table', paper),))


def _sparsified(job: _Job, boot_measures, table: pd.DataFrame) -> Section:
    sparse = summarise(sparsify(job.runs, job.qrels, boot_measures, per_query=job.per_query, seeds=job.seeds,
                                verbose=job.verbose, full=table))
    plots.sparsification(sparse, job.figures / 'sparsification')
    return Section('Sparsified judgments', (
        Text(f'Kendall τ between each metric with the full qrels and with at most n relevant documents per query '
             f'(highest grade first, random within a grade; seeds {list(job.seeds)}).'),
        Table(sparse, 'sparsification'), Figure('sparsification', 'sparsification')))


def _times(took: Dict[str, float]) -> Section:
    return Section('Time per section', (
        Text('Wall time of each section of this report (seconds; writing it out not included).'),
        Table(pd.DataFrame({'section': list(took), 'seconds': [round(t, 1) for t in took.values()]}), floatfmt='.1f')))
