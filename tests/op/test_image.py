"""image.resize2d against a per-pixel NumPy implementation of the ONNX Resize rules, through the
interpreter and the compiled graph executor; errors."""

import itertools
import math

import numpy as np
import pytest
from nn_util import check_op, infer, keys_cubic, make_mod, rand, run_compiled, run_debug

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType


def _coord(o, insz, outsz, mode):
    if mode == "half_pixel":
        return (o + 0.5) * insz / outsz - 0.5
    if mode == "align_corners":
        return o * (insz - 1) / (outsz - 1)
    if mode == "asymmetric":
        return o * insz / outsz
    if mode == "pytorch_half_pixel":
        return (o + 0.5) * insz / outsz - 0.5 if outsz > 1 else 0.0
    assert mode == "tf_half_pixel_for_nn"
    return (o + 0.5) * insz / outsz


def _nearest(v, rounding, mode):
    rounding = rounding or ("round" if mode == "align_corners" else "floor")
    if rounding == "round":
        return int(np.rint(v))
    if rounding == "floor":
        return math.floor(v + 1e-5)
    if rounding == "ceil":
        return math.ceil(v - 1e-5)
    if rounding == "round_prefer_floor":
        return math.ceil(v - 0.5)
    return math.floor(v + 0.5)  # round_prefer_ceil


def _cubic(t, a):
    """Keys' kernel weights of the taps at offsets -1, 0, 1, 2 for fraction t."""
    return [keys_cubic(t + 1, a), keys_cubic(t, a), keys_cubic(1 - t, a), keys_cubic(2 - t, a)]


def resize_loops(x, size, method, mode, rounding="", alpha=-0.5, exclude=0):
    """x in NCHW; one output pixel at a time."""
    n, c, h, w = x.shape
    oh, ow = size
    out = np.zeros((n, c, oh, ow))

    def px(i, j):
        return x[:, :, min(max(i, 0), h - 1), min(max(j, 0), w - 1)].astype("float64")

    for i in range(oh):
        for j in range(ow):
            y, z = _coord(i, h, oh, mode), _coord(j, w, ow, mode)
            if method == "nearest_neighbor":
                out[:, :, i, j] = px(_nearest(y, rounding, mode), _nearest(z, rounding, mode))
            elif method == "linear":
                y0, z0 = math.floor(y), math.floor(z)
                ty, tz = y - y0, z - z0
                out[:, :, i, j] = ((1 - ty) * ((1 - tz) * px(y0, z0) + tz * px(y0, z0 + 1))
                                   + ty * ((1 - tz) * px(y0 + 1, z0) + tz * px(y0 + 1, z0 + 1)))
            else:
                y0, z0 = math.floor(y), math.floor(z)
                wy, wz = _cubic(y - y0, alpha), _cubic(z - z0, alpha)
                if exclude:
                    wy = [wt if 0 <= y0 - 1 + k < h else 0.0 for k, wt in enumerate(wy)]
                    wz = [wt if 0 <= z0 - 1 + k < w else 0.0 for k, wt in enumerate(wz)]
                    wy = [wt / sum(wy) for wt in wy]
                    wz = [wt / sum(wz) for wt in wz]
                out[:, :, i, j] = sum(wy[a] * wz[b] * px(y0 - 1 + a, z0 - 1 + b)
                                      for a in range(4) for b in range(4))
    return out


MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [(7, 3), (2, 8)])
def test_resize2d_nchw(method, mode, size):
    x = rand((1, 2, 4, 5))
    want = resize_loops(x, size, method, mode).astype("float32")
    check_op(lambda a: relay.image.resize2d(a, size, method=method,
                                            coordinate_transformation_mode=mode),
             {"x": x}, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
def test_resize2d_nhwc(method):
    x = rand((2, 3, 4, 3))  # NHWC
    nchw = x.transpose(0, 3, 1, 2)
    want = resize_loops(nchw, (5, 7), method, "half_pixel").transpose(0, 2, 3, 1)
    check_op(lambda a: relay.image.resize2d(a, (5, 7), layout="NHWC", method=method),
             {"x": x}, want.astype("float32"))


@pytest.mark.parametrize("rounding", ["round", "floor", "ceil", "round_prefer_floor",
                                      "round_prefer_ceil"])
@pytest.mark.parametrize("mode", ["asymmetric", "half_pixel"])
def test_resize2d_rounding(rounding, mode):
    x = rand((1, 1, 3, 5))
    want = resize_loops(x, (7, 3), "nearest_neighbor", mode, rounding).astype("float32")
    check_op(lambda a: relay.image.resize2d(a, (7, 3), method="nearest_neighbor",
                                            coordinate_transformation_mode=mode,
                                            rounding_method=rounding),
             {"x": x}, want)


@pytest.mark.parametrize("alpha,exclude", [(-0.75, 0), (-0.5, 1), (-0.75, 1)])
def test_resize2d_cubic_parameters(alpha, exclude):
    x = rand((1, 2, 4, 4))
    want = resize_loops(x, (6, 9), "cubic", "half_pixel", alpha=alpha, exclude=exclude)
    check_op(lambda a: relay.image.resize2d(a, (6, 9), method="cubic", cubic_alpha=alpha,
                                            cubic_exclude=exclude),
             {"x": x}, want.astype("float32"), rtol=1e-5, atol=1e-5)


def test_resize2d_downscale_float16_and_bilinear_alias():
    x = rand((1, 2, 8, 6), "float16")
    want = resize_loops(x, (3, 4), "linear", "align_corners").astype("float16")
    check_op(lambda a: relay.image.resize2d(a, (3, 4), method="bilinear",
                                            coordinate_transformation_mode="align_corners"),
             {"x": x}, want, rtol=1e-3, atol=1e-3)


def _axis_weights(o, insz, outsz, method, mode, alpha=-0.5):
    """(index, weight) taps of output position ``o`` along one axis, edge-clamped."""
    v = _coord(o, insz, outsz, mode)
    if method == "nearest_neighbor":
        return [(min(max(_nearest(v, "", mode), 0), insz - 1), 1.0)]
    v0 = math.floor(v)
    clamp = [min(max(v0 + k, 0), insz - 1) for k in (-1, 0, 1, 2)]
    if method == "linear":
        return [(clamp[1], 1 - (v - v0)), (clamp[2], v - v0)]
    return list(zip(clamp, _cubic(v - v0, alpha)))


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
@pytest.mark.parametrize("mode", ["half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("layout", ["NCW", "NWC"])
def test_resize1d(method, mode, layout):
    x = rand((2, 3, 5))
    out = 8
    want = np.zeros((2, 3, out))
    for o in range(out):
        for i, wt in _axis_weights(o, 5, out, method, mode):
            want[:, :, o] += wt * x[:, :, i]
    if layout == "NWC":
        x, want = x.transpose(0, 2, 1), want.transpose(0, 2, 1)
    check_op(lambda a: relay.image.resize1d(a, out, layout=layout, method=method,
                                            coordinate_transformation_mode=mode),
             {"x": x}, want.astype("float32"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear"])
@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_resize3d(method, layout):
    x = rand((1, 2, 3, 4, 3))
    size = (5, 2, 4)
    want = np.zeros((1, 2, *size))
    for d, h, w in np.ndindex(*size):
        for (i, a), (j, b), (k, c) in itertools.product(
                _axis_weights(d, 3, size[0], method, "half_pixel"),
                _axis_weights(h, 4, size[1], method, "half_pixel"),
                _axis_weights(w, 3, size[2], method, "half_pixel")):
            want[:, :, d, h, w] += a * b * c * x[:, :, i, j, k]
    if layout == "NDHWC":
        x, want = x.transpose(0, 2, 3, 4, 1), want.transpose(0, 2, 3, 4, 1)
    check_op(lambda a: relay.image.resize3d(a, size, layout=layout, method=method),
             {"x": x}, want.astype("float32"), rtol=1e-5, atol=1e-5)


def test_resize2d_attrs_and_type():
    x = relay.var("x", shape=(1, 3, 4, 4))
    call = relay.image.resize2d(x, (8, 6))
    assert call.attrs.type_key == "relay.attrs.Resize2DAttrs"
    assert call.attrs.method == "linear" and call.attrs.cubic_alpha == -0.5
    assert call.attrs.coordinate_transformation_mode == "half_pixel"
    t = infer(lambda a: relay.image.resize2d(a, (8, 6), out_dtype="float16"),
              {"x": ((1, 3, 4, 4), "float32")})
    assert t == TensorType((1, 3, 8, 6), "float16")
    assert relay.op.get("image.resize2d").get_attr("TOpPattern") == 2  # kInjective


ERRORS = [
    (dict(size=(4, 4), method="area"), (1, 3, 4, 4), r"image.resize2d: method 'area'"),
    (dict(size=(4, 4), coordinate_transformation_mode="center"), (1, 3, 4, 4),
     r"coordinate_transformation_mode 'center'"),
    (dict(size=(4, 4), layout="NCHW4c"), (1, 3, 4, 4), r"layout 'NCHW4c' is not supported"),
    (dict(size=(4, 4)), (3, 4, 4), r"image.resize2d: data must be 4-d NCHW, got shape \(3, 4, 4\)"),
    (dict(size=(0, 4)), (1, 3, 4, 4), r"size must be 2 positive ints"),
]


@pytest.mark.parametrize("kw,shape,match", ERRORS)
def test_resize2d_errors(kw, shape, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(lambda a: relay.image.resize2d(a, **kw), {"x": (shape, "float32")})


# ---- affine_grid, grid_sample ------------------------------------------------------------------


def test_affine_grid():
    theta = rand((2, 2, 3))
    h, w = 4, 5
    want = np.zeros((2, 2, h, w))
    for n, d, i, j in np.ndindex(2, 2, h, w):
        x, y = -1 + 2 * j / (w - 1), -1 + 2 * i / (h - 1)
        want[n, d, i, j] = theta[n, d] @ np.array([x, y, 1.0])
    check_op(lambda a: relay.image.affine_grid(a, (h, w)), {"t": theta}, want.astype("float32"),
             rtol=1e-5, atol=1e-5)


def _grid_coord(g, size, align_corners, padding_mode):
    x = (g + 1) * (size - 1) / 2 if align_corners else ((g + 1) * size - 1) / 2
    if padding_mode == "reflection":
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        while x < lo or x > hi:  # mirror at the bounds until inside
            x = 2 * lo - x if x < lo else 2 * hi - x
    if padding_mode in ("border", "reflection"):
        x = min(max(x, 0.0), size - 1.0)
    return x


def grid_sample_loops(x, grid, method, padding_mode, align_corners):
    n, c, h, w = x.shape
    oh, ow = grid.shape[2:]
    out = np.zeros((n, c, oh, ow))

    def px(b, i, j):
        return x[b, :, i, j].astype("float64") if 0 <= i < h and 0 <= j < w else np.zeros(c)

    for b, i, j in np.ndindex(n, oh, ow):
        sx = _grid_coord(float(grid[b, 0, i, j]), w, align_corners, padding_mode)
        sy = _grid_coord(float(grid[b, 1, i, j]), h, align_corners, padding_mode)
        if method == "nearest":
            out[b, :, i, j] = px(b, int(np.rint(sy)), int(np.rint(sx)))
        else:
            y0, x0 = math.floor(sy), math.floor(sx)
            ty, tx = sy - y0, sx - x0
            out[b, :, i, j] = ((1 - ty) * ((1 - tx) * px(b, y0, x0) + tx * px(b, y0, x0 + 1))
                               + ty * ((1 - tx) * px(b, y0 + 1, x0) + tx * px(b, y0 + 1, x0 + 1)))
    return out


@pytest.mark.parametrize("method", ["nearest", "bilinear"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample(method, padding_mode, align_corners):
    x = rand((2, 3, 4, 6))
    grid = rand((2, 2, 3, 5), low=-1.4, high=1.4, seed=9)
    want = grid_sample_loops(x, grid, method, padding_mode, align_corners).astype("float32")
    check_op(lambda a, g: relay.image.grid_sample(a, g, method, padding_mode=padding_mode,
                                                  align_corners=align_corners),
             {"x": x, "g": grid}, want, rtol=1e-5, atol=1e-5)


def test_spatial_transformer_identity():
    """affine_grid of the identity then bilinear grid_sample reproduces the image."""
    x = rand((1, 2, 4, 5))
    theta = np.tile(np.array([[1, 0, 0], [0, 1, 0]], "float32"), (1, 1, 1))

    def make(a, t):
        return relay.image.grid_sample(a, relay.image.affine_grid(t, (4, 5)))

    mod_inputs = {"x": x, "t": theta}
    mod, arrays = make_mod(make, mod_inputs)
    np.testing.assert_allclose(run_debug(mod, arrays), x, rtol=1e-5, atol=1e-5)
    mod, arrays = make_mod(make, mod_inputs)
    np.testing.assert_allclose(run_compiled(mod, arrays), x, rtol=1e-5, atol=1e-5)


GRID_ERRORS = [
    (lambda a, g: relay.image.grid_sample(a, g), ((1, 3, 4, 4), (1, 3, 2, 2)),
     r"image.grid_sample: grid must be \(batch, 2, H, W\).*grid shape \(1, 3, 2, 2\)"),
    (lambda a, g: relay.image.grid_sample(a, g, "bicubic"), ((1, 3, 4, 4), (1, 2, 2, 2)),
     r"method 'bicubic' is not supported"),
    (lambda a, g: relay.image.grid_sample(a, g, padding_mode="wrap"), ((1, 3, 4, 4), (1, 2, 2, 2)),
     r"padding_mode 'wrap'"),
]


@pytest.mark.parametrize("make,shapes,match", GRID_ERRORS)
def test_grid_sample_errors(make, shapes, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, {"x": (shapes[0], "float32"), "g": (shapes[1], "float32")})


def test_affine_grid_errors():
    with pytest.raises(TypeInferenceError, match=r"image.affine_grid: data must be \(batch, 2, 3\)"):
        infer(lambda a: relay.image.affine_grid(a, (4, 4)), {"t": ((1, 3, 3), "float32")})
