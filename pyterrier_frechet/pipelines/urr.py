"""``URRFilter``: keep the first k *unjudged* documents of each ranking (FD paper, §6)."""
import numpy as np
import pandas as pd
import pyterrier as pt

from ..evaluation.frames import DOCNO, LABEL, QID, SCORE
from ..evaluation.selection import Judgments, RankedRun


class URRFilter(pt.Transformer):
    """Drops every document judged for its query (any label in ``qrels``), keeps the first ``k``
    unjudged documents of each query (score descending, ties by docno descending as in trec_eval),
    and re-ranks them from 0.

    ``FD(urr=True)@k`` applies the same selection inside the measure; this transformer makes it a
    pipeline stage, e.g. ``bm25 >> URRFilter(qrels, 10)`` to look at or save the URR documents.
    """

    def __init__(self, qrels: pd.DataFrame, k: int = 10):
        pt.validate.columns(qrels, includes=['qid', 'docno'])
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f'URRFilter: k must be a positive integer, got {k!r}')
        self.judged = qrels[['qid', 'docno']].astype(str).drop_duplicates()
        self.judgments = Judgments(pd.DataFrame({QID: self.judged['qid'].to_numpy(), DOCNO: self.judged['docno'].to_numpy(),
                                                 LABEL: np.zeros(len(self.judged), dtype=np.int64)}))  # coded once
        self.k = k

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.result_frame(inp, extra_columns=['score'])
        if len(inp) == 0:
            return inp.assign(rank=pd.Series([], dtype='int64'))
        typed = pd.DataFrame({QID: inp['qid'].astype(str).to_numpy(), DOCNO: inp['docno'].astype(str).to_numpy(),
                              SCORE: inp['score'].to_numpy()})
        ranked = RankedRun(typed, self.judgments, every_query=True)  # a query with no judgment keeps its ranking
        out = inp.iloc[ranked.rows[ranked.select(self.k, urr=True)]]
        out = out.assign(rank=out.groupby('qid', sort=False).cumcount().astype('int64'))
        return out.reset_index(drop=True)

    def __repr__(self):
        return f'URRFilter(<{len(self.judged)} judged pairs>, k={self.k})'
