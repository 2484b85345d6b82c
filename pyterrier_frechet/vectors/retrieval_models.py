"""Which models the package's retrieval pipelines score with, in this process — so that FD can say when its encoder is
one of them.

FD measures the retrieved documents with an encoder's eyes. When that encoder is the model a compared pipeline
retrieves or re-ranks with (``pf.pipelines.dense(collection, embedder, ...)`` scored by ``FD(encoder=embedder)``), the
measure and one system share a model: that system's retrieved set is, by construction, a neighbourhood of the query in
the very space FD compares in. The pipelines record the model they were built with (:func:`note_use`: its name and
the hash of its weights, the model's identity whatever its cache or texts); the evaluation asks
:func:`own_encoder_note` of each FD measure's encoder and warns once per model and process. The second opinion is the
same measures under a second encoder in the same call (pt_docs "When FD and nDCG disagree").
"""
import threading
import warnings
from typing import Dict, List, Optional, Tuple

_LOCK = threading.Lock()
#: model weights' hash → {pipeline: model name}
_USES: Dict[str, Dict[str, str]] = {}
_WARNED: set = set()


def note_use(model_hash: str, model_name: str, pipeline: str) -> None:
    """Record that ``pipeline`` (e.g. ``'pipelines.dense'``) scores with the model of weights hash ``model_hash``."""
    with _LOCK:
        _USES.setdefault(model_hash, {})[pipeline] = model_name


def model_of(encoder) -> Optional[Tuple[str, str]]:
    """(weights hash, model name) of the model ``encoder`` embeds with: an :class:`~.embedder.Embedder`, or one inside
    a composed PyTerrier pipeline (``TextLookup(...) >> Embedder()``); None for anything else (precomputed vectors say
    nothing of their model)."""
    identity = getattr(encoder, 'identity', None)
    if isinstance(identity, dict) and 'hash' in identity:
        return identity['hash'], str(identity.get('name', '?'))
    for part in getattr(encoder, '_transformers', ()) or ():  # PyTerrier's Compose keeps its stages here
        found = model_of(part)
        if found is not None:
            return found
    return None


def uses_of(encoder) -> List[str]:
    """The pipelines of this process that score with ``encoder``'s model."""
    model = model_of(encoder)
    with _LOCK:
        return sorted(_USES.get(model[0], {})) if model is not None else []


def own_encoder_note(label: str, encoder) -> Optional[str]:
    """The note that ``label``'s encoder is the model of pipelines built in this process, or None; once per model and
    process (None after the first)."""
    model = model_of(encoder)
    uses = uses_of(encoder)
    if not uses:
        return None
    with _LOCK:
        if model[0] in _WARNED:
            return None
        _WARNED.add(model[0])
    return (f'{label}: its encoder ({model[1]}) is the model {", ".join(uses)} retrieve(s) with in this session, so FD '
            'measures those systems in their own embedding space (a retriever returning the query\'s nearest '
            'neighbours gets a retrieved set narrower than the relevant set there). For a second opinion, add the same '
            'FD measures under another encoder to the same call, e.g. FD(encoder=pf.Embedder(pf.models.fetch('
            '\'all-mpnet-base-v2\')))@10, and report the verdicts that hold under both (pt_docs "When FD and nDCG disagree")')


def warn_own_encoder(label: str, encoder) -> None:
    """Warn :func:`own_encoder_note` where there is one."""
    note = own_encoder_note(label, encoder)
    if note:
        warnings.warn(note, UserWarning, stacklevel=3)


def forget() -> None:
    """Forget every recorded use and warning (tests)."""
    with _LOCK:
        _USES.clear()
        _WARNED.clear()


__all__ = ['forget', 'model_of', 'note_use', 'own_encoder_note', 'uses_of', 'warn_own_encoder']
