"""IR nodes: construction, immutability, identity vs structure, spans, helpers, IRModule."""

import dataclasses
import re

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError


def test_vars_compare_by_identity():
    a, b = relay.var("x"), relay.var("x")
    assert a != b and a == a
    assert len({a, b}) == 2
    assert a.name_hint == "x" and a.vid.name_hint == "x"


def test_nodes_are_immutable():
    x = relay.var("x", shape=(1,))
    c = relay.add(x, x)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.args = ()
    k = relay.const([1.0, 2.0])
    with pytest.raises(ValueError):
        k.data[0] = 3.0


def test_types_compare_structurally():
    assert relay.TensorType((1, 2), "float32") == relay.TensorType([1, 2], "float32")
    assert hash(relay.TensorType((1, 2))) == hash(relay.TensorType((1, 2)))
    assert relay.TensorType((1, 2)) != relay.TensorType((1, 2), "float16")
    assert relay.TupleType([relay.TensorType(())]) == relay.TupleType([relay.TensorType(())])
    assert relay.TypeVar("a") != relay.TypeVar("a")
    assert relay.TensorType((relay.Any(),)) == relay.TensorType((relay.Any(),))


def test_tensor_type_rejects_bad_dims_and_dtypes():
    with pytest.raises(RelayError, match="dimension -1 is negative"):
        relay.TensorType((-1, 2))
    with pytest.raises(RelayError, match="is not a dtype"):
        relay.TensorType((1,), "floaty")
    with pytest.raises(RelayError, match="not a dimension"):
        relay.TensorType((1.5,))


@pytest.mark.parametrize(
    "value, dtype, expect_dtype",
    [
        (1.0, None, "float32"),
        (1, None, "int32"),
        (True, None, "bool"),
        ([1.0, 2.0], None, "float32"),
        (np.array([1, 2], dtype="int64"), None, "int32"),
        (np.array([1, 2], dtype="int8"), None, "int8"),
        (np.array([1.5], dtype="float16"), None, "float16"),
        (3, "int64", "int64"),
        (2.5, "float16", "float16"),
    ],
)
def test_const_dtype_rules(value, dtype, expect_dtype):
    c = relay.const(value, dtype)
    assert str(c.data.dtype) == expect_dtype
    np.testing.assert_array_equal(c.data.numpy(), np.asarray(value).astype(expect_dtype))


def test_constant_copies_its_input():
    a = np.zeros(3, "float32")
    c = relay.const(a)
    a[0] = 5
    assert c.data.numpy()[0] == 0


def test_spans_are_kept():
    sp = relay.Span("model.json", 3, 4)
    x = relay.Var("x", relay.TensorType((2,)), sp)
    assert x.span is sp and str(sp) == "model.json:3:4"


def test_call_checks_arguments_are_expressions():
    with pytest.raises(RelayError, match="Call argument 1: expected a Relay expression, got int"):
        relay.Call(relay.op.get("add"), [relay.var("x"), 3])


def test_function_attrs_and_primitive():
    x = relay.var("x")
    f = relay.Function([x], x)
    assert not f.is_primitive
    g = f.with_attr("Primitive", 1)
    assert g.is_primitive and g.attrs["Primitive"] == 1 and f.attrs is None
    assert g.body is f.body


def test_op_registry():
    op = relay.op.get("nn.conv2d")
    assert op is relay.op.get("nn.conv2d")
    assert op.num_inputs == 2 and op.attrs_schema.type_key == "relay.attrs.Conv2DAttrs"
    with pytest.raises(RelayError, match="operator 'nn.nope' is not registered"):
        relay.op.get("nn.nope")
    c = relay.nn.conv2d(relay.var("d"), relay.var("w"), kernel_size=3)
    assert c.attrs.kernel_size == (3, 3) and c.attrs.strides == (1, 1) and c.attrs.groups == 1


def test_attrs_equality_and_schema_errors():
    a = relay.op.get("sum").make_attrs(axis=(1,))
    b = relay.op.get("sum").make_attrs(axis=[1])
    assert a == b and hash(a) == hash(b)
    with pytest.raises(relay.AttributeSchemaError, match="sum: attribute keepdims: expected a bool"):
        relay.op.get("sum").make_attrs(keepdims="yes")
    with pytest.raises(relay.AttributeSchemaError, match="cast: missing required attribute dtype"):
        relay.op.get("cast").make_attrs()


def test_module_lookup_update_and_from_expr():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = relay.IRModule.from_expr(relay.add(y, x))
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["y", "x"]  # order of first occurrence
    assert mod.get_global_var("main") in mod.functions
    other = relay.IRModule()
    other["helper"] = relay.Function([x], x)
    mod.update(other)
    assert "helper" in mod and "main" in mod
    with pytest.raises(RelayError, match="IRModule has no global function @nope"):
        mod["nope"]


def test_unknown_constructor_tag_is_a_relay_error():
    """A new-user trial: get_constructor(99) raised a bare KeyError: 99."""
    with pytest.raises(RelayError, match=r"^IRModule has no constructor with tag 99; it has "
                                         r"none \(the module defines no ADTs\)$"):
        relay.IRModule().get_constructor(99)
    mod = relay.IRModule()
    gtv, a = relay.GlobalTypeVar("Box"), relay.TypeVar("a")
    box = relay.Constructor("MkBox", [a], gtv)
    mod[gtv] = relay.TypeData(gtv, [a], [box])
    assert mod.get_constructor(box.tag) is box
    with pytest.raises(RelayError) as e:
        mod.get_constructor(box.tag + 1000)
    assert str(e.value) == (f"IRModule has no constructor with tag {box.tag + 1000}; it has "
                            f"MkBox (tag {box.tag}, of Box)")
    with pytest.raises(RelayError, match=r"takes a constructor tag \(an int\), got the name "
                                         r"'MkBox'; lookup_constructor\('MkBox'\) finds it"):
        mod.get_constructor("MkBox")


def test_bind_substitutes_and_drops_params():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    f = relay.Function([x, y], relay.add(x, y))
    g = relay.bind(f, {y: relay.const([1.0, 2.0])})
    assert list(g.params) == [x]
    out = relay.create_executor().evaluate(g)(np.array([10.0, 20.0], "float32"))
    np.testing.assert_allclose(out.numpy(), [11.0, 22.0])


def test_scope_builder():
    sb = relay.ScopeBuilder()
    x = sb.let("x", relay.const(3.0))
    y = sb.let("y", relay.multiply(x, x))
    cond = relay.less(y, relay.const(5.0))
    with sb.if_scope(cond):
        sb.ret(relay.const(1.0))
    with sb.else_scope():
        sb.ret(y)
    body = sb.get()
    assert isinstance(body, relay.Let) and body.var is x
    assert float(relay.create_executor().evaluate(body).numpy()) == 9.0


def test_expr_operator_sugar():
    x = relay.var("x", shape=(2,))
    e = (x + 1.0) * 2.0 - x / 4.0
    out = relay.create_executor().evaluate(relay.Function([x], e))(np.array([4.0, 8.0], "float32"))
    np.testing.assert_allclose(out.numpy(), (np.array([4.0, 8.0]) + 1) * 2 - np.array([4.0, 8.0]) / 4)


def test_const_refuses_integers_its_dtype_cannot_hold():
    """relay.const casts int64 to int32 by default (Relay's rule) and to an explicit dtype;
    values out of range would wrap (2**40 + 5 -> 5): an error instead (a new user's find)."""
    import numpy as np
    import pytest

    import relay_tvm as relay
    from relay_tvm.errors import RelayError

    assert relay.const(np.array([2**31 - 1, -(2**31)])).data.numpy().tolist() == [2**31 - 1,
                                                                                 -(2**31)]
    assert relay.const(2**40 + 5, "int64").data.numpy() == 2**40 + 5
    with pytest.raises(RelayError, match=r"does not fit int32.*dtype=\"int64\""):
        relay.const(np.array([2**40 + 5, 3]))
    with pytest.raises(RelayError, match="does not fit int8"):
        relay.const(300, "int8")
    with pytest.raises(RelayError, match="does not fit uint8"):
        relay.const([-1, 2], "uint8")
    # a float with a fraction (or inf/NaN) for an integer dtype is refused: tvm.relay 0.19
    # truncated const(1.7, "int32") to 1 silently (new-user finding); integral floats convert
    assert relay.const(2.0, "int32").data.numpy() == 2
    assert relay.const([-3.0, 4.0], "int8").data.numpy().tolist() == [-3, 4]
    for bad in (1.7, [1.0, 2.5], float("nan"), float("inf")):
        with pytest.raises(RelayError, match="not an integer.*int32 constants hold integers"):
            relay.const(bad, "int32")
    with pytest.raises(RelayError, match="does not fit int8"):
        relay.const(1e3, "int8")


@pytest.mark.parametrize("args, match", [
    # a Python float is float32, as in Relay 0.19: 1e40 would be inf
    ((1e40,), r"const: 1e\+40 does not fit float32 .*3\.40282.*e\+38.*dtype=\"float64\""),
    ((-1e40,), r"const: -1e\+40 does not fit float32"),
    ((np.array([1.0, 3.5e38]),), r"const: 3\.5e\+38 does not fit float32"),  # float64 default
    ((70000, "float16"), r"const: 70000 does not fit float16 .*65504"),
    ((np.float32(1e30), "float16"), r"does not fit float16"),
    ((300, "int8"), r"value range \[300, 300\] does not fit int8 \[-128, 127\]"),
    ((2**31,), r"does not fit int32 .*dtype=\"int64\""),
])
def test_const_of_a_value_its_dtype_cannot_hold_is_an_input_error(args, match):
    with pytest.raises(relay.InputError, match=match):
        relay.const(*args)


def test_const_keeps_inf_nan_and_values_that_fit():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warning either
        assert relay.const(float("inf")).data.numpy() == np.inf
        assert relay.const(-np.inf, "float16").data.numpy() == -np.inf
        assert np.isnan(relay.const(float("nan")).data.numpy())
        c = relay.const(np.array([np.inf, 1.0]))  # float64 array -> float32, inf kept
        assert c.data.dtype == "float32" and c.data.numpy().tolist() == [np.inf, 1.0]
        big = relay.const(np.array([1e40, 1.0]), "float64")
        assert big.data.dtype == "float64" and big.data.numpy()[0] == 1e40
        assert relay.const(3.4e38).data.numpy() == np.float32(3.4e38)
        assert relay.const(65504, "float16").data.numpy() == 65504
        own = np.array([1.5, 2.5], "float16")  # an array keeps its own dtype
        assert relay.const(own).data.dtype == "float16"


@pytest.mark.parametrize("value", [np.array(["a", "b"]), np.array([1 + 2j]),
                                   np.array(["2020-01-01"], dtype="datetime64[D]"),
                                   np.array([1.0], dtype=np.longdouble),
                                   np.zeros(2, dtype=[("a", "f4"), ("b", "i4")])])
def test_const_refuses_arrays_without_a_relay_dtype(value):
    # a string array was accepted and failed only at type inference ("'str32' is not a
    # dtype"), a complex one too (fresh-user trial)
    match = "cannot hold an array of dtype " + re.escape(str(value.dtype))
    with pytest.raises(RelayError, match=match):
        relay.const(value)


def test_const_keeps_bfloat16():
    import ml_dtypes

    c = relay.const(np.array([1.5, -2.0], ml_dtypes.bfloat16))
    assert relay.transform.InferType()(relay.IRModule.from_expr(c))["main"].ret_type == \
        relay.TensorType((2,), "bfloat16")


def test_unknown_global_in_a_large_module_names_the_nearest_and_a_count():
    """A new-user trial: a misspelt name in a Prelude module listed all ~330 of its functions."""
    from relay_tvm.prelude import Prelude

    mod = relay.IRModule()
    Prelude(mod)
    n = len(mod.get_global_vars())
    assert n > 12
    with pytest.raises(RelayError) as e:
        mod["rev_List"]
    msg = str(e.value)
    assert msg.startswith("IRModule has no global function @rev_List; it has @")
    assert msg.endswith(f", ... ({n} in all)") and msg.count("@") == 13
    with pytest.raises(RelayError, match=r"^IRModule has no global function @fodlr \(did you "
                                         r"mean 'foldr'"):
        mod["fodlr"]
