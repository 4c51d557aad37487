"""Arguments of ``create_executor(...).evaluate()`` functions: nested lists of numbers are
tensors of the parameter's dtype (tvm.relay 0.19 accepted them), values that dtype cannot
hold, other objects and a wrong number of arguments are InputErrors naming the argument."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InputError

KINDS = ["debug", "graph", "vm"]


def _ev(kind, dtype="float32"):
    x = relay.var("x", shape=(2, 3), dtype=dtype)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    return relay.create_executor(kind, mod=mod, target="llvm").evaluate()


@pytest.mark.parametrize("kind", KINDS)
def test_list_of_numbers_is_a_tensor_of_the_parameter_dtype(kind):
    out = _ev(kind)([[1.5, 2, 3], [4, 5, 6]]).numpy()
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([[3, 4, 6], [8, 10, 12]], "float32"))
    iout = _ev(kind, "int32")([[1, 2, 3], [4, 5, -6]]).numpy()
    assert iout.dtype == np.int32
    np.testing.assert_array_equal(iout, [[2, 4, 6], [8, 10, -12]])


@pytest.mark.parametrize("kind", KINDS)
def test_bad_arguments_are_input_errors(kind):
    f = _ev(kind)
    with pytest.raises(InputError, match=r"takes 1 argument\(s\).*got 2"):
        f(np.ones((2, 3), "float32"), np.ones(2, "float32"))
    with pytest.raises(InputError, match=r"%x.*expected a NumPy array or a tvm tensor"):
        f([["a", "b", "c"], ["d", "e", "f"]])
    with pytest.raises(InputError, match=r"%x.*expected a NumPy array or a tvm tensor"):
        f({"x": 1})
    with pytest.raises(InputError, match=r"%x.*do not fit dtype int32 exactly"):
        _ev(kind, "int32")([[1.5, 2, 3], [4, 5, 6]])
    with pytest.raises(InputError, match=r"%x.*do not fit dtype int32 exactly"):
        _ev(kind, "int32")([[2**40, 2, 3], [4, 5, 6]])
    with pytest.raises(InputError, match=r"shape"):
        f([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("kind", KINDS)
def test_ragged_list_is_one_input_error_without_numpy_warning(kind):
    """NumPy < 1.24 warned of ragged rows (VisibleDeprecationWarning) before the InputError
    (fresh-user trial)."""
    import warnings

    f = _ev(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"%x.*rows of equal length \(its rows differ in "
                                             r"length\)$"):
            f([[1.0, 2.0, 3.0], [4.0, 5.0]])


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_wrong_dtype_or_shape_names_the_argument(kind):
    """The graph executor's messages said "set_input 'x'", which the user never called
    (fresh-user trial); they name the argument as the interpreter's do."""
    f = _ev(kind)
    with pytest.raises(InputError, match=r"^argument 0 \(%x\): got dtype float64, expected "
                                         r"float32"):
        f(np.ones((2, 3)))
    with pytest.raises(InputError, match=r"^argument 0 \(%x\): got shape"):
        f(np.ones((3, 2), "float32"))


def _scalar_ev(kind, dtype):
    n = relay.var("n", shape=(), dtype=dtype)
    mod = relay.IRModule.from_expr(relay.Function([n], relay.add(n, n)))
    return relay.create_executor(kind, mod=mod, target="llvm").evaluate()


@pytest.mark.parametrize("kind", KINDS)
def test_python_scalars_take_the_dtype_only_when_they_fit(kind):
    """A Python number takes the parameter's dtype when that holds it exactly (found by a
    fresh-user trial: 2**40 wrapped to 0 and 2.7 truncated to 2 on all three executors); a
    NumPy scalar keeps its own dtype, which must be the parameter's (the VM cast it)."""
    ev_i, ev_f = _scalar_ev(kind, "int32"), _scalar_ev(kind, "float32")
    assert int(ev_i(21).numpy()) == 42
    assert float(ev_f(0.25).numpy()) == 0.5
    assert float(ev_f(3).numpy()) == 6.0
    assert float(ev_f(np.float32(1.5)).numpy()) == 3.0
    assert np.isinf(ev_f(float("inf")).numpy())  # infinite stays infinite
    for bad, pattern in [(True, r"True is boolean, the parameter is int32"),
                         (2**40, r"value 1099511627776 does not fit dtype int32"),
                         (2.7, r"value 2.7 does not fit dtype int32"),
                         (-2.7, r"value -2.7 does not fit dtype int32"),
                         (2**70, r"does not fit dtype int32 \(out-of-range integer\)"),
                         (np.int64(5), r"got dtype int64, expected int32")]:
        with pytest.raises(InputError, match=r"(%n|'n').*" + pattern):
            ev_i(bad)
    for bad, pattern in [(False, r"False is boolean, the parameter is float32"),
                         (1e300, r"value 1e\+300 does not fit dtype float32 exactly"),
                         (np.float64(0.1), r"got dtype float64, expected float32")]:
        with pytest.raises(InputError, match=r"(%n|'n').*" + pattern):
            ev_f(bad)
    with pytest.raises(InputError, match=r"list's values do not fit dtype float32 exactly"):
        _ev(kind)([[1e300, 0, 0], [0, 0, 0]])
    with pytest.raises(InputError, match=r"list's values are boolean, the parameter is float32"):
        _ev(kind)([[True, False, True], [True, True, True]])


@pytest.mark.parametrize("kind", KINDS)
def test_python_bools_are_taken_for_a_bool_parameter_only(kind):
    """A Python bool for an int32 parameter came out as 1 (fresh-user trial); 0.19 made a bool
    constant of it, which the int32 parameter's type refused. For a bool parameter it is the
    value."""
    b = relay.var("b", shape=(), dtype="bool")
    mod = relay.IRModule.from_expr(relay.Function([b], relay.logical_not(b)))
    f = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    assert f(True).numpy().dtype == np.bool_
    assert bool(f(True).numpy()) is False
    assert bool(f(False).numpy()) is True


@pytest.mark.parametrize("kind", KINDS)
def test_a_misspelt_keyword_argument_gets_a_did_you_mean(kind):
    """A new-user trial: ``evaluate()(Data=x)`` for a parameter ``data`` said only "unknown
    argument 'Data'"; a case-only difference is the likeliest slip."""
    d = relay.var("data", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([d], relay.add(d, d)))
    f = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    with pytest.raises(InputError, match=r"^@main: unknown argument 'Data' \(did you mean "
                                         r"'data'\?\); parameters are \['data'\]$"):
        f(Data=np.ones((2, 3), "float32"))
    out = f(data=np.ones((2, 3), "float32")).numpy()
    np.testing.assert_array_equal(out, np.full((2, 3), 2, "float32"))


@pytest.mark.parametrize("kind", KINDS)
def test_an_argument_given_by_position_and_by_keyword_is_refused(kind):
    """A new-user trial: ``f(x, w, w=2 * w)`` ran with the keyword's value in every executor
    (the keyword overwrote the positional slot); tvm.relay 0.19 refused the duplicate."""
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(4, 3))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    f = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    xv, wv = np.ones((2, 3), "float32"), np.ones((4, 3), "float32")
    with pytest.raises(InputError, match=r"^@main: argument 'w' given twice, by position "
                                         r"\(argument 1\) and by keyword$"):
        f(xv, wv, w=2 * wv)
    with pytest.raises(InputError, match=r"argument 'x' given twice"):
        f(xv, x=xv, w=wv)
    # each way alone is right: x @ w.T of ones is 3 everywhere, with 2 * w it is 6
    np.testing.assert_array_equal(f(xv, wv).numpy(), np.full((2, 4), 3, "float32"))
    np.testing.assert_array_equal(f(xv, w=2 * wv).numpy(), np.full((2, 4), 6, "float32"))
    np.testing.assert_array_equal(f(w=wv, x=xv).numpy(), np.full((2, 4), 3, "float32"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_parameter_left_out_is_named(kind):
    """A new-user trial: ``f(w=...)`` without ``x`` said "argument 0 (%x): expected a NumPy
    array ..., got NoneType" in the debug and graph executors, a None the user never passed."""
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(4, 3))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    f = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    with pytest.raises(InputError, match=r"^@main takes 2 argument\(s\) \['x', 'w'\], got 1; "
                                         r"no value for \['x'\]$"):
        f(w=np.ones((4, 3), "float32"))
    with pytest.raises(InputError, match=r"got 1; no value for \['w'\]$"):
        f(np.ones((2, 3), "float32"))
    with pytest.raises(InputError, match=r"takes 2 argument\(s\) \['x', 'w'\], got 3$"):
        f(*[np.ones((2, 3), "float32")] * 3)


# From a new-user trial: the debug executor checked tensor arguments only. A tuple argument
# was not checked (a tensor or a float64 field ran and returned a wrong value; one field too
# few gave a bare IndexError), nor an ADT argument in either executor (a List of float32 for a
# List[int32] returned 3 in the interpreter and failed inside a VM kernel), nor a symbolic
# dimension bound to two sizes (concatenate returned an (8, 3) result).

@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_tuple_arguments_are_checked_field_by_field(kind):
    t2 = relay.TensorType((2,), "float32")
    t = relay.var("t", relay.TupleType([t2, t2]))
    mod = relay.IRModule.from_expr(
        relay.Function([t], relay.add(relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 1))))
    f = relay.create_executor(kind, mod=mod).evaluate()
    a, b = np.array([1, 2], "float32"), np.array([10, 20], "float32")
    np.testing.assert_array_equal(f((a, b)).numpy(), [11, 22])
    for bad, msg in [(a, r"expected a tuple of 2 values"),
                     ((a, b, b), r"expected a tuple of 2 values.*got a tuple of 3"),
                     ((a,), r"expected a tuple of 2 values.*got a tuple of 1"),
                     ((a, b.astype("float64")), r"got dtype float64, expected float32"),
                     ((a, np.ones(3, "float32")), r"got shape \(3,\)")]:
        with pytest.raises(InputError, match=msg):
            f(bad)


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_adt_arguments_are_checked_against_the_parameter_type(kind):
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    lst = relay.var("l", relay.TypeCall(p.list, [relay.TensorType((), "int32")]))
    mod["main"] = relay.Function([lst], p.sum(lst))
    mk = relay.create_executor("debug", mod=mod).evaluate
    ints = mk(p.cons(relay.const(2), p.cons(relay.const(5), p.nil())))
    floats = mk(p.cons(relay.const(1.5), p.cons(relay.const(2.5), p.nil())))
    some = mk(p.some(relay.const(1)))
    f = relay.create_executor(kind, mod=mod).evaluate()
    assert int(f(ints).numpy()) == 7
    with pytest.raises(InputError, match=r"%l.*field 0 of a Cons in it: got dtype float32, "
                                         r"expected int32"):
        f(floats)
    with pytest.raises(InputError, match=r"%l.*expected a value of type List\[int32\], got "
                                         r"Some\(1\), a value of Option"):
        f(some)
    with pytest.raises(InputError, match=r"%l.*ConstructorValue"):
        f(np.int32(3))


def test_a_long_list_argument_is_checked_without_recursion():
    from relay_tvm.runtime.interpreter import ConstructorValue

    mod = relay.IRModule()
    p = relay.Prelude(mod)
    lst = relay.var("l", relay.TypeCall(p.list, [relay.TensorType((), "int32")]))
    mod["main"] = relay.Function([lst], p.length(lst))
    v = ConstructorValue(p.nil, [])
    for i in range(5000):
        v = ConstructorValue(p.cons, [np.array(i, "int32"), v])
    assert int(relay.create_executor("debug", mod=mod).evaluate()(v).numpy()) == 5000
    # the last field of the list is the wrong one
    w = ConstructorValue(p.cons, [np.array(0.5, "float32"), ConstructorValue(p.nil, [])])
    for _ in range(5000):
        w = ConstructorValue(p.cons, [np.array(1, "int32"), w])
    with pytest.raises(InputError, match="got dtype float32, expected int32"):
        relay.create_executor("debug", mod=mod).evaluate()(w)


def test_a_symbolic_dimension_takes_one_size_across_arguments():
    import tvm

    n = (tvm.tirx if hasattr(tvm, "tirx") else tvm.tir).Var("n", "int64")
    x, y = relay.var("x", shape=(n, 3)), relay.var("y", shape=(n, 3))
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.concatenate([x + y, x], 0)))
    f = relay.create_executor("debug", mod=mod).evaluate()
    a = np.arange(12, dtype="float32").reshape(4, 3)
    np.testing.assert_array_equal(f(a, a).numpy(), np.concatenate([2 * a, a]))
    with pytest.raises(InputError, match=r"argument 1 \(%y\): got shape \(1, 3\), expected "
                                         r"Tensor\[\(n, 3\), float32\]: n is 4 \(argument 0 "
                                         r"\(%x\)\.shape\[0\]\), here 1"):
        f(a, a[:1])


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_a_returned_closure_checks_its_arguments_and_returns_tensors(kind):
    # fresh-user trial: the interpreter's closure returned a NumPy array and took a float64;
    # the VM's failed with TVM's InternalError (argument count) or a kernel's TypeError
    import tvm

    mod = relay.fromtext('#[version = "0.0.5"]\n'
                         'def @main(%x: float32) -> fn (float32) -> float32 {\n'
                         '  fn (%y: float32) -> float32 { %x + %y }\n}')
    clo = relay.create_executor(kind, mod=mod).evaluate()(np.float32(1))
    out = clo(np.float32(2))
    assert isinstance(out, tvm.runtime.Tensor) and float(out.numpy()) == 3.0
    with pytest.raises(InputError, match="closure argument 0.*got dtype float64, expected "
                                         "float32"):
        clo(np.float64(2))
    with pytest.raises(InputError, match=r"closure of 1 parameter\(s\).*called with 2 "
                                         r"argument\(s\)"):
        clo(np.float32(2), np.float32(3))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_a_returned_closure_takes_python_numbers_as_main_does(kind):
    # a Python int for an int32 closure parameter was refused as "got dtype int64" (main's
    # arguments take it); a value the dtype cannot hold is still refused, NumPy scalars keep
    # their own dtype
    x = relay.var("x", shape=(), dtype="float32")
    y = relay.var("y", shape=(2,), dtype="int32")
    inner = relay.Function([x, y], relay.add(x, relay.cast(y, "float32")))
    mod = relay.IRModule.from_expr(relay.Function([], inner))
    clo = relay.create_executor(kind, mod=mod, target="llvm").evaluate()()
    np.testing.assert_array_equal(clo(1.5, [3, -4]).numpy(), [4.5, -2.5])
    where = "VM closure argument 1" if kind == "vm" else r"closure argument 1 \(%y\)"
    with pytest.raises(InputError, match=rf"^{where}: the list's values do not fit dtype "
                                         r"int32 exactly"):
        clo(1.5, [2**40, 1])
    with pytest.raises(InputError, match=r"closure argument 0.*got dtype float64, expected "
                                         r"float32"):
        clo(np.float64(1.5), [1, 2])


def test_numpy_scalar_fields_of_an_adt_argument_are_0d_tensors():
    # the VM refused Cons(np.int32(5), Nil) with "unsupported value int32" (0-d arrays worked)
    from relay_tvm.runtime.interpreter import ConstructorValue

    mod = relay.IRModule()
    p = relay.Prelude(mod)
    lst = relay.var("l", relay.TypeCall(p.list, [relay.TensorType((), "int32")]))
    mod["main"] = relay.Function([lst], p.sum(lst))
    v = ConstructorValue(p.cons, [np.int32(5), ConstructorValue(
        p.cons, [np.int32(-2), ConstructorValue(p.nil, [])])])
    for kind in ["debug", "vm"]:
        assert int(relay.create_executor(kind, mod=mod).evaluate()(v).numpy()) == 3


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_a_list_for_an_adt_parameter_is_named_a_list(kind):
    """The debug executor said "got tuple" for a Python list (fresh-user trial): it converts
    lists to tuples before checking; messages name what the user passed."""
    from relay_tvm.runtime.interpreter import ConstructorValue

    mod = relay.IRModule()
    p = relay.Prelude(mod)
    i32 = relay.TensorType((), "int32")
    lst = relay.var("l", relay.TypeCall(p.list, [i32]))
    t = relay.var("t", relay.TupleType([i32, relay.TypeCall(p.list, [i32])]))
    mod["main"] = relay.Function([lst, t], p.length(lst))
    f = relay.create_executor(kind, mod=mod).evaluate()
    nil = ConstructorValue(p.nil, [])
    one = np.array(1, "int32")
    where = "@main argument" if kind == "vm" else "argument"
    with pytest.raises(InputError, match=rf"^{where} 0 \(%l\): expected a value of type "
                                         r"List\[int32\] \(a ConstructorValue of List\), got "
                                         r"a list of 2$"):
        f([1, 2], (one, nil))
    with pytest.raises(InputError, match=r"got a tuple of 3$"):
        f((1, 2, 3), (one, nil))
    with pytest.raises(InputError, match=rf"^{where} 1 \(%t\) field 1: expected a value of type "
                                         r"List\[int32\] .*got a list of 0$"):
        f(nil, (one, []))
    with pytest.raises(InputError, match=rf"^{where} 1 \(%t\): expected a tuple of 2 values "
                                         r"\(\(int32, List\[int32\]\)\), got a list of 1$"):
        f(nil, [one])
    assert int(f(nil, [one, nil]).numpy()) == 0


def test_a_list_for_an_adt_parameter_of_a_returned_closure_is_named_a_list():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    lst = relay.var("l", relay.TypeCall(p.list, [relay.TensorType((), "int32")]))
    mod["main"] = relay.Function([], relay.Function([lst], p.length(lst)))
    clo = relay.create_executor("debug", mod=mod).evaluate()()
    with pytest.raises(InputError, match=r"^closure argument 0 \(%l\): expected a value of "
                                         r"type List\[int32\] .*got a list of 3$"):
        clo([1, 2, 3])


def _wrong_inputs():
    """(parameter types, a wrong argument list) pairs; each call's first wrong argument is the
    last one."""
    t2 = relay.TensorType((2,), "float32")
    s = relay.TensorType((), "int32")
    return [
        ([t2], [np.ones(3, "float32")]),                    # shape
        ([t2], [np.ones(2, "float64")]),                    # dtype
        ([s, t2], [np.int32(1), {"x": 1}]),                 # not a tensor
        ([relay.TupleType([t2, s])], [(np.ones(2, "float32"),)]),       # tuple arity
        ([relay.TupleType([t2, s])], [(np.ones(2, "float32"), np.ones(2, "int32"))]),
    ]


def test_both_executors_name_the_same_expected_type(tmp_path):
    """The VM said "@main argument %x: got shape (3,), expected (2,)" where the debug executor
    said "argument 0 (%x): got shape (3,), expected Tensor[(2,), float32]" (fresh-user
    trial): both name the argument's position and name and the type in Relay's syntax, also
    for an executable loaded from a file (no Relay module at hand)."""
    from relay_tvm.runtime.vm import VirtualMachine, load_executable

    expected = [
        r"argument 0 \(%p0\): got shape \(3,\), expected Tensor\[\(2,\), float32\]$",
        r"argument 0 \(%p0\): got dtype float64, expected float32",
        r"argument 1 \(%p1\): expected a NumPy array or a tvm tensor \(Tensor\[\(2,\), "
        r"float32\]\), got dict$",
        r"argument 0 \(%p0\): expected a tuple of 2 values \(\(Tensor\[\(2,\), float32\], "
        r"int32\)\), got a tuple of 1$",
        r"argument 0 \(%p0\) field 1: got shape \(2,\), expected int32$",
    ]
    for k, ((types, args), want) in enumerate(zip(_wrong_inputs(), expected)):
        params = [relay.var(f"p{i}", t) for i, t in enumerate(types)]
        mod = relay.IRModule.from_expr(relay.Function(params, relay.Tuple(params)))
        msgs = []
        for kind in ["debug", "vm"]:
            with pytest.raises(InputError, match=want) as e:
                relay.create_executor(kind, mod=mod).evaluate()(*args)
            msgs.append(str(e.value))
        exe = relay.vm.compile(mod, "llvm")
        path = str(tmp_path / f"f{k}.so")
        exe.export_library(path)
        with pytest.raises(InputError, match=want) as e:
            VirtualMachine(load_executable(path)).invoke("main", *args)
        msgs.append(str(e.value))
        assert msgs[1] == msgs[2] == "@main " + msgs[0]


def test_a_loaded_vm_names_a_dynamic_dimension_with_a_question_mark(tmp_path):
    from relay_tvm.runtime.vm import VirtualMachine, load_executable

    x = relay.var("x", shape=(relay.Any(), 3))
    mod = relay.IRModule.from_expr(relay.Function([x], x + x))
    path = str(tmp_path / "f.so")
    relay.vm.compile(mod, "llvm").export_library(path)
    for run in [relay.create_executor("debug", mod=mod).evaluate(),
                VirtualMachine(load_executable(path)).run]:
        with pytest.raises(InputError, match=r"argument 0 \(%x\): got shape \(2, 4\), "
                                             r"expected Tensor\[\(\?, 3\), float32\]$"):
            run(np.ones((2, 4), "float32"))


_NESTED = ('#[version = "0.0.5"]\n'
           'def @main(%x: Tensor[(2,), float32]) {\n'
           '  (fn (%y: Tensor[(2,), float32]) { %x + %y }, %x)\n}')


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_a_closure_inside_a_returned_tuple_checks_its_arguments(kind):
    """Only a function's direct closure result was checked by the VM: one in a tuple failed
    inside a kernel with TVM's ValueError (fresh-user trial)."""
    clo, t = relay.create_executor(kind, mod=relay.fromtext(_NESTED)).evaluate()(
        np.array([1, 2], "float32"))
    np.testing.assert_array_equal(t.numpy(), [1, 2])
    np.testing.assert_array_equal(clo(np.array([10, 20], "float32")).numpy(), [11, 22])
    with pytest.raises(InputError, match=r"closure argument 0.*: got shape \(3,\), expected "
                                         r"Tensor\[\(2,\), float32\]$"):
        clo(np.ones(3, "float32"))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_closures_in_adt_values_references_and_closure_results_check_their_arguments(kind):
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    t2 = relay.TensorType((2,), "float32")
    x, y, z, w = (relay.var(n, t2) for n in "xyzw")
    inner = relay.Function([z], x + z)
    curried = relay.Function([y], relay.Function([w], y * w))
    # (Some(inner), ref(inner), curried): closures in an ADT value, a reference, and a
    # closure's result
    mod["main"] = relay.Function([x], relay.Tuple([p.some(inner), relay.RefCreate(inner),
                                                   curried]))
    some, ref, cur = relay.create_executor(kind, mod=mod).evaluate()(np.ones(2, "float32"))
    two = np.array([2, 3], "float32")
    for f in [some.fields[0], ref.value, cur(two)]:
        assert f(two).numpy().shape == (2,)
        with pytest.raises(InputError, match=r"closure argument 0.*got dtype float64, "
                                             r"expected float32"):
            f(two.astype("float64"))
    np.testing.assert_array_equal(cur(two)(two).numpy(), [4, 9])


def test_a_relay_constant_argument_is_its_value():
    """0.19's interpreter took a Relay Constant as an argument (TVM 0.19's test_pass_partial_eval
    calls `evaluate(f)(const(True))`); its value is checked like any tensor (no cast)."""
    d = relay.var("d", relay.TensorType((), "bool"))
    x = relay.var("x", relay.TensorType((2,), "float32"))
    f = relay.Function([d, x], relay.If(d, x + x, x))
    run = relay.create_executor().evaluate(f)
    x_val = relay.const(np.array([1.5, -2.0], "float32"))
    np.testing.assert_array_equal(run(relay.const(True), x_val).numpy(), [3.0, -4.0])
    np.testing.assert_array_equal(run(relay.const(False), x_val).numpy(), [1.5, -2.0])
    with pytest.raises(InputError, match=r"argument 1 \(%x\): got dtype int32, expected "
                                         r"float32"):
        run(relay.const(True), relay.const(np.array([1, 2], "int32")))


def test_the_interpreter_evaluates_an_expression_that_calls_main():
    # fresh-user trial: evaluate(expr) replaced @main by expr's function, so an expression
    # (or another global) calling @main failed to type-check; 0.19's interpreter added expr
    # under a name of its own
    x = relay.var("x", shape=(2,), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], x * relay.const(2.0)))
    main = mod.get_global_var("main")
    two = np.array([1.0, 2.0], "float32")
    ex = relay.create_executor("debug", mod=mod)
    np.testing.assert_array_equal(ex.evaluate(main(relay.const(two)) + relay.const(1.0)).numpy(),
                                  two * 2 + 1)
    y = relay.var("y", shape=(2,), dtype="float32")
    other = relay.GlobalVar("other")
    mod[other] = relay.Function([y], main(y) + relay.const(1.0))
    ex = relay.create_executor("debug", mod=mod)
    np.testing.assert_array_equal(ex.evaluate(other)(two).numpy(), two * 2 + 1)
    np.testing.assert_array_equal(ex.evaluate()(two).numpy(), two * 2)
