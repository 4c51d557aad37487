"""tvm.relay 0.19's ``relay.op.contrib``: pattern tables registered by compiler name feed
MergeComposite; the vendors' BYOC modules are refused with NotProvidedError (all of it was
ModuleNotFoundError before; fresh-user trial)."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.dataflow_pattern import is_op, wildcard
from relay_tvm.errors import NotProvidedError, RelayError
from relay_tvm.op.contrib import get_pattern_table, register_pattern_table


def test_registered_table_drives_merge_composite():
    @register_pattern_table("relay_tvm_test_cc")
    def table():
        conv = is_op("nn.conv2d")(wildcard(), wildcard())
        return [("relay_tvm_test_cc.conv_relu", is_op("nn.relu")(conv))]

    assert get_pattern_table("relay_tvm_test_cc")[0][0] == "relay_tvm_test_cc.conv_relu"
    assert get_pattern_table("no_such_compiler") is None
    x, w = relay.var("x", shape=(1, 2, 5, 5)), relay.var("w", shape=(3, 2, 3, 3))
    f = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    mod = relay.transform.MergeComposite(get_pattern_table("relay_tvm_test_cc"))(
        relay.IRModule.from_expr(f))
    call = mod["main"].body
    assert call.op.attrs["Composite"] == "relay_tvm_test_cc.conv_relu"
    rs = np.random.RandomState(0)
    xv, wv = rs.randn(1, 2, 5, 5).astype("float32"), rs.randn(3, 2, 3, 3).astype("float32")
    got = relay.create_executor("debug", mod=mod).evaluate()(xv, wv).numpy()
    xp = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 3, 5, 5), "float32")
    for i in range(5):
        for j in range(5):
            want[0, :, i, j] = np.tensordot(wv, xp[0, :, i:i + 3, j:j + 3], 3)
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(RelayError, match="must be a function"):
        register_pattern_table("relay_tvm_test_cc", [1, 2])


def test_vendor_modules_are_refused():
    with pytest.raises(NotProvidedError, match="contrib.dnnl .*no external code generators"):
        from relay_tvm.op.contrib import dnnl  # noqa: F401
    with pytest.raises(NotProvidedError, match="contrib.tensorrt"):
        import relay_tvm.op.contrib.tensorrt  # noqa: F401
    assert not hasattr(relay.op.contrib, "partition_for_dnnl")
    with pytest.raises(NotProvidedError, match="partition_for_dnnl"):
        relay.op.contrib.partition_for_dnnl  # noqa: B018
