"""IR node behaviour tvm.relay 0.19 scripts relied on (python/tvm/ir/base.py Span,
String2DLDataType, NDArray identity of Constant.data, save_json of any node)."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import RelayError


def test_span_five_values_in_019_order():
    s = relay.Span(None, 1, 2, 3, 4)  # source, line, end_line, column, end_column
    assert (s.line, s.end_line, s.column, s.end_column) == (1, 2, 3, 4)
    assert s.same_as(s) and not s.same_as(relay.Span(None, 1, 2, 3, 4))
    assert relay.Span("m.json", 7, 3).column == 3  # relay_tvm's short form: line, column
    with pytest.raises(RelayError, match="got 4 values"):
        relay.Span("m.json", 1, 2, 3)
    back = tvm.ir.load_json(tvm.ir.save_json(s))
    assert back == s and back.source_name is None


def test_op_json_roundtrip():
    add = relay.op.get("add")
    assert tvm.ir.load_json(tvm.ir.save_json(add)) is add


@pytest.mark.parametrize("short, full", [("float", "float32"), ("int", "int32"),
                                         ("uint", "uint32"), ("floatx4", "float32x4")])
def test_width_less_dtypes(short, full):
    assert relay.TensorType((2,), short) == relay.TensorType((2,), full)
    assert relay.TensorType((2,), short).dtype == full


def test_constant_data_equals_the_tensor_it_came_from():
    arr = tvm.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    c = relay.Constant(arr)
    assert c.data == arr and not (c.data != arr)
    assert not (c.data == tvm.nd.array(np.zeros((2, 3), "float32")))
    assert not (c.data == tvm.nd.array(np.arange(6, dtype="float64").reshape(2, 3)))
    # against NumPy values it is still elementwise
    np.testing.assert_array_equal(c.data == 4.0, np.arange(6).reshape(2, 3) == 4)


def test_attribute_sequences_print_as_tvm_arrays():
    # 0.19's test_pass_convert_op_layout: str(call.attrs.axes) == str([0, 2, 3, 1])
    x = relay.var("x", shape=(1, 2, 3, 4))
    axes = relay.transpose(x, (0, 2, 3, 1)).attrs.axes
    assert str(axes) == str([0, 2, 3, 1]) and repr(axes) == "[0, 2, 3, 1]"
    assert axes == (0, 2, 3, 1) and hash(axes) == hash((0, 2, 3, 1)) and isinstance(axes, tuple)
    pad = relay.nn.conv2d(x, relay.var("w"), padding=(1, 2)).attrs.padding
    assert str(pad) == "[1, 2, 1, 2]"
