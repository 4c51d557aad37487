"""Pooling against per-window NumPy loops, through the interpreter and the compiled graph
executor: ceil_mode with count_include_pad both ways, dilation, asymmetric padding, NHWC, 1-D
and 3-D, integer and float16 data; global and adaptive pooling; errors."""

import itertools
import math

import numpy as np
import pytest
from nn_util import check_op, infer, rand

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType


def pool_loops(x, kind, k, s, d, pads, ceil_mode, count_include_pad):
    """x (N, C, *S); pads (befores..., afters...). For each output position, collect the taps
    ``o*s - before + j*d`` that fall inside the input (max / sum) and count those inside the
    padded input (count_include_pad) or the input."""
    nd = len(k)
    size = x.shape[2:]
    before, after = pads[:nd], pads[nd:]
    rnd = math.ceil if ceil_mode else math.floor
    osz = [rnd((size[i] + before[i] + after[i] - d[i] * (k[i] - 1) - 1) / s[i]) + 1
           for i in range(nd)]
    # ceil_mode (PyTorch's rule, as topi.nn.pool): no window may start past the input + leading pad
    osz = [o - 1 if ceil_mode and (o - 1) * s[i] >= size[i] + before[i] else o
           for i, o in enumerate(osz)]
    out = np.zeros(x.shape[:2] + tuple(osz), dtype="float64")
    for pos in itertools.product(*[range(o) for o in osz]):
        vals, count = [], 0
        for j in itertools.product(*[range(kk) for kk in k]):
            idx = [pos[i] * s[i] - before[i] + j[i] * d[i] for i in range(nd)]
            inside = all(0 <= idx[i] < size[i] for i in range(nd))
            in_padded = all(-before[i] <= idx[i] < size[i] + after[i] for i in range(nd))
            if inside:
                vals.append(x[(slice(None), slice(None)) + tuple(idx)].astype("float64"))
            if inside or (count_include_pad and in_padded):
                count += 1
        if kind == "max":
            # Relay's ceil_mode may place a window wholly past the input: the lowest value
            lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
            out[(slice(None), slice(None)) + pos] = np.max(vals, axis=0) if vals else lowest
        else:
            out[(slice(None), slice(None)) + pos] = np.sum(vals, axis=0) / max(count, 1)
    return out


def _full_pads(p, nd):
    p = (p,) if isinstance(p, int) else tuple(p)
    return p * 2 * nd if len(p) == 1 else (p + p if len(p) == nd else p)


LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
NHWC = {1: "NWC", 2: "NHWC", 3: "NDHWC"}

# (nd, shape NC.., pool_size, strides, dilation, padding, ceil_mode, count_include_pad, layout)
POOL_CASES = [
    (2, (1, 2, 6, 6), (2, 2), (2, 2), (1, 1), (0, 0), False, False, "NCHW"),
    (2, (1, 2, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1), False, True, "NCHW"),
    (2, (1, 2, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1), False, False, "NCHW"),
    (2, (1, 2, 6, 7), (3, 3), (2, 2), (1, 1), (1, 1), True, True, "NCHW"),
    (2, (1, 2, 6, 7), (3, 3), (2, 2), (1, 1), (1, 1), True, False, "NCHW"),
    (2, (1, 2, 5, 5), (2, 2), (2, 2), (1, 1), (0, 0), True, True, "NCHW"),
    (2, (1, 2, 5, 5), (2, 2), (2, 2), (1, 1), (0, 0), True, False, "NCHW"),
    (2, (1, 2, 7, 8), (3, 2), (2, 3), (1, 1), (1, 0, 2, 1), True, True, "NCHW"),
    (2, (1, 2, 7, 8), (2, 2), (1, 2), (2, 2), (1, 1), False, False, "NCHW"),
    (2, (1, 2, 7, 8), (2, 2), (1, 2), (2, 2), (1, 1), True, True, "NCHW"),
    (2, (2, 3, 6, 7), (3, 3), (2, 2), (1, 1), (1, 1), True, False, "NHWC"),
    (1, (1, 2, 9), (3,), (2,), (1,), (1,), True, True, "NCW"),
    (1, (1, 2, 9), (2,), (2,), (2,), (0, 1), False, False, "NWC"),
    (3, (1, 2, 5, 5, 4), (2, 2, 2), (2, 2, 2), (1, 1, 1), (1, 0, 1), True, False, "NCDHW"),
    (3, (1, 2, 4, 5, 4), (3, 2, 2), (1, 2, 2), (1, 1, 1), (1, 1, 1, 1, 0, 0), False, True,
     "NDHWC"),
]


def _to(a, src, dst):
    return a.transpose([src.index(ch) for ch in dst])


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", POOL_CASES)
def test_pool(kind, case):
    nd, shape, k, s, d, pad, ceil, cip, layout = case
    x = rand(shape)
    want = pool_loops(x, kind, k, s, d, _full_pads(pad, nd), ceil, cip).astype("float32")
    extra = {"count_include_pad": cip} if kind == "avg" else {}
    ctor = getattr(relay.nn, f"{kind}_pool{nd}d")
    check_op(lambda a: ctor(a, k, s, d, pad, layout=layout, ceil_mode=ceil, **extra),
             {"x": _to(x, LAYOUT[nd], layout)}, _to(want, LAYOUT[nd], layout))


def test_max_pool_int8_and_avg_pool_float16():
    x = np.random.default_rng(0).integers(-100, 100, (1, 2, 5, 5)).astype("int8")
    want = pool_loops(x, "max", (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True, False).astype("int8")
    check_op(lambda a: relay.nn.max_pool2d(a, 3, 2, padding=1, ceil_mode=True), {"x": x}, want)
    h = rand((1, 2, 6, 6), "float16")
    want = pool_loops(h, "avg", (2, 2), (2, 2), (1, 1), (1, 1, 1, 1), False, True)
    check_op(lambda a: relay.nn.avg_pool2d(a, 2, 2, padding=1, count_include_pad=True),
             {"x": h}, want.astype("float16"), rtol=1e-3, atol=1e-3)


def _block(a, c):
    """NCHW (N, C, H, W) -> NCHW{c}c (N, C/c, H, W, c)."""
    n, ch, h, w = a.shape
    return np.ascontiguousarray(a.reshape(n, ch // c, c, h, w).transpose(0, 1, 3, 4, 2))


# blocked channels (what AlterOpLayout gives pools between NCHW{c}c convolutions): odd sizes,
# padding, ceil_mode, strides, count_include_pad both ways
# (shape NCHW, block, pool_size, strides, dilation, padding, ceil_mode, count_include_pad)
BLOCKED_CASES = [
    ((1, 16, 9, 11), 8, (3, 3), (2, 2), (1, 1), (1, 1), True, False),
    ((1, 16, 9, 11), 8, (3, 3), (2, 2), (1, 1), (1, 1), True, True),
    ((2, 12, 7, 8), 4, (3, 2), (2, 3), (1, 1), (1, 0, 2, 1), True, True),
    ((1, 16, 7, 7), 16, (2, 2), (1, 2), (2, 2), (1, 1), False, False),
    ((1, 6, 5, 6), 3, (2, 3), (1, 1), (1, 1), (0, 0), False, False),
    ((1, 32, 13, 13), 8, (3, 3), (2, 2), (1, 1), (0, 0), True, False),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", BLOCKED_CASES)
def test_pool2d_blocked_channels(kind, case):
    shape, c, k, s, d, pad, ceil, cip = case
    x = rand(shape)
    want = pool_loops(x, kind, k, s, d, _full_pads(pad, 2), ceil, cip).astype("float32")
    extra = {"count_include_pad": cip} if kind == "avg" else {}
    ctor = getattr(relay.nn, f"{kind}_pool2d")
    check_op(lambda a: ctor(a, k, s, d, pad, layout=f"NCHW{c}c", ceil_mode=ceil, **extra),
             {"x": _block(x, c)}, _block(want, c))


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("osz", [None, (3, 2), (1, 1)])
def test_global_and_adaptive_pool2d_blocked_channels(kind, osz):
    x = rand((2, 16, 7, 5))
    lay = "NCHW8c"
    if osz is None:
        want = adaptive_loops(x, kind, (1, 1)).astype("float32")
        ctor = getattr(relay.nn, f"global_{kind}_pool2d")
        check_op(lambda a: ctor(a, layout=lay), {"x": _block(x, 8)}, _block(want, 8))
    else:
        want = adaptive_loops(x, kind, osz).astype("float32")
        ctor = getattr(relay.nn, f"adaptive_{kind}_pool2d")
        check_op(lambda a: ctor(a, osz, layout=lay), {"x": _block(x, 8)}, _block(want, 8))
    t = infer(lambda a: relay.nn.max_pool2d(a, 3, 2, layout=lay, ceil_mode=True),
              {"x": ((1, 2, 8, 8, 8), "float32")})
    assert t == TensorType((1, 2, 4, 4, 8), "float32")


def adaptive_loops(x, kind, osz):
    size = x.shape[2:]
    nd = len(osz)
    out = np.zeros(x.shape[:2] + tuple(osz))
    for pos in itertools.product(*[range(o) for o in osz]):
        sl = tuple(
            slice(int(math.floor(pos[i] * size[i] / osz[i])),
                  int(math.ceil((pos[i] + 1) * size[i] / osz[i])))
            for i in range(nd)
        )
        win = x[(slice(None), slice(None)) + sl].astype("float64")
        axes = tuple(range(2, 2 + nd))
        out[(slice(None), slice(None)) + pos] = win.max(axis=axes) if kind == "max" else win.mean(axis=axes)
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_pool2d(kind, layout):
    x = rand((2, 3, 5, 4))
    want = adaptive_loops(x, kind, (1, 1)).astype("float32")
    ctor = getattr(relay.nn, f"global_{kind}_pool2d")
    check_op(lambda a: ctor(a, layout=layout), {"x": _to(x, "NCHW", layout)},
             _to(want, "NCHW", layout))


ADAPTIVE_CASES = [
    (2, (1, 2, 7, 5), (3, 2), "NCHW"),
    (2, (1, 2, 6, 6), (4, 4), "NCHW"),
    (2, (1, 2, 5, 7), (2, 3), "NHWC"),
    (2, (1, 2, 5, 5), 1, "NCHW"),
    (1, (1, 2, 10), (4,), "NCW"),
    (3, (1, 2, 4, 5, 6), (2, 3, 4), "NCDHW"),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("nd,shape,osz,layout", ADAPTIVE_CASES)
def test_adaptive_pool(kind, nd, shape, osz, layout):
    x = rand(shape)
    full = (osz,) * nd if isinstance(osz, int) else osz
    want = adaptive_loops(x, kind, full).astype("float32")
    ctor = getattr(relay.nn, f"adaptive_{kind}_pool{nd}d")
    check_op(lambda a: ctor(a, osz, layout=layout), {"x": _to(x, LAYOUT[nd], layout)},
             _to(want, LAYOUT[nd], layout))


def test_adaptive_pool_without_output_size_keeps_size():
    t = infer(lambda a: relay.nn.adaptive_avg_pool2d(a), {"x": ((1, 3, 5, 7), "float32")})
    assert t == TensorType((1, 3, 5, 7), "float32")


def test_pool_attrs_follow_relay():
    x = relay.var("x", shape=(1, 3, 8, 8))
    c = relay.nn.avg_pool2d(x, pool_size=3, strides=2, padding=1)
    assert c.attrs.type_key == "relay.attrs.AvgPool2DAttrs"
    assert c.attrs.pool_size == (3, 3) and c.attrs.padding == (1, 1, 1, 1)
    assert c.attrs.count_include_pad is False and c.attrs.ceil_mode is False
    m = relay.nn.max_pool2d(x)
    assert m.attrs.type_key == "relay.attrs.MaxPool2DAttrs" and "count_include_pad" not in m.attrs
    assert relay.nn.global_avg_pool2d(x).attrs.type_key == "relay.attrs.GlobalPool2DAttrs"
    assert relay.op.get("nn.max_pool2d").get_attr("TOpPattern") == 4


POOL_ERRORS = [
    (lambda a: relay.nn.max_pool2d(a, 3), (1, 3, 8), r"nn.max_pool2d: data must be 4-d NCHW, got shape \(1, 3, 8\)"),
    (lambda a: relay.nn.avg_pool2d(a, 5), (1, 3, 4, 4), r"nn.avg_pool2d: output height would be 0: data shape \(1, 3, 4, 4\)"),
    (lambda a: relay.nn.max_pool2d(a, 2, layout="NCHW2h"), (1, 3, 2, 4, 2), r"layout 'NCHW2h' is not supported"),
    (lambda a: relay.nn.max_pool2d(a, 2, layout="NCHW16c"), (1, 3, 4, 4), r"data must be 5-d NCHW16c"),
    (lambda a: relay.nn.avg_pool2d(a, 2, layout="NCHW8c"), (1, 3, 4, 4, 4), r"channel block of 8 but data shape \(1, 3, 4, 4, 4\) has 4"),
    (lambda a: relay.nn.global_avg_pool2d(a, layout="NC4cHW4c"), (1, 3, 4, 4, 4), r"malformed layout"),
    (lambda a: relay.nn.max_pool2d(a, (2, 2, 2)), (1, 3, 4, 4), r"pool_size must have 1 or 2 values"),
    (lambda a: relay.nn.global_avg_pool2d(a), (3, 4, 4), r"nn.global_avg_pool2d: data must be 4-d"),
    (lambda a: relay.nn.adaptive_max_pool2d(a, (0, 2)), (1, 3, 4, 4), r"output_size \(0, 2\) must be positive"),
]


@pytest.mark.parametrize("make,shape,match", POOL_ERRORS)
def test_pool_errors(make, shape, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, {"x": (shape, "float32")})


@pytest.mark.parametrize("kind", ["max", "avg", "global_avg"])
def test_blocked_pool_gradient_equals_the_nchw_one(kind):
    def make(v, lay):
        if kind == "global_avg":
            return relay.nn.global_avg_pool2d(v, layout=lay)
        extra = {"count_include_pad": True} if kind == "avg" else {}
        ctor = getattr(relay.nn, f"{kind}_pool2d")
        return ctor(v, 3, 2, padding=1, layout=lay, ceil_mode=True, **extra)

    def grad(arr, lay, executor):
        v = relay.var("x", shape=arr.shape)
        y = make(v, lay)
        mod = relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function([v], relay.sum(relay.multiply(y, y)))))
        g = relay.IRModule.from_expr(relay.transform.gradient(mod["main"], mode="first_order"))
        return relay.create_executor(executor, mod=g, target="llvm").evaluate()(arr)[1][0].numpy()

    x = rand((1, 16, 7, 9))
    want = _block(grad(x, "NCHW", "debug"), 8)
    for executor in ("debug", "graph"):
        np.testing.assert_allclose(grad(_block(x, 8), "NCHW8c", executor), want,
                                   rtol=1e-5, atol=1e-6)
