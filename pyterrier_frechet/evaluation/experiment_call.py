"""What the ``pt.Experiment`` call an evaluation runs under will do with the per-query rows — the one place the package
reads its callers' frames (:func:`caller`, one walk in one function), and what it decides: whether the rows are formed
at all (:func:`rows_are_read`), whether a paired test reads them (:func:`paired_test_is_run`), saying a note once per
call (:func:`warn_once_per_experiment`), and — read by the provider — two refusals (a batched ``pt.Experiment``;
PyTerrier's column names beside other providers' measures).

Why a stack walk (docs/state.md, "Stack inspection"): ir_measures hands an evaluator the run only, never what its
caller will do with the rows, and PyTerrier exposes no hook that says it (what it would need: ``pt.Experiment`` passing
its ``baseline``/``perquery``/``save_dir`` to the evaluator, e.g. as ir_measures evaluator options). The walk reads
``baseline``, ``perquery``, ``save_dir`` and ``renderer`` of the frame of ``Experiment`` in a file under
``pyterrier/_evaluation/`` (pinned by ``test_measure::test_the_private_names_read_on_the_stack_exist``) and fails open:
if the names move, the rows are formed and the notes said on every call, as without it (slower, never different)."""
import os
import sys
import warnings
import weakref
from typing import NamedTuple, Optional

#: The messages already said, per pt.Experiment call (keyed by its renderer, an object PyTerrier makes for each call
#: and drops after it; weakly held, so an entry ends with its call).
_SAID: 'weakref.WeakKeyDictionary' = weakref.WeakKeyDictionary()


def warn_once_per_experiment(message: str) -> None:
    """Warn ``message`` once per ``pt.Experiment`` call: PyTerrier evaluates each system in its own ir_measures call
    (an evaluator each, 19 for DL19's runs) and wraps them so that Python's own once-per-place filter shows one
    message again for every system. Outside pt.Experiment, or where its per-call object cannot be found (read on the
    one walk of :func:`caller`; it only decides whether to repeat a warning), every call warns."""
    local = caller().experiment
    call = local.get('renderer') if local is not None else None
    try:
        said = _SAID.setdefault(call, set()) if call is not None else None
    except TypeError:  # not weakly referable: say it every time
        said = None
    if said is not None:
        if message in said:
            return
        said.add(message)
    warnings.warn(message, UserWarning, stacklevel=3)


def paired_test_is_run(found: Optional['Caller'] = None) -> bool:
    """Whether the rows feed a paired test of PyTerrier: True inside ``pt.Experiment`` with ``baseline=`` (or one
    whose parameters cannot be read: fails towards the warning), False inside one without and outside
    ``pt.Experiment`` (``ir_measures.iter_calc``'s caller decides what to do with the rows; pt_docs/experiment.rst).
    Reads the frame :func:`rows_are_read` reads (``found``: a :func:`caller` the caller already made)."""
    local = (found or caller()).experiment
    return local is not None and local.get('baseline', True) is not None


class Caller(NamedTuple):
    """What the one walk up the stack (:func:`caller`) found: the locals of PyTerrier's ``Experiment`` frame (None
    outside ``pt.Experiment``), the ``batch_size`` of PyTerrier's evaluation frame (None unless a batched
    evaluation), and from the nearest frame of ir_measures' fallback either the measures it was asked for
    (``FallbackProvider._evaluator``) or how many evaluators it chains (``FallbackEvaluator._iter_calc``)."""
    experiment: Optional[dict]
    batch_size: Optional[int]
    fallback_measures: Optional[list]
    fallback_evaluators: Optional[int]
    #: the system being evaluated: its name in ``pt.Experiment(names=...)`` (else its position, ``'system 2'``);
    #: None outside pt.Experiment — for refusals to say which system's run they are about
    system: Optional[str] = None


def caller() -> Caller:
    """The package's one walk into its callers' frames (docs/state.md, "Stack inspection"), read by every check that
    needs it: :func:`rows_are_read`, :func:`paired_test_is_run`, :func:`warn_once_per_experiment`, and the provider's
    refusals (a batched ``pt.Experiment``; PyTerrier column names beside other providers' measures). It reads

    - PyTerrier's ``Experiment`` frame (its function, in a file under ``pyterrier/_evaluation/``): its locals;
    - a frame in a file under ``pyterrier/_evaluation/`` with a non-None local ``batch_size`` (the parameter of
      PyTerrier's private ``_run_and_evaluate``);
    - the nearest of ir_measures' ``FallbackProvider._evaluator`` (its local ``orig_measures``) or
      ``FallbackEvaluator._iter_calc`` (the length of ``self.evaluators``);
    - the nearest PyTerrier evaluation frame with an integer local ``sysid`` (the system's position; its name from
      ``Experiment``'s ``names``), for a refusal to name the system.

    Every name is pinned by ``test_measure::test_the_private_names_read_on_the_stack_exist``; each check fails open
    (nothing found reads as "not there")."""
    marker = f'{os.sep}pyterrier{os.sep}_evaluation{os.sep}'
    experiment, batch_size, fallback, sysid = None, None, None, None
    frame = sys._getframe(1)
    while frame is not None:
        code, local = frame.f_code, frame.f_locals
        if marker in code.co_filename:
            if experiment is None and code.co_name == 'Experiment':
                experiment = local
            if batch_size is None and local.get('batch_size') is not None:
                batch_size = local['batch_size']
            if sysid is None and isinstance(local.get('sysid'), int):
                sysid = local['sysid']
        elif fallback is None:
            if code.co_name == '_evaluator' and 'orig_measures' in local:  # FallbackProvider._evaluator
                fallback = (list(local['orig_measures']), None)
            elif code.co_name == '_iter_calc' and hasattr(local.get('self'), 'evaluators'):
                fallback = (None, len(local['self'].evaluators))
        frame = frame.f_back
    system = None
    if sysid is not None:
        names = (experiment or {}).get('names')
        system = repr(names[sysid]) if isinstance(names, (list, tuple)) and 0 <= sysid < len(names) else f'system {sysid}'
    return Caller(experiment, batch_size, *(fallback or (None, None)), system)


def rows_are_read(found: Optional['Caller'] = None) -> bool:
    """Whether anything will read the per-query rows of :meth:`SetEvaluator.iter_calc` beyond their mean: False only
    under ``pt.Experiment`` without ``baseline=``, ``perquery=`` and ``save_dir=``, which averages the rows into its
    table and drops them — the mean of FD's rows is FD itself, so each query's row is then FD, exactly the same
    table, without the leave-one-query-out FDs the rows cost (43 eigenvalue solves per run and measure on DL19).
    Anything else (``baseline=``, whose paired test reads them; ``perquery``; ``save_dir``, which writes
    ``perquery.csv``; ``ir_measures.iter_calc`` and every other caller) gets the centred pseudo-values.

    Stack inspection, and why (docs/state.md): ir_measures hands the evaluator the run only, never what its caller
    will do with the rows. The check reads the frame of PyTerrier's ``Experiment`` (file under
    ``pyterrier/_evaluation/``) and its parameters ``baseline``, ``perquery`` and ``save_dir`` (pinned by
    ``test_measure::test_the_private_names_read_on_the_stack_exist``); it fails open: if they move, the rows are
    formed, as before (slower, never different)."""
    local = (found or caller()).experiment  # found: a caller() the caller already made
    if local is None or not all(name in local for name in ('baseline', 'perquery', 'save_dir')):
        return True
    return local['baseline'] is not None or local['perquery'] is not False or local['save_dir'] is not None


__all__ = ['Caller', 'caller', 'paired_test_is_run', 'rows_are_read', 'warn_once_per_experiment']
