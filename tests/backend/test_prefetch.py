"""The weight prefetch (relay_tvm.backend.prefetch) of the Winograd GEMM and of the direct
NCHWc convolution: on planes of few tiles the pass puts one prefetch of the weight element two
output-channel blocks on in the Winograd GEMM's reduction loop (with its accumulators in
registers), larger planes keep the plain GEMM; AVX-512 direct convolutions on small planes
with tiles of one output-channel block prefetch the next block's weights, never the
accumulators (tiles of several blocks take none); the kernels equal a NumPy convolution either way (AVX-512 and AVX2 code), and
the switch turns the prefetch off."""

import numpy as np
import pytest
import tvm
from backend_util import rand

import relay_tvm as relay
from relay_tvm.backend import dynamic_parallel as dp
from relay_tvm.backend import prefetch
from relay_tvm.backend.schedule.winograd import PREFETCH_MAX_TILES, PREFETCH_SLICES


def _conv_relu(c, h):
    x = relay.var("x", shape=(1, c, h, h))
    w = relay.var("w", shape=(c, c, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=c, kernel_size=(3, 3)))
    return relay.IRModule.from_expr(relay.Function([x, w], y))


def _numpy_conv_relu(x, w):
    c, h = x.shape[1], x.shape[2]
    xp = np.pad(x[0].astype("float64"), ((0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, i:i + h, j:j + h] for i in range(3) for j in range(3)], 1)
    out = np.einsum("ckhw,ock->ohw", cols, w.reshape(c, c, 9).astype("float64"))
    return np.maximum(out, 0)[None]


def _build(c, h, m=2, target="llvm"):
    # the stages one by one (knob fuse 0): the GEMM whose weight reads the pass prefetches
    # (the stages fused per tile row, the default on planes of many tile rows, read the
    # weight from L2 or L3 once per row and take no prefetch)
    from relay_tvm.backend.schedule.cpu import override_knobs

    w = (rand((c, c, 3, 3), seed=3) / np.sqrt(9 * c)).astype("float32")
    with override_knobs({"fuse": 0}), relay.transform.PassContext(
            opt_level=3, config={"relay.AlterOpLayout.winograd": m}):
        lib = relay.build(_conv_relu(c, h), target=target, params={"w": w})
    tgt = tvm.target.Target(target)
    mod = tvm.tirx.transform.BindTarget(tgt.with_host(tgt))(lib.ir_mod)
    pipe, _, _ = tvm.tirx.get_tir_pipeline(dp.pipeline(tgt))
    text = "\n".join(f.script() for f in pipe(mod).functions.values())
    return lib, w, text


@pytest.mark.parametrize("c,h,m,target", [
    (32, 14, 2, "llvm"), (64, 7, 2, "llvm"), (16, 12, 4, "llvm"), (32, 11, 4, "llvm"),
    (32, 14, 2, "llvm -mcpu=haswell"), (24, 9, 4, "llvm -mcpu=haswell")])
def test_winograd_gemm_prefetches_and_equals_numpy(c, h, m, target):
    lib, w, text = _build(c, h, m, target)
    assert "winograd" in text
    # one prefetch in the GEMM's reduction, two channel blocks (C x block elements each) on
    lines = [ln for ln in text.splitlines() if "T.prefetch" in ln]
    assert len(lines) == 1, lines
    block = 16 if "float32x16" in text else 8
    assert f"+ {PREFETCH_SLICES * c * block}]" in lines[0], lines[0]
    x = rand((1, c, h, h), seed=5)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), _numpy_conv_relu(x, w),
                               rtol=1e-4, atol=1e-4)


def test_large_planes_keep_the_plain_gemm():
    # F(2x2) on 40x40: 400 tiles, each weight slice reused by many register tiles
    assert 20 * 20 > PREFETCH_MAX_TILES
    lib, w, text = _build(16, 40, 2)
    assert "winograd" in text and "T.prefetch" not in text
    x = rand((1, 16, 40, 40), seed=7)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), _numpy_conv_relu(x, w),
                               rtol=1e-4, atol=1e-4)


def test_switch_off_builds_without_prefetch_and_same_values(monkeypatch):
    monkeypatch.setenv("RELAY_TVM_NO_PREFETCH", "1")
    assert not prefetch.enabled()
    lib, w, text = _build(32, 14)
    assert "winograd" in text and "T.prefetch" not in text
    x = rand((1, 32, 14, 14), seed=6)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), _numpy_conv_relu(x, w),
                               rtol=1e-4, atol=1e-4)


def _loop(body_of, annotated=True):
    from tvm import tirx

    a = tirx.decl_buffer((4096,), "float32", name="a")
    b = tirx.decl_buffer((64,), "float32", name="b")
    i = tirx.Var("i", "int32")
    ann = {prefetch.KEY: 1024} if annotated else {}
    loop = tirx.For(i, tirx.const(0, "int32"), tirx.const(4, "int32"), tirx.ForKind.SERIAL,
                    body_of(a, b, i), None, ann)
    return tirx.PrimFunc([a, b], loop)


def test_pass_inserts_before_the_first_vector_load_with_the_stride():
    from tvm import tirx

    def body(a, b, i):
        scalar = tirx.BufferStore(b, tirx.BufferLoad(a, [i]), [i])
        vec = tirx.BufferStore(b, tirx.BufferLoad(a, [tirx.Ramp(i * 16, 1, 16)]),
                               [tirx.Ramp(tirx.const(0, "int32"), 1, 16)])
        return tirx.SeqStmt([scalar, vec])

    out = prefetch.insert(_loop(body)).script()
    lines = [ln.strip() for ln in out.splitlines()]
    k = next(n for n, ln in enumerate(lines) if "T.prefetch" in ln)
    assert "i * 16 + 1024" in lines[k] and ", 0, 2, 1)" in lines[k]  # read, keep in L2
    assert "T.Ramp" in lines[k + 1] and "T.Ramp" not in lines[k - 1]


def test_pass_leaves_loops_without_annotation_or_vector_load():
    from tvm import tirx

    def body(a, b, i):
        return tirx.BufferStore(b, tirx.BufferLoad(a, [tirx.Ramp(i * 16, 1, 16)]),
                                [tirx.Ramp(tirx.const(0, "int32"), 1, 16)])

    plain = _loop(body, annotated=False)
    assert prefetch.insert(plain).same_as(plain)
    scalar = _loop(lambda a, b, i: tirx.BufferStore(b, tirx.BufferLoad(a, [i]), [i]))
    assert "T.prefetch" not in prefetch.insert(scalar).script()


def test_pass_skips_the_accumulators_the_loop_stores():
    # the first vector load is of b, which the loop stores to (accumulators): the prefetch
    # must address a, the weight (a prefetch of b kept b out of registers: 55x slower, Zen 1)
    from tvm import tirx

    def body(a, b, i):
        acc = tirx.Ramp(tirx.const(0, "int32"), 1, 16)
        return tirx.BufferStore(b, tirx.BufferLoad(b, [acc])
                                + tirx.BufferLoad(a, [tirx.Ramp(i * 16, 1, 16)]), [acc])

    out = prefetch.insert(_loop(body)).script()
    lines = [ln for ln in out.splitlines() if "T.prefetch" in ln]
    assert len(lines) == 1 and "a[i * 16 + 1024]" in lines[0], lines
    only_acc = _loop(lambda a, b, i: tirx.BufferStore(
        b, tirx.BufferLoad(b, [tirx.Ramp(i, 1, 16)]) * 2.0, [tirx.Ramp(i, 1, 16)]))
    assert "T.prefetch" not in prefetch.insert(only_acc).script()


def _direct_conv(ic, oc, h, k, target, knobs=None):
    """A conv2d + relu built without Winograd (template knobs ``knobs`` where given); the
    kernels' text after relay_tvm's pipeline."""
    from relay_tvm.backend.schedule.cpu import override_knobs

    x = relay.var("x", shape=(1, ic, h, h))
    w = relay.var("w", shape=(oc, ic, k, k))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(k // 2, k // 2), channels=oc,
                                      kernel_size=(k, k)))
    wv = (rand((oc, ic, k, k), seed=4) / np.sqrt(k * k * ic)).astype("float32")
    with relay.transform.PassContext(opt_level=3,
                                     config={"relay.AlterOpLayout.winograd": "never"}), \
            override_knobs(knobs or {}):
        lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], y)), target=target,
                          params={"w": wv})
    tgt = tvm.target.Target(target)
    mod = tvm.tirx.transform.BindTarget(tgt.with_host(tgt))(lib.ir_mod)
    pipe, _, _ = tvm.tirx.get_tir_pipeline(dp.pipeline(tgt))
    text = "\n".join(f.script() for f in pipe(mod).functions.values()
                     if "conv2d_NCHWc" in f.script())
    return lib, wv, text


def _numpy_conv(x, w):
    k = w.shape[-1]
    h = x.shape[2]
    xp = np.pad(x[0].astype("float64"), ((0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    cols = np.stack([xp[:, i:i + h, j:j + h] for i in range(k) for j in range(k)], 1)
    out = np.einsum("ckhw,ock->ohw", cols, w.reshape(w.shape[0], w.shape[1], k * k)
                    .astype("float64"))
    return np.maximum(out, 0)[None]


@pytest.mark.parametrize("ic,oc,h,k", [(64, 128, 14, 1), (32, 32, 28, 3), (16, 32, 28, 1)])
def test_direct_conv_prefetches_weights_and_equals_numpy(monkeypatch, ic, oc, h, k):
    # AVX2 code takes the prefetch only when the width gate is lowered (it did not pay on
    # Zen 1); the kernel must then prefetch the weight, never the accumulators, and be right
    from relay_tvm.backend.schedule import cpu_nchwc

    monkeypatch.setattr(cpu_nchwc, "_DIRECT_PREFETCH_MIN_BITS", 256)
    assert h * h <= cpu_nchwc._DIRECT_PREFETCH_MAX_PLANE
    lib, w, text = _direct_conv(ic, oc, h, k, "llvm -mcpu=haswell", {"cg": 1, "wb": 7})
    lines = [ln for ln in text.splitlines() if "T.prefetch" in ln]
    assert lines, text
    for ln in lines:
        buf = ln.split("T.address_of(")[1].split("[")[0]
        assert "conv2d_NCHWc" not in buf, ln  # not the accumulators
    x = rand((1, ic, h, h), seed=8)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), _numpy_conv(x, w), rtol=1e-4,
                               atol=1e-4)


def test_direct_conv_prefetch_follows_the_vector_width():
    # AVX-512 code on planes of <= 1024 outputs takes it (built only: the host may lack
    # AVX-512), AVX2 code and larger planes do not
    from relay_tvm.backend.schedule import cpu_nchwc

    assert "T.prefetch" in _direct_conv(64, 128, 14, 1, "llvm -mcpu=skylake-avx512",
                                        {"cg": 1})[2]
    assert "T.prefetch" not in _direct_conv(64, 128, 14, 1, "llvm -mcpu=haswell",
                                            {"cg": 1, "wb": 7})[2]
    assert 40 * 40 > cpu_nchwc._DIRECT_PREFETCH_MAX_PLANE
    assert "T.prefetch" not in _direct_conv(32, 64, 40, 1, "llvm -mcpu=skylake-avx512",
                                            {"cg": 1, "wb": 8})[2]


@pytest.mark.parametrize("cg", [2, 4])
def test_direct_conv_tiles_of_several_blocks_take_no_prefetch(monkeypatch, cg):
    # with one line of each of the next group's blocks prefetched per step, Zen 4 ran such
    # tiles 2.4-2.6x slower (ResNet-18's stride-2 64->128 layer on 56x56, 4 blocks: 1.43 ms
    # against 0.60 without); one-block tiles keep it. Values right either way.
    from relay_tvm.backend.schedule import cpu_nchwc

    monkeypatch.setattr(cpu_nchwc, "_DIRECT_PREFETCH_MIN_BITS", 256)
    assert "T.prefetch" in _direct_conv(32, 64, 14, 3, "llvm -mcpu=skylake-avx512",
                                        {"cg": 1})[2]
    assert "T.prefetch" not in _direct_conv(32, 64, 14, 3, "llvm -mcpu=skylake-avx512",
                                            {"cg": cg})[2]
    lib, w, text = _direct_conv(32, 64, 14, 3, "llvm -mcpu=haswell", {"cg": cg})
    assert "T.prefetch" not in text
    x = rand((1, 32, 14, 14), seed=9)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), _numpy_conv(x, w), rtol=1e-4,
                               atol=1e-4)
