"""check_kind, list_op_freqs and extract_intermdeiate_expr (tvm.relay.analysis names)."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import check_kind, extract_intermdeiate_expr, list_op_freqs
from relay_tvm.errors import RelayError, TypeInferenceError

K = relay.TypeKind


def test_check_kind_of_well_kinded_types():
    t = relay.TensorType((2,), "float32")
    shape = relay.TypeVar("s", K.ShapeVar)
    assert check_kind(t) == K.Type
    assert check_kind(shape) == K.ShapeVar
    assert check_kind(relay.TupleType([t, relay.TypeVar("a")])) == K.Type
    assert check_kind(relay.FuncType([t], relay.RefType(t))) == K.Type
    p = relay.Prelude()
    assert check_kind(p.list) == K.AdtHandle
    assert check_kind(p.list(t), p.mod) == K.Type


@pytest.mark.parametrize("bad", [
    lambda t, s, p: relay.TupleType([t, s]),
    lambda t, s, p: relay.RefType(s),
    lambda t, s, p: relay.FuncType([s], t),
    lambda t, s, p: relay.FuncType([t], s),
    lambda t, s, p: relay.TypeCall(relay.TypeVar("notadt"), [t]),
    lambda t, s, p: relay.TypeCall(p.list, [s]),
    lambda t, s, p: relay.TypeCall(p.list, [t, t]),
])
def test_check_kind_rejects_ill_kinded_types(bad):
    p = relay.Prelude()
    t = relay.TensorType((2,), "float32")
    s = relay.TypeVar("s", K.ShapeVar)
    with pytest.raises(TypeInferenceError, match="check_kind"):
        check_kind(bad(t, s, p), p.mod)


def _net():
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(2, 2, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1))
    z = relay.nn.conv2d(y, w, padding=(1, 1))
    return relay.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(y + z)))


def test_list_op_freqs_counts_inside_fused_functions():
    mod = _net()
    assert list_op_freqs(mod) == {"nn.conv2d": 2, "add": 1, "nn.relu": 1}
    fused = relay.transform.FuseOps(2)(relay.transform.InferType()(mod))
    assert list_op_freqs(fused) == {"nn.conv2d": 2, "add": 1, "nn.relu": 1}


def test_extract_intermediate_expr_computes_that_value():
    mod = _net()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 4)).astype("float32")
    w = rng.standard_normal((2, 2, 3, 3)).astype("float32")
    first = extract_intermdeiate_expr(mod, 0)  # the first conv2d
    got = relay.create_executor("debug", mod=first).evaluate()(x, w).numpy()
    conv = relay.Function(list(mod["main"].params),
                          relay.nn.conv2d(mod["main"].params[0], mod["main"].params[1],
                                          padding=(1, 1)))
    ref = relay.create_executor("debug", mod=relay.IRModule.from_expr(conv)).evaluate()(x, w)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-6)
    last = extract_intermdeiate_expr(mod, 3)
    assert relay.analysis.structural_equal(last["main"].body, mod["main"].body)
    with pytest.raises(RelayError, match="out of range"):
        extract_intermdeiate_expr(mod, 4)


def test_annotate_spans_gives_lines_of_the_printed_text():
    x = relay.var("x", shape=(2,))
    c = relay.const(np.array([1, -2], "float32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x + c)))
    out = relay.transform.AnnotateSpans()(mod)
    # the printed text is parsed back, and parsing type-checks (filling in @main's return type)
    assert relay.analysis.structural_equal(relay.transform.InferType()(mod), out)
    text = relay.astext(mod, show_meta_data=True).splitlines()
    body = out["main"].body
    assert body.span.source_name == "GeneratedSource"
    assert "nn.relu" in text[body.span.line - 1]
    assert "add" in text[body.args[0].span.line - 1]
    a = np.array([3, 1], "float32")
    res = relay.create_executor("debug", mod=out).evaluate()(a).numpy()
    np.testing.assert_array_equal(res, np.maximum(a + [1, -2], 0))


def test_span_check_after_annotate_spans():
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], x + x))
    with pytest.raises(relay.WellFormedError, match="2 nodes have no span"):
        relay.SpanCheck()(mod)
    checked = relay.SpanCheck()(relay.transform.AnnotateSpans()(mod))
    assert relay.analysis.structural_equal(checked, relay.transform.InferType()(mod))


def test_diagnostics_renderer_hooks_and_register_func():
    import tvm
    from tvm.ir.diagnostics import get_renderer, override_renderer

    default = get_renderer()
    override_renderer(lambda ctx: None)
    assert get_renderer() is not default
    override_renderer(None)
    assert get_renderer() is default

    @tvm.register_func("relay_tvm.test.twice", override=True)
    def twice(v):
        return v * 2

    assert tvm.get_global_func("relay_tvm.test.twice")(21) == 42


def test_same_as_is_identity():
    x = relay.var("x")
    assert x.same_as(x) and not x.same_as(relay.var("x"))
    t = relay.TensorType((2,), "float32")
    assert t.same_as(t)
