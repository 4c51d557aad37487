"""CUDA code generation checked without a GPU (issue 15): the target's architecture is never
guessed, and the kernels TVM generates for ResNet-18 and MobileNet compile with ``nvcc`` to SASS
for sm_80 (A100) and sm_90 (H100/H200) — the compilation TVM's CUDA runtime would otherwise
first attempt on the GPU machine, when it loads the module."""

import re
import shutil

import pytest

import relay_tvm as relay
from relay_tvm import testing
from relay_tvm.backend.cuda import compile_fatbin, cuda_source, fatbin_entries, local_arch
from relay_tvm.backend.target import make_target
from relay_tvm.errors import BuildError, InputError

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None,
                                reason="nvcc (the CUDA toolkit) is not installed")


@pytest.mark.skipif(local_arch() is not None, reason="a GPU is present: its arch is used")
def test_cuda_target_without_arch_is_refused_without_a_gpu():
    with pytest.raises(BuildError, match=r"no -arch given.*cuda -arch=sm_80"):
        make_target("cuda")
    assert str(make_target("cuda -arch=sm_90").attrs["arch"]) == "sm_90"


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
