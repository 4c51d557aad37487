"""End to end: a ResNet-style basic block built at opt level 3, where AlterOpLayout turns its 3x3
convolutions into Winograd convolutions (bound weights transformed at build time), equals the
reference interpreter and the opt level 0 build."""

import numpy as np
import pytest
from backend_util import assert_same, rand

import relay_tvm as relay
from relay_tvm.transform.winograd_choice import CONFIG_KEY

WINO = "nn.contrib_conv2d_winograd_without_weight_transform"


def basic_block(c, h, n=1):
    """conv3x3-bn-relu-conv3x3-bn, + the input, relu (ResNet v1), then a strided 3x3 conv
    (which stays direct)."""
    x = relay.var("x", shape=(n, c, h, h))
    p = {}

    def conv_bn(y, name, strides=(1, 1)):
        w = relay.var(f"{name}_w", shape=(c, c, 3, 3))
        g, b = relay.var(f"{name}_g", shape=(c,)), relay.var(f"{name}_b", shape=(c,))
        m, v = relay.var(f"{name}_m", shape=(c,)), relay.var(f"{name}_v", shape=(c,))
        p[f"{name}_w"] = (rand((c, c, 3, 3), seed=len(p)) / np.sqrt(9 * c)).astype("float32")
        p[f"{name}_g"] = (1 + 0.1 * rand((c,), seed=len(p))).astype("float32")
        p[f"{name}_b"] = (0.1 * rand((c,), seed=len(p))).astype("float32")
        p[f"{name}_m"] = (0.1 * rand((c,), seed=len(p))).astype("float32")
        p[f"{name}_v"] = (1 + 0.1 * np.abs(rand((c,), seed=len(p)))).astype("float32")
        y = relay.nn.conv2d(y, w, strides=strides, padding=(1, 1), channels=c, kernel_size=(3, 3))
        return relay.nn.batch_norm(y, g, b, m, v)[0]

    y = relay.nn.relu(conv_bn(x, "a"))
    y = relay.nn.relu(relay.add(conv_bn(y, "b"), x))
    y = conv_bn(y, "down", strides=(2, 2))
    free = relay.analysis.free_vars(y)
    return relay.Function(free, y), p


def _build(func, params, opt_level, config=None):
    mod = relay.IRModule.from_expr(func)
    with relay.transform.PassContext(opt_level=opt_level, config=config):
        return relay.build(mod, target="llvm", params=params)


def _run(lib, x):
    import tvm

    from relay_tvm.runtime import GraphModule

    gm = GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", x)
    gm.run()
    return gm.get_output(0).numpy()


@pytest.mark.parametrize("c, h, n, config", [
    # the cost model picks F(4x4, 3x3) (at 16x16 it keeps 32 channels direct: measured with
    # cold caches the three forms are within 7% there)
    (32, 32, 1, None),
    (16, 10, 2, {CONFIG_KEY: 2}),  # forced F(2x2, 3x3), batch 2, 10 = 5 tiles of 2
    (16, 7, 1, {CONFIG_KEY: 4}),  # forced F(4x4, 3x3) on 7x7: the last tiles are cropped
])
def test_resnet_block_opt3_equals_interpreter_and_opt0(c, h, n, config):
    func, params = basic_block(c, h, n)
    x = rand((n, c, h, h), seed=99)
    lib3 = _build(func, params, 3, config)
    rules = [(k.anchor, k.schedule_rule) for k in lib3.kernels.values()]
    assert rules.count((WINO, "conv2d_winograd")) == 2, rules
    assert ("nn.contrib_conv2d_NCHWc", "conv2d_NCHWc") in rules  # the strided conv
    # the weights were transformed at build time: no transform kernel runs
    assert not any(a == "nn.contrib_conv2d_winograd_weight_transform" for a, _ in rules)
    got3 = _run(lib3, x)
    got0 = _run(_build(func, params, 0), x)
    mod = relay.IRModule.from_expr(func)
    ref = relay.create_executor("debug", mod, params=params).evaluate()(x).numpy()
    scale = np.abs(ref).max()
    assert_same(ref, got3, rtol=1e-4, atol=1e-4 * scale)
    assert_same(got0, got3, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell",
                                    "llvm -mtriple=aarch64-linux-gnu"])
def test_winograd_template_applies_on_other_isas(target):
    """Built (not run) for ISAs this machine may not have: the template fits each vector width
    and register count (16 zmm lanes with 32 registers; 8 ymm with 16; 4 NEON with 32)."""
    func, params = basic_block(32, 16)
    mod = relay.IRModule.from_expr(func)
    with relay.transform.PassContext(opt_level=3, config={CONFIG_KEY: 4}):
        lib = relay.build(mod, target=target, params=params)
    rules = [(k.anchor, k.schedule_rule) for k in lib.kernels.values()]
    assert rules.count((WINO, "conv2d_winograd")) == 2, rules
