"""nn.pad, nn.batch_flatten, nn.depth_to_space, nn.space_to_depth and nn.upsampling against
NumPy, through the interpreter and the compiled graph executor; errors."""

import numpy as np
import pytest
from nn_util import check_op, infer, keys_cubic, rand

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType

X = rand((1, 3, 4, 5))


def pad_loops(x, widths, mode, value=0.0):
    """Padding by index arithmetic: out[i] reads x[src(i)] per axis, or ``value``."""
    out_shape = [d + b + a for d, (b, a) in zip(x.shape, widths)]
    out = np.full(out_shape, value, dtype=x.dtype)
    for idx in np.ndindex(*out_shape):
        src = []
        for i, (b, _) in zip(idx, widths):
            j = i - b
            n = x.shape[len(src)]
            if mode == "edge":
                j = min(max(j, 0), n - 1)
            elif mode == "reflect":
                j = -j if j < 0 else (2 * (n - 1) - j if j >= n else j)
            src.append(j)
        if all(0 <= j < n for j, n in zip(src, x.shape)):
            out[idx] = x[tuple(src)]
    return out


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("widths", [((0, 0), (1, 0), (2, 1), (0, 3)), ((0, 0), (0, 2), (3, 3), (1, 1))])
def test_pad(mode, widths):
    check_op(lambda a: relay.nn.pad(a, widths, 1.5, mode), {"x": X},
             pad_loops(X, widths, mode, 1.5))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_negative_widths_crop_first(mode):
    """A negative width crops that side before the padding (tvm.relay 0.19, ONNX Pad); it was
    refused (TVM v0.19's test_pad_run). The reference: NumPy slicing, then pad_loops."""
    x = rand((4, 6, 5, 7))
    widths = ((-1, -1), (2, -2), (0, -2), (-3, 2))
    crop = x[1:3, 0:4, 0:3, 3:7]
    want = pad_loops(crop, [(max(b, 0), max(a, 0)) for b, a in widths], mode, 1.5)
    check_op(lambda a: relay.nn.pad(a, widths, 1.5, mode), {"x": x}, want)


def test_pad_crop_errors():
    def typed(widths, shape=(2, 3), mode="constant"):
        x = relay.var("x", shape=shape)
        return relay.transform.InferTypeLocal(relay.nn.pad(x, widths, pad_mode=mode))

    with pytest.raises(TypeInferenceError, match=r"crops 4 from axis 1 of size 3"):
        typed(((0, 0), (-2, -2)))
    with pytest.raises(TypeInferenceError, match="crops .* axis 0, whose size is not static"):
        typed(((-1, 0), (0, 0)), shape=(relay.Any(), 3))
    with pytest.raises(TypeInferenceError, match="reflect padding of 2 on axis 1 .* cropped to 2"):
        typed(((0, 0), (-1, 2)), mode="reflect")
    assert typed(((-1, 1), (-3, 0))).concrete_shape == (2, 0)


def test_pad_value_as_an_expression():
    widths = ((1, 1), (0, 2))
    x = rand((2, 3))
    check_op(lambda a, v: relay.nn.pad(a, widths, v), {"x": x, "v": np.array(-2.0, "float32")},
             pad_loops(x, widths, "constant", -2.0))


def test_pad_int_and_float16():
    x = np.arange(6, dtype="int32").reshape(2, 3)
    check_op(lambda a: relay.nn.pad(a, ((1, 0), (1, 2)), 7), {"x": x},
             pad_loops(x, ((1, 0), (1, 2)), "constant", 7))
    h = rand((2, 3), "float16")
    check_op(lambda a: relay.nn.pad(a, ((1, 0), (1, 2)), pad_mode="edge"), {"x": h},
             pad_loops(h, ((1, 0), (1, 2)), "edge"))


def test_batch_flatten():
    check_op(lambda a: relay.nn.batch_flatten(a), {"x": X}, X.reshape(1, 60))
    y = rand((3, 2))
    check_op(lambda a: relay.nn.batch_flatten(a), {"x": y}, y)


def d2s_loops(x, b, mode):
    n, c, h, w = x.shape
    oc = c // (b * b)
    out = np.empty((n, oc, h * b, w * b), x.dtype)
    for ch, i, j in np.ndindex(oc, h * b, w * b):
        bi, bj = i % b, j % b
        src = (bi * b + bj) * oc + ch if mode == "DCR" else ch * b * b + bi * b + bj
        out[:, ch, i, j] = x[:, src, i // b, j // b]
    return out


def s2d_loops(x, b):
    n, c, h, w = x.shape
    out = np.empty((n, c * b * b, h // b, w // b), x.dtype)
    for ch, i, j in np.ndindex(c * b * b, h // b, w // b):
        blk, src_c = divmod(ch, c)
        bi, bj = divmod(blk, b)
        out[:, ch, i, j] = x[:, src_c, i * b + bi, j * b + bj]
    return out


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("b", [2, 3])
def test_depth_to_space(mode, layout, b):
    x = rand((2, 2 * b * b, 2, 3))
    want = d2s_loops(x, b, mode)
    if layout == "NHWC":
        x, want = x.transpose(0, 2, 3, 1), want.transpose(0, 2, 3, 1)
    check_op(lambda a: relay.nn.depth_to_space(a, b, layout, mode), {"x": x}, want)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("b", [2, 3])
def test_space_to_depth(layout, b):
    x = rand((2, 3, 2 * b, 3 * b))
    want = s2d_loops(x, b)
    assert np.array_equal(d2s_loops(want, b, "DCR"), x)  # the two loops are inverses
    if layout == "NHWC":
        x, want = x.transpose(0, 2, 3, 1), want.transpose(0, 2, 3, 1)
    check_op(lambda a: relay.nn.space_to_depth(a, b, layout), {"x": x}, want)


def upsample_loops(x, sh, sw, method, align_corners):
    """Per-pixel upsampling of NCHW ``x``: nearest (floor of asymmetric, round of
    align-corner coordinates) or bilinear with edge clamping."""
    n, c, h, w = x.shape
    oh, ow = int(np.floor(h * sh + 0.5)), int(np.floor(w * sw + 0.5))
    out = np.empty((n, c, oh, ow))

    def src(o, insz, outsz):
        if align_corners:
            return o * (insz - 1) / (outsz - 1) if outsz > 1 else 0.0
        return o * insz / outsz

    for i, j in np.ndindex(oh, ow):
        y, z = src(i, h, oh), src(j, w, ow)
        if method == "nearest_neighbor":
            rnd = np.rint if align_corners else (lambda t: np.floor(t + 1e-5))
            yi, zi = min(int(rnd(y)), h - 1), min(int(rnd(z)), w - 1)
            out[:, :, i, j] = x[:, :, yi, zi]
        else:
            y0, z0 = int(np.floor(y)), int(np.floor(z))
            ty, tz = y - y0, z - z0
            y1, z1 = min(y0 + 1, h - 1), min(z0 + 1, w - 1)
            top = x[:, :, y0, z0] * (1 - tz) + x[:, :, y0, z1] * tz
            bot = x[:, :, y1, z0] * (1 - tz) + x[:, :, y1, z1] * tz
            out[:, :, i, j] = top * (1 - ty) + bot * ty
    return out


@pytest.mark.parametrize("method", ["nearest_neighbor", "bilinear"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("scales", [(2, 2), (2, 1.5), (3, 1)])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_upsampling(method, align_corners, scales, layout):
    x = rand((1, 2, 3, 4))
    want = upsample_loops(x.astype("float64"), *scales, method, align_corners).astype("float32")
    if layout == "NHWC":
        x, want = x.transpose(0, 2, 3, 1), want.transpose(0, 2, 3, 1)
    check_op(lambda a: relay.nn.upsampling(a, *scales, layout, method, align_corners),
             {"x": x}, want)


def test_upsampling_bicubic_shape_and_integer_scale_nearest_is_repeat():
    t = infer(lambda a: relay.nn.upsampling(a, 2, 3, method="bicubic"),
              {"x": ((1, 2, 3, 4), "float32")})
    assert t == TensorType((1, 2, 6, 12), "float32")
    x = rand((1, 2, 3, 4))
    check_op(lambda a: relay.nn.upsampling(a, 2, 3), {"x": x},
             x.repeat(2, axis=2).repeat(3, axis=3))


def upsample_bicubic_loops(x, sh, sw, align_corners, a):
    """Per-pixel bicubic upsampling of NCHW ``x``: Keys' kernel of parameter ``a`` on the four
    pixels around each source coordinate (asymmetric or align-corner mapping), edge pixels
    repeated outside the image."""
    n, c, h, w = x.shape
    oh, ow = int(np.floor(h * sh + 0.5)), int(np.floor(w * sw + 0.5))

    def src(o, insz, outsz):
        if align_corners:
            return o * (insz - 1) / (outsz - 1) if outsz > 1 else 0.0
        return o * insz / outsz

    out = np.zeros((n, c, oh, ow))
    for i, j in np.ndindex(oh, ow):
        y, z = src(i, h, oh), src(j, w, ow)
        y0, z0 = int(np.floor(y)), int(np.floor(z))
        for p in range(y0 - 1, y0 + 3):
            for q in range(z0 - 1, z0 + 3):
                weight = keys_cubic(y - p, a) * keys_cubic(z - q, a)
                out[:, :, i, j] += weight * x[:, :, min(max(p, 0), h - 1), min(max(q, 0), w - 1)]
    return out


@pytest.mark.parametrize("align_corners", [False, True])
def test_upsampling_bicubic_is_keys_cubic_with_alpha_minus_half(align_corners):
    """tvm.relay 0.19's bicubic upsampling was topi.image.resize2d with its default
    bicubic_alpha, -0.5 in TVM 0.19; relay_tvm took TVM 0.27's default, -0.75."""
    x = rand((1, 2, 3, 4))
    want = upsample_bicubic_loops(x.astype("float64"), 2, 1.5, align_corners, -0.5)
    other = upsample_bicubic_loops(x.astype("float64"), 2, 1.5, align_corners, -0.75)
    assert np.abs(want - other).max() > 1e-2  # the two alphas are told apart
    check_op(lambda a: relay.nn.upsampling(a, 2, 1.5, method="bicubic",
                                           align_corners=align_corners),
             {"x": x}, want.astype("float32"))


ERRORS = [
    (lambda a: relay.nn.pad(a, ((1, 1),)), (2, 3), r"nn.pad: pad_width must hold one \(before, "
     r"after\) pair per axis of data shape \(2, 3\)"),
    (lambda a: relay.nn.pad(a, ((0, 0), (3, 0)), pad_mode="reflect"), (2, 3),
     r"nn.pad: reflect padding of 3 on axis 1"),
    (lambda a: relay.nn.pad(a, ((0, 0), (1, 0)), pad_mode="wrap"), (2, 3), r"pad_mode 'wrap'"),
    (lambda a: relay.nn.depth_to_space(a, 2), (1, 6, 2, 2),
     r"nn.depth_to_space: channels 6 of data shape \(1, 6, 2, 2\) are not divisible by"),
    (lambda a: relay.nn.space_to_depth(a, 2), (1, 2, 3, 4),
     r"nn.space_to_depth: height 3 of data shape \(1, 2, 3, 4\) is not divisible"),
    (lambda a: relay.nn.upsampling(a, 2, 2, method="area"), (1, 2, 3, 4), r"method 'area'"),
    (lambda a: relay.nn.upsampling(a, 2, 2), (2, 3, 4), r"nn.upsampling: data must be 4-d NCHW"),
]


@pytest.mark.parametrize("make,shape,match", ERRORS)
def test_errors(make, shape, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, {"x": (shape, "float32")})


def test_pad_value_must_be_scalar():
    with pytest.raises(TypeInferenceError, match="nn.pad: pad_value must be a scalar"):
        infer(lambda a, v: relay.nn.pad(a, ((1, 1),), v), {"x": ((3,), "float32"),
                                                           "v": ((2,), "float32")})
