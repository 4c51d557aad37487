"""VM kernels of pooling, batch_flatten and upsampling with ``Any`` spatial dimensions (new-user
finding: max/avg pool raised a raw TypeError inside the compute, batch_flatten and upsampling
said they had no shape function; tvm.relay 0.19 compiled these). One executable serves every
size; each output is compared with the interpreter on a static-shape copy of the program."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InputError

A = relay.Any()

CASES = {
    "max_pool2d": (4, lambda x: relay.nn.max_pool2d(x, (2, 2), (2, 2))),
    # ceil_mode's PyTorch rule (the last window starts inside the input or its leading pad):
    # (4, 4) with pool 1, stride 2 and trailing pad 1 gives 2, not 3
    "max_pool2d_ceil": (4, lambda x: relay.nn.max_pool2d(x, (1, 1), (2, 2), padding=(0, 0, 1, 1),
                                                         ceil_mode=True)),
    "avg_pool2d_ceil": (4, lambda x: relay.nn.avg_pool2d(x, (3, 3), (2, 2), padding=(1, 1),
                                                         ceil_mode=True)),
    "avg_pool2d_count_pad": (4, lambda x: relay.nn.avg_pool2d(
        x, (3, 3), (2, 2), padding=(1, 1), count_include_pad=True)),
    "max_pool1d": (3, lambda x: relay.nn.max_pool1d(x, (3,), (2,), padding=(1,))),
    "avg_pool3d": (5, lambda x: relay.nn.avg_pool3d(x, (2, 2, 2), (2, 2, 2))),
    "adaptive_max_pool2d": (4, lambda x: relay.nn.adaptive_max_pool2d(x, (2, 3))),
    "global_max_pool2d": (4, lambda x: relay.nn.global_max_pool2d(x)),
    "batch_flatten": (4, lambda x: relay.nn.batch_flatten(x)),
    "upsampling": (4, lambda x: relay.nn.upsampling(x, 2, 2)),
    "upsampling_fractional": (4, lambda x: relay.nn.upsampling(x, 1.5, 1.3)),
    "upsampling_bilinear": (4, lambda x: relay.nn.upsampling(x, 2, 2, method="bilinear",
                                                             align_corners=True)),
    "upsampling3d": (5, lambda x: relay.nn.upsampling3d(x, 2, 1.5, 2)),
}
SIZES = [(6, 8, 5), (7, 5, 4), (4, 4, 3)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_any_spatial_kernel_matches_the_interpreter(name):
    nd, make = CASES[name]
    x = relay.var("x", shape=(1, 3) + (A,) * (nd - 2))
    vm = relay.create_executor("vm", mod=relay.IRModule.from_expr(
        relay.Function([x], make(x)))).evaluate()
    rng = np.random.default_rng(0)
    for size in SIZES:
        xv = rng.standard_normal((1, 3, *size[:nd - 2])).astype("float32")
        xs = relay.var("x", shape=xv.shape)
        want = relay.create_executor("debug", mod=relay.IRModule.from_expr(
            relay.Function([xs], make(xs)))).evaluate()(xv).numpy()
        got = vm(xv).numpy()
        assert got.shape == want.shape, (size, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_any_spatial_max_pool_against_numpy():
    """An independent reference for one case: 2x2 stride-2 max pooling is a reshape's max."""
    x = relay.var("x", shape=(1, 2, A, A))
    vm = relay.create_executor("vm", mod=relay.IRModule.from_expr(
        relay.Function([x], relay.nn.max_pool2d(x, (2, 2), (2, 2))))).evaluate()
    xv = np.random.default_rng(1).standard_normal((1, 2, 6, 10)).astype("float32")
    want = xv.reshape(1, 2, 3, 2, 5, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(vm(xv).numpy(), want)


@pytest.mark.parametrize("shape", [(2, 6, A, A), (A, 6, A), (A, A, A, A)])
def test_group_norm_of_any_dims_against_numpy(shape):
    """SimplifyInference's group_norm lowering built a reshape from the data's shape and failed
    on ``Any`` (user trial); it reshapes with 0 / -4 / -3 / -2 codes then."""
    x = relay.var("x", shape=shape)
    g, b = relay.var("g", shape=(6,)), relay.var("b", shape=(6,))
    vm = relay.create_executor("vm", mod=relay.IRModule.from_expr(relay.Function(
        [x, g, b], relay.nn.group_norm(x, g, b, num_groups=3, epsilon=1e-5)))).evaluate()
    rng = np.random.default_rng(2)
    gv, bv = rng.standard_normal(6).astype("float32"), rng.standard_normal(6).astype("float32")
    for hw in [(4, 5), (1, 1), (7, 3)]:
        full = (2, 6) + hw[:len(shape) - 2]
        xv = rng.standard_normal(full).astype("float32")
        xg = xv.astype("float64").reshape(2, 3, -1)
        y = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
        bshape = (1, 6) + (1,) * (len(full) - 2)
        want = y.reshape(full) * gv.reshape(bshape) + bv.reshape(bshape)
        np.testing.assert_allclose(vm(xv, gv, bv).numpy(), want, rtol=1e-5, atol=1e-5)


# ---- type relations over Any dimensions (user trial: a Python TypeError in each) -------------


def _infer(expr):
    mod = relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
    return relay.transform.InferType()(mod)["main"].body.checked_type


def _vm_of(params, body):
    return relay.create_executor("vm", mod=relay.IRModule.from_expr(
        relay.Function(params, body))).evaluate()


def test_relations_give_any_where_an_input_dimension_is_any():
    x = relay.var("x", shape=(1, 4, A, A))
    nhwc = relay.var("y", shape=(1, A, A, 4))
    t = relay.TensorType
    assert _infer(relay.nn.space_to_depth(x, 2)) == t((1, 16, A, A), "float32")
    assert _infer(relay.nn.depth_to_space(x, 2)) == t((1, 1, A, A), "float32")
    assert _infer(relay.nn.space_to_depth(nhwc, 2, layout="NHWC")) == t((1, A, A, 16), "float32")
    assert _infer(relay.vision.yolo_reorg(x, 2)) == t((1, 16, A, A), "float32")
    assert _infer(relay.vision.yolo_reorg(relay.var("z", shape=(A, A, 4, 6)), 2)) == \
        t((A, A, 2, 3), "float32")
    assert _infer(relay.vision.multibox_prior(x, sizes=(1.0, 0.5), ratios=(1.0, 2.0))) == \
        t((1, A, 4), "float32")
    off, w = relay.var("off", shape=(1, 18, A, A)), relay.var("w", shape=(8, 4, 3, 3))
    assert _infer(relay.nn.deformable_conv2d(x, off, w, kernel_size=(3, 3), channels=8,
                                             padding=(1, 1))) == t((1, 8, A, A), "float32")
    dn, offn = relay.var("d", shape=(1, A, A, 4)), relay.var("o", shape=(1, A, A, 18))
    wn = relay.var("wn", shape=(3, 3, 4, 8))
    assert _infer(relay.nn.deformable_conv2d(
        dn, offn, wn, kernel_size=(3, 3), channels=8, padding=(1, 1), data_layout="NHWC",
        kernel_layout="HWIO")) == t((1, A, A, 8), "float32")


def test_space_depth_and_yolo_reorg_of_any_dims_against_numpy():
    x = relay.var("x", shape=(1, 4, A, A))
    s2d = _vm_of([x], relay.nn.space_to_depth(x, 2))
    d2s = _vm_of([x], relay.nn.depth_to_space(x, 2))
    reorg = _vm_of([x], relay.vision.yolo_reorg(x, 2))
    rng = np.random.default_rng(4)
    for h, w in [(6, 4), (2, 8)]:
        xv = rng.standard_normal((1, 4, h, w)).astype("float32")
        want = xv.reshape(1, 4, h // 2, 2, w // 2, 2).transpose(0, 3, 5, 1, 2, 4)
        np.testing.assert_array_equal(s2d(xv).numpy(), want.reshape(1, 16, h // 2, w // 2))
        want = xv.reshape(1, 2, 2, 1, h, w).transpose(0, 3, 4, 1, 5, 2)  # DCR
        np.testing.assert_array_equal(d2s(xv).numpy(), want.reshape(1, 1, 2 * h, 2 * w))
        # darknet's reorg (forward = 0), element by element
        flat, out = xv.reshape(-1), np.empty(xv.size, "float32")
        oc = 4 // 4
        for k in range(4):
            for j in range(h):
                for i in range(w):
                    off = k // oc
                    src = (i * 2 + off % 2) + w * 2 * ((j * 2 + off // 2) + h * 2 * (k % oc))
                    out[i + w * (j + h * k)] = flat[src]
        got = reorg(xv).numpy()
        assert got.shape == (1, 16, h // 2, w // 2)
        np.testing.assert_array_equal(got.reshape(-1), out)
    with pytest.raises(InputError, match="space_to_depth"):
        s2d(np.zeros((1, 4, 3, 4), "float32"))  # height 3 does not divide by 2


def test_multibox_prior_of_any_dims_against_numpy():
    x = relay.var("x", shape=(1, 4, A, A))
    sizes, ratios = (0.6, 0.3), (1.0, 2.0, 0.5)
    vm = _vm_of([x], relay.vision.multibox_prior(x, sizes=sizes, ratios=ratios))
    for h, w in [(3, 5), (4, 4)]:
        # MXNet's MultiBoxPrior: per position, one box per size, then per extra ratio
        halves = [(s * h / w / 2, s / 2) for s in sizes]
        halves += [(sizes[0] * h / w * np.sqrt(r) / 2, sizes[0] / np.sqrt(r) / 2)
                   for r in ratios[1:]]
        want = []
        for i in range(h):
            for j in range(w):
                cy, cx = (i + 0.5) / h, (j + 0.5) / w
                want += [[cx - hw, cy - hh, cx + hw, cy + hh] for hw, hh in halves]
        got = vm(np.zeros((1, 4, h, w), "float32")).numpy()
        np.testing.assert_allclose(got, np.array([want]), rtol=1e-6, atol=1e-6)


def test_deformable_conv2d_of_any_dims_against_numpy():
    """With zero offsets a deformable convolution is a plain one; with offsets, the kernel of
    Any size equals the interpreter on the static program."""
    d, off = relay.var("d", shape=(1, 4, A, A)), relay.var("off", shape=(1, 18, A, A))
    w = relay.var("w", shape=(8, 4, 3, 3))

    def make(d, off, w):
        return relay.nn.deformable_conv2d(d, off, w, kernel_size=(3, 3), channels=8,
                                          padding=(1, 1))

    vm = _vm_of([d, off, w], make(d, off, w))
    rng = np.random.default_rng(5)
    wv = rng.standard_normal((8, 4, 3, 3)).astype("float32")
    for h, wd in [(5, 6), (3, 3)]:
        xv = rng.standard_normal((1, 4, h, wd)).astype("float32")
        pad = np.pad(xv.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
        want = np.zeros((1, 8, h, wd))
        for i in range(3):
            for j in range(3):
                want += np.einsum("oc,nchw->nohw", wv[:, :, i, j], pad[:, :, i:i + h, j:j + wd])
        got = vm(xv, np.zeros((1, 18, h, wd), "float32"), wv).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        ov = rng.uniform(-1, 1, (1, 18, h, wd)).astype("float32")
        ds, os_ = relay.var("d", shape=xv.shape), relay.var("off", shape=ov.shape)
        ws = relay.var("w", shape=wv.shape)
        ref = relay.create_executor("debug", mod=relay.IRModule.from_expr(relay.Function(
            [ds, os_, ws], make(ds, os_, ws)))).evaluate()(xv, ov, wv).numpy()
        np.testing.assert_allclose(vm(xv, ov, wv).numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("nd", [4, 5])
def test_interpreter_upsampling_of_any_dims_against_numpy(nd):
    """The debug interpreter's reference kernels took the output size from the type, ``?``
    there (user trial); they use the array's shape."""
    x = relay.var("x", shape=(1, 2) + (A,) * (nd - 2))
    if nd == 4:
        body, reps = relay.nn.upsampling(x, 2, 3), (2, 3)
    else:
        body = relay.nn.upsampling3d(x, 2, 1, 2, coordinate_transformation_mode="asymmetric")
        reps = (2, 1, 2)
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    interp = relay.create_executor("debug", mod=mod).evaluate()
    vm = relay.create_executor("vm", mod=mod).evaluate()
    rng = np.random.default_rng(6)
    for size in [(3, 4, 2), (1, 5, 3)]:
        xv = rng.standard_normal((1, 2) + size[:nd - 2]).astype("float32")
        want = xv
        for axis, r in enumerate(reps, start=2):
            want = np.repeat(want, r, axis=axis)
        np.testing.assert_array_equal(interp(xv).numpy(), want)
        np.testing.assert_array_equal(vm(xv).numpy(), want)
