"""The pipelines package through its example: examples/four_pipelines.py with tiny local models (no checkpoint can be
downloaded). Each pipeline module has its namesake file: test_retrieval.py, test_late_interaction.py, test_urr.py,
test_tiny.py."""
from pyterrier_frechet.pipelines.tiny import tiny_colbert, tiny_encoder, tiny_masked_lm


def test_four_pipelines_example_script(tmp_path):
    """examples/four_pipelines.py with local checkpoint paths (here: tiny random models, for the plumbing; the trained
    fallbacks are tested in test_models.py) prints the table, each row labelled with the checkpoint it used."""
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / 'examples' / 'four_pipelines.py'
    models = {k: f(tmp_path / k) for k, f in (('splade', tiny_masked_lm), ('colbert', tiny_colbert), ('dense', tiny_encoder))}
    out = subprocess.run([sys.executable, str(script), '--splade-model', models['splade'], '--colbert-model', models['colbert'],
                          '--dense-model', models['dense'], '--work-dir', str(tmp_path / 'work')],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0].split() == ['name', 'FD@1', 'FD@10', 'FD(urr=True)@10', 'nDCG@10', 'RR@10', 'mrt']
    assert [line.split()[0] for line in lines[1:5]] == ['BM25', 'SPLADE', 'ColBERT', 'Dense']
    assert '(splade)' in lines[2] and '(colbert)' in lines[3]  # the given paths were used
    assert 'documents it encoded in this run: 1400' in out.stdout
