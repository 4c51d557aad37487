"""Defunctionalization: higher-order programs rewritten to first-order ones that compute the same
values (run before and after through the interpreter and the VM)."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.errors import RelayError
from relay_tvm.runtime import ConstructorValue

LIST = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @map[A, B](%f: fn(A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
    Nil => Nil,
  }
}
"""


def _parse(text):
    return transform.InferType()(relay.fromtext('#[version = "0.0.5"]\n' + text))


def _defunc(mod):
    """A defunctionalized copy of ``mod`` (the pass updates the module it is given)."""
    out = mod.copy()
    out["main"] = transform.Defunctionalization(out["main"], out)
    return transform.InferType()(out)


def _function_values(mod):
    """Every place of ``mod`` where a function is still a value: function-typed parameters,
    calls with function-typed arguments or results, local function literals."""
    found = []
    for gv, f in mod.functions.items():
        found.extend((gv.name_hint, p) for p in f.params
                     if isinstance(p.checked_type, relay.FuncType))

        def visit(n, name=gv.name_hint):
            if isinstance(n, relay.Call) and not isinstance(n.op, relay.Function):
                if any(isinstance(a.checked_type, relay.FuncType) for a in n.args) or \
                        isinstance(n.checked_type, relay.FuncType):
                    found.append((name, n))
            elif isinstance(n, relay.Function) and not n.is_primitive:
                found.append((name, n))

        relay.analysis.post_order_visit(f.body, visit)
    return found


def _reachable(mod, entry="main"):
    seen, stack = set(), [mod.get_global_var(entry)]
    while stack:
        gv = stack.pop()
        if gv in seen:
            continue
        seen.add(gv)
        relay.analysis.post_order_visit(
            mod[gv], lambda n: stack.append(n) if isinstance(n, relay.GlobalVar) else None)
    return relay.IRModule({gv: mod[gv] for gv in seen}, mod.type_definitions)


def _assert_first_order(mod):
    left = _function_values(_reachable(mod))
    assert not left, f"function values left: {[(n, relay.astext(e)) for n, e in left]}"


def _to_list(mod, value):
    cons = mod.get_constructor
    out = []
    while isinstance(value, ConstructorValue) and cons(value.tag).name_hint == "Cons":
        out.append(value.fields[0].numpy())
        value = value.fields[1]
    assert cons(value.tag).name_hint == "Nil"
    return out


def _from_list(mod, values, dtype):
    data = mod.get_global_type_var("List")
    cons, nil = mod[data].constructors
    e = nil()
    for v in reversed(values):
        e = cons(relay.const(np.asarray(v, dtype)), e)
    return relay.create_executor("debug", mod=mod).evaluate(e)


def _run(mod, *args, kind="debug"):
    return relay.create_executor(kind, mod=mod).evaluate()(*args)


def test_map_with_global_and_lambda_capturing_a_tensor():
    mod = _parse(LIST + """
def @double(%x: float32) -> float32 { %x * 2f }
def @main(%l: List[float32], %c: float32) -> (List[float32], List[float32]) {
  %0 = fn (%v: float32) -> float32 { %v + %c };
  (@map(@double, %l), @map(%0, %l))
}
""")
    out = _defunc(mod)
    _assert_first_order(out)
    xs = [1.5, -2.0, 4.0]
    c = np.array(10.0, "float32")
    before = _run(mod, _from_list(mod, xs, "float32"), c)
    after = _run(out, _from_list(out, xs, "float32"), c)
    for b, a, want in zip(before, after, ([3.0, -4.0, 8.0], [11.5, 8.0, 14.0])):
        np.testing.assert_array_equal(_to_list(mod, b), want)
        np.testing.assert_array_equal(_to_list(out, a), want)
    # one ADT for fn(float32) -> float32, with a constructor per function value; the second
    # carries the captured %c
    ctors = {c.name_hint: c for td in out.type_definitions.values() for c in td.constructors
             if td.header.name_hint.startswith("Defunc")}
    assert len(ctors) == 2
    assert sorted(len(c.inputs) for c in ctors.values()) == [0, 1]
    # map was cloned once, at A = B = float32
    assert [gv.name_hint for gv in out.get_global_vars()
            if gv.name_hint.startswith("map_")] == ["map_defunc0"]


def test_recursive_encoding_cps_sum_on_vm():
    # the continuation captures the previous one: the ADT refers to itself
    mod = _parse("""
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @sum(%k: fn(int32) -> int32, %xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%x, %rest) => {
      %0 = fn (%n: int32) -> int32 { %k(%n + %x) };
      @sum(%0, %rest)
    },
    Nil => %k(0),
  }
}
def @main(%xs: List[int32]) -> int32 {
  %0 = fn (%r: int32) -> int32 { %r * 3 };
  @sum(%0, %xs)
}
""")
    out = _defunc(mod)
    _assert_first_order(out)
    xs = [4, 7, 1, 30]
    want = 3 * sum(xs)
    assert int(_run(mod, _from_list(mod, xs, "int32")).numpy()) == want
    assert int(_run(out, _from_list(out, xs, "int32")).numpy()) == want
    assert int(_run(out, _from_list(out, xs, "int32"), kind="vm").numpy()) == want


def test_two_function_types_get_two_encodings_and_tensors_flow():
    mod = _parse("""
def @twice[A](%f: fn(A) -> A, %x: A) -> A { %f(%f(%x)) }
def @main(%x: Tensor[(2, 3), float32], %i: int32) -> (Tensor[(2, 3), float32], int32) {
  %0 = fn (%t: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { exp(%t) };
  %1 = fn (%j: int32) -> int32 { %j * %i };
  (@twice(%0, %x), @twice(%1, %i))
}
""")
    out = _defunc(mod)
    _assert_first_order(out)
    adts = [t for t in out.type_definitions if t.name_hint.startswith("Defunc")]
    assert len(adts) == 2
    x = np.random.RandomState(0).uniform(-1, 1, (2, 3)).astype("float32")
    i = np.array(3, "int32")
    b_t, b_i = _run(mod, x, i)
    a_t, a_i = _run(out, x, i)
    np.testing.assert_allclose(a_t.numpy(), np.exp(np.exp(x)), rtol=1e-6)
    np.testing.assert_allclose(b_t.numpy(), a_t.numpy(), rtol=1e-6)
    assert int(a_i.numpy()) == int(b_i.numpy()) == 27


def test_immediate_application_and_first_order_caller_of_higher_order_code():
    # @scale is first order, but its body passes a function: it is rewritten in place
    mod = _parse(LIST + """
def @scale(%l: List[float32], %s: float32) -> List[float32] {
  @map(fn (%v: float32) -> float32 { %v * %s }, %l)
}
def @main(%l: List[float32], %s: float32) -> List[float32] {
  %0 = fn (%g: fn(float32) -> float32, %y: float32) -> float32 { %g(%g(%y)) };
  %1 = %0(fn (%z: float32) -> float32 { %z - 1f }, %s);
  @scale(%l, %1)
}
""")
    out = _defunc(mod)
    _assert_first_order(out)
    xs, s = [1.0, 2.0], np.array(5.0, "float32")
    assert [float(v) for v in _to_list(out, _run(out, _from_list(out, xs, "float32"), s))] == \
        [float(v) for v in _to_list(mod, _run(mod, _from_list(mod, xs, "float32"), s))] == \
        [3.0, 6.0]


def test_polymorphic_first_order_global_is_cloned_per_type():
    # @via takes no function but passes one inside: a clone per instantiation, each first order
    mod = _parse("""
def @app[A](%f: fn(A) -> A, %x: A) -> A { %f(%x) }
def @id[A](%x: A) -> A { %x }
def @via[A](%x: A) -> A { @app(@id, %x) }
def @main(%x: float32, %i: int32) -> (float32, int32) { (@via(%x), @via(%i)) }
""")
    out = _defunc(mod)
    _assert_first_order(out)
    assert sorted(gv.name_hint for gv in out.get_global_vars()
                  if gv.name_hint.startswith("via_")) == ["via_defunc0", "via_defunc1"]
    f, i = _run(out, np.float32(2.5), np.int32(3))
    assert float(f.numpy()) == 2.5 and int(i.numpy()) == 3


def test_result_prints_and_parses_back():
    mod = _parse(LIST + """
def @main(%l: List[int32]) -> List[int32] {
  @map(fn (%v: int32) -> int32 { %v + 1 }, %l)
}
""")
    out = _defunc(mod)
    again = transform.InferType()(relay.fromtext(out.astext()))
    _assert_first_order(again)
    got = _to_list(again, _run(again, _from_list(again, [1, 2], "int32")))
    assert [int(v) for v in got] == [2, 3]


@pytest.mark.parametrize("text, match", [
    ("def @main[A](%x: A) -> A { %x }", "entry function is polymorphic"),
    ("def @main(%f: fn(float32) -> float32, %x: float32) -> float32 { %f(%x) }",
     "parameter %f has type fn"),
    ("""def @add(%a: float32) -> fn(float32) -> float32 { fn (%b: float32) { %a + %b } }
        def @main(%x: float32) -> float32 { %0 = @add(%x); %0(%x) }""",
     "returns a function"),
    ("""def @app(%f: fn(float32) -> float32, %x: float32) -> float32 { %f(%x) }
        def @main(%x: float32) -> float32 {
          let %g = fn (%y: float32) -> float32 { %y };
          @app(%g, %x)
        }""",
     "let-bound"),
    ("""def @app(%f: (fn(float32) -> float32, float32)) -> float32 { %f.0(%f.1) }
        def @main(%x: float32) -> float32 { @app((fn (%y: float32) { %y }, %x)) }""",
     "inside a tuple"),
])
def test_refusals_name_the_construct(text, match):
    mod = _parse(text)
    with pytest.raises(RelayError, match=match):
        transform.Defunctionalization(mod["main"], mod)
