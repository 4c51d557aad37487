"""0.19's positional constructors of namespaced operators: ``relay.op.nn._make.conv2d(...)``,
``relay.qnn.op._make.*``, ``relay.op.image._make.*`` (missing before: AttributeError, found by
a fresh-user trial); each builds the same call as the keyword constructor."""

import pytest

import relay_tvm as relay


def test_nn_make_conv2d_is_the_keyword_constructor():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    # Relay's MakeConv2D order: strides, padding, dilation, groups, channels, kernel_size,
    # data_layout, kernel_layout, out_layout, out_dtype
    got = relay.op.nn._make.conv2d(x, w, (2, 2), (1, 1, 1, 1), (1, 1), 1, 4, (3, 3), "NCHW",
                                   "OIHW", "", "")
    want = relay.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1), channels=4, kernel_size=(3, 3))
    assert relay.analysis.structural_equal(got, want)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], got)))
    assert tuple(mod["main"].ret_type.shape) == (1, 4, 4, 4)


def test_each_namespace_has_its_make():
    x = relay.var("x", shape=(1, 3, 8, 8))
    got = relay.op.image._make.resize2d
    assert callable(got)
    pool = relay.op.nn._make.max_pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "NCHW", "",
                                        False)
    assert relay.analysis.structural_equal(pool, relay.nn.max_pool2d(x, (2, 2), (2, 2)))
    for ns, op in [(relay.qnn.op._make, "quantize"), (relay.op.vision._make, "multibox_prior"),
                   (relay.op.random._make, "threefry_generate"), (relay.op.dyn._make, "reshape")]:
        assert callable(getattr(ns, op))
        assert op in dir(ns)


def test_an_unknown_operator_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"relay.op.nn._make has no operator 'conv9d'"):
        relay.op.nn._make.conv9d  # noqa: B018
    with pytest.raises(AttributeError):
        relay.op.nn._make._private  # noqa: B018
