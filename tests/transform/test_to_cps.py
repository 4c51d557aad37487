"""to_cps / un_cps: the converted types, un_cps(to_cps(f)) computing what f computes (reference
interpreter against NumPy), recursion through a global, and CPS + PartialEvaluate removing
references; PartialEvaluate's knowledge of reference contents inside and after branches."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.testing import run_infer_type
from relay_tvm.transform import to_cps, un_cps

F32 = "float32"
T = relay.TensorType((3,), F32)


def _run(func, *args, mod=None):
    mod = relay.IRModule() if mod is None else mod
    mod["main"] = func
    mod = relay.transform.InferType()(mod)
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def _kinds(expr):
    seen = set()
    relay.analysis.post_order_visit(expr, lambda e: seen.add(type(e).__name__))
    return seen


def test_function_types_gain_a_continuation():
    x = relay.var("x", T)
    f = relay.var("f", relay.FuncType([T], T))
    func = run_infer_type(relay.Function([f, x], f(f(x)) + x))
    cps = run_infer_type(to_cps(func))
    answer = cps.type_params[-1]
    assert len(cps.type_params) == 1 and isinstance(answer, relay.TypeVar)
    k_of = relay.FuncType([T], answer)
    f_cps = relay.FuncType([T, k_of], answer)
    assert cps.checked_type == relay.FuncType([f_cps, T, k_of], answer, [answer])


def _program():
    """fn (x, c) { let g = fn (y) { y * 2 }; let r = ref(x); if c { r := g(x) } ;
    let t = (read r, x); t.0 + t.1 }"""
    x = relay.var("x", T)
    c = relay.var("c", shape=(), dtype="bool")
    y = relay.var("y", T)
    g, r = relay.var("g"), relay.var("r")
    t = relay.var("t")
    body = relay.Let(g, relay.Function([y], y * relay.const(2.0, F32)),
                     relay.Let(r, relay.RefCreate(x),
                               relay.Let(relay.var("_"),
                                         relay.If(c, relay.RefWrite(r, g(x)), relay.Tuple([])),
                                         relay.Let(t, relay.Tuple([relay.RefRead(r), x]),
                                                   relay.TupleGetItem(t, 0)
                                                   + relay.TupleGetItem(t, 1)))))
    return relay.Function([x, c], body)


@pytest.mark.parametrize("cond", [True, False])
def test_un_cps_of_to_cps_computes_the_same(cond):
    xv = np.array([1.0, -2.0, 0.5], F32)
    cps = run_infer_type(to_cps(run_infer_type(_program())))
    back = run_infer_type(un_cps(cps))
    assert back.checked_type == relay.FuncType([T, relay.TensorType((), "bool")], T)
    got = _run(back, xv, np.array(cond)).numpy()
    np.testing.assert_allclose(got, (3 * xv) if cond else (2 * xv))


@pytest.mark.parametrize("cond", [True, False])
def test_un_cps_needs_no_infer_type_after_to_cps(cond):
    # 0.19 needed un_cps(InferType(to_cps(f))); the CPS function's parameters carry their
    # types, so the round trip runs as written and agrees with the original function
    xv = np.array([1.0, -2.0, 0.5], F32)
    back = un_cps(to_cps(run_infer_type(_program())))
    typed = run_infer_type(back)
    assert typed.checked_type == relay.FuncType([T, relay.TensorType((), "bool")], T)
    got = _run(back, xv, np.array(cond)).numpy()
    np.testing.assert_allclose(got, (3 * xv) if cond else (2 * xv))
    np.testing.assert_array_equal(got, _run(_program(), xv, np.array(cond)).numpy())


def test_un_cps_of_unannotated_parameters_infers_or_names_them():
    from relay_tvm.errors import UntypedError

    answer = relay.TypeVar("answer")
    x = relay.var("x", T)
    # a CPS-shaped function whose continuation is not annotated: typed here
    k = relay.var("k")
    cps = relay.Function([x, k], k(x * relay.const(3.0, F32)), answer, [answer])
    xv = np.array([1.0, 2.0, -4.0], F32)
    np.testing.assert_allclose(_run(un_cps(cps), xv).numpy(), 3 * xv)
    # one that calls a global of a module it is not in cannot be typed alone: named
    k2 = relay.var("k2")
    ext = relay.Function([x, k2], relay.GlobalVar("g_cps")(x, k2), answer, [answer])
    with pytest.raises(UntypedError, match=r"un_cps: parameter %k2 .*no type annotation.*"
                                           r"run relay.transform.InferType\(\) on the module"):
        un_cps(ext)


def test_recursive_global_is_converted_once():
    mod = relay.IRModule()
    count = relay.GlobalVar("count")
    n = relay.var("n", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(), dtype="int32")
    one = relay.const(1, "int32")
    mod[count] = relay.Function(
        [n, acc], relay.If(relay.less(n, one), acc, count(n - one, acc + n)),
        relay.TensorType((), "int32"))
    mod = relay.transform.InferType()(mod)
    m = relay.var("m", shape=(), dtype="int32")
    main = run_infer_type(relay.Function([m], count(m, relay.const(0, "int32"))), mod)
    main = relay.transform.InferType()(_with_main(mod, main))["main"]
    cps = to_cps(main, mod=mod)
    assert "count_cps" in [g.name_hint for g in mod.get_global_vars()]
    mod["main"] = cps
    mod = relay.transform.InferType()(mod)
    mod["main"] = un_cps(mod["main"])
    run = relay.create_executor("debug", mod=relay.transform.InferType()(mod)).evaluate()
    assert int(run(np.array(10, "int32")).numpy()) == 55


def _with_main(mod, func):
    mod["main"] = func
    return mod


def test_cps_then_partial_evaluation_removes_the_reference():
    func = run_infer_type(_program())
    cps = run_infer_type(to_cps(func))
    mod = relay.IRModule.from_expr(cps)
    seq = relay.transform.Sequential([
        relay.transform.PartialEvaluate(), relay.transform.InferType(),
        relay.transform.DeadCodeElimination(inline_once=True, ignore_impurity=True),
        relay.transform.InferType()])
    opt = seq(mod)["main"]
    assert not {"RefCreate", "RefRead", "RefWrite"} & _kinds(opt)
    back = run_infer_type(un_cps(opt))
    xv = np.array([4.0, 0.0, -1.0], F32)
    for cond in (True, False):
        np.testing.assert_allclose(_run(back, xv, np.array(cond)).numpy(),
                                   (3 * xv) if cond else (2 * xv))


def test_primitive_functions_are_refused():
    x = relay.var("x", T)
    prim = relay.Function([x], relay.exp(x)).with_attr("Primitive", 1)
    y = relay.var("y", T)
    func = run_infer_type(relay.Function([y], prim(y)))
    with pytest.raises(RelayError, match="primitive"):
        to_cps(func)
    with pytest.raises(RelayError, match="to_cps"):
        un_cps(func)


def _pe(func):
    seq = relay.transform.Sequential([relay.transform.InferType(),
                                      relay.transform.PartialEvaluate(),
                                      relay.transform.InferType()])
    return seq(relay.IRModule.from_expr(func))["main"]


def _reads(expr):
    n = []
    relay.analysis.post_order_visit(expr, lambda e: n.append(1) if isinstance(e, relay.RefRead)
                                    else None)
    return len(n)


@pytest.mark.parametrize("cond", [True, False])
def test_partial_eval_knows_cell_contents_inside_branches_only(cond):
    # let r = ref(x); let y = if c { r := x * 3; read(r) + 1 } else { read(r) - 1 }; y * read(r)
    x = relay.var("x", T)
    c = relay.var("c", shape=(), dtype="bool")
    r, y = relay.var("r"), relay.var("y")
    three, one = relay.const(3.0, F32), relay.const(1.0, F32)
    tb = relay.Let(relay.var("_"), relay.RefWrite(r, x * three), relay.RefRead(r) + one)
    body = relay.Let(r, relay.RefCreate(x),
                     relay.Let(y, relay.If(c, tb, relay.RefRead(r) - one),
                               y * relay.RefRead(r)))
    func = relay.Function([x, c], body)
    opt = _pe(func)
    assert _reads(opt) == 1  # only the read after the if: either branch may have written
    xv = np.array([1.0, 2.0, -3.0], F32)
    want = (3 * xv + 1) * 3 * xv if cond else (xv - 1) * xv
    for f in (func, opt):
        np.testing.assert_allclose(_run(f, xv, np.array(cond)).numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("cond", [True, False])
def test_partial_eval_forgets_cell_contents_after_an_unknown_call(cond):
    # the function chosen by a dynamic if writes the cell: the read after its call is real
    x = relay.var("x", T)
    c = relay.var("c", shape=(), dtype="bool")
    r, g = relay.var("r"), relay.var("g")
    s1, s2 = relay.var("s1", relay.RefType(T)), relay.var("s2", relay.RefType(T))
    writer = relay.Function([s1], relay.RefWrite(s1, x + x))
    keeper = relay.Function([s2], relay.Tuple([]))
    body = relay.Let(r, relay.RefCreate(x),
                     relay.Let(g, relay.If(c, writer, keeper),
                               relay.Let(relay.var("_"), relay.RefWrite(r, x),  # known again
                                         relay.Let(relay.var("_"), g(r),
                                                   relay.RefRead(r) * x))))
    func = relay.Function([x, c], body)
    opt = _pe(func)
    assert _reads(opt) == 1
    xv = np.array([1.0, 2.0, -3.0], F32)
    want = 2 * xv * xv if cond else xv * xv
    np.testing.assert_allclose(_run(opt, xv, np.array(cond)).numpy(), want)


_FACT = '''#[version = "0.0.5"]
def @fact(%n: int32) -> int32 { if (less(%n, 2)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) } }
def @main(%n: int32) -> int32 { @fact(%n) }'''


def _run_main(mod):
    mod = relay.transform.InferType()(mod)
    return [int(relay.create_executor(kind, mod=mod).evaluate()(np.array(5, "int32")).numpy())
            for kind in ("debug", "vm")]


def _check_cps_module(mod):
    names = sorted(g.name_hint for g in mod.get_global_vars())
    cps = relay.transform.ToCPS()(mod)
    assert sorted(g.name_hint for g in mod.get_global_vars()) == names  # input unchanged
    cps = relay.transform.InferType()(cps)  # well-typed (@fact_cps was missing)
    i32 = relay.TensorType((), "int32")
    main_t = cps["main"].checked_type
    answer = main_t.type_params[-1]
    assert main_t == relay.FuncType([i32, relay.FuncType([i32], answer)], answer, [answer])
    # main in CPS, run with the identity continuation
    direct = cps.copy()
    direct["main"] = un_cps(cps["main"])
    assert _run_main(direct) == [120, 120]
    # the UnCPS pass gives every function its interface back
    back = relay.transform.InferType()(relay.transform.UnCPS()(cps))
    for name in ("fact", "main"):
        assert back[name].checked_type == relay.FuncType([i32], i32), name
    assert _run_main(back) == [120, 120]


def test_cps_pass_on_a_module_with_a_recursive_global():
    mod = relay.parse(_FACT)
    assert _run_main(mod) == [120, 120]
    _check_cps_module(mod)


def test_cps_pass_on_a_module_that_to_cps_added_a_global_to():
    mod = relay.transform.InferType()(relay.parse(_FACT))
    to_cps(mod["main"], mod)
    assert "fact_cps" in [g.name_hint for g in mod.get_global_vars()]
    _check_cps_module(relay.transform.InferType()(mod))
