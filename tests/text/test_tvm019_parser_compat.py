"""Parser behaviour of tvm.relay 0.19 (src/relay/parser): errors are tvm.error.DiagnosticError,
an expression may name an undefined global, ``extern type``, the literal ranges of
support::ValueToFloatImm, ``_`` as an absent annotation, and the 0.19 classes the tests check."""

import re

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.analysis import structural_equal
from relay_tvm.errors import ParseError

H = '#[version = "0.0.5"]\n'


def roundtrip(e):
    back = relay.parse_expr(relay.astext(e))
    assert structural_equal(e, back, map_free_vars=True)
    return e


def test_parse_error_is_a_diagnostic_error():
    with pytest.raises(tvm.error.DiagnosticError, match=r"1:5: error: expected a variable"):
        relay.parse_expr("let x = 1; ()")
    with pytest.raises(ParseError):  # still our own class, with line:column
        relay.parse_expr("let @x = 1; ()")


def test_expression_may_name_an_undefined_global():
    e = roundtrip(relay.parse_expr("(@foo, @foo)"))
    assert isinstance(e.fields[0], relay.GlobalVar) and e.fields[0].name_hint == "foo"
    assert e.fields[0] is e.fields[1]  # one global per name
    with pytest.raises(ParseError, match="3:3: error: undefined global function @f"):
        relay.parse(H + "def @main(%x: float32) {\n  @f(%x)\n}")  # a module must define it


def test_extern_type():
    mod = relay.parse(H + "extern type T[A]\ndef @f(%x: T[int32]) { %x }\n")
    (gtv, td), = mod.type_definitions.items()  # a list, as 0.19's Map.items() was
    assert gtv.name_hint == "T" and len(td.type_vars) == 1 and list(td.constructors) == []
    assert structural_equal(relay.parse(mod.astext()), mod)
    with pytest.raises(ParseError, match="2:20: error: an external type may not have"):
        relay.parse(H + "extern type T[A] { C }\n")


@pytest.mark.parametrize("text, value", [
    ("65504f16", 65504.0), ("3.4028235e+38f", float(np.finfo("float32").max)),
    ("-3.4028235e+38f", -float(np.finfo("float32").max)), ("2147483648", 2147483648)])
def test_literals_at_the_limits(text, value):
    assert relay.parse_expr(text).data.numpy().item() == value


@pytest.mark.parametrize("text", ["65505f16", "3.40283e+38f32", "2147483648i32", "32768i16"])
def test_literals_beyond_the_limits(text):
    with pytest.raises(tvm.error.DiagnosticError, match="1:1: error: bad number " + re.escape(text) + ": out of"):
        relay.parse_expr(text)


def test_underscore_annotation_is_no_annotation():
    e = relay.parse_expr("let %x: _ = (); %x")
    assert e.var.type_annotation is None
    assert structural_equal(e, relay.parse_expr("let %y = (); %y"))
    f = relay.parse_expr("fn (%a: _, %b: int32) { %a }")
    assert f.params[0].type_annotation is None
    assert f.params[1].type_annotation == relay.scalar_type("int32")


def test_tvm019_classes():
    call = relay.parse_expr("free_var %x: float32; add(%x, %x)")
    assert isinstance(call.op, tvm.ir.Op) and not isinstance(call, tvm.ir.Op)
    assert isinstance(tvm.ir.Op.get("relax.add"), tvm.ir.Op)  # TVM's own operators still are
    t = relay.parse_expr("free_var %x: Tensor[(?, 1), uint16]; %x").type_annotation
    assert isinstance(t.shape[0], tvm.tir.Any) and isinstance(relay.Any(), relay.Any)
    assert not isinstance(t.shape[1], tvm.tir.Any)


def test_module_add_refuses_a_defined_name_without_update():
    mod = relay.parse(H + "def @f(%x: float32) { %x }")
    g = relay.Function([relay.var("y", "float32")], relay.const(1.0))
    with pytest.raises(relay.errors.RelayError, match="f is already defined"):
        mod._add("f", g, False)
    mod._add("f", g, True)
    assert mod["f"] is g


def test_slash_in_variable_names():
    # 0.19's lexer took '/' as a name character (importers name variables by scope)
    x, y = relay.var("base/x"), relay.var("base/y")
    f = relay.Function([x, y], relay.add(x, y))
    text = relay.astext(f)
    assert "fn (%base/x, %base/y) {" in text
    back = relay.parse_expr(text)
    assert [p.name_hint for p in back.params] == ["base/x", "base/y"]
    assert structural_equal(back, f)
    # between names '/' is still division; a trailing '/' is not kept in a name
    e = relay.parse_expr("free_var %a: float32; free_var %b: float32; %a/%b")
    assert e.op.name == "divide" and e.args[1].name_hint == "b"
    assert "%a_," in relay.astext(relay.Function([relay.var("a/"), y], y))


def test_shape_dimensions_with_an_index_dtype_suffix():
    """0.19's printer wrote int64 dimensions as ``2i64`` (text saved from 0.19 with int64 shapes
    did not load; fresh-user trial); other suffixes stay refused."""
    f = relay.parse_expr("fn (%x: Tensor[(2i64, 3i32, n * 2i64), float32]) { %x }")
    ty = f.params[0].type_annotation
    assert ty.shape[:2] == (2, 3)
    assert relay.astext(ty) == "Tensor[(2, 3, n * 2), float32]"
    for bad in ("2f32", "2u8"):
        with pytest.raises(ParseError, match=rf"bad shape: expected a non-negative integer.* "
                                             rf"got '{bad}'"):
            relay.parse_expr(f"fn (%x: Tensor[({bad}, 3), float32]) {{ %x }}")
