"""The VM runs the whole language (ADTs and match, closures, references, polymorphic functions,
nested tuples) with the same results as the reference interpreter."""

import json

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.prelude import Prelude
from relay_tvm.runtime.interpreter import ConstructorValue, RefValue

I32 = "int32"


def _same(ref, got, where="result"):
    """Recursive comparison of an interpreter value with a VM value."""
    if isinstance(ref, ConstructorValue):
        assert isinstance(got, ConstructorValue), f"{where}: {got!r} is not an ADT value"
        assert got.constructor.name_hint == ref.constructor.name_hint, where
        assert len(got.fields) == len(ref.fields), where
        for i, (r, g) in enumerate(zip(ref.fields, got.fields)):
            _same(r, g, f"{where}.{ref.constructor.name_hint}[{i}]")
    elif isinstance(ref, RefValue):
        assert isinstance(got, RefValue), where
        _same(ref.value, got.value, f"{where}.ref")
    elif isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), f"{where}: {got!r}"
        for i, (r, g) in enumerate(zip(ref, got)):
            _same(r, g, f"{where}[{i}]")
    else:
        r = ref.numpy() if hasattr(ref, "numpy") else np.asarray(ref)
        g = got.numpy()
        assert g.dtype == r.dtype and g.shape == r.shape, where
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6, err_msg=where)


def _fresh(v):
    """A copy of an argument: a reference argument is written through by the program."""
    if isinstance(v, RefValue):
        return RefValue(_fresh(v.value))
    if isinstance(v, np.ndarray):
        return v.copy()
    return v


def _check(mod, *args):
    ref = relay.create_executor("debug", mod).evaluate()(*[_fresh(a) for a in args])
    got = relay.create_executor("vm", mod, target="llvm").evaluate()(*[_fresh(a) for a in args])
    _same(ref, got)
    return got


def _list(p, items):
    out = p.nil()
    for x in reversed(items):
        out = p.cons(x, out)
    return out


def _i(v):
    return relay.const(v, I32)


def _prelude_main(body_of):
    mod = relay.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(3,))
    mod["main"] = relay.Function([x], body_of(p, x))
    return mod


def _fn(shape, body_of, dtype="float32", n=1):
    vs = [relay.var(f"a{i}", shape=shape, dtype=dtype) for i in range(n)]
    return relay.Function(vs, body_of(*vs))


def test_prelude_list_functions():
    def body(p, x):
        xs = _list(p, [x, relay.exp(x), relay.negative(x), relay.add(x, x)])
        sq = _fn((3,), lambda a: relay.multiply(a, a))
        add2 = _fn((3,), lambda a, b: relay.add(a, b), n=2)
        sub2 = _fn((3,), lambda a, b: relay.subtract(a, b), n=2)
        return relay.Tuple([
            p.length(xs), p.map(sq, xs), p.foldl(sub2, x, xs), p.foldr(sub2, x, xs),
            p.hd(xs), p.tl(xs), p.nth(xs, _i(2)), p.rev(xs), p.foldr1(add2, xs),
            p.concat(xs, p.tl(xs)), p.zip(xs, p.rev(xs)), p.update(xs, _i(1), x),
        ])

    _check(_prelude_main(body), np.array([1.0, -2.0, 0.5], "float32"))


def test_prelude_int_lists_option_tree_and_nat():
    def body(p, x):
        ns = _list(p, [_i(3), _i(-1), _i(4), _i(1), _i(5)])
        n = relay.var("n", shape=(), dtype=I32)
        pos = relay.Function([n], relay.greater(n, _i(0)))
        s = relay.var("s", shape=(), dtype=I32)
        step = relay.Function([s], relay.If(
            relay.less(s, _i(4)), p.some(relay.Tuple([relay.add(s, _i(1)), relay.multiply(s, s)])),
            p.none()))
        leaf = p.rose(x, p.nil())
        tree = p.rose(relay.exp(x), _list(p, [leaf, p.rose(x, _list(p, [leaf]))]))
        nat3 = p.s(p.s(p.s(p.z())))
        return relay.Tuple([p.sum(ns), p.filter(pos, ns), p.unfoldr(step, _i(0)),
                            p.unfoldl(step, _i(1)), p.size(tree),
                            p.tmap(_fn((3,), relay.negative), tree),
                            p.nat_to_int(p.nat_add(nat3, p.nat_double(nat3)))])

    _check(_prelude_main(body), np.array([0.25, 2.0, -1.0], "float32"))


def test_list_argument_and_result():
    mod = relay.IRModule()
    p = Prelude(mod)
    xs = relay.var("xs", relay.TypeCall(p.list, [relay.TensorType((2,), "float32")]))
    mod["main"] = relay.Function([xs], relay.Tuple([p.length(xs), p.rev(xs)]))
    a, b = np.array([1, 2], "float32"), np.array([3, 4], "float32")
    arg = ConstructorValue(p.cons, [a, ConstructorValue(p.cons, [b, ConstructorValue(p.nil, [])])])
    got = _check(mod, arg)
    assert int(got[0].numpy()) == 2
    np.testing.assert_array_equal(got[1].fields[0].numpy(), b)
    with pytest.raises(relay.BuildError, match=r"expected a value of type List\[.*\] \(a "
                                               r"ConstructorValue of List\)"):
        relay.create_executor("vm", mod).evaluate()(a)


def test_nested_wildcard_and_tuple_patterns():
    mod = relay.IRModule()
    p = Prelude(mod)
    t = relay.TensorType((), I32)
    xs = relay.var("xs", relay.TypeCall(p.list, [relay.TupleType([t, relay.TypeCall(p.optional, [t])])]))
    a, b, c, a2 = relay.var("a"), relay.var("b"), relay.var("c"), relay.var("a2")
    pc, pv, pw, pt = (relay.PatternConstructor, relay.PatternVar, relay.PatternWildcard,
                      relay.PatternTuple)
    m = relay.Match(xs, [
        relay.Clause(pc(p.cons, [pt([pv(a), pc(p.some, [pv(b)])]),
                                 pc(p.cons, [pt([pw(), pc(p.none, [])]), pw()])]),
                     relay.add(a, b)),
        relay.Clause(pc(p.cons, [pt([pv(a2), pw()]), pc(p.nil, [])]), relay.negative(a2)),
        relay.Clause(pc(p.cons, [pw(), pv(c)]), p.length(c)),
        relay.Clause(pw(), _i(-100)),
    ])
    mod["f"] = relay.Function([xs], m)
    f = mod.get_global_var("f")

    def item(k, o):
        return relay.Tuple([_i(k), p.some(_i(o)) if o is not None else p.none()])

    cases = [[item(1, 2), item(3, None)], [item(5, None)], [item(1, 2), item(3, 4), item(5, 6)],
             [], [item(7, 8), item(1, None), item(2, None)]]
    mod["main"] = relay.Function([], relay.Tuple([relay.Call(f, [_list(p, c)]) for c in cases]))
    got = _check(mod)
    assert [int(v.numpy()) for v in got] == [3, -5, 2, -100, 7 + 8]


def test_partial_match_without_clause_is_an_error():
    mod = _prelude_main(lambda p, x: p.hd(p.tl(_list(p, [x]))))
    with pytest.raises(relay.RelayError, match="no clause of the match"):
        relay.create_executor("vm", mod).evaluate()(np.zeros(3, "float32"))
    with pytest.raises(relay.RelayError):
        relay.create_executor("debug", mod).evaluate()(np.zeros(3, "float32"))


_PARTIAL = """#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil, }
def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  match? (%VALUE) {
    %CLAUSE
  }
}
"""


@pytest.mark.parametrize("value, clause, named", [
    ("Cons(%x, Nil)", "Nil => %x,", "Cons"),
    ("Nil", "Cons(%h, _) => %h,", "Nil"),
    ("Cons(%x, Cons(%x, Nil))", "Cons(%h, Nil) => %h,", "Cons"),  # a nested pattern fails
])
def test_partial_match_error_names_the_value_and_where(value, clause, named):
    # both executors name the constructor of the value no clause matched and the match's place
    mod = relay.fromtext(_PARTIAL.replace("%VALUE", value).replace("%CLAUSE", clause))
    x = np.zeros(3, "float32")
    with pytest.raises(relay.RelayError, match=rf"(?s)no match clause applies to the value "
                                               rf"{named}\b.*at from_string:4:3"):
        relay.create_executor("debug", mod).evaluate()(x)
    fields = r"\(\.\.\.\)" if named == "Cons" else ""
    with pytest.raises(relay.RelayError, match=rf"no clause of the match at from_string:4:3 in "
                                               rf"@main matches the value {named}{fields}$"):
        relay.create_executor("vm", mod, target="llvm").evaluate()(x)


def test_partial_match_error_in_a_prelude_function_names_the_value():
    # hd(tl([x])): hd's match? meets Nil (the Prelude's functions are built without spans)
    mod = _prelude_main(lambda p, x: p.hd(p.tl(_list(p, [x]))))
    with pytest.raises(relay.RelayError, match=r"in @hd matches the value Nil$"):
        relay.create_executor("vm", mod).evaluate()(np.zeros(3, "float32"))
    with pytest.raises(relay.RelayError, match=r"applies to the value Nil"):
        relay.create_executor("debug", mod).evaluate()(np.zeros(3, "float32"))


def test_partial_match_on_a_tuple_still_fails_with_the_match_named():
    # a tuple scrutinee has no constructor of its own: the VM's message names the match and the
    # scrutinee's type (it cannot format the value at run time); the interpreter shows it
    mod = relay.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(3,))
    h = relay.var("h")
    pc, pv, pw = relay.PatternConstructor, relay.PatternVar, relay.PatternWildcard
    m = relay.Match(relay.Tuple([p.nil(), x]),
                    [relay.Clause(relay.PatternTuple([pc(p.cons, [pv(h), pw()]), pw()]), h)],
                    complete=False)
    mod["main"] = relay.Function([x], m, relay.TensorType((3,), "float32"))
    with pytest.raises(relay.RelayError, match=r"no clause of the match in @main matches the "
                                               r"value of type \(List\[Tensor\[\(3,\), float32\]\], "
                                               r"Tensor\[\(3,\), float32\]\)$"):
        relay.create_executor("vm", mod).evaluate()(np.zeros(3, "float32"))
    with pytest.raises(relay.RelayError, match=r"applies to the value \(Nil, "
                                               r"Tensor\[\(3,\), float32\]\)$"):
        relay.create_executor("debug", mod).evaluate()(np.zeros(3, "float32"))


_NESTED = """#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil, }
type Option[A] { Some(A), None, }
def @main(%l: List[Option[int32]]) -> int32 {
  match (%l) {
    Cons(%h, _) => match (%h) { Some(%v) => %v, None => 0 },
    Nil => -1,
  }
}
"""


_NESTED_PARTIAL = _NESTED.split("def @main")[0] + """def @main(%l: List[Option[int32]]) -> int32 {
  match? (%l) {
    Cons(Some(%v), Nil) => %v,
  }
}
"""


def test_failed_match_describes_the_value():
    """A new-user trial: the debug executor showed ``Cons(_ConstData(5, dtype=int32), ...)``
    and the VM nothing after "matches the value"."""
    from relay_tvm.errors import InputError
    from relay_tvm.runtime.interpreter import ConstructorValue

    mod = relay.fromtext(_NESTED_PARTIAL)
    at = f"from_string:{_NESTED_PARTIAL.splitlines().index('  match? (%l) {') + 1}:3"
    cons, nil, some, none = (mod.lookup_constructor(n) for n in ("Cons", "Nil", "Some", "None"))
    five = np.array(5, "int32")
    good = ConstructorValue(cons, [ConstructorValue(some, [five]), ConstructorValue(nil, [])])
    # a well-typed value that the partial match (match?) has no clause for
    bad = ConstructorValue(cons, [ConstructorValue(some, [five]), ConstructorValue(
        cons, [ConstructorValue(none, []), ConstructorValue(nil, [])])])
    assert repr(bad) == "Cons(Some(5), Cons(None, Nil))"
    debug = relay.create_executor("debug", mod=mod).evaluate()
    vm = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    assert int(debug(good).numpy()) == 5 and int(vm(good).numpy()) == 5
    with pytest.raises(relay.RelayError, match=r"^no match clause applies to the value "
                                               rf"Cons\(Some\(5\), Cons\(None, Nil\)\)\n  at "
                                               rf"{at}$"):
        debug(bad)
    # the VM knows the matched value's constructor when it compiles, not its fields
    with pytest.raises(relay.RelayError, match=rf"^relay_tvm VM: no clause of the match at "
                                               rf"{at} in @main matches the value "
                                               rf"Cons\(\.\.\.\)$"):
        vm(bad)
    # both executors check an argument's ADT before running (a value of Option for a List)
    for run, where in [(vm, r"@main argument 0 \(%l\)"), (debug, r"argument 0 \(%l\)")]:
        with pytest.raises(InputError, match=rf"^{where}: expected a value of type "
                                             rf"List\[Option\[int32\]\], got Some\(5\), a "
                                             rf"value of Option$"):
            run(ConstructorValue(some, [five]))


def test_describe_value_writes_relay_literals():
    from relay_tvm.runtime.interpreter import describe_value

    assert [describe_value(np.array(v, d)) for v, d in [
        (5, "int32"), (1.5, "float32"), (2, "int64"), (True, "bool"), (0.25, "float64"),
        (3, "uint8")]] == ["5", "1.5f", "2i64", "True", "0.25f64", "3u8"]
    assert describe_value(np.zeros((2, 3), "float32")) == "Tensor[(2, 3), float32]"
    assert describe_value((np.array(1, "int32"),)) == "(1,)"
    assert describe_value(tuple(range(100)), width=20) == "(0, 1, 2, 3, 4, 5..."


def _closure_program():
    """Curried adders, closures in lists and tuples, closures returned from globals and from
    recursive local functions, Prelude compose / iterate / nat_iterate."""
    mod = relay.IRModule()
    p = Prelude(mod)
    t3 = relay.TensorType((3,), "float32")
    # @make_scaler(k) = fn (v) { v * k }   (escapes its global function)
    k = relay.var("k", t3)
    v = relay.var("v", t3)
    mod["make_scaler"] = relay.Function([k], relay.Function([v], relay.multiply(v, k)))
    scaler = mod.get_global_var("make_scaler")
    # @twice(f, v) = f(f(v))   (higher order)
    f = relay.var("f", relay.FuncType([t3], t3))
    v2 = relay.var("v2", t3)
    mod["twice"] = relay.Function([f, v2], relay.Call(f, [relay.Call(f, [v2])]))
    twice = mod.get_global_var("twice")

    x = relay.var("x", t3)
    a, b, g, fs, mk, loop, h = (relay.var(s) for s in "a b g fs mk loop h".split())
    adder = relay.Function([a], relay.Function([b], relay.add(a, b)))  # curried
    n = relay.var("n", shape=(), dtype=I32)
    acc = relay.var("acc", t3)
    # let rec loop(n, acc) = if n < 3 { loop(n + 1, g(acc)) } else { fn (w) { w + acc } }
    w = relay.var("w", t3)
    loop_fn = relay.Function([n, acc], relay.If(
        relay.less(n, _i(3)), relay.Call(loop, [relay.add(n, _i(1)), relay.Call(g, [acc])]),
        relay.Function([w], relay.add(w, acc))))
    y = relay.var("y", relay.FuncType([t3], t3))
    body = relay.Let(mk, adder, relay.Let(
        g, relay.Call(mk, [relay.exp(x)]), relay.Let(
            fs, _list(p, [g, relay.Call(scaler, [x]), relay.Call(mk, [x]),
                          relay.Call(p.compose, [g, relay.Call(scaler, [x])])]),
            relay.Let(loop, loop_fn, relay.Let(
                h, relay.Call(loop, [_i(0), x]),
                relay.Tuple([
                    p.map(relay.Function([y], relay.Call(twice, [y, x])), fs),
                    relay.Call(h, [x]),
                    relay.Call(relay.Call(p.iterate, [g, _i(4)]), [x]),
                    relay.Call(relay.Call(p.nat_iterate, [relay.Call(scaler, [x]),
                                                          p.s(p.s(p.z()))]), [x]),
                    relay.Tuple([relay.Tuple([g, x]), x]),
                ]))))))
    # the tuple of a closure cannot be compared; project the tensor parts out
    r = relay.var("r")
    main_body = relay.Let(r, body, relay.Tuple([
        relay.TupleGetItem(r, 0), relay.TupleGetItem(r, 1), relay.TupleGetItem(r, 2),
        relay.TupleGetItem(r, 3),
        relay.Call(relay.TupleGetItem(relay.TupleGetItem(relay.TupleGetItem(r, 4), 0), 0),
                   [relay.TupleGetItem(relay.TupleGetItem(r, 4), 1)])]))
    mod["main"] = relay.Function([x], main_body)
    return mod


def test_closures_capture_escape_and_recurse():
    xv = np.array([0.5, -1.0, 2.0], "float32")
    got = _check(_closure_program(), xv)
    # spot values by hand: h = loop(0, x) adds x + 3 e^x; h(x) = 2x + 3e^x
    np.testing.assert_allclose(got[1].numpy(), 2 * xv + 3 * np.exp(xv), rtol=1e-5)
    # twice(mk(x)) on x = 3x
    np.testing.assert_allclose(got[0].fields[1].fields[1].fields[0].numpy(), 3 * xv, rtol=1e-5)


def test_mutual_recursion_of_global_functions():
    mod = relay.IRModule()
    even, odd = relay.GlobalVar("even"), relay.GlobalVar("odd")
    n, m = relay.var("n", shape=(), dtype=I32), relay.var("m", shape=(), dtype=I32)
    mod[even] = relay.Function([n], relay.If(relay.equal(n, _i(0)), relay.const(True),
                                             relay.Call(odd, [relay.subtract(n, _i(1))])))
    mod[odd] = relay.Function([m], relay.If(relay.equal(m, _i(0)), relay.const(False),
                                            relay.Call(even, [relay.subtract(m, _i(1))])))
    x = relay.var("x", shape=(), dtype=I32)
    mod["main"] = relay.Function([x], relay.Tuple([relay.Call(even, [x]), relay.Call(odd, [x])]))
    for k in (0, 7, 10):
        got = _check(mod, np.array(k, I32))
        assert bool(got[0].numpy()) == (k % 2 == 0)


def test_counter_through_references():
    # let c = ref(0); let incr = fn () { c := !c + 1; !c }; (incr(), incr(), incr(), !c)
    c, incr, u = relay.var("c"), relay.var("incr"), relay.var("u")
    incr_fn = relay.Function([], relay.Let(
        u, relay.RefWrite(c, relay.add(relay.RefRead(c), _i(1))), relay.RefRead(c)))
    calls = [relay.Call(incr, []) for _ in range(3)]
    body = relay.Let(c, relay.RefCreate(_i(0)), relay.Let(
        incr, incr_fn, relay.Tuple([*calls, relay.RefRead(c), c])))
    got = _check(relay.IRModule.from_expr(relay.Function([], body)))
    assert [int(v.numpy()) for v in got[:4]] == [1, 2, 3, 3]
    assert isinstance(got[4], RefValue) and int(got[4].value.numpy()) == 3


def test_references_are_shared_through_calls_closures_and_data():
    mod = relay.IRModule()
    p = Prelude(mod)
    t3 = relay.TensorType((3,), "float32")
    rt = relay.RefType(t3)
    # @double_n(r, n) = if n > 0 { r := !r * 2; @double_n(r, n - 1) } else { () }
    dbl = relay.GlobalVar("double_n")
    r, n, u = relay.var("r", rt), relay.var("n", shape=(), dtype=I32), relay.var("u")
    mod[dbl] = relay.Function([r, n], relay.If(
        relay.greater(n, _i(0)),
        relay.Let(u, relay.RefWrite(r, relay.multiply(relay.RefRead(r), relay.const(2.0))),
                  relay.Call(dbl, [r, relay.subtract(n, _i(1))])),
        relay.Tuple([])))
    cell, log, w, s, u1, u2 = (relay.var(k) for k in ("cell", "log", "w", "s", "u1", "u2"))
    x = relay.var("x", t3)
    arg = relay.var("arg", rt)
    v = relay.var("v", t3)
    # a closure that pushes onto a log kept in a reference; a list of references
    push = relay.Function([v], relay.RefWrite(log, p.cons(v, relay.RefRead(log))))
    body = relay.Let(cell, relay.RefCreate(x), relay.Let(
        log, relay.RefCreate(p.nil()), relay.Let(
            s, push, relay.Let(
                u1, relay.Call(s, [x]), relay.Let(
                    w, relay.Call(dbl, [cell, _i(3)]), relay.Let(
                        u2, relay.Call(s, [relay.RefRead(arg)]),
                        relay.Tuple([relay.RefRead(cell), relay.RefRead(log),
                                     _list(p, [cell, relay.RefCreate(x), cell]),
                                     relay.RefWrite(arg, relay.RefRead(cell)), arg])))))))
    mod["main"] = relay.Function([x, arg], body)
    xv = np.array([1.0, -0.5, 3.0], "float32")
    start = RefValue(np.array([7.0, 8.0, 9.0], "float32"))
    got = _check(mod, xv, start)
    np.testing.assert_array_equal(got[1].fields[0].numpy(), start.value)  # read before the write
    np.testing.assert_allclose(got[0].numpy(), 8 * xv)
    assert isinstance(got[2].fields[0], RefValue)
    # the caller's reference sees the program's write, as with the interpreter
    mine = RefValue(start.value.copy())
    relay.create_executor("vm", mod).evaluate()(xv, mine)
    np.testing.assert_allclose(mine.value.numpy(), 8 * xv)
    np.testing.assert_allclose(got[4].value.numpy(), 8 * xv)


POLY = """#[version = "0.0.5"]
def @swap[A, B](%p: (A, B)) -> (B, A) {
  (%p.1, %p.0)
}

def @scale_first[A](%t: (Tensor[(3), float32], A)) -> (Tensor[(3), float32], A) {
  (multiply(%t.0, 2f), %t.1)
}

def @apply_n[A](%f: fn (A) -> A, %n: int32, %x: A) -> A {
  if (less(%n, 1)) { %x } else { @apply_n(%f, subtract(%n, 1), %f(%x)) }
}

def @main(%x: Tensor[(3), float32], %k: int32) {
  %0 = Cons(%k, Cons(add(%k, 1), Nil));
  %1 = @swap((%x, %0));
  %2 = @swap((%k, (%x, %k)));
  %3 = @scale_first((%x, %0));
  %4 = @scale_first((%x, %x));
  %5 = @scale_first((%x, Some(%3)));
  %6 = @apply_n(fn (%v: Tensor[(3), float32]) { exp(%v) }, 2, %x);
  %7 = @apply_n(fn (%l: List[int32]) { Cons(%k, %l) }, %k, Nil);
  %8 = @apply_n(fn (%q: (int32, float32)) { (add(%q.0, 1), multiply(%q.1, 3f)) }, 4, (%k, 1f));
  %9 = @map(fn (%i: int32) { multiply(%i, %i) }, %0);
  %10 = @map(fn (%w: Tensor[(3), float32]) { negative(%w) }, Cons(%x, Nil));
  %11 = @id(%0);
  %12 = @id(%x);
  %13 = @id(@id);
  (%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13(%k))
}
"""


def test_polymorphic_functions_at_several_types():
    from relay_tvm.text import parse

    mod = relay.IRModule()
    Prelude(mod)
    mod = parse(POLY, init_module=mod)
    xv = np.array([0.5, 1.0, -2.0], "float32")
    got = _check(mod, xv, np.array(3, I32))
    np.testing.assert_allclose(got[5].numpy(), np.exp(np.exp(xv)), rtol=1e-5)
    assert int(got[7][0].numpy()) == 3 + 4 and float(got[7][1].numpy()) == 81.0


def test_export_closures_adts_and_refs_to_a_fresh_process(tmp_path):
    """Only C++-registered builtins are used (vm.builtin.*, ffi.List/Array), so the exported
    library runs in a new process."""
    import subprocess
    import sys

    from relay_tvm.text import parse

    mod = relay.IRModule()
    Prelude(mod)
    mod = parse(POLY, init_module=mod)
    exe = relay.vm.compile(mod, target="llvm")
    path = str(tmp_path / "lang.so")
    exe.export_library(path)
    code = (
        "import json, numpy as np\n"
        "from relay_tvm.runtime.vm import VirtualMachine, load_executable\n"
        "def plain(v):\n"
        "    if hasattr(v, 'constructor'):\n"
        "        return [v.constructor.name_hint, [plain(f) for f in v.fields]]\n"
        "    if isinstance(v, tuple):\n"
        "        return [plain(f) for f in v]\n"
        "    return np.asarray(v.numpy()).tolist()\n"
        f"out = VirtualMachine(load_executable({path!r})).run(np.array([0.5, 1.0, -2.0], "
        "'float32'), np.array(3, 'int32'))\n"
        "print(json.dumps(plain(out)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    assert r.returncode == 0, r.stderr[-3000:]
    ref = relay.create_executor("debug", mod).evaluate()(np.array([0.5, 1.0, -2.0], "float32"),
                                                          np.array(3, I32))
    got = json.loads(r.stdout.strip().splitlines()[-1])
    _same_plain(ref, got)


def _same_plain(ref, got, where="result"):
    if isinstance(ref, ConstructorValue):
        assert got[0] == ref.constructor.name_hint and len(got[1]) == len(ref.fields), where
        for r, g in zip(ref.fields, got[1]):
            _same_plain(r, g, f"{where}.{got[0]}")
    elif isinstance(ref, tuple):
        assert len(got) == len(ref), where
        for i, (r, g) in enumerate(zip(ref, got)):
            _same_plain(r, g, f"{where}[{i}]")
    else:
        r = ref.numpy() if hasattr(ref, "numpy") else np.asarray(ref)
        np.testing.assert_allclose(np.asarray(got), r, rtol=1e-5, err_msg=where)


DEEP = """#[version = "0.0.5"]
def @build(%n: int32, %acc: List[int32]) -> List[int32] {
  if (less(%n, 1)) { %acc } else { @build(subtract(%n, 1), Cons(%n, %acc)) }
}
def @main(%n: int32) {
  %0 = @build(%n, Nil);
  %1 = @map(fn (%i: int32) { multiply(%i, 2) }, %0);
  %2 = @foldl(fn (%a: int32, %b: int32) { add(%a, %b) }, 0, %0);
  let %loop = fn (%k: int32, %s: int32) -> int32 {
    if (less(%k, 1)) { %s } else { %loop(subtract(%k, 1), add(%s, %k)) }
  };
  (@length(%0), @sum(%1), %2, %loop(%n, 0))
}
"""


def test_deep_recursion_and_tail_calls():
    """Self tail calls (``@build``, ``@foldl``, the let-rec ``loop``) are jumps; the non-tail
    recursion of ``@map`` / ``@length`` over 20,000 elements needs the VM thread's big stack
    (the main thread's 8 MiB died at ~10,000 levels)."""
    from relay_tvm.text import parse

    mod = relay.IRModule()
    Prelude(mod)
    mod = parse(DEEP, init_module=mod)
    _check(mod, np.array(50, I32))
    n = 20000
    got = relay.create_executor("vm", mod).evaluate()(np.array(n, I32))
    assert [int(v.numpy()) for v in got] == [n, n * (n + 1), n * (n + 1) // 2, n * (n + 1) // 2]
    funcs, name = {}, None
    for line in relay.vm.compile(mod).bytecode.splitlines():
        if line.startswith("@") and line.endswith(":"):
            name = line[1:-1]
            funcs[name] = []
        elif name is not None:
            funcs[name].append(line.split())
    for f in ("build", "foldl"):
        assert ["call", f] not in [ins[:2] for ins in funcs[f]], f
        assert any(ins[:1] == ["goto"] and int(ins[1]) < 0 for ins in funcs[f]), f


def test_dynamic_shapes_run():
    """What used to be refused: an Any parameter, and arange of run-time bounds (a shape
    function reads the scalar values); see test_vm_dynamic.py for the rest."""
    x = relay.var("x", shape=(relay.Any(), 3))
    run = relay.create_executor("vm", relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    for n in (1, 4):
        xv = np.linspace(-1, 1, 3 * n, dtype="float32").reshape(n, 3)
        np.testing.assert_allclose(run.evaluate()(xv).numpy(), np.exp(xv), rtol=1e-6)
    n = relay.var("n", shape=(), dtype="float32")
    run = relay.create_executor("vm", relay.IRModule.from_expr(relay.Function([n],
                                                                              relay.arange(n))))
    for v in (5.5, 0.0, -2.0, 3.0):
        np.testing.assert_array_equal(run.evaluate()(np.array(v, "float32")).numpy(),
                                      np.arange(v, dtype="float32"))


def test_adt_argument_of_the_wrong_kind():
    mod = relay.IRModule()
    p = Prelude(mod)
    r = relay.var("r", relay.RefType(relay.TensorType((), I32)))
    xs = relay.var("xs", relay.TypeCall(p.list, [relay.TensorType((), I32)]))
    mod["main"] = relay.Function([r, xs], relay.add(relay.RefRead(r), p.length(xs)))
    run = relay.create_executor("vm", mod).evaluate()
    nil = ConstructorValue(p.nil, [])
    with pytest.raises(relay.BuildError, match=r"argument 0 \(%r\): expected a reference \(ref\(int32\), a RefValue\)"):
        run(np.array(1, I32), nil)
    assert int(run(RefValue(np.array(4, I32)), nil).numpy()) == 4


def test_returned_closures_are_callable_and_get_outputs():
    from relay_tvm.runtime.vm import VirtualMachine

    mod = relay.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    r = relay.var("r")
    add_x = relay.Function([y], relay.add(y, relay.multiply(x, x)))
    y2 = relay.var("y2", shape=(3,))
    mod["main"] = relay.Function([x], relay.Let(r, relay.RefCreate(x), relay.Tuple(
        [add_x, p.cons(add_x, p.nil()), r, relay.Function([y2], relay.RefWrite(r, y2))])))
    xv, yv = np.array([1.0, 2.0, -3.0], "float32"), np.array([0.5, 0.5, 0.5], "float32")
    ref = relay.create_executor("debug", mod).evaluate()(xv)
    vm = VirtualMachine(relay.vm.compile(mod))
    got = vm.run(xv)
    _same(ref[0](yv), got[0](yv))
    _same(ref[1].fields[0](yv), got[1].fields[0](yv))
    # the returned reference is shared with the returned closure, as in the interpreter
    ref[3](yv)
    got[3](yv)
    _same(ref[2], got[2])
    np.testing.assert_allclose(got[2].value.numpy(), yv)
    outs = vm.get_outputs()
    assert len(outs) == 4 and outs[0] is got[0]
    np.testing.assert_allclose(got[0](yv).numpy(), yv + xv * xv)


def test_constructor_arguments_are_matched_by_name_across_processes():
    """Tags are numbered per process: a list built in another process (or from another parse
    of the Prelude) has other tags and must still match by type and constructor name."""
    from relay_tvm.ir.adt import Constructor
    from relay_tvm.ir.types import GlobalTypeVar

    mod = relay.IRModule()
    p = Prelude(mod)
    xs = relay.var("xs", relay.TypeCall(p.list, [relay.TensorType((), I32)]))
    mod["main"] = relay.Function([xs], p.sum(xs))
    run = relay.create_executor("vm", mod).evaluate()
    lst = GlobalTypeVar("List")
    cons, nil = Constructor("Cons", (), lst), Constructor("Nil", (), lst)
    assert cons.tag != p.cons.tag
    arg = ConstructorValue(cons, [np.array(5, I32), ConstructorValue(
        cons, [np.array(-2, I32), ConstructorValue(nil, [])])])
    assert int(run(arg).numpy()) == 3
    bad = ConstructorValue(Constructor("Snoc", (), lst), [])
    with pytest.raises(relay.BuildError, match="constructor Snoc of type List is not one of"):
        run(bad)
