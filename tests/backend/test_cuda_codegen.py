"""CUDA code generation checked without a GPU (issue 15): the target's architecture is the one
given, else the local GPU's, else sm_50 with a warning (the same for every way of writing the
target), and the kernels TVM generates for ResNet-18 and MobileNet compile with ``nvcc`` to SASS
for sm_80 (A100) and sm_90 (H100/H200) — the compilation TVM's CUDA runtime would otherwise
first attempt on the GPU machine, when it loads the module."""

import re
import shutil
import warnings

import pytest
import tvm

import relay_tvm as relay
from relay_tvm import testing
from relay_tvm.backend import cuda as cuda_backend
from relay_tvm.backend.cuda import compile_fatbin, cuda_source, fatbin_entries
from relay_tvm.backend.target import make_target
from relay_tvm.errors import BuildError, InputError

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None,
                                reason="nvcc (the CUDA toolkit) is not installed")

_NO_ARCH = (r"no -arch given and no CUDA GPU on this machine to read it from; building for "
            r"sm_50 \(TVM's default\)\. Name the GPU you deploy to with -arch=sm_xx, e\.g\. "
            r"'cuda -arch=sm_80' \(A100\)")


def _relu():
    x = relay.var("x", shape=(1, 4))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))


# the three ways a 0.19 user names a CUDA target without an arch, plus a dict and the VM
_ENTRY_POINTS = {
    "string": lambda mod: relay.build(mod, "cuda"),
    "Target": lambda mod: relay.build(mod, tvm.target.Target("cuda")),
    "tvm.target.cuda()": lambda mod: relay.build(mod, tvm.target.cuda()),
    "dict": lambda mod: relay.build(mod, {"kind": "cuda"}),
    "vm": lambda mod: relay.vm.compile(mod, "cuda"),
}


def test_cuda_target_without_arch_and_without_a_gpu_is_sm_50_with_one_warning(monkeypatch):
    """0.19 assumed sm_50 with a warning; relay.build(mod, "cuda") used to refuse, Target("cuda")
    to build for sm_50 unsaid, and tvm.target.cuda() to refuse at construction."""
    monkeypatch.setattr(cuda_backend, "local_arch", lambda: None)
    mod = _relu()
    for name, build in _ENTRY_POINTS.items():
        with pytest.warns(UserWarning, match=_NO_ARCH) as record:
            lib = build(mod)
        ours = [w for w in record if "no -arch given" in str(w.message)]
        assert len(ours) == 1, (name, [str(w.message) for w in ours])
        assert ours[0].filename == __file__, name  # it names the caller's line
        assert str(lib.target.attrs["arch"]) == "sm_50", name  # the build records the arch
    with pytest.warns(UserWarning, match=_NO_ARCH):
        assert str(tvm.target.Target('{"kind": "cuda"}').attrs["arch"]) == "sm_50"


def test_cuda_target_without_arch_takes_the_local_gpus(monkeypatch):
    monkeypatch.setattr(cuda_backend, "local_arch", lambda: "sm_86")
    mod = _relu()
    for name, build in _ENTRY_POINTS.items():
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*no -arch given")
            lib = build(mod)
        assert str(lib.target.attrs["arch"]) == "sm_86", name


def test_cuda_target_with_an_arch_is_taken_as_given(monkeypatch):
    monkeypatch.setattr(cuda_backend, "local_arch", lambda: None)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*no -arch given")
        assert str(make_target("cuda -arch=sm_90").attrs["arch"]) == "sm_90"
        assert str(tvm.target.Target("cuda -arch=sm_90").attrs["arch"]) == "sm_90"
        assert str(tvm.target.Target({"kind": "cuda", "arch": "sm_90"}).attrs["arch"]) == "sm_90"
        assert str(tvm.target.cuda(arch="sm_80").attrs["arch"]) == "sm_80"
        assert str(tvm.target.cuda(options="-arch=sm_75").attrs["arch"]) == "sm_75"


def test_bad_arch_is_named():
    with pytest.raises(BuildError, match="not an architecture like 'sm_80'"):
        compile_fatbin("", "compute_80")


@pytest.mark.parametrize("arch, match", [
    # TVM 0.27 takes any string as the arch; only the GPU machine's compiler would refuse it
    ("sm_999", r"^target 'cuda -arch=sm_999': -arch='sm_999' is not the architecture of an "
               r"NVIDIA GPU; expected sm_XY of a known compute capability: sm_30, .*sm_90, "
               r"sm_100, .*sm_121 \(e\.g\. sm_80 for A100"),
    ("sm_81", r"-arch='sm_81' is not the architecture of an NVIDIA GPU"),
    ("sm_80a", r"-arch='sm_80a': the suffix 'a' exists from sm_90a on; did you mean 'sm_80'\?"),
    ("sm_90f", r"-arch='sm_90f': the suffix 'f' exists from sm_100f on; did you mean 'sm_90'\?"),
    ("sm_xx", r"-arch='sm_xx' is not an architecture like 'sm_80'"),
    ("80", r"-arch='80' is not an architecture like 'sm_80'"),
])
def test_unknown_cuda_arch_is_an_input_error(arch, match):
    with pytest.raises(InputError, match=match):
        make_target(f"cuda -arch={arch}")


@pytest.mark.parametrize("arch", ["sm_35", "sm_70", "sm_80", "sm_90a", "sm_100f", "sm_120",
                                  "sm_121a"])
def test_known_cuda_archs_are_accepted(arch):
    assert str(make_target(f"cuda -arch={arch}").attrs["arch"]) == arch


def test_fatbin_entries_rejects_other_bytes():
    with pytest.raises(ValueError, match="not a CUDA fatbin"):
        fatbin_entries(b"\x7fELF" + bytes(60))


def _kernel_names(src):
    return re.findall(r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(", src)


@needs_nvcc
# each model and each architecture once by default; the other pairs with -m sweep (CI time)
@pytest.mark.parametrize("model,arch", [
    ("resnet18", "sm_80"), ("mobilenet", "sm_90"),
    pytest.param("resnet18", "sm_90", marks=pytest.mark.sweep),
    pytest.param("mobilenet", "sm_80", marks=pytest.mark.sweep)])
def test_model_kernels_compile_to_sass(model, arch):
    if model == "resnet18":
        mod, params = testing.resnet.get_workload(num_layers=18, batch_size=1)
    else:
        mod, params = testing.mobilenet.get_workload(batch_size=1)
    lib = relay.build(mod, target=f"cuda -arch={arch}", params=params)
    src = cuda_source(lib)
    names = _kernel_names(src)
    # every fused primitive function became at least one __global__ kernel
    assert len(names) >= len(lib.kernels) > 10
    blob = compile_fatbin(src, arch)
    sm = int(arch[3:])
    assert ("sass", sm) in fatbin_entries(blob) and ("ptx", sm) in fatbin_entries(blob)
    missing = [n for n in names if n.encode() not in blob]
    assert not missing, f"kernels without code in the fatbin: {missing[:5]}"


@needs_nvcc
def test_nan_max_pool_epilogue_gets_a_lowerable_gpu_schedule():
    # dlight binds a 3x3 max-pool window to threads (cross-thread reduction), which TVM cannot
    # lower with the NaN-propagating max combiner; the serial GPU schedule takes over
    import numpy as np

    x = relay.var("x", shape=(1, 8, 16, 16))
    y = relay.nn.relu(relay.multiply(
        relay.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1)),
        relay.const(np.ones((8, 1, 1), "float32"))))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], y)), target="cuda -arch=sm_80")
    blob = compile_fatbin(cuda_source(lib), "sm_80")
    assert ("sass", 80) in fatbin_entries(blob)
