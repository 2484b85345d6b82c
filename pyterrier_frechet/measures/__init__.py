"""Measure definitions: what each measure is (parameters, docstring, citation, capabilities, resampling), declared once.

See :mod:`.base` for the capabilities every module asks a measure about, :mod:`.resampling` for how the bootstrap
re-weights one, and :mod:`.definitions` for the measures themselves. Importing this package registers them with
ir_measures' parser. ``__all__`` lists the measures, and only them: ``pyterrier_frechet`` re-exports it, so a new
measure is exported here, once.
"""
from .base import (HistogramMeasure, SetMeasure, VectorMeasure, column_label, higher_is_better, is_answer_measure,  # noqa: F401
                   is_set_measure, is_vector_measure, register_measure, registered_measures, resampling,
                   unregister_measure)
from .resampling import Resampling  # noqa: F401
from .definitions import CFD, DO, FD, FDInf, HSA, KID, KNNPrecision, KNNRecall, SpreadRatio
from .answers import AnswerCFD, AnswerFD, AnswerMeasure  # noqa: F401

__all__ = ['FD', 'CFD', 'SpreadRatio', 'FDInf', 'KID', 'KNNPrecision', 'KNNRecall', 'DO', 'HSA', 'AnswerFD', 'AnswerCFD']
