"""Issue 25: a model-based (hypothesis stateful) test of the Embedder and its EmbeddingCache.

Random sequences of look-ups and puts over two corpora that share docnos, edited texts, duplicate docnos, precomputed
vectors stored without text, two models and process restarts (every cache object closed and opened again) are run
against a plain dict model of what each call must return. The encoder is the Embedder itself with its ``encode``
replaced by a deterministic function of (model folder, text), so every expected vector is known exactly and every
encoding can be counted.

The seeded subset (10 sequences of 20 steps) runs with the suite; ``PYTERRIER_FRECHET_THOROUGH=1`` (or
``-m slow``) runs 100 sequences of 25 steps (>= 2,000 steps) and prints how many steps ran."""
import hashlib
import os
import shutil
import tempfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

import pyterrier_frechet as pf
from pyterrier_frechet.pipelines.tiny import tiny_encoder

DOCNOS = [f'd{i}' for i in range(6)]
TEXTS = ['wing lift', 'shock layer', 'heat flow', 'mach number', 'boundary layer', 'nozzle flow', 'lift drag ratio']
DIM = 4
THOROUGH = bool(os.environ.get('PYTERRIER_FRECHET_THOROUGH'))


def fake_vector(model: str, text: str) -> np.ndarray:
    """The fake encoder: 4 float32 values from sha256(model | text)."""
    raw = np.frombuffer(hashlib.sha256(f'{model}|{text}'.encode()).digest()[:4 * DIM], dtype='<u4')
    return (raw / 2.0 ** 32 - 0.5).astype(np.float32)


class FakeEmbedder(pf.Embedder):
    def encode(self, texts):
        tag = os.path.basename(self.path)
        return np.stack([fake_vector(tag, t) for t in texts]) if len(texts) else np.zeros((0, DIM), np.float32)


MODELS = {}
STEPS = {'steps': 0, 'sequences': 0, 'errors_checked': 0}


class CacheMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.root = tempfile.mkdtemp(prefix='cache-sm-')
        # the model of the world: the two corpora, and what each model's cache holds per docno:
        # {(model, docno): {text or None: vector}} (None: stored without text; the first put of a key is kept)
        self.corpora = {'c1': {d: TEXTS[i] for i, d in enumerate(DOCNOS)},
                        'c2': {d: TEXTS[(i + 3) % len(TEXTS)] for i, d in enumerate(DOCNOS[:4])}}
        self.stored = {}
        self.embedders = {}
        STEPS['sequences'] += 1

    def teardown(self):
        self._close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _close(self):
        for emb in self.embedders.values():
            emb.cache.close()
        self.embedders = {}

    def _emb(self, model, texts=None):
        """The long-lived docno-only Embedder of ``model``, or a fresh one over a text source."""
        if texts is not None:
            return FakeEmbedder(MODELS[model], texts=dict(texts), cache_dir=self.root, verbose=False)
        if model not in self.embedders:
            self.embedders[model] = FakeEmbedder(MODELS[model], cache_dir=self.root, verbose=False)
        return self.embedders[model]

    def _expect_encoded(self, model, pairs):
        """How many (docno, text) pairs a call must encode: those not stored yet (each once)."""
        return len({(d, t) for d, t in pairs if t not in self.stored.get((model, d), {})})

    def _record(self, model, pairs):
        for d, t in pairs:
            self.stored.setdefault((model, d), {}).setdefault(t, fake_vector(model, t))

    def _step(self):
        STEPS['steps'] += 1

    @rule(model=st.sampled_from(['m0', 'm1']), corpus=st.sampled_from(['c1', 'c2']),
          docnos=st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=8))
    def transform_with_text_column(self, model, corpus, docnos):
        self._step()
        texts = self.corpora[corpus]
        docnos = [d for d in docnos if d in texts] or [next(iter(texts))]
        emb = self._emb(model)
        before = emb.n_encoded
        out = emb(pd.DataFrame({'docno': docnos, 'text': [texts[d] for d in docnos]}))
        pairs = [(d, texts[d]) for d in docnos]
        assert emb.n_encoded - before == self._expect_encoded(model, pairs)
        self._record(model, pairs)
        expected = np.stack([fake_vector(model, texts[d]) for d in docnos])
        np.testing.assert_array_equal(np.stack(out['doc_vec']), expected)

    @rule(model=st.sampled_from(['m0', 'm1']), corpus=st.sampled_from(['c1', 'c2']),
          docnos=st.lists(st.sampled_from(DOCNOS + ['zz']), min_size=1, max_size=8))
    def lookup_through_a_text_source(self, model, corpus, docnos):
        """S2: a docno the source lacks has no vector, whatever another corpus left in the cache."""
        self._step()
        texts = self.corpora[corpus]
        emb = self._emb(model, texts)
        try:
            vecs, found = emb.lookup(docnos)
            pairs = [(d, texts[d]) for d in docnos if d in texts]
            assert emb.n_encoded == self._expect_encoded(model, pairs)
            self._record(model, pairs)
            assert found.tolist() == [d in texts for d in docnos]
            for d, v, f in zip(docnos, vecs, found):
                if f:
                    np.testing.assert_array_equal(v, fake_vector(model, texts[d]))
                else:
                    assert np.isnan(v).all()
        finally:
            emb.cache.close()

    @rule(model=st.sampled_from(['m0', 'm1']), docnos=st.lists(st.sampled_from(DOCNOS + ['zz']), min_size=1, max_size=6))
    def lookup_by_docno_alone(self, model, docnos):
        """No text source: the one vector stored per docno; several (texts, or without and with text): refused."""
        self._step()
        emb = self._emb(model)
        entries = {d: self.stored.get((model, d), {}) for d in set(docnos)}
        several = sorted(d for d, e in entries.items() if len(e) > 1)
        if several:
            mixed = [d for d in several if None in entries[d]]
            match = 'stored once without their text' if mixed else 'several different texts'
            with pytest.raises(ValueError, match=match):
                emb.lookup(docnos)
            STEPS['errors_checked'] += 1
            return
        before = emb.n_encoded
        vecs, found = emb.lookup(docnos)
        assert emb.n_encoded == before  # nothing to encode without texts
        for d, v, f in zip(docnos, vecs, found):
            assert f == bool(entries[d])
            if f:
                np.testing.assert_array_equal(v, next(iter(entries[d].values())))

    @rule(model=st.sampled_from(['m0', 'm1']), docnos=st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=3, unique=True),
          seed=st.integers(0, 2 ** 16))
    def put_precomputed(self, model, docnos, seed):
        self._step()
        vecs = np.random.default_rng(seed).normal(size=(len(docnos), DIM)).astype(np.float32)
        self._emb(model).cache.put(docnos, vecs)
        for d, v in zip(docnos, vecs):
            self.stored.setdefault((model, d), {}).setdefault(None, v)

    @rule(model=st.sampled_from(['m0', 'm1']), n=st.integers(1, 3), wrong=st.sampled_from([DIM + 1, DIM - 1]))
    def put_refused(self, model, n, wrong):
        """S5: mismatched lengths or another dimension: ValueError, nothing stored."""
        self._step()
        cache = self._emb(model).cache
        size = len(cache)
        with pytest.raises(ValueError):
            cache.put(DOCNOS[:n], np.ones((n + 1, DIM)))
        if any(k[0] == model for k in self.stored):  # the dimension is recorded once something was stored
            with pytest.raises(ValueError, match='-d vectors, but this cache holds'):
                cache.put(DOCNOS[:n], np.ones((n, wrong)))
        assert len(cache) == size
        STEPS['errors_checked'] += 1

    @rule(corpus=st.sampled_from(['c1', 'c2']), docno=st.sampled_from(DOCNOS), text=st.sampled_from(TEXTS))
    def edit_text(self, corpus, docno, text):
        self._step()
        self.corpora[corpus][docno] = text

    @rule(model=st.sampled_from(['m0', 'm1']), docno=st.sampled_from(DOCNOS), a=st.sampled_from(TEXTS),
          b=st.sampled_from(TEXTS))
    def duplicate_docno_in_one_frame(self, model, docno, a, b):
        """S4: one docno twice with two texts is refused (nothing encoded); with one text, each row its vector."""
        self._step()
        emb = self._emb(model)
        frame = pd.DataFrame({'docno': [docno, 'd0' if docno != 'd0' else 'd1', docno], 'text': [a, 'wing lift', b]})
        before = emb.n_encoded
        if a != b:
            with pytest.raises(ValueError, match='appear in several rows with different texts'):
                emb(frame)
            assert emb.n_encoded == before
            STEPS['errors_checked'] += 1
            return
        out = emb(frame)
        pairs = [(docno, a), (frame.docno[1], 'wing lift')]
        assert emb.n_encoded - before == self._expect_encoded(model, pairs)
        self._record(model, pairs)
        np.testing.assert_array_equal(np.stack(out.doc_vec),
                                      np.stack([fake_vector(model, t) for t in frame.text]))

    @rule()
    def restart(self):
        """A new process: every cache object closed and opened again."""
        self._step()
        self._close()

    @invariant()
    def sizes_match(self):
        for model in ('m0', 'm1'):
            if model in self.embedders:
                expected = sum(len(v) for (m, _), v in self.stored.items() if m == model)
                assert len(self.embedders[model].cache) == expected


@pytest.fixture(scope='module')
def fake_models(tmp_path_factory):
    root = tmp_path_factory.mktemp('sm-models')
    MODELS.update(m0=tiny_encoder(root / 'm0', seed=0), m1=tiny_encoder(root / 'm1', seed=1))
    yield MODELS
    MODELS.clear()


def _run(examples, steps):
    STEPS.update(steps=0, sequences=0, errors_checked=0)
    run_state_machine_as_test(CacheMachine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=True,
        suppress_health_check=list(HealthCheck)))
    return dict(STEPS)


@pytest.mark.skipif(THOROUGH, reason='the thorough run below replaces the seeded subset')
def test_cache_against_a_dict_model_seeded(fake_models):
    done = _run(examples=10, steps=20)
    print(f'stateful cache test: {done}')
    assert done['steps'] >= 150, done


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason='set PYTERRIER_FRECHET_THOROUGH=1 for >= 2,000 steps')
def test_cache_against_a_dict_model_thorough(fake_models):
    done = _run(examples=100, steps=25)
    print(f'stateful cache test: {done}')
    assert done['steps'] >= 2000, done
