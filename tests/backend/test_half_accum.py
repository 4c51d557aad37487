"""Half-precision kernels accumulate in float32 and round once (relay_tvm.backend.half_accum).

Each operator runs in float16 in the graph executor, the VM and the interpreter, against the same
program evaluated in float64 by the interpreter's NumPy kernels on the same (float16-exact)
inputs, rounded to float16: within two float16 ulps. Accumulating in float16 was off by up to
17.8% (a 64 x 64 average), 3.8% (a K = 4096 dense) and made a softmax row sum to 1.024.
"""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.backend import half_accum
from relay_tvm.op.nn_contrib import contrib_conv2d_nchwc  # not in relay.nn yet

_RNG = np.random.default_rng(20261202)


def _pos(*shape):
    """float16 values in [3, 3.1) (the new-user report's data: a running float16 sum of them
    stops growing once its ulp exceeds 3)."""
    return (3 + 0.1 * _RNG.random(shape)).astype("float16")


def _unit(*shape):
    return _RNG.random(shape).astype("float16")


def _sym(*shape):
    return (2 * _RNG.random(shape) - 1).astype("float16")


def _run(func, args, kind):
    mod = relay.IRModule.from_expr(func)
    with relay.transform.PassContext(opt_level=3):
        out = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(*args)
    return out.numpy()


def _program(make, arrays, dtype):
    vs = [relay.var(f"a{i}", shape=a.shape, dtype=dtype) for i, a in enumerate(arrays)]
    return relay.Function(vs, make(*vs))


def _ulps(got, want):
    """|got - want| in float16 ulps of ``want``, less an absolute 2**-20 of the largest |want|
    (float32 rounding of the intermediates: a result that cancels to near zero, such as
    layer_norm's ``x_hat * gamma + beta``, has an ulp far below its terms' float32 error)."""
    w = want.astype("float16").astype("float64")
    diff = np.abs(got.astype("float64") - w) - 2.0 ** -20 * np.abs(w).max()
    return np.maximum(diff, 0) / np.spacing(np.abs(want.astype("float16"))).astype("float64")


# (id, make(*vars), inputs)
_CASES = [
    ("global_avg_pool2d", relay.nn.global_avg_pool2d, [_pos(1, 4, 64, 64)]),
    ("avg_pool2d", lambda x: relay.nn.avg_pool2d(x, (64, 64)), [_pos(1, 4, 64, 64)]),
    ("avg_pool2d_strided", lambda x: relay.nn.avg_pool2d(x, (32, 32), (16, 16), padding=(4, 4)),
     [_pos(1, 2, 64, 64)]),
    ("avg_pool1d", lambda x: relay.nn.avg_pool1d(x, (2048,)), [_pos(1, 3, 4096)]),
    ("avg_pool3d", lambda x: relay.nn.avg_pool3d(x, (16, 16, 16)), [_pos(1, 2, 16, 16, 16)]),
    ("global_avg_pool1d", relay.nn.global_avg_pool1d, [_pos(1, 3, 4096)]),
    ("adaptive_avg_pool2d", lambda x: relay.nn.adaptive_avg_pool2d(x, (2, 2)),
     [_pos(1, 2, 128, 128)]),
    ("adaptive_avg_pool1d", lambda x: relay.nn.adaptive_avg_pool1d(x, (3,)), [_pos(1, 2, 6000)]),
    ("softmax", relay.nn.softmax, [_unit(2, 1000)]),
    ("log_softmax", relay.nn.log_softmax, [_unit(2, 1000)]),
    ("l2_normalize", lambda x: relay.nn.l2_normalize(x, 1e-6, axis=[1]), [_pos(2, 4096)]),
    ("lrn", lambda x: relay.nn.lrn(x, size=5, axis=1, alpha=1e-3, beta=0.75, bias=2.0),
     [_pos(1, 16, 8, 8)]),
    ("layer_norm", lambda x, g, b: relay.nn.layer_norm(x, g, b),
     [_pos(2, 4096), _unit(4096), _sym(4096)]),
    ("instance_norm", lambda x, g, b: relay.nn.instance_norm(x, g, b),
     [_pos(1, 2, 64, 64), _unit(2), _sym(2)]),
    ("group_norm", lambda x, g, b: relay.nn.group_norm(x, g, b, num_groups=2),
     [_pos(1, 4, 32, 32), _unit(4), _sym(4)]),
    ("dense", relay.nn.dense, [_unit(2, 4096), _unit(8, 4096)]),
    ("matmul", lambda a, b: relay.nn.matmul(a, b), [_unit(3, 4096), _unit(4096, 5)]),
    ("batch_matmul", relay.nn.batch_matmul, [_unit(2, 3, 2048), _unit(2, 4, 2048)]),
    ("conv1d", lambda x, w: relay.nn.conv1d(x, w, padding=(1,)), [_unit(1, 512, 16),
                                                                  _unit(4, 512, 3)]),
    ("conv2d", lambda x, w: relay.nn.conv2d(x, w, padding=(1, 1)), [_unit(1, 512, 8, 8),
                                                                    _unit(8, 512, 3, 3)]),
    ("conv2d_nhwc", lambda x, w: relay.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="HWIO"),
     [_unit(1, 6, 6, 512), _unit(3, 3, 512, 8)]),
    ("conv3d", lambda x, w: relay.nn.conv3d(x, w), [_unit(1, 128, 5, 5, 5),
                                                    _unit(4, 128, 3, 3, 3)]),
    ("conv1d_transpose", lambda x, w: relay.nn.conv1d_transpose(x, w, strides=(2,)),
     [_unit(1, 1024, 8), _unit(1024, 4, 3)]),
    ("conv2d_transpose", lambda x, w: relay.nn.conv2d_transpose(x, w, strides=(2, 2)),
     [_unit(1, 512, 6, 6), _unit(512, 4, 3, 3)]),
    ("conv3d_transpose", lambda x, w: relay.nn.conv3d_transpose(x, w),
     [_unit(1, 256, 4, 4, 4), _unit(256, 2, 2, 2, 2)]),
    ("cross_entropy", relay.nn.cross_entropy, [_unit(2, 3000), _unit(2, 3000)]),
    ("conv2d_NCHWc", lambda x, w: contrib_conv2d_nchwc(
        x, w, padding=(1, 1), channels=8, kernel_size=(3, 3), data_layout="NCHW8c",
        kernel_layout="OIHW8i8o"), [_unit(1, 64, 6, 6, 8), _unit(1, 64, 3, 3, 8, 8)]),
    ("conv2d_backward_weight", lambda g, x: relay.nn.conv2d_backward_weight(
        g, x, padding=(1, 1), channels=4, kernel_size=(3, 3)),
     [_unit(1, 4, 64, 64), _unit(1, 2, 64, 64)]),
    ("contrib_dense_pack", lambda a, w: relay.nn.contrib_dense_pack(a, w, "NC8n"),
     [_unit(2, 4096), _unit(2, 4096, 8)]),
    ("conv2d_winograd", lambda x, w: relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, relay.nn.contrib_conv2d_winograd_weight_transform(w, 4), 4, padding=(1, 1),
        channels=8, kernel_size=(3, 3)), [_unit(1, 512, 8, 8), _unit(8, 512, 3, 3)]),
    ("deformable_conv2d", lambda x, o, w: relay.nn.deformable_conv2d(
        x, o, w, channels=4, kernel_size=(3, 3)),
     [_unit(1, 256, 6, 6), _unit(1, 18, 4, 4), _unit(4, 256, 3, 3)]),
    ("correlation", lambda a, b: relay.nn.correlation(a, b, 1, 1, 1, 1, (1, 1)),
     [_pos(1, 1024, 4, 4), _pos(1, 1024, 4, 4)]),
    ("roi_align", lambda x, r: relay.vision.roi_align(x, r, (2, 2), 1.0, sample_ratio=16),
     [_pos(1, 2, 64, 64), np.array([[0, 0, 0, 63, 63]], "float16")]),
]


@pytest.mark.parametrize("make,inputs", [c[1:] for c in _CASES], ids=[c[0] for c in _CASES])
def test_float16_accumulates_in_float32(make, inputs):
    want = _run(_program(make, inputs, "float64"), [a.astype("float64") for a in inputs],
                "debug")
    f16 = _program(make, inputs, "float16")
    for kind in ("graph", "vm", "debug"):
        got = _run(f16, inputs, kind)
        assert got.dtype == np.float16, kind
        err = _ulps(got, want)
        assert err.max() <= 2, f"{kind}: {err.max():.1f} float16 ulps off (at {err.argmax()})"


def test_float16_against_numpy_directly():
    """The three reported cases, against NumPy formulas in float64 (not the interpreter)."""
    x = _pos(1, 4, 64, 64)
    a, w = _unit(2, 4096), _unit(8, 4096)
    s = _unit(1, 1000)
    e = np.exp(s.astype("float64") - s.max())
    cases = [
        (relay.nn.global_avg_pool2d, [x], x.astype("float64").mean(axis=(2, 3), keepdims=True)),
        (relay.nn.dense, [a, w], a.astype("float64") @ w.astype("float64").T),
        (relay.nn.softmax, [s], e / e.sum()),
    ]
    for make, args, want in cases:
        f16 = _program(make, args, "float16")
        for kind in ("graph", "vm"):
            got = _run(f16, args, kind)
            assert _ulps(got, want).max() <= 1, (make, kind)
    got = _run(_program(relay.nn.softmax, [s], "float16"), [s], "graph").astype("float64")
    assert abs(got.sum() - 1) < 1e-3


def test_float16_out_dtype_float32_is_unchanged():
    """A float16 dense with out_dtype float32 already accumulates in float32: not wrapped; a
    float32 dense is never wrapped (its TIR is what it was)."""
    from relay_tvm.ir.types import TensorType

    class _T:
        def __init__(self, dtype):
            self.dtype = dtype

    f16 = [_T("float16"), _T("float16")]
    assert not half_accum.accumulates_wide("nn.dense", f16, TensorType((2, 8), "float32"))
    assert half_accum.accumulates_wide("nn.dense", f16, TensorType((2, 8), "float16"))
    assert not half_accum.accumulates_wide("nn.softmax", [_T("float32")],
                                           TensorType((2, 8), "float32"))
    assert not half_accum.accumulates_wide("nn.max_pool2d", [_T("float16")],
                                           TensorType((2, 8), "float16"))
    a, w = _unit(2, 4096), _unit(8, 4096)
    f = _program(lambda x, y: relay.nn.dense(x, y, out_dtype="float32"), [a, w], "float16")
    got = _run(f, [a, w], "graph")
    want = a.astype("float64") @ w.astype("float64").T
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_schedule_templates_still_apply_to_float16():
    """The CPU templates pick the same rules for float16 kernels as for float32 ones."""
    rules = {}
    for dt in ("float32", "float16"):
        x = relay.var("x", shape=(1, 32, 16, 16), dtype=dt)
        w = relay.const(_unit(32, 32, 1, 1).astype(dt))
        d = relay.const(_unit(10, 32).astype(dt))
        y = relay.nn.relu(relay.nn.conv2d(x, w, channels=32, kernel_size=(1, 1)))
        y = relay.nn.avg_pool2d(y, (2, 2), (2, 2))
        y = relay.nn.dense(relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y)), d)
        with relay.transform.PassContext(opt_level=3):
            lib = relay.build(relay.IRModule.from_expr(relay.Function([x], y)), target="llvm")
        ks = lib.kernels
        items = ks.items() if hasattr(ks, "items") else [(k.name, k) for k in ks]
        rules[dt] = sorted((lf.anchor, lf.schedule_rule) for _, lf in items)
    assert rules["float16"] == rules["float32"]
    assert ("nn.dense", "dense") in rules["float16"]
    assert ("nn.avg_pool2d", "pool") in rules["float16"]


def test_float16_accumulates_in_float32_with_any_dims():
    """The VM's symbolic-size kernels go through the same wrapper."""
    x = relay.var("x", shape=(1, 4, relay.Any(), relay.Any()), dtype="float16")
    xv = _pos(1, 4, 64, 64)
    got = _run(relay.Function([x], relay.nn.global_avg_pool2d(x)), [xv], "vm")
    assert got.dtype == np.float16
    assert _ulps(got, xv.astype("float64").mean(axis=(2, 3), keepdims=True)).max() <= 1
