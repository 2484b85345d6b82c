"""Progress output of the libraries the package drives, silenced where the caller asked for quiet (``verbose=False``,
``--quiet``): the package's own bars take ``disable=not verbose``; these are the others'."""
import functools
from contextlib import contextmanager

import pyterrier as pt


@contextmanager
def quiet_progress(quiet: bool = True):
    """While ``quiet``, no progress bar of the libraries the package drives: pyterrier-dr's re-ranker calls
    ``pt.tqdm`` without a switch, transformers draws one while loading weights. Restored on exit (not thread-safe:
    ``pt.tqdm`` is a module attribute; the demo and a model load run on one thread)."""
    if not quiet:
        yield
        return
    import transformers
    bars = transformers.utils.logging.is_progress_bar_enabled()
    original = pt.tqdm
    pt.tqdm = functools.partial(original, disable=True)
    transformers.utils.logging.disable_progress_bar()
    try:
        yield
    finally:
        pt.tqdm = original
        if bars:
            transformers.utils.logging.enable_progress_bar()


__all__ = ['quiet_progress']
