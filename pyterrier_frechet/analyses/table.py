"""The paper table: per system and measure the value, its interval and what the interval is for, significance marks
(against a baseline or between all pairs, Holm-corrected) and Kendall τ of each measure against the first classical
measure with its interval — one object, rendered as a DataFrame, CSV, Markdown or LaTeX (booktabs) through the
renderer interface of :mod:`~pyterrier_frechet.analyses.render` (its rows of cell text built once, written by each
format's ``Dialect.table``).

:func:`paper_table` computes it in one call (one :func:`~pyterrier_frechet.bootstrap` serves the intervals, the
paired comparisons and τ); :meth:`PaperTable.from_results` assembles it from results already computed
(``pf.bootstrap``, ``pf.compare_systems``, ``pf.tau_intervals``), which is how ``report`` writes ``table.md``,
``table.tex`` and ``table.csv``. No statistic is computed here: the values, intervals and estimands are the
bootstrap's summary (each interval method says what it is for: :class:`~pyterrier_frechet.core.intervals.IntervalMethod`), the marks are
:func:`~pyterrier_frechet.compare_systems`'s Holm-corrected calls, τ is
:func:`~pyterrier_frechet.tau_intervals`.

What is printed (pt_docs "The paper table"): the value is the measure on the full query set (FD as the paper defines
it); by default FD's interval is the log-scale jackknife interval for E[FD̂ₙ], ``value · exp(±t·SE)``, which always
contains the value; a per-query measure's is the percentile bootstrap interval for the population mean. A value
outside its interval (possible with ``interval='basic'`` or ``'jackknife_bc'``, centred on a bias-corrected
estimate, or a skewed percentile interval) is marked ``†`` and the caption says why.
"""
import logging
import re
import warnings
from dataclasses import KW_ONLY, dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from ..evaluation.evaluate import (NO_VECTOR_COLUMNS, check_labels_distinct, no_vector_counts, parse_measures,
                                   with_options)
from ..measures.base import (column_label, higher_is_better, is_set_measure, is_vector_measure, resampled_names,
                             unresampled_reason)
from ..core.intervals import interval_method
from .bootstrap import bootstrappable
from .correlation import TAU_ESTIMAND
from .anatomy import NARROWER, fd_anatomy, notes as anatomy_notes
from .disagreement import MARK as CONTRADICTS, describe, disagreements
from .outputs import markdown_text, to_csv
from .render import LATEX, LATEX_NAME_CHARS, MARKDOWN, Dialect, latex_name, latex_text
from .validity import caption_caveats, fd_like

logger = logging.getLogger(__name__)

#: The measures :func:`paper_table` uses when none are given (every data command's ``--metrics`` default): FD@10 is the
#: headline; FD(per_query=5)@10 is there for its interval and paired test, which covered 0.90–0.98 in every world of
#: independent queries measured with 43 queries, where FD@10's covered 0.86–0.96 (pt_docs "The
#: paper table", "Calibration"; where queries share topics, name them: ``query_groups=``).
DEFAULT_MEASURES = ('FD@10', 'FD(urr=True)@10', 'FD(per_query=5)@10', 'nDCG@10', 'RR@10')
#: Which FD to report, in one sentence: every page that advises on it prints this (README, pt_docs; tests/test_docs.py).
WHICH_FD = ("Each FD column is one claim — its value, interval and marks all belong to that measure: FD@10 is the "
            "paper's measure; FD(per_query=5)@10 (qrels cut to at most 5 relevant documents per query) is a different "
            "measure whose interval and paired test held in every world of independent queries measured, so cite its "
            "marks for differences between systems, and never print one column's value with another's interval.")
#: τ across fewer systems than this is not printed: with 3–4 systems its interval spans most of [−1, 1].
TAU_MIN_SYSTEMS = 5
#: A cell whose set lost more than this share of its documents for want of a vector is marked :data:`DROPPED`.
DROPPED_SHARE = 0.10
DROPPED = '‡'
#: The multiple-comparison correction of the significance marks (:func:`~pyterrier_frechet.analyses.significance.holm`).
CORRECTION = 'holm'
#: The mark of a printed value outside its printed interval.
OUTSIDE = '†'
# system letters: a-z without q (its Unicode superscript is missing from most fonts), then a2, b2, ...
_LETTERS = 'abcdefghijklmnoprstuvwxyz'
BETTER, WORSE = '▲', '▼'  # significantly better / worse than the baseline (LaTeX: amssymb's triangles)

_TESTS = {
    'jackknife': 'paired jackknife t-test',
    't': 'paired t-test',
    'normal': 'normal approximation of the paired bootstrap',
    'bootstrap': 'paired bootstrap count test',
}
def check_digits(digits) -> int:
    """``digits`` (decimals printed) as an int in 0..12, or a ValueError naming the argument — before any work."""
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 12:
        raise ValueError(f'digits must be an integer from 0 to 12 (decimals printed), got {digits!r}')
    return int(digits)


def letter(i: int) -> str:
    """The label of the i-th system (0-based): a, b, …, z (no q), then a2, b2, …"""
    return _LETTERS[i % len(_LETTERS)] + (str(i // len(_LETTERS) + 1) if i >= len(_LETTERS) else '')


def column_decimals(values, digits: int = 3) -> int:
    """Decimals for one column of the table: ``digits``, or more where the column's smallest non-zero magnitude (over
    its values and interval ends) would otherwise show fewer than ``digits - 1`` significant figures — FD at MS MARCO
    dev scale prints 0.0088 [0.0087, 0.0089], not 0.009 [0.009, 0.009]; a column whose smallest entry is 0.05 keeps
    ``digits``. At most 12."""
    a = np.abs(np.asarray(values, dtype=np.float64))
    a = a[np.isfinite(a) & (a > 0)]
    if not len(a):
        return digits
    return int(min(12, max(digits, digits - 2 - np.floor(np.log10(a.min())))))


@dataclass(frozen=True)
class PaperTable:
    """A results table for a paper, as ranx's ``Report``: build it with :func:`paper_table` or
    :meth:`from_results`; render it with :meth:`to_dataframe`, :meth:`to_markdown`, :meth:`to_latex`; its
    :meth:`caption` names what the values and the intervals are.

    Attributes:
        cells: one row per (system, measure): ``name``, ``measure``, ``value`` (the measure on the full query set),
            ``low``, ``high`` (the interval; NaN where there is none), ``interval`` (its method), ``estimand`` (what
            it is an interval for), ``inside`` (low ≤ value ≤ high), ``better_than`` and ``worse_than`` (lists of
            the systems this one is significantly better / worse than, Holm-corrected), ``left_out`` (documents of
            its retrieved set without a vector), ``distrusted`` (``‡``: a set lost more than :data:`DROPPED_SHARE`;
            such a cell is never bold and carries no significance mark), ``best`` (the best printed value of its
            column, in the measure's direction, among the cells not distrusted), ``no_interval`` (why a column
            has no interval, where it has none).
        systems: the row order; ``measures``: the column order (column labels).
        higher_is_better: column label → orientation, from each measure's ``HIGHER_IS_BETTER``.
        comparisons: :func:`~pyterrier_frechet.compare_systems`'s rows (None: no marks).
        tau: :func:`~pyterrier_frechet.tau_intervals`'s rows (None or empty: no τ row).
    """
    cells: pd.DataFrame
    systems: Tuple[str, ...]
    measures: Tuple[str, ...]
    higher_is_better: Mapping[str, bool]
    _: KW_ONLY  # the rest by name (PaperTable(cells, systems, measures, orientation, comparisons=..., ...))
    comparisons: Optional[pd.DataFrame] = None
    tau: Optional[pd.DataFrame] = None
    baseline: Optional[str] = None
    alpha: float = 0.05
    ci: float = 0.95
    n_queries: Optional[int] = None
    n_samples: Optional[int] = None
    seed: Optional[int] = None
    correction: str = CORRECTION
    dropped: Optional[Tuple[int, int]] = None  # (relevant, retrieved) documents left out for want of a vector
    digits: int = 3
    #: the bootstrap's :attr:`~pyterrier_frechet.analyses.bootstrap.BootstrapResult.caveats` about FD's intervals
    #: (the flagged ones go into the caption)
    caveats: Tuple[str, ...] = ()
    #: per system and vector measure, the rows of its two sets and how many had no vector and were left out
    #: (:func:`~pyterrier_frechet.evaluation.evaluate.no_vector_counts`); None: nothing was left out
    coverage: Optional[pd.DataFrame] = None
    #: column label → the queries its jackknife left out one at a time, where fewer than ``n_queries`` (FD's: only
    #: those with a relevant document at its ``rel``); the captions name it
    jackknife_queries: Optional[Mapping[str, int]] = None
    #: :func:`~pyterrier_frechet.analyses.disagreement.disagreements` of ``comparisons``: the FD cells whose paired test
    #: contradicts a classical measure's (both significant, opposite directions), marked ⇄; None or empty: none
    disagreements: Optional[pd.DataFrame] = None
    #: :func:`~pyterrier_frechet.analyses.anatomy.fd_anatomy` of the FD columns (their two terms and each retrieved
    #: set's spread against the relevant set's), said in the long caption; None: not computed
    anatomy: Optional[pd.DataFrame] = None

    # --- building ---

    @classmethod
    def from_results(cls, boot, measures=None, comparisons: Optional[pd.DataFrame] = None,
                     tau: Optional[pd.DataFrame] = None, baseline: Optional[str] = None, alpha: float = 0.05,
                     ci: Optional[float] = None, seed: Optional[int] = None, point: Optional[pd.DataFrame] = None,
                     digits: int = 3, coverage: Optional[pd.DataFrame] = None,
                     anatomy: Optional[pd.DataFrame] = None) -> 'PaperTable':
        """The table from results computed already: ``boot`` a :class:`~pyterrier_frechet.analyses.bootstrap.BootstrapResult`
        (``pf.bootstrap``: values, intervals, estimands), ``comparisons`` the frame of
        :func:`~pyterrier_frechet.compare_systems` on the same runs (the marks; its ``better`` column is the call at
        its ``alpha``, Holm-corrected), ``tau`` the frame of :func:`~pyterrier_frechet.tau_intervals` (or of
        ``agreement_table``: ``measure``/``reference`` columns). ``measures``: the columns, in order (default:
        those of ``boot``); a measure the bootstrap did not resample (FDInf, KID, …) takes its value from ``point``
        (the :func:`~pyterrier_frechet.evaluate` table; default ``boot.point``) and has no interval. ``ci``: the
        level of ``boot``'s intervals (default 0.95) and ``alpha`` the level ``comparisons`` were called at, for the
        caption. ``coverage``: per system and vector measure, how many documents of each set were left out for want
        of a vector (default: those :func:`~pyterrier_frechet.evaluate` recorded with ``point``,
        :func:`~pyterrier_frechet.evaluation.evaluate.no_vector_counts`); shown in the cells that lost any.
        ``anatomy``: :func:`~pyterrier_frechet.analyses.anatomy.fd_anatomy` of the same runs (FD's two terms and the
        spread of each system's retrieved set), said in the long caption."""
        digits = check_digits(digits)
        summary = boot.summary
        point = boot.point if point is None else point
        if measures is None:
            labels = list(dict.fromkeys(summary['measure']))
            ms = parse_measures(labels)
        else:
            ms = parse_measures(measures)
            check_labels_distinct(ms)
            labels = [column_label(m) for m in ms]
        orient = {column_label(m): higher_is_better(m) for m in ms}
        systems = list(boot.samples) if boot.samples else list(dict.fromkeys(summary['name']))
        from .options import check_system_names
        check_system_names(systems)  # a result built by hand: the rule paper_table and report apply first
        if baseline is not None and baseline not in systems:
            raise ValueError(f'baseline {baseline!r} is not one of the systems {systems[:10]}')
        cells = _cells(summary, point, systems, labels, {column_label(m): unresampled_reason(m) for m in ms})
        if tau is not None and 'measure' in tau.columns and 'a' not in tau.columns:  # agreement_table's frame
            tau = tau.rename(columns={'measure': 'a', 'reference': 'b'}).dropna(subset=['kendall_tau'])
        if ci is None:
            ci = 0.95
        if comparisons is not None:
            comparisons = comparisons[comparisons['measure'].isin(labels)].reset_index(drop=True)
            if baseline is None and len(systems) > 2 and comparisons['a'].nunique() == 1:
                baseline = comparisons['a'].iloc[0]  # compare_systems(baseline=...) puts the baseline first
        caveats = tuple(getattr(boot, 'caveats', ())) if any(fd_like(m) for m in ms) else ()
        coverage = _coverage(point, coverage, systems, labels)
        contradictions = None if comparisons is None else disagreements(comparisons, warn=False, measures=ms)
        return cls(_marked_cells(cells, systems, orient, comparisons, digits, coverage), tuple(systems), tuple(labels),
                   dict(orient), comparisons=comparisons, tau=tau if tau is not None and len(tau) else None,
                   baseline=baseline, alpha=alpha, ci=ci,
                   n_queries=len(boot.queries) if boot.queries is not None else None, n_samples=_samples_of(boot),
                   seed=seed, dropped=_dropped(point), digits=digits, caveats=caveats,
                   coverage=coverage,
                   jackknife_queries=_jackknife_units(boot, labels),
                   disagreements=contradictions if contradictions is not None and len(contradictions) else None,
                   anatomy=anatomy if anatomy is not None and len(anatomy) else None)

    # --- what it says ---

    def cell(self, name: str, measure: str) -> pd.Series:
        """The row of ``cells`` for one system and measure."""
        hit = self.cells[(self.cells['name'] == name) & (self.cells['measure'] == measure)]
        if not len(hit):
            raise ValueError(f'no cell for system {name!r} and measure {measure!r}')
        return hit.iloc[0]

    def _taus(self) -> Dict[str, pd.Series]:
        if self.tau is None or not self.shows_tau():
            return {}
        return {row['a']: row for _, row in self.tau.iterrows() if row['a'] in self.measures}

    def shows_tau(self) -> bool:
        """τ is printed only across at least :data:`TAU_MIN_SYSTEMS` systems (with 3–4 its interval spans most of
        [−1, 1]); the caption says so where τ was computed and is not printed."""
        return len(self.systems) >= TAU_MIN_SYSTEMS

    def reference(self) -> Optional[str]:
        """The measure τ is computed against (the first classical measure), or None without τ."""
        refs = [r['b'] for _, r in self.tau.iterrows() if r['a'] in self.measures] if self.tau is not None else []
        return refs[0] if refs else None

    def left_out(self, name: str, measure: str) -> Tuple[int, bool]:
        """(documents of the cell's retrieved set left out for want of a vector, whether either of its sets lost
        more than :data:`DROPPED_SHARE`)."""
        r = self.cell(name, measure)
        return int(r.get('left_out', 0)), bool(r.get('distrusted', False))

    def to_dataframe(self) -> pd.DataFrame:
        """The table in long form: the ``cells`` (``row`` = ``'system'``; for vector measures ``relevant``,
        ``retrieved`` — the rows of the two sets — and ``missing_relevant``, ``missing_retrieved`` — how many were left
        out for want of a vector), then one row per measure with a τ (``row`` = ``'kendall_tau'``, ``name`` =
        ``'tau vs REFERENCE'``, ``value`` = τ, ``low``/``high`` its percentile interval over the bootstrap samples)."""
        out = self.cells.assign(row='system', better_than=self.cells['better_than'].map(', '.join),
                                worse_than=self.cells['worse_than'].map(', '.join))
        counts = ['relevant', 'missing_relevant', 'retrieved', 'missing_retrieved']
        if self.coverage is not None:
            out = out.merge(self.coverage, on=['name', 'measure'], how='left')
        else:
            out = out.assign(**{c: np.nan for c in counts})
        taus = [{'row': 'kendall_tau', 'name': f'tau vs {r["b"]}', 'measure': a, 'value': float(r['kendall_tau']),
                 'low': float(r['tau_low']), 'high': float(r['tau_high']), 'interval': 'percentile',
                 'estimand': TAU_ESTIMAND,
                 'inside': bool(r['tau_low'] <= r['kendall_tau'] <= r['tau_high'])}
                for a, r in self._taus().items()]
        if taus:
            out = pd.concat([out, pd.DataFrame(taus)], ignore_index=True)
        cols = ['row', 'name', 'measure', 'value', 'low', 'high', 'interval', 'estimand', 'inside', 'best',
                'better_than', 'worse_than'] + counts
        return out[cols]

    def decimals(self, measure: str) -> int:
        """The decimals a measure's column is printed with (:func:`column_decimals` of its values and interval
        ends; the best marks compare values rounded so)."""
        col = self.cells[self.cells['measure'] == measure]
        return column_decimals(col[['value', 'low', 'high']].to_numpy().ravel(), self.digits)

    def _marks(self, r) -> Tuple[str, str]:
        """(significance, outside) marks of one cell, as plain text: letters of the systems it beats (all pairs)
        or ▲/▼ (against the baseline), none on a ‡ cell (its value may reflect the missing vectors more than the
        system: the long caption names what it withholds); † where the value is outside its interval."""
        sig = '' if r.get('distrusted', False) else self._significance(r)
        outside = OUTSIDE if np.isfinite(r['low']) and not r['inside'] else ''
        return sig, outside

    def _significance(self, r) -> str:
        """The significance mark a cell's comparisons give it ('' without comparisons), whether or not it is shown."""
        if self.comparisons is None:
            return ''
        if self.baseline is not None:
            return BETTER if self.baseline in r['better_than'] else WORSE if self.baseline in r['worse_than'] else ''
        index = {s: i for i, s in enumerate(self.systems)}
        sep = ',' if len(self.systems) > len(_LETTERS) else ''  # a2, b2, ...: separated
        return sep.join(letter(index[s]) for s in r['better_than'])

    def _distrusted(self) -> pd.Series:
        """Which cells are ``‡`` (all False for cells built without the column)."""
        return self.cells.get('distrusted', pd.Series(False, index=self.cells.index)).astype(bool)

    def contradicts(self, name: str, measure: str) -> bool:
        """Whether the cell's FD measure and a classical measure both call ``name`` significantly different from the
        same system, in opposite directions (the cell is marked ⇄; with letters, both systems' cells)."""
        if self.disagreements is None:
            return False
        d = self.disagreements[self.disagreements['fd_measure'] == measure]
        return bool((d['system'] == name).any() or (self.baseline is None and (d['baseline'] == name).any()))

    def _uses_letters(self) -> bool:
        return self.comparisons is not None and self.baseline is None

    def _system_label(self, name: str) -> str:
        return f'{name} (baseline)' if name == self.baseline else name

    def _interval_groups(self) -> Dict[str, List[str]]:
        """The columns of each printed interval name, in column order."""
        methods: Dict[str, List[str]] = {}
        for label in self.measures:
            methods.setdefault(self._first_cell(label)['interval'], []).append(label)
        return methods

    def _first_cell(self, label: str) -> pd.Series:
        return self.cells.loc[self.cells['measure'] == label].iloc[0]

    def _how(self, labels) -> Tuple[str, Optional[int], str]:
        """(the interval method's name, its query groups G or None, its notes as printed after the name: ' (cluster
        jackknife over G=9 query groups, t reference)') of these columns, read from their cells."""
        cell = self._first_cell(labels[0])
        groups = cell['groups']
        groups = None if groups is None or pd.isna(groups) else int(groups)
        notes = cell.get('notes')
        return cell['method'], groups, notes if isinstance(notes, str) else ''

    def _none_why(self, labels) -> str:
        """Why these columns have no interval (their cells' ``no_interval``), each reason once."""
        why = [self._first_cell(lab).get('no_interval') for lab in labels]
        return '; '.join(dict.fromkeys(w if isinstance(w, str) and w else 'not resampled' for w in why))

    def _anatomy_said(self) -> Tuple[pd.DataFrame, pd.DataFrame]:
        """(the rows of :attr:`anatomy` whose FD cell is marked ⇄, said one by one; those marked ▲/▼ against the
        baseline, summed up in one sentence) — the long caption of 19 systems and three FD columns would otherwise
        hold dozens of sentences (``report`` prints every row in its section "What moves FD"). Without a baseline
        and comparisons: none (the attribute holds them all)."""
        if self.baseline is None or self.comparisons is None:
            return self.anatomy.iloc[:0], self.anatomy.iloc[:0]
        shown = self.anatomy[self.anatomy['measure'].isin(self.measures) & (self.anatomy['name'] != self.baseline)]
        contradicting = [self.contradicts(r.name, r.measure) for r in shown.itertuples()]
        marked = [bool(self._marks(self.cell(r.name, r.measure))[0]) for r in shown.itertuples()]
        return shown[contradicting], shown[[m and not c for m, c in zip(marked, contradicting)]]

    def _classical_named(self) -> str:
        """The classical measures the FD cells contradict, named (e.g. 'nDCG@10' or 'nDCG@10/RR@10')."""
        return '/'.join(dict.fromkeys(self.disagreements['classical_measure']))

    def _relevant_left_out(self) -> Tuple[int, int]:
        """(relevant rows left out, rows of the relevant set) of the vector column that lost the most."""
        if self.coverage is None:
            return 0, 0
        worst = self.coverage.sort_values('missing_relevant', ascending=False).iloc[0]
        return int(worst['missing_relevant']), int(worst['relevant'])

    def caption(self, latex: bool = False, long: bool = False) -> str:
        """What the table shows. By default a short caption (at most 60 words: what the values, intervals and marks
        are); ``long=True``: every detail — how each interval was made and what it is for
        (:class:`~pyterrier_frechet.core.intervals.IntervalMethod`), the tests, the correction, the caveats.
        ``latex``: as LaTeX source."""
        text = ' '.join(self._long_caption() if long else self._short_caption())
        return latex_text(text) if latex else text

    def _jackknife_count(self, labels) -> Optional[int]:
        """The queries these columns' jackknife left out, where one number and fewer than the table's queries."""
        units = {self.jackknife_queries[lab] for lab in labels if self.jackknife_queries and lab in self.jackknife_queries}
        return units.pop() if len(units) == 1 else None

    def _over(self, labels) -> str:
        """' over the N queries with a relevant document' where these columns' jackknife left out fewer queries than
        the table has ('' otherwise)."""
        count = self._jackknife_count(labels)
        return f' over the {count} queries with a relevant document' if count is not None else ''

    def _short_caption(self) -> List[str]:
        q = f', {self.n_queries} queries' if self.n_queries else ''
        parts = [f'{len(self.systems)} system{"s" if len(self.systems) != 1 else ""}{q}; values on all queries.']
        groups, clusters = [], ''
        for labels in self._interval_groups().values():
            key, n_groups, _ = self._how(labels)
            names = 'FD columns' if all(lab.startswith('FD') for lab in labels) and len(labels) > 1 else ', '.join(labels)
            if n_groups is not None:  # 'jackknife_log (cluster jackknife over G=4 query groups, t reference)'
                clusters = f', over {n_groups} query groups'
            if key == 'none':
                groups.append(f'{names}: none ({self._none_why(labels)})')
            elif key == 'jackknife_log':
                groups.append(f'{names}: jackknife{self._over(labels)}, for E[FD̂ₙ]')
            elif key == 't':
                groups.append(f'{names}: Student t, for the mean')
            else:
                kind = interval_method(key)
                groups.append(f'{names}: {kind.title}, for the {kind.estimand_label}')
        parts.append(f'[ ]: {self.ci:.0%} intervals{clusters} ({"; ".join(groups)}).')
        if self.comparisons is not None:
            parts.append((f'{BETTER}/{WORSE}: better/worse than {self.baseline}' if self.baseline
                          else 'Superscripts: systems it beats') + f' (paired test, Holm α = {self.alpha:g}).')
        if self.disagreements is not None and self._shows_contradiction():
            parts.append(f'{CONTRADICTS}: FD and {self._classical_named()} disagree significantly, in opposite directions.')
        parts.append('Bold: best.')
        if len(self.cells[~np.isfinite(self.cells['low']) & ~(self.cells['method'] == 'none')]):
            parts.append('[–]: undefined.')
        if len(self.cells[np.isfinite(self.cells['low']) & ~self.cells['inside']]):
            parts.append(f'{OUTSIDE}: outside its interval.')
        if self.coverage is not None:
            parts.append(f'(−n): documents without a vector; {DROPPED}: over {DROPPED_SHARE:.0%} of a set, unmarked.')
        if self.tau is not None and self.reference() is not None:
            parts.append(f'τ: Kendall τ-b with {self.reference()}.' if self.shows_tau() else
                         f'τ not shown: fewer than {TAU_MIN_SYSTEMS} systems.')
        if caption_caveats(self.caveats):
            parts.append('FD intervals: measured coverage in the long caption.')
        return parts

    def _long_caption(self) -> List[str]:
        q = f' on {self.n_queries} queries' if self.n_queries else ''
        parts = [f'{len(self.systems)} system{"s" if len(self.systems) != 1 else ""}{q}. Value: each measure on the '
                 'full query set (FD as the paper defines it).']
        how = f'{self.n_samples} samples' if self.n_samples else 'over queries'
        if self.seed is not None:
            how += f', seed {self.seed}'
        for labels in self._interval_groups().values():
            key, n_groups, notes = self._how(labels)
            names = ', '.join(labels)
            # query groups: 'jackknife_log (cluster jackknife over G=9 query groups, t reference)' says it in the caption
            grouped = notes if n_groups is not None else ''
            if key == 'none':
                parts.append(f'{names}: no interval ({self._none_why(labels)}).')
            elif key == 'jackknife_log':
                count = self._jackknife_count(labels)
                at = (f'{count} queries (those with a relevant document at its rel; the jackknife leaves out each of '
                      'them)' if count is not None and not grouped else f'{self.n_queries or "this number of"} queries')
                parts.append(f'[low, high] of {names}: {self.ci:.0%} log-scale jackknife interval over queries for '
                             f'E[FD̂ₙ], the expected value at {at} (not the population FD), centred on the value on '
                             f'the log scale{grouped}.')
            else:
                kind = interval_method(key)
                made = kind.title + (f' ({how})' if not kind.from_jackknife else
                                                      ' (mean ± t·s/√n, n − 1 degrees of freedom, clipped to the range '
                                                      'of the per-query values)' if key == 't' and not grouped
                                                      else '')
                parts.append(f'[low, high] of {names}: {self.ci:.0%} {made} interval for the {kind.estimand_label}{grouped}.')
        undefined = self.cells[~np.isfinite(self.cells['low']) & ~(self.cells['method'] == 'none')]
        if len(undefined):
            parts.append(f'[–]: undefined there ({len(undefined)} cell{"s" if len(undefined) != 1 else ""}; e.g. a '
                         'leave-one-query-out set with fewer than 2 vectors).')
        outside = self.cells[np.isfinite(self.cells['low']) & ~self.cells['inside']]
        if len(outside):
            why = sorted(set(outside['interval']))
            parts.append(f'{OUTSIDE}: the value lies outside its interval ({len(outside)} '
                         f'cell{"s" if len(outside) != 1 else ""}; {", ".join(why)}): '
                         + ('that interval is centred on a bias-corrected estimate, not on the value' if
                            any(interval_method(k).centre != 'value' for k in set(outside['method'])) else
                            'the resampled values lie to one side of it') + '.')
        parts.append('Bold: the best of each column (↓ lower, ↑ higher is better).')
        if self.comparisons is not None:
            if 'test' in self.comparisons.columns:
                used = self.comparisons.groupby('test', sort=False)['measure'].unique()
                tests = '; '.join(f'{_TESTS.get(t, t)} for {", ".join(mm)}' for t, mm in used.items())
            else:
                tests = 'paired test'
            m = int(self.comparisons.groupby('measure').size().max())
            what = (f'{BETTER}/{WORSE}: significantly better/worse than {self.baseline}' if self.baseline
                    else 'Superscripts: the systems (#) it is significantly better than')
            parts.append(f'{what} ({tests}; {self.correction.capitalize()}\'s correction over the {m} comparisons '
                         f'of each measure, α = {self.alpha:g}); each column\'s marks are its own measure\'s test.')
        if self.disagreements is not None:
            parts.append(f'{CONTRADICTS}: ' + describe(self.disagreements, limit=len(self.disagreements)) + '.')
        if self.anatomy is not None:
            said, summed = self._anatomy_said()
            if len(said):
                parts.append('What moves FD in the ⇄ cells (FD = mean term ‖μ₁ − μ₂‖² + covariance term; spread: total '
                             'variance of the retrieved set over the relevant set\'s): '
                             + '; '.join(anatomy_notes(said)) + '.')
            if len(summed):
                by_cov = int((summed['moved_by'] == 'covariance term').sum())
                narrower = int((summed['spread'] < NARROWER).sum())
                within = int((summed['spread_within'] < NARROWER).sum())
                parts.append(f'Of the other {len(summed)} FD cells marked against {self.baseline}, the covariance term '
                             f'moved FD more than the mean term in {by_cov} and the mean term in {len(summed) - by_cov}; '
                             f'{narrower} of their retrieved sets are narrower than the relevant set (spread < '
                             f'{NARROWER:g}), {within} within queries (the pooled spread stays near 1 where many topics '
                             'share the pool).')
        ref = self.reference()
        if ref is not None and self.shows_tau():
            parts.append(f'τ: Kendall τ-b with {ref} (lower-is-better measures negated: positive τ is agreement), '
                         f'{self.ci:.0%} percentile bootstrap interval for τ between the systems\' expected values at '
                         f'{self.n_queries or "this number of"} queries.')
        elif ref is not None:
            parts.append(f'τ with {ref} is not shown: across {len(self.systems)} systems (fewer than '
                         f'{TAU_MIN_SYSTEMS}) its interval spans most of [−1, 1].')
        parts += caption_caveats(self.caveats)
        if self.coverage is not None:
            rel, rel_total = self._relevant_left_out()
            parts.append(f'(−n) after a cell: n documents of that run\'s retrieved set had no vector and were left out '
                         f'(missing=\'drop\'); {DROPPED}: a set lost more than {DROPPED_SHARE:.0%} of its documents, so '
                         'the value may reflect the missing vectors more than the system'
                         + (f'; {rel} of the {rel_total} relevant documents were left out for every run' if rel else '')
                         + ' (counts per cell: table.csv).')
            withheld = self._withheld()
            if withheld:
                parts.append(f'Marks withheld on {DROPPED} cells (their value may be the missing vectors\', not the '
                             f'system\'s): {"; ".join(withheld)}.')
        elif self.dropped is not None:
            parts.append(f'Left out for want of a vector: {self.dropped[1]} retrieved and {self.dropped[0]} relevant '
                         'documents.')
        return parts

    def _shows_contradiction(self) -> bool:
        """Whether some printed cell carries ⇄ (on a ‡ cell it is withheld, and the long caption says it)."""
        shown = self.cells[~self._distrusted()]
        return any(self.contradicts(n, m) for n, m in zip(shown['name'], shown['measure']))

    def _withheld(self) -> List[str]:
        """What the ‡ cells would have carried ('rank1 FD(urr=True)@10: ▼, ⇄, best'), for the long caption."""
        out = []
        for _, r in self.cells[self._distrusted()].iterrows():
            marks = [self._significance(r)] + ([CONTRADICTS] if self.contradicts(r['name'], r['measure']) else [])
            if any(marks):
                out.append(f'{r["name"]} {r["measure"]}: {", ".join(m for m in marks if m)}')
        return out

    # --- renderers ---

    def _head(self, d: Dialect) -> Tuple[List[str], str]:
        """The header cells and the column alignment: ``#`` (with letters), the system, each measure with its arrow."""
        letters = self._uses_letters()
        # the LaTeX heading capitalised, as booktabs tables are set
        head = ([d.text('#')] if letters else []) + [d.text('System' if d is LATEX else 'system')] + [
            d.text(f'{m} {"↑" if self.higher_is_better[m] else "↓"}') for m in self.measures]
        return head, ('c' if letters else '') + 'l' + 'r' * len(self.measures)

    def _rows(self, d: Dialect, intervals: bool) -> List[List[str]]:
        """One row of cell text per system, in ``d``'s format: the value (bold: the best of its column; † outside its
        interval), ``[low, high]``, the significance marks, the documents left out."""
        letters = self._uses_letters()
        cells = self.cells.set_index(['name', 'measure'])
        decimals = {m: self.decimals(m) for m in self.measures}
        rows = []
        names = self._name_cells(d)
        for i, name in enumerate(self.systems):
            row = ([letter(i)] if letters else []) + [names[i]]
            for m in self.measures:
                r, places = cells.loc[(name, m)], decimals[m]
                value = d.number(r['value'], places)
                value = d.bold(value) if r['best'] else value
                sig, outside = self._marks(r)
                text = value + (d.outside() if outside else '')
                if intervals:
                    text += d.bracket(f'{d.number(r["low"], places)}, {d.number(r["high"], places)}'
                                      if np.isfinite(r['low']) else d.missing)
                if sig:
                    text += d.marks(sig, letters)
                if self.contradicts(name, m) and not r.get('distrusted', False):
                    text += d.contradiction()
                n, over = self.left_out(name, m)
                row.append(text + (d.left_out(n, over) if n or over else ''))
            rows.append(row)
        return rows

    def _name_cells(self, d: Dialect) -> List[str]:
        """Each system's name cell in ``d``; names that print alike (a line break and a space, a tab and a space, two
        long names shortened to one prefix) are numbered `` [1]``, `` [2]`` in table order, so that every row can be
        told apart (:meth:`_alike_note` says so beside the table; table.csv has the names whole)."""
        cells = self._printed_names(d)
        seen: Dict[str, int] = {}
        counts = pd.Series(cells).value_counts()
        out = []
        for cell in cells:
            if counts[cell] > 1:
                seen[cell] = seen.get(cell, 0) + 1
                cell = cell + d.text(f' [{seen[cell]}]')
            out.append(cell)
        return out

    def _printed_names(self, d: Dialect) -> List[str]:
        """Each system's name as ``d`` prints it, before :meth:`_name_cells` numbers those that print alike."""
        return [d.name(self._system_label(n)) for n in self.systems]

    def _alike_note(self, d: Dialect) -> str:
        """A sentence where :meth:`_name_cells` numbered names that print alike ('' where none do)."""
        cells = self._printed_names(d)
        return (' Names that print alike are numbered [1], [2], … in table order (table.csv has them whole).'
                if len(set(cells)) < len(cells) else '')

    def _tau_rows(self, d: Dialect) -> List[List[str]]:
        """The τ row (none without τ): τ with its interval under each measure, '—' where τ was computed and is not
        shown."""
        if self.tau is None or self.reference() is None:
            return []
        taus = self._taus()
        row = ([''] if self._uses_letters() else []) + [d.text('Kendall τ with ') + d.text(self.reference())]
        for m in self.measures:
            r = taus.get(m)
            row.append(d.number(r['kendall_tau'], self.digits)
                       + d.bracket(f'{d.number(r["tau_low"], self.digits)}, {d.number(r["tau_high"], self.digits)}')
                       if r is not None else d.text('—') if not self.shows_tau() and m in set(self.tau['a']) else '')
        return [row]

    def _table_lines(self, d: Dialect, intervals: bool) -> List[str]:
        head, align = self._head(d)
        return d.table(head, align, self._rows(d, intervals), self._tau_rows(d))

    def to_markdown(self, intervals: bool = True, long_caption: bool = False) -> str:
        """A Markdown table (system names and measure names escaped; bold: the best of each column; ``[low, high]``
        the interval; significance marks as superscripts; ``(−n)`` documents left out for want of a vector) and the
        caption below it (short; ``long_caption=True``: :meth:`caption` with ``long=True``)."""
        return ('\n'.join(self._table_lines(MARKDOWN, intervals)) + '\n\n'
                + markdown_text(self.caption(long=long_caption) + self._alike_note(MARKDOWN)) + '\n')

    def to_latex(self, intervals: bool = True, label: str = 'tab:results', environment: str = 'table',
                 width: Optional[str] = '\\linewidth', long_caption: bool = False) -> str:
        """A LaTeX table: booktabs rules (``\\toprule``, ``\\midrule``, ``\\bottomrule``), names escaped, the
        best of each column in bold, the interval in brackets (``\\scriptsize``), significance marks as
        superscripts, ``\\caption`` from :meth:`caption` (short; ``long_caption=True``: the long one). ``width``: the
        tabular is scaled to it (``\\resizebox``; None: its natural width; ``environment='table*'`` spans both columns
        of a two-column paper). Needs ``\\usepackage{booktabs}``, ``graphicx`` (for ``width``) and ``amssymb`` (for
        the baseline marks ▲/▼) in the preamble."""
        packages = ['booktabs'] + (['graphicx'] if width else []) + (['amssymb'] if (self.baseline and self.comparisons is not None)
                                                                     or self.disagreements is not None else [])
        shortened = (f' Names over {LATEX_NAME_CHARS} characters are shortened (table.csv has them whole).'
                     if any(len(self._system_label(n)) > LATEX_NAME_CHARS for n in self.systems) else '')
        shortened += latex_text(self._alike_note(LATEX))
        lines = [f'% needs \\usepackage{{{",".join(packages)}}}', f'\\begin{{{environment}}}[t]', '\\centering',
                 f'\\caption{{{self.caption(latex=True, long=long_caption)}{shortened}}}', f'\\label{{{_label_key(label)}}}']
        lines += [f'\\resizebox{{{width}}}{{!}}{{%'] if width else []
        lines += self._table_lines(LATEX, intervals)
        lines += (['}'] if width else []) + [f'\\end{{{environment}}}']
        return '\n'.join(lines) + '\n'

    def to_csv(self, path=None) -> Optional[str]:
        """:meth:`to_dataframe` as CSV (:func:`~pyterrier_frechet.analyses.outputs.to_csv`: safe to open in a
        spreadsheet); the text when ``path`` is None."""
        return to_csv(self.to_dataframe(), path)

    def __str__(self) -> str:
        return self.to_markdown()


def _label_key(label) -> str:
    """A ``\\label`` key as given (``tab:fd_results`` stays ``tab:fd_results``, so ``\\ref{tab:fd_results}`` resolves:
    a key is not text, LaTeX does not typeset it); one that LaTeX cannot take as a key is refused."""
    if not isinstance(label, str) or not label or re.search(r'[\\{}%#\s]', label) or not label.isprintable():
        raise ValueError(f'label {label!r}: a LaTeX label key, non-empty, without braces, backslashes, %, # or white '
                         'space (e.g. tab:fd_results)')
    return label


def _samples_of(boot) -> Optional[int]:
    return boot.n_samples or None


def _cells(summary: pd.DataFrame, point: Optional[pd.DataFrame], systems, labels,
           reasons: Optional[Mapping[str, str]] = None) -> pd.DataFrame:
    """One row per (system, measure): from the bootstrap's ``summary``, or from ``point`` (no interval) for a measure
    it did not resample (its ``interval`` says why: ``reasons``, label → :func:`unresampled_reason`)."""
    reasons = reasons or {}
    rows = []
    by_key = summary.set_index(['name', 'measure'])
    point_by_name = point.set_index('name') if point is not None else None
    for name in systems:
        for label in labels:
            if (name, label) in by_key.index:
                r = by_key.loc[(name, label)]
                rows.append({'name': name, 'measure': label, 'value': float(r['value']), 'low': float(r['low']),
                             'high': float(r['high']), 'interval': str(r['interval']), 'method': str(r['method']),
                             'notes': str(r['notes']) if isinstance(r.get('notes'), str) else '',
                             'groups': r.get('groups'), 'estimand': str(r.get('estimand', ''))})
            elif point_by_name is not None and label in point_by_name.columns:
                why = reasons.get(label) or 'not resampled'
                rows.append({'name': name, 'measure': label, 'value': float(point_by_name.loc[name, label]),
                             'low': np.nan, 'high': np.nan, 'interval': f'none ({why})', 'method': 'none',
                             'groups': None, 'estimand': '', 'notes': '', 'no_interval': why})
            else:
                raise ValueError(f'measure {label!r} is neither in the bootstrap summary nor in the point table; '
                                 'bootstrap it, or pass point= (the pf.evaluate table) for measures it cannot resample')
    return pd.DataFrame(rows)


def _coverage(point: Optional[pd.DataFrame], coverage: Optional[pd.DataFrame], systems, labels) -> Optional[pd.DataFrame]:
    """The per-cell counts of documents left out for want of a vector, of the table's systems and columns (None:
    nothing was left out). ``coverage`` as given, else the counts ``point`` (an :func:`~pyterrier_frechet.evaluate`
    table) carries. Where ``point`` says documents were left out (its ``no_vector_*`` columns) but carries no count for
    one of the table's vector columns (pandas keeps ``attrs`` through a merge only where both sides' are equal), its
    cells would show no ``(−n)``: refused, never silent."""
    if coverage is None:
        coverage = no_vector_counts(point) if point is not None else None
        if coverage is not None and _dropped(point) is not None:
            counted = set(coverage['measure'])
            lost = [lab for lab in labels if lab not in counted and _is_vector_label(lab)]
            if lost:
                raise ValueError(f'point= says documents were left out for want of a vector, but carries no per-cell '
                                 f'count for {lost} (pandas keeps a frame\'s attrs through a merge only where both '
                                 'sides\' are equal): pass '
                                 'coverage= (pd.concat of pf.evaluation.evaluate.no_vector_counts of each evaluate '
                                 'table), or point= as evaluate returned it')
    if coverage is None:
        return None
    coverage = coverage[coverage['measure'].isin(labels) & coverage['name'].isin(systems)]
    if not (coverage[['missing_relevant', 'missing_retrieved']].to_numpy() > 0).any():
        return None
    return coverage.reset_index(drop=True)


def _is_vector_label(label: str) -> bool:
    try:
        return is_vector_measure(parse_measures([label])[0])
    except ValueError:  # a column that is not a measure name (mrt): not a vector measure
        return False


def _dropped(point: Optional[pd.DataFrame]) -> Optional[Tuple[int, int]]:
    """(relevant, retrieved) documents ``point`` (the evaluate table) left out for want of a vector; None: none."""
    if point is not None and set(NO_VECTOR_COLUMNS) <= set(point.columns):
        rel, ret = point['no_vector_relevant'], point['no_vector_retrieved']
        if rel.to_numpy().any() or ret.to_numpy().any():
            return int(rel.max()), int(ret.sum())
    return None


def _jackknife_units(boot, labels) -> Optional[Dict[str, int]]:
    """Column label → the queries its jackknife left out one at a time, where fewer than the bootstrap's queries."""
    if not (boot.jackknife and boot.query_groups is None and boot.queries is not None):
        return None
    first = next(iter(boot.jackknife.values()))
    return {label: len(first[label]) for label in labels
            if label in first and 0 < len(first[label]) < len(boot.queries)} or None


def _marked_cells(cells: pd.DataFrame, systems, orient: Mapping[str, bool], comparisons: Optional[pd.DataFrame],
                  digits: int, coverage: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """``cells`` with what the renderers mark: ``left_out`` (documents of its retrieved set without a vector, from
    ``coverage``), ``distrusted`` (a set lost more than :data:`DROPPED_SHARE` of its documents: ``‡``), ``inside``
    (low ≤ value ≤ high), ``better_than`` / ``worse_than`` (the systems this one beats / loses to, in ``systems``
    order, from the Holm-corrected ``better`` calls of ``comparisons``), ``best`` (the best value of its column as
    printed, in the measure's direction, among the cells not ``distrusted``: a value that reflects missing vectors is
    never the best of its column)."""
    cells = cells.copy()
    counts = {(n, m): (0, False) for n, m in zip(cells['name'], cells['measure'])}
    for r in ([] if coverage is None else coverage.itertuples(index=False)):
        shares = [r.missing_retrieved / r.retrieved if r.retrieved else 0.0,
                  r.missing_relevant / r.relevant if r.relevant else 0.0]
        counts[r.name, r.measure] = (int(r.missing_retrieved), max(shares) > DROPPED_SHARE)
    keys = list(zip(cells['name'], cells['measure']))
    cells['left_out'] = [counts[k][0] for k in keys]
    cells['distrusted'] = [counts[k][1] for k in keys]
    tol = 1e-12 * np.maximum(1.0, np.abs(cells['value'].to_numpy(dtype=np.float64)))
    with np.errstate(invalid='ignore'):
        cells['inside'] = ((cells['low'] - tol <= cells['value']) & (cells['value'] <= cells['high'] + tol)).astype(bool)
    better = {(n, m): [] for n, m in zip(cells['name'], cells['measure'])}
    worse = {(n, m): [] for n, m in zip(cells['name'], cells['measure'])}
    if comparisons is not None:
        for row in comparisons.itertuples(index=False):
            if not row.better:
                continue
            loser = row.b if row.better == row.a else row.a
            if (row.better, row.measure) in better:
                better[row.better, row.measure].append(loser)
                worse[loser, row.measure].append(row.better)
    order = {s: i for i, s in enumerate(systems)}
    cells['better_than'] = [sorted(better[k], key=order.get) for k in zip(cells['name'], cells['measure'])]
    cells['worse_than'] = [sorted(worse[k], key=order.get) for k in zip(cells['name'], cells['measure'])]
    best = []
    for label, group in cells.groupby('measure', sort=False):
        places = column_decimals(group[['value', 'low', 'high']].to_numpy().ravel(), digits)
        shown = group['value'].map(lambda v: round(v, places) if np.isfinite(v) else np.nan).where(~group['distrusted'])
        target = shown.max() if orient[label] else shown.min()
        best += list(group.index[(shown == target).to_numpy()]) if np.isfinite(target) else []
    cells['best'] = cells.index.isin(best)
    return cells.reset_index(drop=True)


# --- one call ---

def paper_table(runs, qrels, measures: Sequence = DEFAULT_MEASURES, *, baseline: Optional[str] = None, encoder=None,
                n_samples: Optional[int] = None, seed: int = 0, ci: float = 0.95, alpha: float = 0.05,
                test: str = 'jackknife', interval: Optional[str] = None, verbose: bool = True,
                digits: int = 3, rel: Optional[int] = None, missing: Optional[str] = 'drop', text=None,
                population: Optional[int] = None, query_groups=None) -> PaperTable:
    """The paper table in one call: values, intervals, significance marks (Holm) and τ for ``runs`` on ``qrels``.

    Args:
        runs: system name → run frame (qid, docno, score); TREC run files are read by
            :func:`pyterrier_frechet.data.runs.read_run` (names from the files: ``run_names(run_files([folder]))``).
        qrels: a frame (qid, docno, label), e.g. :func:`pyterrier_frechet.data.runs.read_qrels` of a TREC qrels file.
        measures: ir_measures measures or names (default :data:`DEFAULT_MEASURES`, the CLI's ``--metrics`` default:
            FD@10 as the headline, FD(per_query=5)@10 for FD's interval and test); the first per-query measure
            (nDCG@10 by default) is τ's reference. Measures the bootstrap cannot resample (FDInf,
            KID, k-NN) get their value and no interval.
        baseline: mark each system against this one (▲ better, ▼ worse); default: every pair, ranx-style letters.
        encoder: the vector source of vector measures that name none (e.g. ``pf.VectorStore(prefix)``).
        n_samples: bootstrap samples (default :func:`~pyterrier_frechet.analyses.options.default_samples`: 1000
            for the jackknife and normal tests).
        seed, ci: the bootstrap's seed and the intervals' level.
        alpha, test: the level of the Holm-corrected marks and the paired test
            (:func:`~pyterrier_frechet.compare_systems`).
        interval: the bootstrap's interval method of every measure (default: per kind of measure, chosen by
            measured coverage: each measure's resampling declares it).
        verbose: progress bars. digits: decimals printed (and compared for the best marks); a column whose smallest
            value or interval end is below 10^-(digits-1) gets as many as show ``digits - 1`` significant figures.
        rel: the lowest label counted as relevant, for every measure with a ``rel`` parameter that does not set it
            (``report --rel``; default: ir_measures' 1, said in a warning when the qrels are graded — TREC DL uses 2).
        missing: documents without a vector, for every vector measure that does not set it: ``'drop'`` (default, as
            ``report``: left out, counted in the cells that lost any, ``‡`` past 10 % of a set) or ``'error'``.
        text: a docno/text JSONL file (gzip, bzip2 or xz allowed; ``report --text``): the documents are embedded by the
            default :class:`~pyterrier_frechet.Embedder` (cached) instead of ``encoder``.
        population, query_groups: as :func:`~pyterrier_frechet.bootstrap` (``report --population``,
            ``--query-groups``).

    One :func:`~pyterrier_frechet.bootstrap` pass serves the intervals, the comparisons and τ.
    """
    from .bootstrap import TAU_DRAWS
    from .options import ResamplingOptions
    if not isinstance(runs, Mapping):
        raise ValueError(f'runs must be a dict of system name -> run frame, got {type(runs).__name__}; read TREC run '
                         'files with pf.runs.read_run (names: pf.runs.run_names(pf.runs.run_files([folder])))')
    if not isinstance(qrels, pd.DataFrame):
        raise ValueError(f'qrels must be a frame (qid, docno, label), got {type(qrels).__name__}; read a TREC qrels '
                         'file with pf.runs.read_qrels')
    if not runs:
        raise ValueError('runs is empty: give at least one system')
    if text is not None and encoder is not None:
        raise ValueError('give encoder= (e.g. precomputed vectors: pf.VectorStore) or text= (documents embedded by the '
                         'default Embedder), not both')
    check_digits(digits)
    ms = with_options(measures, rel=rel, missing=missing)
    check_labels_distinct(ms)
    # every option checked before any work, with the baseline, the query groups and the resample count (Holm's first
    # step over the comparisons)
    options = ResamplingOptions(n_samples=n_samples, seed=seed, ci=ci, alpha=alpha, test=test, interval=interval,
                                population=population, query_groups=query_groups,
                                baseline=baseline).for_runs(runs, qrels, tau_draws=TAU_DRAWS)
    boot_ms = bootstrappable(ms)
    if not boot_ms:
        raise ValueError(f'none of {[str(m) for m in ms]} can be bootstrapped: name {", ".join(resampled_names())} '
                         'or a per-query measure')
    from ..evaluation.relevance import graded_threshold_note
    from ..evaluation.vector_sets import one_drop_summary
    note = graded_threshold_note(qrels, ms)
    if note:  # once for the table, not once for each of its evaluations
        warnings.warn(note, UserWarning, stacklevel=2)
    with one_drop_summary(not verbose, "the table's cells ((−n)) and to_dataframe()"), warnings.catch_warnings():
        warnings.filterwarnings('ignore', message='graded qrels', category=UserWarning)
        return _paper_table(runs, qrels, ms, boot_ms, options, encoder=encoder, text=text, verbose=verbose,
                            digits=digits)


def _paper_table(runs, qrels, ms, boot_ms, options, *, encoder, text, verbose, digits) -> PaperTable:
    """:func:`paper_table`'s work, once its inputs are checked: every option from ``options``, one set."""
    seed, ci, alpha, test, baseline = options.seed, options.ci, options.alpha, options.test, options.baseline
    from .bootstrap import bootstrap
    from .correlation import tau_intervals
    from .significance import compare_with, resample_for
    from ..vectors.sources import using_encoder
    others = [x for x in ms if x not in boot_ms]
    if text is not None:
        from ..vectors.embedder import Embedder
        from ..vectors.text import TextLookup
        encoder = Embedder(texts=TextLookup.from_jsonl(text), verbose=verbose)
    boot = bootstrap(runs, qrels, boot_ms, options=options, verbose=verbose, encoder=encoder,
                     resample=resample_for(test))
    point, coverage = boot.point, no_vector_counts(boot.point)
    if others:
        from ..evaluation.evaluate import evaluate
        with using_encoder(encoder):
            extra = evaluate(runs, qrels, others, verbose=verbose)
        # the counts of both evaluations, passed on by name: the merge below keeps no frame's attrs
        coverage = pd.concat([coverage, no_vector_counts(extra)], ignore_index=True)
        point = point.merge(extra[['name'] + [column_label(x) for x in others]], on='name')
    comparisons = None
    if len(runs) >= 2:
        with using_encoder(encoder):
            comparisons = compare_with(runs, qrels, boot_ms, options, verbose, boot)
    # τ across 3–4 systems is computed but not printed (PaperTable.shows_tau): its row says '—' and the caption why
    tau = tau_intervals(boot, boot_ms, ci) if len(runs) >= 3 and any(not is_set_measure(x) for x in boot_ms) else None
    with using_encoder(encoder):  # FD's terms and spread, for the long caption (the same selection, no resampling)
        anatomy = fd_anatomy(runs, qrels, ms, baseline=baseline, point=point, verbose=verbose)
    return PaperTable.from_results(boot, ms, comparisons=comparisons, tau=tau, baseline=baseline, alpha=alpha, ci=ci,
                                   seed=seed, point=point, digits=digits, coverage=coverage, anatomy=anatomy)


__all__ = ['CORRECTION', 'DEFAULT_MEASURES', 'DROPPED_SHARE', 'PaperTable', 'TAU_MIN_SYSTEMS', 'WHICH_FD', 'latex_text',
           'latex_name', 'letter', 'paper_table']
