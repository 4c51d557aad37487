"""tvm.relay.testing as 0.19 had it (fresh-user trial): workloads in 0.19's argument order
with ``layout=`` (a TypeError before, and a positional ``dtype`` landed in another argument),
dcgan's refusal of sizes it does not make (it returned a 64x64 image for any ``oshape``), the
``densenet`` and ``nat`` modules (ModuleNotFoundError before).

An NHWC network with the NCHW network's weights transposed (OIHW -> HWIO, depthwise OIHW ->
HWOI, IOHW -> HWOI) computes the NCHW network's values, transposed."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm import testing
from relay_tvm.errors import RelayError


def _run(mod, params, x):
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, "llvm", params=params)
    from relay_tvm.runtime import graph_executor

    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.run(data=x)
    return m.get_output(0).numpy()


def _transposed(params_nchw, params_nhwc, deconv=False):
    out = {}
    for k, v in params_nchw.items():
        v = v.numpy()
        want = tuple(params_nhwc[k].shape)
        if v.ndim == 4:
            if deconv:  # IOHW -> HWOI
                v = v.transpose(2, 3, 1, 0)
            elif v.shape[1] == 1 and v.shape[0] != 1 and want[2:] == (v.shape[0], 1):
                v = v.transpose(2, 3, 0, 1)  # depthwise OIHW -> HWOI
            else:
                v = v.transpose(2, 3, 1, 0)  # OIHW -> HWIO
        assert v.shape == want, k
        out[k] = v
    return out


def test_default_initializer_follows_the_019_name_endings():
    """Fresh-user trial: the TVM tutorials' simple_net (conv, batch_norm with ``bn_gamma``,
    ``bn_beta``, ``bn_mean``, ``bn_var``, relu) gave NaN through create_workload: ``bn_var``
    was drawn from [-0.1, 0.1] (only ``_moving_var`` counted as a variance), and a negative
    variance makes the normalization sqrt(<0). As in 0.19, ``...var`` and ``...gamma`` are
    ones, ``...mean``, ``...beta`` and ``...bias`` zeros, ``...weight`` Xavier, any other
    name an error."""
    x = relay.var("data", shape=(1, 3, 8, 8))
    w = relay.var("conv_weight")
    g, b = relay.var("bn_gamma"), relay.var("bn_beta")
    m, v = relay.var("bn_mean"), relay.var("bn_var")
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=4, padding=(1, 1))
    y = relay.nn.relu(relay.nn.batch_norm(y, g, b, m, v)[0])
    func = relay.Function(relay.analysis.free_vars(y), y)
    mod, params = testing.create_workload(func)
    for name, fill in (("bn_gamma", 1), ("bn_var", 1), ("bn_beta", 0), ("bn_mean", 0)):
        np.testing.assert_array_equal(params[name].numpy(), np.full((4,), fill, "float32"))
    wv = params["conv_weight"].numpy()
    assert wv.shape == (4, 3, 3, 3) and np.abs(wv).max() <= np.sqrt(3.0 / (3 * 9 + 4 * 9) * 2)
    xv = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype("float32")
    # with gamma 1, beta 0, mean 0, var 1: relu(conv(x) / sqrt(1 + eps)), eps = 1e-5
    xp = np.pad(xv[0].astype("float64"), ((0, 0), (1, 1), (1, 1)))
    conv = sum(np.einsum("chw,oc->ohw", xp[:, i:i + 8, j:j + 8], wv[:, :, i, j])
               for i in range(3) for j in range(3))
    ref = np.maximum(conv / np.sqrt(1 + 1e-5), 0)[None]
    np.testing.assert_allclose(_run(mod, params, xv), ref, rtol=1e-5, atol=1e-5)
    scale = relay.var("scale", shape=(1,))
    with pytest.raises(RelayError, match="no initialization pattern for parameter 'scale'"):
        testing.create_workload(relay.Function([x, scale], relay.multiply(x, scale)))


def test_xavier_depthwise_name_uses_the_window_alone():
    """0.19's Xavier: a parameter whose name contains "depthwise" gets s = sqrt(3 / (kh * kw))
    (each output channel sees one input channel), any other weight sqrt(3 / avg fan)."""
    init = testing.init.Xavier(seed=1)
    dw = init("blk_depthwise_weight", (64, 1, 3, 3))
    plain = init("blk_weight", (64, 1, 3, 3))
    s_dw, s_plain = np.sqrt(3.0 / 9), np.sqrt(3.0 / ((9 + 64 * 9) / 2))
    # 576 uniform draws on [-s, s] (seeded): the largest magnitude is within 2% of s (else p ~ 1e-5)
    assert s_dw * 0.98 < np.abs(dw).max() <= s_dw
    assert s_plain * 0.98 < np.abs(plain).max() <= s_plain


def test_resnet_nhwc_is_the_nchw_network_transposed():
    a, pa = testing.resnet.get_workload(1, 10, 18, (3, 32, 32))
    b, pb = testing.resnet.get_workload(1, 10, 18, (32, 32, 3), "NHWC")  # 0.19's order
    assert tuple(b["main"].params[0].type_annotation.shape) == (1, 32, 32, 3)
    x = np.random.RandomState(0).rand(1, 3, 32, 32).astype("float32")
    want = _run(a, pa, x)
    got = _run(b, _transposed(pa, pb), x.transpose(0, 2, 3, 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    # dtype in 0.19's sixth position
    _, p16 = testing.resnet.get_workload(1, 10, 18, (3, 32, 32), "NCHW", "float16")
    assert all(str(v.dtype) == "float16" for v in p16.values())


def test_mobilenet_nhwc_is_the_nchw_network_transposed():
    a, pa = testing.mobilenet.get_workload(1, 10, (3, 64, 64), alpha=0.25)
    b, pb = testing.mobilenet.get_workload(1, 10, (64, 64, 3), "float32", "NHWC", alpha=0.25)
    x = np.random.RandomState(1).rand(1, 3, 64, 64).astype("float32")
    want = _run(a, pa, x)
    got = _run(b, _transposed(pa, pb), x.transpose(0, 2, 3, 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_dcgan_nhwc_and_its_sizes():
    a, pa = testing.dcgan.get_workload(1, ngf=8, random_len=10)
    b, pb = testing.dcgan.get_workload(1, ngf=8, random_len=10, layout="NHWC")
    x = np.random.RandomState(2).rand(1, 10).astype("float32")
    want = _run(a, pa, x)
    assert want.shape == (1, 3, 64, 64)
    got = _run(b, _transposed(pa, pb, deconv=True), x)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-6)
    with pytest.raises(RelayError, match=r"oshape must be \(channels, 64, 64\).*\(3, 16, 16\)"):
        testing.dcgan.get_workload(1, oshape=(3, 16, 16))


@pytest.mark.parametrize("build", [
    lambda: testing.resnet.get_workload(layout="NCWH"),
    lambda: testing.mobilenet.get_workload(layout="HWCN"),
    lambda: testing.dcgan.get_workload(1, layout="CHWN"),
])
def test_unknown_layout_is_refused(build):
    with pytest.raises(RelayError, match="layout must be 'NCHW' or 'NHWC'"):
        build()


def test_nat_module_path():
    """``tvm.relay.testing.nat`` (ModuleNotFoundError before): values count back to their
    integers through the interpreter and the VM."""
    from relay_tvm.testing import nat

    p = relay.prelude.Prelude(relay.IRModule())
    tv, z, s = nat.get_type(p, "nat")
    assert (tv.name_hint, z.name_hint, s.name_hint) == ("nat", "z", "s")
    p.mod["main"] = relay.Function([], nat.make_nat_expr(p, 4))
    for kind in ("debug", "vm"):
        assert nat.count(p, relay.create_executor(kind, mod=p.mod).evaluate()()) == 4
    assert nat.count(p, nat.make_nat_value(p, 2)) == 2
    with pytest.raises(RelayError, match="nats"):
        nat.get_type(p, "nats")


def test_densenet_is_the_papers_network():
    """``tvm.relay.testing.densenet`` (ModuleNotFoundError before). DenseNet-121 has 7,978,856
    trainable parameters (torchvision's densenet121, the paper's network); the compiled
    network computes what the reference interpreter does."""
    mod, params = testing.densenet.get_workload(121, batch_size=1)
    assert tuple(mod["main"].ret_type.shape) == (1, 1000)
    assert sum(int(np.prod(v.shape)) for k, v in params.items() if "moving" not in k) == 7978856
    mod, params = testing.densenet.get_workload(121, classes=10, batch_size=1,
                                                image_shape=(3, 32, 32))
    x = np.random.RandomState(3).rand(1, 3, 32, 32).astype("float32")
    want = relay.create_executor("debug", mod=mod).evaluate()(x, **params).numpy()
    np.testing.assert_allclose(_run(mod, params, x), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(RelayError, match="densenet_size must be one of"):
        testing.densenet.get_workload(120)


def test_resnet_3d_ncdhw_and_ndhwc():
    """``tvm.relay.testing.resnet_3d`` (ModuleNotFoundError before): the compiled 3-d network
    computes what the reference interpreter does; NDHWC with the weights transposed (OIDHW ->
    DHWIO) is the NCDHW network transposed."""
    a, pa = testing.resnet_3d.get_workload(1, 5, 18, (3, 4, 16, 16))
    x = np.random.RandomState(4).rand(1, 3, 4, 16, 16).astype("float32")
    want = relay.create_executor("debug", mod=a).evaluate()(x, **pa).numpy()
    assert want.shape == (1, 5)
    np.testing.assert_allclose(_run(a, pa, x), want, rtol=1e-4, atol=1e-6)
    b, pb = testing.resnet_3d.get_workload(1, 5, 18, (4, 16, 16, 3), "NDHWC")
    moved = {k: (v.numpy().transpose(2, 3, 4, 1, 0) if v.numpy().ndim == 5 else v.numpy())
             for k, v in pa.items()}
    assert all(moved[k].shape == tuple(pb[k].shape) for k in pb)
    np.testing.assert_allclose(_run(b, moved, x.transpose(0, 2, 3, 4, 1)), want, rtol=1e-4,
                               atol=1e-6)
    with pytest.raises(RelayError, match="layout must be 'NCDHW' or 'NDHWC'"):
        testing.resnet_3d.get_workload(layout="NCHW")
