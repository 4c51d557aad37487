"""nn.mirror_pad, nn.dilate, nn.space_to_batch_nd, nn.batch_to_space_nd, nn.upsampling3d
against index-formula NumPy loops, through the interpreter and the compiled graph executor."""

import itertools
import math

import numpy as np
import pytest
from nn_util import check_op, infer, rand

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def mirror_loops(x, widths, mode):
    out_shape = [d + b + a for d, (b, a) in zip(x.shape, widths)]
    out = np.empty(out_shape, x.dtype)
    shift = 0 if mode == "REFLECT" else 1  # SYMMETRIC repeats the border element
    for idx in np.ndindex(*out_shape):
        src = []
        for i, (b, _), n in zip(idx, widths, x.shape):
            j = i - b
            if j < 0:
                j = -j - shift
            elif j >= n:
                j = 2 * n - j - 2 + shift
            src.append(j)
        out[idx] = x[tuple(src)]
    return out


@pytest.mark.parametrize("mode,widths", [
    ("SYMMETRIC", ((1, 0), (2, 3), (0, 4))),
    ("REFLECT", ((1, 0), (2, 2), (0, 3))),
    ("SYMMETRIC", ((0, 0), (3, 3), (4, 4))),
])
def test_mirror_pad(mode, widths):
    x = rand((2, 3, 4))
    check_op(lambda a: relay.nn.mirror_pad(a, widths, mode), {"x": x}, mirror_loops(x, widths, mode))


@pytest.mark.parametrize("strides,value", [((1, 2, 3), 0.0), ((2, 1, 1), -1.5)])
def test_dilate(strides, value):
    x = rand((2, 3, 4))
    out = np.full([(d - 1) * s + 1 for d, s in zip(x.shape, strides)], value, "float32")
    for idx in np.ndindex(*x.shape):
        out[tuple(i * s for i, s in zip(idx, strides))] = x[idx]
    check_op(lambda a: relay.nn.dilate(a, strides, value), {"x": x}, out)


def s2b_loops(x, block, pads, value):
    m = len(block)
    xp = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)] * (x.ndim - 1 - m), constant_values=value)
    n = x.shape[0]
    out_shape = [n * math.prod(block)] + [xp.shape[1 + k] // b for k, b in enumerate(block)]
    out_shape += list(x.shape[1 + m:])
    out = np.empty(out_shape, x.dtype)
    offsets = list(itertools.product(*[range(b) for b in block]))
    for ob in range(out_shape[0]):
        off, nb = offsets[ob // n], ob % n
        for pos in np.ndindex(*out_shape[1:1 + m]):
            src = (nb,) + tuple(p * b + o for p, b, o in zip(pos, block, off))
            out[(ob,) + pos] = xp[src]
    return out


def b2s_loops(x, block, crops):
    m = len(block)
    n = x.shape[0] // math.prod(block)
    out_shape = [n] + [x.shape[1 + k] * b - c0 - c1 for k, (b, (c0, c1)) in
                       enumerate(zip(block, crops))] + list(x.shape[1 + m:])
    out = np.empty(out_shape, x.dtype)
    offsets = {o: i for i, o in enumerate(itertools.product(*[range(b) for b in block]))}
    for nb in range(n):
        for pos in np.ndindex(*out_shape[1:1 + m]):
            full = [p + c[0] for p, c in zip(pos, crops)]
            off = tuple(f % b for f, b in zip(full, block))
            src = (offsets[off] * n + nb,) + tuple(f // b for f, b in zip(full, block))
            out[(nb,) + pos] = x[src]
    return out


@pytest.mark.parametrize("shape,block,pads", [
    ((2, 4, 6, 3), (2, 3), ((0, 2), (1, 2))),
    ((1, 4, 4), (2,), ((1, 1),)),
    ((3, 2, 4, 2), (2, 2), ((0, 0), (0, 0))),
])
def test_space_to_batch_nd(shape, block, pads):
    x = rand(shape)
    want = s2b_loops(x, block, pads, 0.5)
    check_op(lambda a: relay.nn.space_to_batch_nd(a, block, pads, 0.5), {"x": x}, want)
    # batch_to_space_nd with the same crops undoes it
    check_op(lambda a: relay.nn.batch_to_space_nd(a, block, pads), {"x": want}, x)


@pytest.mark.parametrize("shape,block,crops", [
    ((12, 2, 3, 3), (2, 3), ((0, 1), (2, 1))),
    ((4, 3, 2), (4,), ((1, 2),)),
])
def test_batch_to_space_nd(shape, block, crops):
    x = rand(shape)
    check_op(lambda a: relay.nn.batch_to_space_nd(a, block, crops), {"x": x},
             b2s_loops(x, block, crops))


def up3_loops(x, scales, method, mode):
    n, c, *size = x.shape
    osz = [int(math.floor(s * k + 0.5)) for s, k in zip(size, scales)]
    out = np.zeros((n, c, *osz))

    def taps(o, insz, outsz):
        v = (o * (insz - 1) / (outsz - 1) if mode == "align_corners"
             else (o + 0.5) * insz / outsz - 0.5)
        if method == "nearest_neighbor":
            r = int(np.rint(v)) if mode == "align_corners" else math.floor(v + 1e-5)
            return [(min(max(r, 0), insz - 1), 1.0)]
        f = math.floor(v)
        return [(min(max(f, 0), insz - 1), 1 - (v - f)), (min(max(f + 1, 0), insz - 1), v - f)]

    for pos in np.ndindex(*osz):
        for combo in itertools.product(*[taps(p, s, o) for p, s, o in zip(pos, size, osz)]):
            wt = math.prod(t[1] for t in combo)
            out[(slice(None), slice(None)) + pos] += wt * x[(slice(None), slice(None)) +
                                                             tuple(t[0] for t in combo)]
    return out


@pytest.mark.parametrize("method", ["nearest_neighbor", "trilinear"])
@pytest.mark.parametrize("mode", ["half_pixel", "align_corners"])
@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_upsampling3d(method, mode, layout):
    x = rand((1, 2, 2, 3, 2))
    scales = (2, 1.5, 2)
    want = up3_loops(x.astype("float64"), scales, method, mode).astype("float32")
    if layout == "NDHWC":
        x, want = x.transpose(0, 2, 3, 4, 1), want.transpose(0, 2, 3, 4, 1)
    check_op(lambda a: relay.nn.upsampling3d(a, *scales, layout=layout, method=method,
                                             coordinate_transformation_mode=mode),
             {"x": x}, want)


ERRORS = [
    (lambda a: relay.nn.mirror_pad(a, ((0, 0), (3, 0)), "REFLECT"), (2, 3),
     r"nn.mirror_pad: REFLECT padding \(3, 0\) on axis 1 of data shape \(2, 3\) must be within"),
    (lambda a: relay.nn.dilate(a, (2,)), (2, 3), r"nn.dilate: strides must give one positive int"),
    (lambda a: relay.nn.space_to_batch_nd(a, (2,), ((0, 1),)), (1, 4, 2),
     r"nn.space_to_batch_nd: padded axis 1 \(4 \+ 0 \+ 1\) .* not divisible by block 2"),
    (lambda a: relay.nn.batch_to_space_nd(a, (2, 2), ((0, 0), (0, 0))), (6, 2, 2),
     r"nn.batch_to_space_nd: batch 6 of data shape \(6, 2, 2\) is not divisible"),
    (lambda a: relay.nn.upsampling3d(a, 2, 2, 2), (1, 2, 3, 4),
     r"nn.upsampling3d: data must be 5-d NCDHW"),
]


@pytest.mark.parametrize("make,shape,match", ERRORS)
def test_errors(make, shape, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, {"x": (shape, "float32")})


def _dilated(v, strides, value):
    shape = [(d - 1) * s + 1 if d else 0 for d, s in zip(v.shape, strides)]
    out = np.full(shape, value, v.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = v
    return out


@pytest.mark.parametrize("shape,vshape,strides", [
    ((relay.Any(),) * 3, (1, 2, 3), (3, 7, 5)),
    ((relay.Any(), 3), (0, 3), (3, 5)),
    ((2, 0, 3), (2, 0, 3), (3, 7, 5)),
])
def test_dilate_of_any_and_empty_axes(shape, vshape, strides):
    """nn.dilate of Any-shaped data in the interpreter (it sized its output from the static
    type: RelayError "not concrete", TVM 0.19's test_any) and of an axis of size 0, which stays
    empty (topi's (d - 1) * s + 1 is negative there: a static 0 failed to build, an Any 0 was
    an invalid run-time shape)."""
    import tvm

    x = relay.var("x", shape=shape)
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.dilate(x, strides, 2.5)))
    v = np.random.RandomState(0).rand(*vshape).astype("float32")
    want = _dilated(v, strides, np.float32(2.5))
    kinds = ["debug", "vm"] + (["graph"] if all(isinstance(d, int) for d in shape) else [])
    for kind in kinds:
        got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(v).numpy()
        assert got.shape == want.shape, kind
        np.testing.assert_array_equal(got, want)
