"""tvm.relay 0.19's attrs node classes and ``tvm.ir.make_node("relay.attrs.*")``: 0.19 code
tests ``isinstance(call.attrs, relay.op.op_attrs.Conv2DAttrs)`` in its passes and builds
attributes with ``make_node`` (both failed before: AttributeError / TVM's "type key is not
registered"; found by a fresh-user trial)."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import AttributeSchemaError
from relay_tvm.op import op_attrs


def _conv():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    return x, w, relay.nn.conv2d(x, w, padding=(1, 1))


def test_isinstance_follows_the_type_key():
    x, w, c = _conv()
    assert isinstance(c.attrs, op_attrs.Conv2DAttrs)
    assert not isinstance(c.attrs, op_attrs.DenseAttrs)
    assert isinstance(relay.nn.max_pool2d(x, (2, 2)).attrs, op_attrs.MaxPool2DAttrs)
    assert not isinstance(relay.nn.avg_pool2d(x, (2, 2)).attrs, op_attrs.MaxPool2DAttrs)
    assert isinstance(relay.nn.dense(relay.var("a", shape=(2, 3)),
                                     relay.var("b", shape=(4, 3))).attrs, op_attrs.DenseAttrs)
    # a class of an operator relay_tvm lacks exists and matches nothing
    assert not isinstance(c.attrs, op_attrs.SparseTransposeAttrs)
    assert not isinstance("relay.attrs.Conv2DAttrs", op_attrs.Conv2DAttrs)


def test_unknown_class_and_direct_construction_are_errors():
    with pytest.raises(AttributeError, match="Conv2DAtrs"):
        op_attrs.Conv2DAtrs  # noqa: B018
    with pytest.raises(TypeError, match="make_node"):
        op_attrs.Conv2DAttrs(strides=(2, 2))


def test_pass_dispatching_on_attrs_class():
    """A 0.19-style rewrite that doubles the stride of conv2d calls, found by their attrs' class."""
    x, w, c = _conv()

    class Strider(relay.ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            if isinstance(new.attrs, op_attrs.Conv2DAttrs):
                fields = {k: new.attrs[k] for k in new.attrs.keys()}
                fields["strides"] = (2, 2)
                return relay.nn.conv2d(*new.args, **fields)
            return new

    f = relay.Function([x, w], relay.nn.relu(c))
    g = Strider().visit(f)
    xv = np.random.RandomState(0).randn(1, 3, 8, 8).astype("float32")
    wv = np.random.RandomState(1).randn(4, 3, 3, 3).astype("float32")
    got = relay.create_executor("debug", mod=relay.IRModule.from_expr(g)).evaluate()(xv, wv)
    xp = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 4, 4, 4), "float32")
    for i in range(4):
        for j in range(4):
            patch = xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            want[0, :, i, j] = np.tensordot(wv, patch, axes=([1, 2, 3], [0, 1, 2]))
    np.testing.assert_allclose(got.numpy(), np.maximum(want, 0), rtol=1e-5, atol=1e-5)


def test_make_node_builds_an_operators_attrs():
    import tvm

    import relay_tvm.compat  # noqa: F401  (installs the tvm.ir.make_node shim)

    a = tvm.ir.make_node("relay.attrs.Conv2DAttrs", strides=(2, 2), padding=[1, 1])
    assert isinstance(a, op_attrs.Conv2DAttrs)
    assert a.strides == (2, 2) and a.padding == (1, 1) and a.dilation == (1, 1)
    assert a.data_layout == "NCHW" and a.groups == 1
    # the key's richest schema: reshape's (newshape, allowzero), not dyn.reshape's
    r = tvm.ir.make_node("relay.attrs.ReshapeAttrs", newshape=[2, -1])
    assert r.newshape == (2, -1) and r.allowzero is False

    # the attrs drive a call the type checker and the interpreter take
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    call = relay.Call(relay.op.get("nn.conv2d"), [x, w], a)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], call)))
    assert tuple(mod["main"].ret_type.shape) == (1, 4, 4, 4)


def test_make_node_errors_name_key_and_field():
    import tvm

    import relay_tvm.compat  # noqa: F401

    with pytest.raises(AttributeSchemaError, match=r"Conv2DAttrs.*unknown field\(s\) stride\b"):
        tvm.ir.make_node("relay.attrs.Conv2DAttrs", stride=(2, 2))
    with pytest.raises(AttributeSchemaError, match="no relay_tvm operator"):
        tvm.ir.make_node("relay.attrs.SparseConv2DAttrs", layout="NHWC")
    with pytest.raises(AttributeSchemaError, match="strides"):
        tvm.ir.make_node("relay.attrs.Conv2DAttrs", strides="wide")


def test_sparse_dense_attrs_node():
    """nn.sparse_dense is provided now: its attrs class matches its calls and make_node builds
    its attributes."""
    import tvm

    import relay_tvm.compat  # noqa: F401

    x = relay.var("x", shape=(2, 3))
    csr = (relay.const(np.ones(2, "float32")), relay.const(np.array([0, 2], "int32")),
           relay.const(np.array([0, 1, 2], "int32")))
    call = relay.nn.sparse_dense(x, csr, sparse_lhs=True)
    assert isinstance(call.attrs, op_attrs.SparseDenseAttrs)
    assert tvm.ir.make_node("relay.attrs.SparseDenseAttrs", sparse_lhs=True).sparse_lhs is True
