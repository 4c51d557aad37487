"""``tvm.testing`` helpers of TVM 0.19 that TVM 0.27 dropped, which Relay-era test suites use.

Installed into ``tvm.testing`` by :func:`install` only where TVM lacks the name:

- ``uses_gpu``: 0.19 marked a test to also run on GPU CI nodes; the test runs here on every
  enabled target, so the decorator only tags it.
- ``requires_<device>`` (``requires_cuda``, ``requires_gpu``, ``requires_opencl``, ...): skip the
  test (with the reason) when that device is not runnable here; usable as ``@requires_cuda``
  and as ``requires_cuda.marks()``.
- ``parametrize_targets(*targets)``: run the test once per target (all enabled targets when none
  are given); a ``dev`` argument gets the target's device (see
  :mod:`relay_tvm.compat.pytest_plugin`).
- ``parameters(*value_sets)``: correlated parameters, one fixture per position.
- ``known_failing_targets`` / ``exclude_targets``: per-target xfail / removal.
"""

from __future__ import annotations

import functools

_PARAM_GROUP = "_relay_tvm_param_group"
_TARGETS_ATTR = "_relay_tvm_targets"
_EXCLUDE_ATTR = "_relay_tvm_exclude_targets"
_XFAIL_ATTR = "_relay_tvm_xfail_targets"


def _runnable(kind: str) -> bool:
    import tvm

    try:
        return bool(tvm.runtime.enabled(kind) and tvm.device(kind, 0).exist)
    except Exception:  # noqa: BLE001 - an unknown device kind is simply not runnable
        return False


class _Requires:
    """A ``requires_<name>`` decorator: skips unless ``check()`` holds."""

    def __init__(self, name: str, check):
        self.name = name
        self.check = check

    def marks(self, **_kwargs):
        import pytest

        return [pytest.mark.skipif(not self.check(), reason=f"needs {self.name}, not available")]

    def __call__(self, func=None, **kwargs):
        if func is None:
            return self
        for mark in self.marks():
            func = mark(func)
        return func


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _device_check(*kinds):
    return lambda: any(_runnable(k) for k in kinds)


REQUIRES = {
    "requires_llvm": _Requires("llvm", _device_check("llvm")),
    "requires_x86": _Requires("an x86 CPU", lambda: __import__("platform").machine()
                              in ("x86_64", "AMD64", "i686")),
    "requires_gpu": _Requires("a GPU", _device_check("cuda", "rocm", "opencl", "metal",
                                                     "vulkan")),
    "requires_cuda": _Requires("CUDA", _device_check("cuda")),
    "requires_cudagraph": _Requires("CUDA graphs", _device_check("cuda")),
    "requires_tensorcore": _Requires("CUDA tensor cores", _device_check("cuda")),
    "requires_cudnn": _Requires("cuDNN", lambda: False),
    "requires_cublas": _Requires("cuBLAS", lambda: False),
    "requires_nvptx": _Requires("NVPTX", _device_check("nvptx")),
    "requires_opencl": _Requires("OpenCL", _device_check("opencl")),
    "requires_rocm": _Requires("ROCm", _device_check("rocm")),
    "requires_metal": _Requires("Metal", _device_check("metal")),
    "requires_vulkan": _Requires("Vulkan", _device_check("vulkan")),
    "requires_hexagon": _Requires("Hexagon", lambda: False),
    "requires_arm_dot": _Requires("ARM dot-product instructions", lambda: False),
    "requires_arm_fp16": _Requires("ARM fp16 instructions", lambda: False),
    "requires_aarch64": _Requires("an AArch64 CPU", lambda: __import__("platform").machine()
                                  in ("aarch64", "arm64")),
    "requires_micro": _Requires("microTVM (removed from TVM)", lambda: False),
    "requires_ethosn": _Requires("Arm Ethos-N (removed from TVM)", lambda: False),
    "requires_cmsisnn": _Requires("CMSIS-NN (removed from TVM)", lambda: False),
    "requires_corstone300": _Requires("Corstone-300 (removed from TVM)", lambda: False),
    "requires_vitis_ai": _Requires("Vitis AI (removed from TVM)", lambda: False),
    "requires_tensorrt": _Requires("TensorRT (removed from TVM)", lambda: False),
    "requires_openclml": _Requires("OpenCLML (removed from TVM)", lambda: False),
    "requires_rpc": _Requires("RPC", lambda: True),
}


def requires_package(*names):
    """Skip unless every Python package in ``names`` imports."""
    return _Requires(" and ".join(names), lambda: all(_has_module(n) for n in names))


def uses_gpu(func):
    """0.19's GPU-node marker; here the test simply runs on the enabled targets."""
    return func


def parametrize_targets(*args):
    """Run the decorated test once per target: ``target`` gets the target string and ``dev``
    its device. ``@parametrize_targets`` alone uses every enabled target;
    ``@parametrize_targets("llvm", "cuda")`` those listed (unrunnable ones are skipped)."""
    if len(args) == 1 and callable(args[0]):
        setattr(args[0], _TARGETS_ATTR, None)
        return args[0]

    def wrap(func):
        setattr(func, _TARGETS_ATTR, list(args))
        return func

    return wrap


def exclude_targets(*targets):
    """Do not run the decorated test on ``targets``."""
    def wrap(func):
        setattr(func, _EXCLUDE_ATTR, list(targets))
        return func

    return wrap


def known_failing_targets(*targets):
    """Mark the decorated test as expected to fail on ``targets``."""
    def wrap(func):
        setattr(func, _XFAIL_ATTR, list(targets))
        return func

    return wrap


def parameters(*value_sets, ids=None):
    """Correlated parameters: ``a, b = parameters((1, 2), (3, 4))`` runs a test taking ``a``
    and ``b`` with (1, 2) and with (3, 4) (not the four combinations)."""
    import pytest

    group = object()
    n = len(value_sets[0]) if value_sets else 0
    out = []
    for i in range(n):
        def _param(*_cls):
            raise RuntimeError("tvm.testing.parameters needs relay_tvm.compat.pytest_plugin")

        # on the function itself: pytest's fixture definition keeps it as ``func``
        setattr(_param, _PARAM_GROUP, (group, i, value_sets, ids))
        out.append(pytest.fixture(_param))
    return tuple(out)


def _wraps_all(func):
    @functools.wraps(func)
    def inner(*a, **k):
        return func(*a, **k)

    return inner


NAMES = {"uses_gpu": uses_gpu, "parametrize_targets": parametrize_targets,
         "exclude_targets": exclude_targets, "known_failing_targets": known_failing_targets,
         "parameters": parameters, "requires_package": requires_package, **REQUIRES}


def install() -> None:
    """Add the names above to ``tvm.testing`` where TVM lacks them."""
    import tvm.testing

    for name, obj in NAMES.items():
        if not hasattr(tvm.testing, name):
            setattr(tvm.testing, name, obj)
    if "__getattr__" not in vars(tvm.testing):
        tvm.testing.__getattr__ = _module_getattr


def _module_getattr(name):
    # Any other 0.19 ``requires_<feature>`` decorator: a feature TVM 0.27 does not have here.
    if name.startswith("requires_"):
        req = _Requires(name[len("requires_"):] + " (not available with TVM 0.27 here)",
                        lambda: False)
        return req
    raise AttributeError(f"module 'tvm.testing' has no attribute {name!r}")
