"""Opt-in CPU encoding through OpenVINO: ``Embedder(..., backend='openvino', precision='bf16')``.

The model's transformer is converted once with ``openvino.convert_model`` (no ONNX file, no ``optimum``: the
sentence-transformers ``backend='onnx'/'openvino'`` route needs ``optimum``, whose ONNX exporter pins transformers
4.x) and saved, uncompressed, under the cache root (``openvino/<model>-<hash of the model directory>/``); the
pooling and normalisation of the sentence-transformers pipeline are applied here, read from the model's own
configuration, so the vectors are the same function of the text as the torch backend's. Supported: a
sentence-transformers model made of ``Transformer`` + ``Pooling`` (mean, CLS or max) [+ ``Normalize``], or a plain
transformers encoder with ``pooling='mean'|'cls'``; anything else is refused before any work.

``precision='fp32'`` is OpenVINO's float32 inference (the same vectors as torch up to summation order);
``'bf16'`` runs the matrix products in bfloat16 on CPUs that have it (AVX512-BF16 or AMX), about twice the
throughput of torch on the project's machine with a per-document cosine to the float32 vectors ≥ 0.9999 (measured
by ``benchmarks/embedder_throughput.py``). The Embedder's cache identity includes the backend and precision, so
these vectors never mix with another backend's.
"""
import json
import logging
import os
import shutil
import warnings
from pathlib import Path
from typing import List, Optional

import numpy as np

from ..files import read_json, temporary_folder
from .identity import sha256_file

logger = logging.getLogger(__name__)

PRECISIONS = {'fp32': 'f32', 'bf16': 'bf16'}
_RECIPE = 2  # bump when the conversion changes: converted models of an older recipe are not reused
# (2: a manifest.json of the files' sha256, checked on every load)
_MANIFEST = 'manifest.json'


def _read_json(path: Path):
    return read_json(path, 'OpenVINO model file')


class Pipeline:
    """What the torch pipeline does around the transformer: pooling, normalisation, truncation, lower-casing."""

    def __init__(self, path: str, kind: str, pooling: str, normalize: bool, max_length: Optional[int]):
        root = Path(path)
        self.strip = self.lower = False
        if kind == 'sentence-transformers':
            modules = _read_json(root / 'modules.json')
            types = [m['type'].rsplit('.', 1)[-1] for m in modules]
            if types not in (['Transformer', 'Pooling'], ['Transformer', 'Pooling', 'Normalize']) or modules[0]['path']:
                raise ValueError(f"backend='openvino' supports sentence-transformers models made of Transformer + Pooling "
                                 f"(+ Normalize) with the transformer at the model's root; {path} has {types}. "
                                 "Use backend='torch'")
            config = _read_json(root / modules[1]['path'] / 'config.json')
            if 'pooling_mode' in config:  # sentence-transformers >= 6: one string
                modes = [str(config['pooling_mode'])]
            else:  # earlier versions: one boolean per mode
                modes = [m for m in ('cls_token', 'mean_tokens', 'max_tokens', 'mean_sqrt_len_tokens',
                                     'weightedmean_tokens', 'lasttoken') if config.get(f'pooling_mode_{m}')]
            names = {'cls_token': 'cls', 'mean_tokens': 'mean', 'max_tokens': 'max', 'cls': 'cls', 'mean': 'mean',
                     'max': 'max'}
            if len(modes) != 1 or modes[0] not in names:
                raise ValueError(f"backend='openvino' supports mean, CLS or max pooling; {path} pools with {modes}. "
                                 "Use backend='torch'")
            self.pooling = names[modes[0]]
            self.normalize = normalize or types[-1] == 'Normalize'
            st_config = root / 'sentence_bert_config.json'
            st = _read_json(st_config) if st_config.exists() else {}
            self.max_length = max_length or st.get('max_seq_length')
            self.lower = bool(st.get('do_lower_case', False))
            self.strip = True  # sentence-transformers' Transformer strips each text before tokenising
        else:
            self.pooling = 'cls' if pooling == 'cls' else 'mean'
            self.normalize = normalize
            self.max_length = max_length

    def pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == 'cls':
            vec = hidden[:, 0]
        elif self.pooling == 'max':
            vec = np.where(mask[..., None] > 0, hidden, -1e9).max(axis=1)
        else:
            m = mask[..., None].astype(np.float32)
            vec = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        if self.normalize:
            vec = vec / np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)
        return vec.astype(np.float32)


def check_supported(path: str, kind: str, pooling: str) -> None:
    """Raise ValueError, before any work, if openvino is not installed or the model's pipeline is not supported."""
    import importlib.util
    if importlib.util.find_spec('openvino') is None:
        from ..extras import EXTRAS, MissingExtra, install_hint
        raise MissingExtra(f"backend='openvino' needs the openvino package, which the [openvino] extra installs: "
                           f"{install_hint('openvino', EXTRAS['openvino'].values())}", name='openvino')
    Pipeline(path, kind, pooling, False, None)


class OpenVINOEncoder:
    """Encodes texts with a model directory's transformer compiled by OpenVINO for the CPU (see the module docstring).

    ``store``: the folder converted models are kept in (None: convert in memory on every load)."""

    def __init__(self, path: str, kind: str, model_hash: str, name: str, *, pooling: str = 'auto', normalize: bool = False,
                 max_length: Optional[int] = None, batch_size: int = 32, precision: str = 'fp32',
                 store: Optional[Path] = None):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
        check_supported(path, kind, pooling)
        import openvino
        self.path, self.kind, self.precision, self.batch_size = path, kind, precision, batch_size
        self.pipeline = Pipeline(path, kind, pooling, normalize, max_length)  # refuses unsupported models first
        from transformers import AutoTokenizer
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        if self.pipeline.max_length is None:
            from transformers import AutoConfig
            positions = getattr(AutoConfig.from_pretrained(path), 'max_position_embeddings', 512)
            self.pipeline.max_length = min(self.tokenizer.model_max_length, positions, 512)
        core = openvino.Core()
        if precision == 'bf16' and 'BF16' not in core.get_property('CPU', 'OPTIMIZATION_CAPABILITIES'):
            raise ValueError("precision='bf16' needs a CPU with bfloat16 instructions (AVX512-BF16 or AMX); this one "
                             f"offers {core.get_property('CPU', 'OPTIMIZATION_CAPABILITIES')}. Use precision='fp32'")
        model, folder = self._converted(openvino, model_hash, name, store)
        self.inputs = [port.get_any_name() for port in model.inputs]
        try:
            self.compiled = core.compile_model(model, 'CPU', {'INFERENCE_PRECISION_HINT': PRECISIONS[precision],
                                                              'PERFORMANCE_HINT': 'LATENCY'})
        except RuntimeError as ex:
            if folder is None:
                raise
            raise _damaged(folder, ex) from ex
        self.request = self.compiled.create_infer_request()
        logger.info('OpenVINO %s model of %s compiled for the CPU', precision, path)

    def _convert(self, openvino):
        import torch
        from transformers import AutoModel
        model = AutoModel.from_pretrained(self.path).eval()
        example = dict(self.tokenizer(['an example text', 'a second, longer example text'], padding=True,
                                      return_tensors='pt'))
        unknown = set(example) - {'input_ids', 'attention_mask', 'token_type_ids'}
        if unknown:
            raise ValueError(f"backend='openvino': the tokenizer of {self.path} gives inputs {sorted(unknown)} this "
                             "conversion does not pass on. Use backend='torch'")

        class Hidden(torch.nn.Module):  # keyword inputs (transformers' positional order varies by version)
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids=None):
                extra = {} if token_type_ids is None else {'token_type_ids': token_type_ids}
                return self.inner(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state

        # the inputs are named after the example's keys, with dynamic batch and length. Tracing warns where
        # transformers branches on shapes (padding length, causal flag); those branches take the same way for every
        # input of >= 2 tokens ([CLS] ... [SEP]), and the tests compare against torch at several lengths
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter('ignore', torch.jit.TracerWarning)
            return openvino.convert_model(Hidden(model), example_input=example)

    def _converted(self, openvino, model_hash: str, name: str, store: Optional[Path]):
        """The converted model and the folder it was read from (None: converted in memory)."""
        if store is None:
            return self._convert(openvino), None
        folder = Path(store) / f'{name}-{model_hash[:16]}-r{_RECIPE}'
        xml = folder / 'model.xml'
        if not xml.exists():
            Path(store).mkdir(parents=True, exist_ok=True)
            tmp = temporary_folder(store, '.convert-')
            try:
                openvino.save_model(self._convert(openvino), str(tmp / 'model.xml'), compress_to_fp16=False)
                files = sorted(p.name for p in tmp.iterdir() if p.is_file())
                (tmp / _MANIFEST).write_text(json.dumps({f: sha256_file(tmp / f) for f in files}, indent=1, sort_keys=True))
                try:
                    os.replace(tmp, folder)  # all or nothing; another process may have finished first
                except OSError:
                    if not xml.exists():
                        raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            logger.info('converted %s for OpenVINO into %s', self.path, folder)
        _check_manifest(folder)
        try:
            return openvino.Core().read_model(str(xml)), folder
        except RuntimeError as ex:
            raise _damaged(folder, ex) from ex

    def encode(self, texts: List[str]) -> np.ndarray:
        """float32 vectors of ``texts`` (batches of similar lengths, in the input order)."""
        texts = [t.strip() if self.pipeline.strip else t for t in texts]
        if self.pipeline.lower:
            texts = [t.lower() for t in texts]
        order = np.argsort([-len(t) for t in texts], kind='stable')
        out = None
        for start in range(0, len(texts), self.batch_size):
            idx = order[start:start + self.batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                 max_length=self.pipeline.max_length, return_tensors='np')
            hidden = self.request.infer([enc[k].astype(np.int64) for k in self.inputs])[self.compiled.output(0)]
            vec = self.pipeline.pool(hidden, enc['attention_mask'])
            if out is None:
                out = np.zeros((len(texts), vec.shape[1]), dtype=np.float32)
            out[idx] = vec
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)




def _damaged(folder: Path, reason) -> ValueError:
    return ValueError(f"backend='openvino': the converted model in {folder} is damaged ({reason}); delete that folder "
                      f'(rm -r {folder}) and it is converted again from the original model on the next run')


def _check_manifest(folder: Path) -> None:
    """Every file of a converted model as it was written (sha256 in its manifest): a truncated or altered file would
    otherwise fail inside OpenVINO with no path, or not fail at all."""
    try:
        manifest = read_json(folder / _MANIFEST, 'OpenVINO manifest')
        if not isinstance(manifest, dict) or not manifest:
            raise ValueError('an empty manifest')
    except (OSError, ValueError) as ex:
        raise _damaged(folder, f'{_MANIFEST} unreadable: {ex}') from ex
    present = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != _MANIFEST)
    if present != sorted(manifest):
        raise _damaged(folder, f'files {present}, not the {sorted(manifest)} written')
    for name, sha in manifest.items():
        if sha256_file(folder / name) != sha:
            raise _damaged(folder, f'{name} is not the file written (its sha256 differs)')
