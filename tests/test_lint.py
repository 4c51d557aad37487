"""The repository (relay_tvm, tests, benchmarks) passes its ruff configuration (ruff.toml):
pyflakes, bugbear, import order and the complexity budget. CI installs ruff through the ``test``
extra of setup.py."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _ruff_command():
    exe = shutil.which("ruff")
    if exe is not None:
        return [exe]
    try:
        import ruff  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_is_clean():
    cmd = _ruff_command()
    if cmd is None:
        pytest.skip("ruff is not installed (pip install -e .[test])")
    res = subprocess.run(
        [*cmd, "check", "--no-cache", "--output-format", "concise", "relay_tvm", "tests",
         "benchmarks"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, f"ruff found violations:\n{res.stdout}\n{res.stderr}"


def test_ruff_configuration_selects_the_project_rules():
    text = (ROOT / "ruff.toml").read_text()
    for rule in ('"F"', '"B"', '"I"', '"C901"', '"PLR0915"'):
        assert rule in text, f"ruff.toml no longer selects {rule}"
