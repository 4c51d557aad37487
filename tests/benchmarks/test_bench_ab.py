"""benchmarks/bench_ab.py's argument handling (no model is built)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_ab  # noqa: E402


class _Stop(Exception):
    pass


def _build_argv(monkeypatch, argv):
    """The first build subprocess's command line of ``bench_ab.main(argv)``."""
    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        raise _Stop

    monkeypatch.setattr(bench_ab.subprocess, "run", fake_run)
    with pytest.raises(_Stop):
        bench_ab.main(argv)
    return calls[0]


@pytest.mark.parametrize("model,size", [("inceptionv3", "299"), ("resnet18_v1", "224")])
def test_each_model_is_built_at_its_own_input_size(monkeypatch, tmp_path, model, size):
    """Inception-v3 was built at 224x224 unless --size 299 was given (MXNet refused: its 8x8
    pooling window exceeded the 5x5 feature map)."""
    argv = _build_argv(monkeypatch, ["--against", str(tmp_path), "--models", model])
    assert argv[argv.index("--size") + 1] == size


def test_an_explicit_size_wins(monkeypatch, tmp_path):
    argv = _build_argv(monkeypatch, ["--against", str(tmp_path), "--models", "inceptionv3",
                                     "--size", "320"])
    assert argv[argv.index("--size") + 1] == "320"
