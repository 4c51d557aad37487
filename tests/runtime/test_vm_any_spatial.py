"""VM kernels of pooling, batch_flatten and upsampling with ``Any`` spatial dimensions (new-user
finding: max/avg pool raised a raw TypeError inside the compute, batch_flatten and upsampling
said they had no shape function; tvm.relay 0.19 compiled these). One executable serves every
size; each output is compared with the interpreter on a static-shape copy of the program."""

import numpy as np
import pytest

import relay_tvm as relay

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
