"""ToANormalForm, ToBasicBlockNormalForm, ToGraphNormalForm and DeadCodeElimination."""

import numpy as np
import pytest
from pass_util import assert_equal_structure, assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.analysis import structural_equal


def test_anf_binds_every_compound_once():
    x = relay.var("x", shape=(3,))
    y = relay.exp(x)
    f = relay.Function([x], relay.add(y, y))
    after = run_opt_pass(f, transform.ToANormalForm())

    x2 = relay.var("x", shape=(3,))
    v1, v2 = relay.var("v1"), relay.var("v2")
    expected = relay.Function([x2], relay.Let(v1, relay.exp(x2), relay.Let(v2, relay.add(v1, v1), v2)))
    assert_equal_structure(after, expected)
    assert_same_result(f, after)


def test_anf_places_shared_value_before_the_if():
    x = relay.var("x", shape=(3,))
    c = relay.var("c", shape=(), dtype="bool")
    y = relay.exp(x)
    f = relay.Function([x, c], relay.If(c, relay.add(y, y), relay.negative(y)))
    after = run_opt_pass(f, transform.ToANormalForm())
    # the outermost binding is exp(x): shared by both branches, so bound outside the if
    assert isinstance(after.body, relay.Let)
    assert after.body.value.op.name == "exp"
    assert isinstance(after.body.body, relay.Let) and isinstance(after.body.body.value, relay.If)
    mod0 = transform.InferType()(relay.IRModule.from_expr(f))
    mod1 = relay.IRModule.from_expr(after)
    for cond in (True, False):
        args = [np.array([0.5, 1.0, 2.0], "float32"), np.array(cond)]
        a = relay.create_executor("debug", mod=mod0).evaluate()(*args)
        b = relay.create_executor("debug", mod=mod1).evaluate()(*args)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)


def test_anf_is_idempotent_and_gnf_inverts_it():
    x = relay.var("x", shape=(2, 2))
    y = relay.exp(x)
    z = relay.Tuple([relay.add(y, x), relay.multiply(y, y)])
    f = relay.Function([x], relay.TupleGetItem(z, 1))
    anf = run_opt_pass(f, transform.ToANormalForm())
    anf2 = run_opt_pass(anf, transform.ToANormalForm())
    assert structural_equal(anf, anf2)
    gnf = run_opt_pass(anf, transform.ToGraphNormalForm())
    assert_equal_structure(gnf, f)
    assert_same_result(f, anf)


def test_gnf_keeps_effects_and_recursion():
    x = relay.var("x", shape=())
    r = relay.var("r")
    u = relay.var("u")
    body = relay.Let(r, relay.RefCreate(x),
                     relay.Let(u, relay.RefWrite(r, relay.add(x, x)), relay.RefRead(r)))
    f = relay.Function([x], body)
    after = run_opt_pass(f, transform.ToGraphNormalForm())
    # the ref creation (an allocation) and the write (an effect) keep their lets
    assert isinstance(after.body, relay.Let) and isinstance(after.body.value, relay.RefCreate)
    assert isinstance(after.body.body, relay.Let)
    assert isinstance(after.body.body.value, relay.RefWrite)
    assert_same_result(f, after)


# ToGraphNormalForm on programs with references: the executors evaluate a shared node again in
# each function body that uses it, so an inlined `ref(0f)` became a fresh cell at each call
# (4.0 became 0.0), and a `ref_read` moved past a write read the new value.
_GNF_REF_PROGRAMS = {
    "closure_writes": ("""
def @main(%x: float32) -> float32 {
  let %r = ref(0f);
  let %f = fn () { ref_write(%r, add(ref_read(%r), %x)) };
  let %a = %f(); let %b = %f();
  ref_read(%r) }""", 4.0),
    # a global's effect whose result is unused, and a closure call whose result is used
    "unused_effectful_calls": ("""
def @bump(%c: ref(float32), %d: float32) -> () { ref_write(%c, add(ref_read(%c), %d)) }
def @main(%x: float32) -> float32 {
  let %r = ref(1f);
  let %u = @bump(%r, %x);
  let %g = fn () -> float32 { let %w = @bump(%r, %x); ref_read(%r) };
  let %v = %g();
  let %u2 = @bump(%r, %x);
  add(%v, ref_read(%r)) }""", 5.0 + 7.0),
    "read_before_write": ("""
def @main(%x: float32) -> float32 {
  let %r = ref(%x);
  let %v = ref_read(%r);
  let %u = ref_write(%r, multiply(%x, 10f));
  add(%v, ref_read(%r)) }""", 22.0),
    "ref_in_recursion": ("""
def @main(%x: float32) -> float32 {
  let %r = ref(0f);
  let %loop = fn (%i: int32) -> float32 {
    if (less(%i, 3)) {
      let %c = ref(%x);
      let %u = ref_write(%c, add(ref_read(%c), 1f));
      let %w = ref_write(%r, add(ref_read(%r), ref_read(%c)));
      %loop(add(%i, 1))
    } else { ref_read(%r) }
  };
  %loop(0) }""", 9.0),
}


def _run_both(mod, x):
    out = []
    for kind in ("debug", "vm"):
        v = relay.create_executor(kind, mod=mod).evaluate()(np.float32(x))
        out.append(float(v.numpy()))
    return out


@pytest.mark.parametrize("name", sorted(_GNF_REF_PROGRAMS))
def test_gnf_keeps_reference_semantics(name):
    src, expected = _GNF_REF_PROGRAMS[name]
    mod = relay.parse('#[version = "0.0.5"]' + src)
    assert _run_both(mod, 2.0) == [expected, expected]
    gnf = run_opt_pass(mod, transform.ToGraphNormalForm())
    assert _run_both(gnf, 2.0) == [expected, expected], gnf["main"].astext()
    anf_gnf = run_opt_pass(mod, [transform.ToANormalForm(), transform.ToGraphNormalForm()])
    assert _run_both(anf_gnf, 2.0) == [expected, expected], anf_gnf["main"].astext()


def test_gnf_keeps_effectful_lets_and_dissolves_pure_ones():
    mod = relay.parse('''#[version = "0.0.5"]
def @main(%x: float32) -> float32 {
  let %r = ref(0f);
  let %f = fn () { ref_write(%r, add(ref_read(%r), %x)) };
  let %a = %f(); let %b = %f();
  let %y = add(%x, 1f);
  let %z = multiply(%y, %y);
  add(%z, ref_read(%r)) }''')
    after = run_opt_pass(mod, transform.ToGraphNormalForm())["main"]
    # kept: %r (an allocation) and the two calls (effects, each once); dissolved: %f (a
    # closure, shared as a graph node), %y and %z (pure arithmetic)
    kept = []
    e = after.body
    while isinstance(e, relay.Let):
        kept.append(e.var.name_hint)
        e = e.body
    assert kept == ["r", "a", "b"]
    assert isinstance(e, relay.Call) and e.op.name == "add"
    assert isinstance(e.args[0], relay.Call) and e.args[0].op.name == "multiply"


def test_bbnf_binds_only_values_shared_across_blocks():
    x = relay.var("x", shape=(3,))
    c = relay.var("c", shape=(), dtype="bool")
    y = relay.exp(x)
    local = relay.sqrt(relay.abs(x))
    f = relay.Function([x, c], relay.If(c, relay.add(y, local), relay.negative(y)))
    after = run_opt_pass(f, transform.ToBasicBlockNormalForm())

    x2 = relay.var("x", shape=(3,))
    c2 = relay.var("c", shape=(), dtype="bool")
    v = relay.var("v")
    expected = relay.Function(
        [x2, c2],
        relay.Let(v, relay.exp(x2),
                  relay.If(c2, relay.add(v, relay.sqrt(relay.abs(x2))), relay.negative(v))),
    )
    assert_equal_structure(after, expected)


def test_dce_removes_unused_pure_bindings():
    x = relay.var("x", shape=(3,))
    a, b, d = relay.var("a"), relay.var("b"), relay.var("d")
    body = relay.Let(a, relay.exp(x), relay.Let(d, relay.negative(a), relay.Let(b, relay.add(x, x), b)))
    f = relay.Function([x], body)
    after = run_opt_pass(f, transform.DeadCodeElimination())
    x2 = relay.var("x", shape=(3,))
    b2 = relay.var("b")
    assert_equal_structure(after, relay.Function([x2], relay.Let(b2, relay.add(x2, x2), b2)))
    assert_same_result(f, after)


def test_dce_keeps_effects():
    x = relay.var("x", shape=())
    r, u = relay.var("r"), relay.var("u")
    body = relay.Let(r, relay.RefCreate(x), relay.Let(u, relay.RefWrite(r, relay.add(x, x)), relay.RefRead(r)))
    f = relay.Function([x], body)
    after = run_opt_pass(f, transform.DeadCodeElimination())
    assert structural_equal(after, run_opt_pass(f, []))
    assert_same_result(f, after)


def test_dce_inline_once():
    x = relay.var("x", shape=(3,))
    a = relay.var("a")
    f = relay.Function([x], relay.Let(a, relay.exp(x), relay.add(a, x)))
    after = run_opt_pass(f, transform.DeadCodeElimination(inline_once=True))
    x2 = relay.var("x", shape=(3,))
    assert_equal_structure(after, relay.Function([x2], relay.add(relay.exp(x2), x2)))


def test_deep_let_chain_anf_gnf_dce():
    n = 100_000
    x = relay.var("x", shape=(1,))
    vs = [relay.var(f"v{i}") for i in range(n)]
    body = vs[-1]
    for i in range(n - 1, -1, -1):
        prev = x if i == 0 else vs[i - 1]
        body = relay.Let(vs[i], relay.negative(prev), body)
    f = relay.Function([x], body)
    mod = relay.IRModule.from_expr(f)
    with transform.PassContext(opt_level=3):
        gnf = transform.ToGraphNormalForm()(mod)
        anf = transform.ToANormalForm()(gnf)
        dce = transform.DeadCodeElimination()(anf)
    assert isinstance(gnf["main"].body, relay.Call)
    assert isinstance(dce["main"].body, relay.Let)
