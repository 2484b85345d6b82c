"""Measure definitions: what each measure is (parameters, docstring, citation, capabilities), declared once.

See :mod:`.base` for the capabilities every module asks a measure about and :mod:`.definitions` for the
measures themselves. Importing this package registers them with ir_measures' parser.
"""
from .base import (HistogramMeasure, SetMeasure, VectorMeasure, bootstrap_path, column_label, higher_is_better,
                   is_answer_measure, is_set_measure, is_vector_measure, register_measure)
from .definitions import CFD, DO, FD, FDInf, HSA, KID, KNNPrecision, KNNRecall
from .answers import AnswerCFD, AnswerFD, AnswerMeasure

__all__ = ['FD', 'CFD', 'FDInf', 'KID', 'KNNPrecision', 'KNNRecall', 'DO', 'HSA', 'SetMeasure', 'VectorMeasure',
           'HistogramMeasure', 'register_measure', 'is_set_measure', 'is_vector_measure', 'bootstrap_path',
           'higher_is_better', 'column_label', 'AnswerFD', 'AnswerCFD', 'AnswerMeasure', 'is_answer_measure']
