"""Aggregate the per-(collection, encoder) parts into long CSVs and summary.md.

Kendall τ (scipy.stats.kendalltau, τ-b) between −FD and nDCG@10 across a part's systems (positive = agreement);
significant contradictions: FD variant and nDCG@10 both reject at p < 0.05 against BM25 in opposite directions;
the own-encoder effect; the total-variance ratio Tr Σ_ret / Tr Σ_rel.
"""
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

ALPHA = 0.05
ORDER = {'cranfield': 0, 'scifact': 1, 'dl19': 2, 'vaswani': 3}
ENC_ORDER = {'minilm': 0, 'mpnet': 1}
OWN_ENCODER = {'dense-minilm': 'minilm', 'bm25-minilm': 'minilm', 'dense-mpnet': 'mpnet', 'bm25-mpnet': 'mpnet'}
CLASSICAL = ('nDCG@10', 'RR@10')


def _read(parts: Path, suffix: str) -> pd.DataFrame:
    files = sorted(parts.glob(f'*.{suffix}.csv'))
    if not files:
        return pd.DataFrame()
    return pd.concat([pd.read_csv(f, dtype={'system': str}) for f in files], ignore_index=True)


def _sort(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(_c=df['collection'].map(ORDER), _e=df['encoder'].map(ENC_ORDER)).sort_values(
        ['_c', '_e'], kind='stable').drop(columns=['_c', '_e'])


def directions(systems: pd.DataFrame) -> pd.DataFrame:
    """Adds delta vs baseline, 'better' (in the measure's own orientation) and 'sig' (p < ALPHA)."""
    out = []
    for (coll, enc, measure), g in systems.groupby(['collection', 'encoder', 'measure'], sort=False):
        base = g.loc[g['system'] == g['baseline'].iloc[0], 'value']
        b = float(base.iloc[0]) if len(base) else np.nan
        g = g.assign(baseline_value=b, delta=g['value'] - b)
        hib = g['higher_is_better'].astype(bool)
        g['better'] = np.where(hib, g['delta'] > 0, g['delta'] < 0)
        g['sig'] = g['p_value'] < ALPHA
        out.append(g)
    return pd.concat(out, ignore_index=True)


def tau_table(systems: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (coll, enc), g in systems.groupby(['collection', 'encoder'], sort=False):
        wide = g.pivot(index='system', columns='measure', values='value')
        for m in [c for c in wide.columns if c not in CLASSICAL]:
            ok = wide[[m, 'nDCG@10']].dropna()
            tau, p = kendalltau(-ok[m], ok['nDCG@10']) if len(ok) >= 3 else (np.nan, np.nan)
            tau_rr, _ = kendalltau(-ok[m], wide.loc[ok.index, 'RR@10']) if len(ok) >= 3 else (np.nan, np.nan)
            rows.append({'collection': coll, 'encoder': enc, 'measure': m, 'n_systems': len(ok), 'tau_ndcg10': tau,
                         'tau_p': p, 'tau_rr10': tau_rr})
    return pd.DataFrame(rows)


def contradiction_table(systems: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (coll, enc), g in systems.groupby(['collection', 'encoder'], sort=False):
        g = g[g['system'] != g['baseline']]
        nd = g[g['measure'] == 'nDCG@10'].set_index('system')
        for m in [x for x in g['measure'].unique() if x not in CLASSICAL]:
            fd = g[g['measure'] == m].set_index('system')
            both = fd.index.intersection(nd.index)
            fd, n = fd.loc[both], nd.loc[both]
            sig = fd['sig'] & n['sig']
            contra = sig & (fd['better'] != n['better'])
            if fd['p_value'].isna().all():  # scored without tests (--values-only)
                rows.append({'collection': coll, 'encoder': enc, 'measure': m, 'n_compared': len(both), 'tested': False})
                continue
            rows.append({'tested': True,'collection': coll, 'encoder': enc, 'measure': m, 'n_compared': len(both),
                         'fd_sig': int(fd['sig'].sum()), 'ndcg_sig': int(n['sig'].sum()),
                         'both_sig_same_direction': int((sig & ~contra).sum()), 'contradictions': int(contra.sum()),
                         'contradicting_systems': '; '.join(contra[contra].index),
                         # weaker: FD rejects, nDCG@10 does not, and nDCG@10's point estimate goes the other way
                         'fd_only_opposite': int((fd['sig'] & ~n['sig'] & (fd['better'] != n['better'])).sum()),
                         'fd_only_opposite_systems': '; '.join(fd.index[fd['sig'] & ~n['sig'] & (fd['better'] != n['better'])])})
    return pd.DataFrame(rows)


def own_encoder_table(systems: pd.DataFrame) -> pd.DataFrame:
    rows = []
    fdm = systems[~systems['measure'].isin(CLASSICAL)]
    for (coll, measure), g in fdm.groupby(['collection', 'measure'], sort=False):
        encs = set(g['encoder'])
        if not {'minilm', 'mpnet'} <= encs:
            continue
        for slug, own in OWN_ENCODER.items():
            if slug not in set(g['system']):
                continue
            rec = {'collection': coll, 'measure': measure, 'system': slug, 'own_encoder': own}
            for enc in ('minilm', 'mpnet'):
                e = g[g['encoder'] == enc].set_index('system')
                if slug not in e.index or 'bm25' not in e.index:
                    continue
                d = e.loc[slug, 'value'] - e.loc['bm25', 'value']
                rec[f'delta_{enc}'] = d
                rec[f'rel_delta_{enc}'] = d / e.loc['bm25', 'value']
                rec[f'p_{enc}'] = e.loc[slug, 'p_value']
                rec[f'rank_{enc}'] = int(e['value'].rank(method='min').loc[slug])  # 1 = lowest FD = best
                rec['n_systems'] = len(e)
            if 'rel_delta_minilm' in rec and 'rel_delta_mpnet' in rec:
                other = 'mpnet' if own == 'minilm' else 'minilm'
                # negative: the system looks relatively better (lower FD vs BM25) under its own encoder
                rec['own_minus_other_rel_delta'] = rec[f'rel_delta_{own}'] - rec[f'rel_delta_{other}']
                rec['own_minus_other_rank'] = rec[f'rank_{own}'] - rec[f'rank_{other}']
            rows.append(rec)
    return pd.DataFrame(rows)


def _fmt(v, digits=4):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return '–'
    if isinstance(v, (int, np.integer)):
        return str(v)
    return f'{v:.{digits}g}' if abs(v) < 1e-3 and v != 0 else f'{v:.{digits}f}'


def _p(p):
    if p is None or np.isnan(p):
        return ''
    return f'{p:.1e}' if p < 1e-3 else f'{p:.3f}'


def _md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ['| ' + ' | '.join(map(str, cols)) + ' |', '|' + '|'.join('---' for _ in cols) + '|']
    for r in df.itertuples(index=False):
        lines.append('| ' + ' | '.join(str(x) for x in r) + ' |')
    return '\n'.join(lines)


def aggregate(results: Path, work: Path) -> None:
    results = Path(results)
    parts = results / 'parts'
    systems = _read(parts, 'systems')
    if systems.empty:
        return
    systems = _sort(directions(systems))
    variance = _sort(_read(parts, 'variance'))
    metas = [json.loads(p.read_text()) for p in sorted(parts.glob('*.meta.json'))]
    tau = _sort(tau_table(systems))
    contra = _sort(contradiction_table(systems))
    own = own_encoder_table(systems)
    systems.to_csv(results / 'systems_long.csv', index=False)
    variance.to_csv(results / 'variance_ratio.csv', index=False)
    tau.to_csv(results / 'kendall_tau.csv', index=False)
    contra.to_csv(results / 'contradictions.csv', index=False)
    own.to_csv(results / 'own_encoder.csv', index=False)
    build = []
    for coll_dir in sorted((Path(work) / 'runs').glob('*')):
        sp = coll_dir / 'status.json'
        if sp.exists():
            for slug, st in json.loads(sp.read_text()).items():
                build.append({'collection': coll_dir.name, 'system': slug, **{k: v for k, v in st.items() if k != 'traceback'}})
    build = pd.DataFrame(build)
    build.to_csv(results / 'build_status.csv', index=False)
    pd.DataFrame(metas).drop(columns=['warnings'], errors='ignore').to_csv(results / 'scoring_parts.csv', index=False)
    (results / 'summary.md').write_text(render(systems, variance, tau, contra, own, metas, build, results))


def render(systems, variance, tau, contra, own, metas, build, results) -> str:
    fd_measures = [m for m in systems['measure'].unique() if m not in CLASSICAL]
    out = ['# When do FD variants agree with nDCG@10? (collections × encoders)', '',
           'Generated by `python -m benchmarks.disagreement.study` (see `benchmarks/disagreement/README.md`). '
           'τ: Kendall τ-b (scipy) between −FD and nDCG@10 over the systems of a row (positive = agreement). '
           'Contradictions: systems where the FD variant and nDCG@10 both differ from BM25 at p < 0.05 '
           '(pt.Experiment `baseline=`: paired t-test for nDCG@10, the jackknife t-test for FD/CFD; unadjusted) '
           'in opposite directions. FD is lower-is-better, nDCG higher-is-better.', '']
    # 1. the headline table
    head = []
    for (coll, enc), g in tau.groupby(['collection', 'encoder'], sort=False):
        row = {'collection': coll, 'encoder': enc, 'systems': int(g['n_systems'].max())}
        for m in fd_measures:
            t = g[g['measure'] == m]
            row[f'τ {m}'] = _fmt(float(t['tau_ndcg10'].iloc[0]), 2) if len(t) else '–'
        c = contra[(contra['collection'] == coll) & (contra['encoder'] == enc)]
        for m in fd_measures:
            cc = c[c['measure'] == m]
            if len(cc) and not bool(cc['tested'].iloc[0]):
                row[f'contra. {m}'] = 'not tested'
            else:
                row[f'contra. {m}'] = (f"{int(cc['contradictions'].iloc[0])}/{int(cc['n_compared'].iloc[0])}" if len(cc) else '–')
        head.append(row)
    out += ['## Summary: τ with nDCG@10 and significant contradictions per FD variant', '',
            _md(pd.DataFrame(head)), '',
            '`contra. X` = contradictions / systems compared with BM25. '
            '`contradictions.csv` also counts the weaker case `fd_only_opposite`: the FD variant rejects, nDCG@10 does '
            'not, and nDCG@10\'s point estimate goes the other way (systems named). '
            'Where FD/CFD and nDCG@10 both reject, in the same direction, is in `contradictions.csv` '
            '(`both_sig_same_direction`), with how many rejections each made alone (`fd_sig`, `ndcg_sig`).', '']
    # significance counts
    sig = contra.copy()
    sig['cell'] = sig.apply(lambda r: (f"{int(r['fd_sig'])} / {int(r['ndcg_sig'])} / {int(r['both_sig_same_direction'])} / "
                                       f"{int(r['contradictions'])}") if r['tested'] else 'not tested', axis=1)
    wide = sig.pivot_table(index=['collection', 'encoder'], columns='measure', values='cell', aggfunc='first', sort=False).reset_index()
    out += ['### Rejections against BM25 at p < 0.05 (FD variant / nDCG@10 / both, same direction / both, opposite)', '',
            _md(wide.fillna('–')), '']
    # 2. scoring setup
    out += ['## Setup per part', '']
    mrows = []
    for m in sorted(metas, key=lambda m: (ORDER.get(m['collection'], 9), ENC_ORDER.get(m['encoder'], 9))):
        mrows.append({'collection': m['collection'], 'encoder': m['encoder'], 'rel': m['rel'], 'missing': m['missing'],
                      'FD rows': m.get('fd_rows', 'exact'), 'systems': m['systems'], 'queries (with relevant)': f"{m['queries_topics']} ({m['queries_with_relevant']})",
                      'pt.Experiment s': m['experiment_s'], 'variance s': m['variance_s'],
                      'term variants': m['term_variants'], 'scored': m['finished']})
    out += [_md(pd.DataFrame(mrows)), '']
    for m in metas:
        out.append(f"- {m['collection']}: rel={m['rel']}: {m['rel_why']}. Encoder `{m['encoder_repr']}`.")
    out += ['', "`FD rows` = `influence`: the FD variants of that part were scored as `FD(rows='influence')` — the same "
            'FD values (the rows\' mean is FD exactly), but the `baseline=` p-values come from each query\'s first-order '
            'influence (infinitesimal jackknife), a more conservative test than the exact leave-one-query-out rows '
            '(package docs: level 0.015–0.025 vs 0.040–0.050, less power), chosen because exact rows for Cranfield under '
            'mpnet (225 queries, d = 768) would have taken ~40 min on this machine. CFD has no influence rows and its exact '
            'leave-outs were the slow part there, so in such a part CFD is scored without a test (values and τ only). '
            'Contradiction counts from influence rows are not comparable one-to-one with the exact-row parts. '
            '`none (values only, no tests)`: scored without `baseline=` (`--values-only`).', '']
    warn = [(m['collection'], m['encoder'], w) for m in metas for w in m.get('warnings', [])]
    if warn:
        out += ['Warnings raised while scoring (first 300 characters each):', '']
        out += [f'- {c} / {e}: `{w}`' for c, e, w in warn]
        out.append('')
    # 3. per-system tables
    out += ['## Per-system tables', '',
            'Each cell: value, then the p-value against BM25 and the direction in the measure\'s own orientation '
            '(`+` better than BM25, `−` worse). `Tr ratio` = Tr Σ_ret / Tr Σ_rel of the top-10 vectors vs the relevant '
            'set, under that encoder (< 1: the retrieved set is narrower than the relevant set).', '']
    for (coll, enc), g in systems.groupby(['collection', 'encoder'], sort=False):
        measures = ['nDCG@10', 'RR@10'] + [m for m in fd_measures if m in set(g['measure'])]
        rows = []
        labels = dict(zip(g['system'], g['label']))
        var = variance[(variance['collection'] == coll) & (variance['encoder'] == enc)].set_index('system')
        for slug in dict.fromkeys(g['system']):
            r = {'system': labels[slug]}
            for m in measures:
                x = g[(g['system'] == slug) & (g['measure'] == m)].iloc[0]
                cell = _fmt(x['value'])
                if not np.isnan(x['p_value']):
                    cell += f" ({_p(x['p_value'])}{'+' if x['better'] else '−'}{'*' if x['sig'] else ''})"
                r[m] = cell
            r['Tr ratio'] = _fmt(float(var.loc[slug, 'ratio']), 3) if slug in var.index else '–'
            r['Tr ratio within q'] = (_fmt(float(var.loc[slug, 'ratio_within']), 3)
                                      if slug in var.index and 'ratio_within' in var.columns else '–')
            rows.append(r)
        out += [f'### {coll} / FD encoder {enc}', '', _md(pd.DataFrame(rows)), '']
    # 4. own encoder
    if not own.empty:
        out += ['## Own-encoder effect', '',
                'ΔFD = FD(system) − FD(BM25) under each FD encoder; relative Δ = ΔFD / FD(BM25) (FD scales differ '
                'between encoders, so compare relative Δ and ranks); rank among the collection\'s systems by that FD '
                '(1 = lowest). `own − other` < 0: the system looks better, relative to BM25, when FD uses its own '
                'retrieval encoder.', '']
        o = own.copy()
        keep = ['collection', 'measure', 'system', 'own_encoder', 'delta_minilm', 'rel_delta_minilm', 'rank_minilm',
                'delta_mpnet', 'rel_delta_mpnet', 'rank_mpnet', 'own_minus_other_rel_delta', 'own_minus_other_rank']
        o = o[[k for k in keep if k in o.columns]]
        for c in ('delta_minilm', 'rel_delta_minilm', 'delta_mpnet', 'rel_delta_mpnet', 'own_minus_other_rel_delta'):
            if c in o.columns:
                o[c] = o[c].map(lambda v: _fmt(float(v), 3))
        out += [_md(o), '']
        if 'own_minus_other_rel_delta' in own.columns:
            s = own.dropna(subset=['own_minus_other_rel_delta'])
            agg = s.groupby('measure', sort=False).agg(
                cases=('own_minus_other_rel_delta', 'size'),
                own_better=('own_minus_other_rel_delta', lambda v: int((v < 0).sum())),
                median_own_minus_other=('own_minus_other_rel_delta', 'median')).reset_index()
            agg['median_own_minus_other'] = agg['median_own_minus_other'].map(lambda v: _fmt(float(v), 3))
            out += ['Per FD variant: in how many (collection, system) cases the system\'s relative ΔFD is lower under its own '
                    'encoder:', '', _md(agg), '']
    # 5. variance ratio overview
    if not variance.empty:
        vals = [c for c in ('ratio', 'ratio_within') if c in variance.columns]
        v = variance.pivot_table(index=['collection', 'system'], columns='encoder', values=vals, sort=False)
        v.columns = [f'{a} {b}' for a, b in v.columns]
        v = v.reset_index()
        for c in v.columns[2:]:
            v[c] = v[c].map(lambda x: _fmt(float(x), 3))
        trows = []
        nd = systems[systems['measure'] == 'nDCG@10']
        for (coll, enc), g in variance.groupby(['collection', 'encoder'], sort=False):
            x = g.set_index('system').join(nd[(nd['collection'] == coll) & (nd['encoder'] == enc)].set_index('system')['value'])
            rec = {'collection': coll, 'encoder': enc, 'systems': len(x)}
            for c in vals:
                ok = x[[c, 'value']].dropna()
                rec[f'τ(−{c}, nDCG@10)'] = _fmt(float(kendalltau(-ok[c], ok['value'])[0]), 2) if len(ok) >= 3 else '–'
            trows.append(rec)
        out += ['## Tr Σ_ret / Tr Σ_rel per system', '',
                'Kendall τ between the negated ratio and nDCG@10 over the systems (positive: the narrower the retrieved '
                'set relative to the relevant set, the higher nDCG@10):', '', _md(pd.DataFrame(trows)), '',
                '`ratio`: pooled over the query set (the two sets FD@10 fits); `ratio_within`: Σ_q Tr Σ_ret,q / '
                'Σ_q Tr Σ_rel,q over queries with ≥ 2 relevant documents (per part, `queries_within` in '
                '`variance_ratio.csv`). < 1: narrower than the relevant set.', '', _md(v.fillna('–')), '']
    # 6. build status
    if not build.empty:
        b = build.copy()
        cols = [c for c in ('collection', 'system', 'ok', 'setup_s', 'retrieve_s', 'seconds', 'queries', 'rows', 'needed',
                            'with_text', 'encoded_now', 'error', 'finished') if c in b.columns]
        b = b[cols].fillna('')
        if 'error' in b.columns:
            b['error'] = b['error'].map(lambda s: str(s)[:200])
        out += ['## Runs built (timings on the shared 2-core machine, one thread)', '', _md(b), '']
    findings = Path(__file__).with_name('findings.md')
    if findings.exists():
        out += [findings.read_text().strip(), '']
    return '\n'.join(out) + '\n'
