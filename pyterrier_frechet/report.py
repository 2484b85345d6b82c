"""``report``: every analysis for one qrels file and a set of runs, as a markdown report with its tables
(markdown in the report, CSV beside it) and figures (PNG in the report, PDF beside it)."""
from pathlib import Path
from typing import Optional, Sequence

import ir_measures
import pandas as pd

from . import plots
from .bootstrap import bootstrap
from .correlation import correlations
from .measure import SET_MEASURES, VECTOR_MEASURES
from .robustness import sparsify, summarise
from .significance import compare_systems
from .vectors import default_encoder


def _table(df: pd.DataFrame, out: Path, name: str) -> str:
    df.to_csv(out / f'{name}.csv', index=False)
    return df.to_markdown(index=False, floatfmt='.4g')


def write_report(data, out: Path, qrels_path: str, samples: int = 1000, seed: int = 0,
                 per_query: Sequence[int] = (1, 5, 10), seeds: Sequence[int] = (0, 1, 2, 3, 4), verbose: bool = True,
                 baseline: Optional[str] = None) -> Path:
    """Write ``out/report.md`` (and its CSV tables and PNG/PDF figures) for ``data`` (see :func:`cli.load_data`)."""
    from .cli import column_label, evaluate_runs, kendall_notes  # the CLI's evaluation and its checks
    out.mkdir(parents=True, exist_ok=True)
    (out / 'figures').mkdir(exist_ok=True)
    labels = [column_label(m) for m in data.measures]
    set_labels = [column_label(m) for m in data.measures if m.NAME in SET_MEASURES]
    others = [column_label(m) for m in data.measures if m.NAME not in SET_MEASURES]
    lower = [label for m, label in zip(data.measures, labels) if not getattr(m, 'HIGHER_IS_BETTER', True)]
    lines = ['# FD evaluation report', '', f'Qrels: `{qrels_path}`; {len(data.runs)} runs; metrics: '
             + ', '.join(f'`{m}`' for m in labels) + '.' + (f' Lower is better for {", ".join(lower)}.' if lower else ''), '']

    table = evaluate_runs(data.runs, data.qrels, data.measures, data.encoder, verbose=verbose)
    lines += ['## Results', '', _table(table, out, 'results'), '']

    if len(table) >= 3:
        corr = correlations(table, labels)
        lines += ['## Correlations across systems', '',
                  'Kendall τ-b, Spearman and Pearson; lower-is-better metrics are negated first, so a positive '
                  'coefficient means agreement.', '']
        lines += [f'- {note}' for note in kendall_notes(table, data.measures)]
        lines += ['', _table(corr, out, 'correlations'), '']
        for fd in set_labels:
            for ref in others[:1]:
                name = f'scatter_{plots.slug(fd)}_vs_{plots.slug(ref)}'
                plots.scatter(table, ref, fd, out / 'figures' / name)
                lines += [f'![{fd} vs {ref}](figures/{name}.png)', '']

    with default_encoder(data.encoder):
        # the bootstrap's fast paths: FD, DO, HSA and per-query measures (FD∞, KID and k-NN P/R have none)
        boot_measures = [m for m in data.measures if m.NAME == 'FD' or m.NAME not in VECTOR_MEASURES]
        boot = bootstrap(data.runs, data.qrels, boot_measures, n_samples=samples, seed=seed, verbose=verbose)
        summary = boot.summary.assign(measure=[column_label(ir_measures.parse_measure(m)) for m in boot.summary['measure']])
        lines += ['## Bootstrap over queries', '', f'{samples} samples over {len(boot.queries)} queries (seed {seed}), '
                  '95% percentile intervals. Resampling repeats queries, and repeated documents shrink the fitted '
                  'covariance, so bootstrapped FD means sit above the full-set FD: compare systems by their '
                  'intervals, not by the distance to the full-set value.', '', _table(summary, out, 'bootstrap'), '']
        for measure in summary['measure'].unique():
            name = f'bootstrap_{plots.slug(measure)}'
            plots.bootstrap_intervals(summary, measure, out / 'figures' / name)
            lines += [f'![bootstrap {measure}](figures/{name}.png)', '']

        if len(data.runs) >= 2:
            pairs = compare_systems(data.runs, data.qrels, boot_measures, baseline=baseline, n_samples=samples, seed=seed,
                                    verbose=verbose, boot=boot)
            pairs = pairs.assign(measure=[column_label(ir_measures.parse_measure(m)) for m in pairs['measure']])
            pairs.to_csv(out / 'comparisons.csv', index=False)
            counts = (pairs.assign(significant=pairs['better'] != '').groupby('measure', sort=False)['significant']
                      .agg(comparisons='size', significant='sum').reset_index())
            what = f'each run against `{baseline}`' if baseline else 'every pair of runs'
            lines += ['## Paired comparisons', '', f'Paired bootstrap of the difference for {what}, from the samples above; '
                      "Holm's correction over each measure's comparisons, α = 0.05 (`comparisons.csv` has every row).", '',
                      _table(counts, out, 'comparisons_summary'), '']
            if baseline:
                lines += [pairs.to_markdown(index=False, floatfmt='.4f'), '']

        if len(data.runs) >= 3:
            # FDInf, KID and k-NN P/R are left out here: each costs tens of FD computations per run and qrels
            sparse = summarise(sparsify(data.runs, data.qrels, boot_measures, per_query=per_query, seeds=seeds,
                                       verbose=verbose))
            sparse = sparse.assign(measure=[column_label(ir_measures.parse_measure(m)) for m in sparse['measure']])
            plots.sparsification(sparse, out / 'figures' / 'sparsification')
            lines += ['## Sparsified judgments', '', f'Kendall τ between each metric with the full qrels and with at most n '
                      f'relevant documents per query (highest grade first, random within a grade; seeds {list(seeds)}).', '',
                      _table(sparse, out, 'sparsification'), '', '![sparsification](figures/sparsification.png)', '']
    path = out / 'report.md'
    path.write_text('\n'.join(lines))
    return path
