"""relay.op.device_copy: 0.19's attributes; the identity within one device type on the
interpreter, the graph executor and the VM; a clear error for a copy between device types."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import BuildError, UnsupportedOperatorError


def test_device_copy_attrs():
    import tvm

    x = relay.var("x", shape=(2,))
    for src, dst in [("cuda", "cpu"), (tvm.cuda(1), tvm.cpu(0)), (2, 1)]:
        call = relay.device_copy(x, src, dst)
        assert call.op.name == "device_copy" and call.args[0] is x
        s, d = call.attrs.src_virtual_device, call.attrs.dst_virtual_device
        assert (s.device_type_int, d.device_type_int) == (2, 1)
        assert s.target is None and s.memory_scope == "" and d.virtual_device_id == 0
    assert relay.device_copy(x, tvm.cuda(1), "cpu").attrs.src_virtual_device.virtual_device_id == 1
    with pytest.raises(TypeError, match="src_device"):
        relay.device_copy(x, 1.5, "cpu")


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_device_copy_same_device_is_identity(kind):
    x = relay.var("x", shape=(4,))
    f = relay.Function([x], relay.device_copy(x + relay.const(1.0), "cpu", "cpu") * x)
    a = np.arange(4, dtype="float32")
    got = relay.create_executor(kind, target="llvm").evaluate(f)(a)
    np.testing.assert_array_equal(got.numpy(), (a + 1) * a)


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_device_copy_between_device_types_refused(kind):
    x = relay.var("x", shape=(4,))
    f = relay.Function([x], relay.device_copy(x, "cuda", "cpu"))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(f))
    assert mod["main"].checked_type.ret_type == x.type_annotation
    with pytest.raises((UnsupportedOperatorError, BuildError), match="one device"):
        relay.create_executor(kind, mod=mod, target="llvm").evaluate()(np.zeros(4, "float32"))


def test_device_copy_text_roundtrip_runs():
    x = relay.var("x", shape=(3,))
    f = relay.Function([x], relay.device_copy(x, "cpu", "cpu"))
    back = relay.parse_expr(relay.astext(f))
    a = np.arange(3, dtype="float32")
    np.testing.assert_array_equal(relay.create_executor("debug").evaluate(back)(a).numpy(), a)
    g = relay.parse_expr(relay.astext(relay.Function([x], relay.device_copy(x, "cuda", "cpu"))))
    with pytest.raises(UnsupportedOperatorError, match="cuda"):
        relay.create_executor("debug").evaluate(g)(a)
