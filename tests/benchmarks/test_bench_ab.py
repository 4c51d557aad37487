"""benchmarks/bench_ab.py's argument handling (no model is built)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_ab  # noqa: E402


class _Stop(Exception):
    pass


@pytest.mark.parametrize("model,size", [("inceptionv3", "299"), ("resnet18_v1", "224")])
def test_each_model_is_built_at_its_own_input_size(monkeypatch, tmp_path, model, size):
    """Inception-v3 was built at 224x224 unless --size 299 was given (MXNet refused: its 8x8
    pooling window exceeded the 5x5 feature map)."""
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        raise _Stop

    monkeypatch.setattr(bench_ab.subprocess, "run", fake_run)
    with pytest.raises(_Stop):
        bench_ab.main(["--against", str(tmp_path), "--models", model])
    argv = calls[0]
    assert argv[argv.index("--size") + 1] == size


def test_an_explicit_size_wins(monkeypatch, tmp_path):
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        raise _Stop

    monkeypatch.setattr(bench_ab.subprocess, "run", fake_run)
    with pytest.raises(_Stop):
        bench_ab.main(["--against", str(tmp_path), "--models", "inceptionv3", "--size", "320"])
    assert calls[0][calls[0].index("--size") + 1] == "320"
