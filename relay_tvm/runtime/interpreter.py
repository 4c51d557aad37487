"""The reference interpreter (``create_executor("debug")``): evaluates any Relay program with the
NumPy reference kernels of the operator registry. It is the oracle compiled code is tested
against.

It is a small abstract machine with an explicit work stack and value stack, so neither deep
programs nor deep recursion in the evaluated program use Python's call stack. Each function
activation has one environment; values of shared sub-expressions are memoized per activation,
which gives a graph-form program the meaning of its A-normal form (each node evaluated once).

Values: NumPy arrays for tensors, Python tuples, :class:`Closure`, :class:`RefValue`,
:class:`ConstructorValue`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, RelayError
from ..ir.adt import (
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.types import TensorType
from ..transform.bind_params import check_arg  # noqa: F401  (exported here too)


class Env:
    """One function activation: variable bindings plus memoized node values."""

    __slots__ = ("vars", "parent", "memo")

    def __init__(self, parent=None):
        self.vars = {}
        self.parent = parent
        self.memo = {}

    def lookup(self, v):
        env = self
        while env is not None:
            if v in env.vars:
                return env.vars[v]
            env = env.parent
        raise InterpreterError(f"variable %{v.name_hint} has no value (unbound)", v.span)


class Closure:
    """A function value: the function and the environment it was created in."""

    __slots__ = ("func", "env", "interp")

    def __init__(self, func, env, interp=None):
        self.func = func
        self.env = env
        self.interp = interp

    def __call__(self, *args):
        """Call the function from Python (a closure an executor returned): the arguments are
        checked against its parameters' types as the executor's own, and tensors come back as
        tvm tensors, as from the executor.

        Raises:
            InputError: another number of arguments, or a value of another type.
        """
        from .argcheck import check_call, number_arg

        params = self.func.params
        types = [getattr(p, "_checked_type", None) or p.type_annotation for p in params]
        # Python numbers and lists take the parameter's dtype, as main's arguments do
        if len(args) == len(params):
            args = tuple(number_arg(a, t, f"closure argument {i} (%{p.name_hint})")
                         for i, (a, t, p) in enumerate(zip(args, types, params)))
        vals = [to_value(a) for a in args]
        check_call(vals, types, "closure", getattr(self.interp, "mod", None),
                   [p.name_hint for p in params], args)
        return to_user(self.interp.apply(self, vals))

    def __repr__(self):
        return f"Closure({len(self.func.params)} params)"


class RefValue:
    """A mutable reference cell."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"RefValue({describe_value(self.value, width=None)})"


class ConstructorValue:
    """A value of an algebraic data type: its constructor and fields."""

    __slots__ = ("constructor", "fields")

    def __init__(self, constructor, fields, *legacy):
        if legacy and isinstance(constructor, int):
            # tvm.relay 0.19's order: ConstructorValue(tag, fields, constructor)
            if constructor != legacy[0].tag:
                raise InterpreterError(f"ConstructorValue: tag {constructor} is not the tag "
                                       f"{legacy[0].tag} of {legacy[0].name_hint}")
            constructor = legacy[0]
        self.constructor = constructor
        self.fields = tuple(fields)

    @property
    def tag(self):
        return self.constructor.tag

    # 0.19's runtime ADT object: len, indexing and iteration give the fields
    def __len__(self):
        return len(self.fields)

    def __getitem__(self, i):
        return self.fields[i]

    def __iter__(self):
        return iter(self.fields)

    def __bool__(self):  # a nullary value (Nil, None_) is a value, not an empty container
        return True

    def __repr__(self):
        return describe_value(self, width=None)


def describe_value(v, width: int | None = 200, depth: int = 4) -> str:
    """``v`` (an interpreter or VM value) as error messages show it: scalars as Relay literals
    (``5``, ``1.5f``, ``2i64``, ``True``), other tensors by type (``Tensor[(2, 3), float32]``),
    ADT values as ``Cons(5, Nil)``, tuples in parentheses; nesting below ``depth`` is
    ``...``, and the text is cut to ``width`` characters (``None``: not cut)."""
    text = _describe(v, depth)
    if width is not None and len(text) > width:
        text = text[:width - 3] + "..."
    return text


def _describe(v, depth: int) -> str:
    if depth < 0:
        return "..."
    if isinstance(v, ConstructorValue):
        name = v.constructor.name_hint
        if not v.fields:
            return name
        return f"{name}({', '.join(_describe(f, depth - 1) for f in v.fields)})"
    if isinstance(v, (tuple, list)):
        inner = ", ".join(_describe(f, depth - 1) for f in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if hasattr(v, "numpy") and not isinstance(v, (np.ndarray, Closure, RefValue)):
        v = v.numpy()
    if isinstance(v, (np.ndarray, np.generic)):
        from ..text.printer import SCALAR_SUFFIX

        a = np.asarray(v)
        dtype = "bool" if a.dtype == np.bool_ else a.dtype.name
        if a.ndim == 0:
            x = a.item()
            if dtype == "bool":
                return str(bool(x))
            suffix = SCALAR_SUFFIX.get(dtype)
            if suffix is not None and isinstance(x, int):
                return f"{x}{suffix}"
            if suffix is not None and np.isfinite(x):
                t = str(a) if dtype != "float64" else repr(x)
                return (t[:-2] if t.endswith(".0") else t) + suffix
            return f"{x} ({dtype})"
        return f"Tensor[({', '.join(map(str, a.shape))}{',' if a.ndim == 1 else ''}), {dtype}]"
    return repr(v)


def to_value(x):
    """Convert a user argument (NumPy array, tvm Tensor, scalar, tuple, or a Relay ``Constant``,
    which 0.19's interpreter took as its value) to an interpreter value."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Constant):
        return x.data.numpy()
    if hasattr(x, "numpy") and not isinstance(x, (Closure, RefValue, ConstructorValue)):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return tuple(to_value(v) for v in x)
    if isinstance(x, (bool, int, float, np.generic)):
        return np.asarray(x)
    return x


_EVAL, _CALL, _LET, _IF, _TUPLE, _GETITEM, _REFC, _REFR, _REFW, _MATCH, _MEMO = range(11)


class Interpreter:
    """Evaluates expressions of a (type-checked) module."""

    def __init__(self, mod: IRModule):
        self.mod = mod
        self._globals: dict = {}
        self._kernels: dict = {}  # call -> its compiled compute (operators without a reference)

    def global_closure(self, gv):
        c = self._globals.get(gv)
        if c is None:
            try:
                f = self.mod[gv]
            except RelayError:
                raise InterpreterError(f"global @{gv.name_hint} is not defined") from None
            c = Closure(f, None, self)
            self._globals[gv] = c
        return c

    def apply(self, fn, args):
        if isinstance(fn, Closure):
            f = fn.func
            if len(args) != len(f.params):
                raise InterpreterError(f"function expects {len(f.params)} arguments, got {len(args)}")
            env = Env(fn.env)
            for p, a in zip(f.params, args):
                env.vars[p] = a
            return self.run(f.body, env)
        raise InterpreterError(f"cannot apply {describe_value(fn)}: not a function")

    def run(self, expr, env: Env):
        vals = []
        work = [(_EVAL, expr, env)]
        push = work.append
        while work:
            item = work.pop()
            kind = item[0]
            if kind == _EVAL:
                e, env = item[1], item[2]
                t = type(e)
                if t is Var:
                    vals.append(env.lookup(e))
                    continue
                if t is Constant:
                    vals.append(e.data)
                    continue
                memo = env.memo
                if e in memo:
                    vals.append(memo[e])
                    continue
                self._expand(t, e, env, vals, push)
            elif kind == _MEMO:
                item[2].memo[item[1]] = vals[-1]
            elif kind == _CALL:
                self._apply(item[1], vals, push)
            elif kind == _LET:
                e, env = item[1], item[2]
                env.vars[e.var] = vals.pop()
                push((_EVAL, e.body, env))
            elif kind == _IF:
                e, env = item[1], item[2]
                c = vals.pop()
                push((_EVAL, e.true_branch if bool(np.asarray(c)) else e.false_branch, env))
            elif kind == _TUPLE:
                n = item[1]
                fields = tuple(vals[len(vals) - n:]) if n else ()
                if n:
                    del vals[len(vals) - n:]
                vals.append(fields)
            elif kind == _GETITEM:
                vals.append(vals.pop()[item[1]])
            elif kind == _REFC:
                vals.append(RefValue(vals.pop()))
            elif kind == _REFR:
                vals.append(vals.pop().value)
            elif kind == _REFW:
                v = vals.pop()
                vals.pop().value = v
                vals.append(())
            elif kind == _MATCH:
                _match_step(item[1], item[2], vals, push)
        return vals.pop()

    def _expand(self, t, e, env, vals: list, push) -> None:
        """Schedule the evaluation of the compound expression ``e`` (of kind ``t``) on the work
        stack: its sub-expressions, then the step that combines their values."""
        if t is Call:
            push((_MEMO, e, env))
            push((_CALL, e, env))
            for a in reversed(e.args):
                push((_EVAL, a, env))
            push((_EVAL, e.op, env))
        elif t is Let:
            push((_LET, e, env))
            push((_EVAL, e.value, env))
        elif t is Function:
            vals.append(Closure(e, env, self))
        elif t is GlobalVar:
            vals.append(self.global_closure(e))
        elif t is If:
            push((_IF, e, env))
            push((_EVAL, e.cond, env))
        elif t is Tuple:
            push((_MEMO, e, env))
            push((_TUPLE, len(e.fields), None))
            for f in reversed(e.fields):
                push((_EVAL, f, env))
        elif t is TupleGetItem:
            push((_MEMO, e, env))
            push((_GETITEM, e.index, None))
            push((_EVAL, e.tuple_value, env))
        elif t is RefCreate:
            push((_MEMO, e, env))
            push((_REFC, None, None))
            push((_EVAL, e.value, env))
        elif t is RefRead:
            push((_MEMO, e, env))
            push((_REFR, None, None))
            push((_EVAL, e.ref, env))
        elif t is RefWrite:
            push((_MEMO, e, env))
            push((_REFW, None, None))
            push((_EVAL, e.value, env))
            push((_EVAL, e.ref, env))
        elif t is Match:
            push((_MATCH, e, env))
            push((_EVAL, e.data, env))
        elif t is Constructor:
            vals.append(e)
        else:  # an operator as a callee
            vals.append(e)

    def _apply(self, e, vals: list, push) -> None:
        """The call ``e``: its callee and arguments are on ``vals``; a closure's body is
        scheduled, a constructor or an operator is applied at once."""
        n = len(e.args)
        args = vals[len(vals) - n:] if n else []
        if n:
            del vals[len(vals) - n:]
        fn = vals.pop()
        if isinstance(fn, Closure):
            f = fn.func
            if len(args) != len(f.params):
                raise InterpreterError(
                    f"function expects {len(f.params)} arguments, got {len(args)}", e.span
                )
            new_env = Env(fn.env)
            for p, a in zip(f.params, args):
                new_env.vars[p] = a
            push((_EVAL, f.body, new_env))
        elif isinstance(fn, Constructor):
            vals.append(ConstructorValue(fn, args))
        else:
            vals.append(self.call_op(fn, args, e))

    def call_op(self, op, args, call):
        if op.ref_impl is None:
            if op.compute is None:
                raise InterpreterError(
                    f"operator {op.name} has neither a reference kernel nor a TE compute: "
                    f"register a NumPy one with relay.op.register_ref({op.name!r}, "
                    f"ref(args, attrs, out_type)) or a TE one with relay.op.register_compute",
                    call.span)
            return self._run_compute(op, args, call)
        out_type = call.checked_type
        try:
            res = op.ref_impl(args, call.attrs, out_type)
        except RelayError:
            raise
        except ValueError as err:
            if "could not be broadcast" not in str(err):
                raise InterpreterError(f"reference kernel of {op.name} failed: ValueError: "
                                       f"{err}", call.span) from err
            # dynamic (Any) dimensions type-check; their sizes meet only here
            from ..errors import InputError

            shapes = ", ".join(str(tuple(np.shape(a))) for a in args if hasattr(a, "shape"))
            raise InputError(
                f"{op.name}: the shapes of its operands {shapes} do not broadcast at run time "
                f"(each dimension must be equal, or 1 on one side; NumPy broadcasting)",
                call.span) from None
        except Exception as err:
            raise InterpreterError(
                f"reference kernel of {op.name} failed: {type(err).__name__}: {err}", call.span
            ) from err
        if isinstance(out_type, TensorType):
            res = np.asarray(res)
            if res.dtype.name != out_type.dtype and not (out_type.dtype == "bool" and res.dtype == np.bool_):
                res = res.astype(out_type.dtype)
        return res

    def _run_compute(self, op, args, call):
        """``call`` of an operator that has a TE compute (``register_compute``) but no reference
        kernel, as 0.19's interpreter ran it: the call alone is compiled for the CPU by the VM
        build (lowering, scheduling) once per call node, and run on ``args``."""
        run = self._kernels.get(call)
        if run is None:
            from ..transform.infer_type import InferType
            from .executor import create_executor

            params = [Var(f"p{i}", a.checked_type) for i, a in enumerate(call.args)]
            mod = InferType()(IRModule.from_expr(Function(params, Call(op, params, call.attrs))))
            try:
                run = create_executor("vm", mod=mod, target="llvm").evaluate()
            except RelayError as err:
                raise InterpreterError(f"operator {op.name} has no reference kernel and its TE "
                                       f"compute did not compile: {err}", call.span) from err
            self._kernels[call] = run
        return to_value(run(*args))


def _match_step(e, env, vals: list, push) -> None:
    """The ``match`` ``e``: its scrutinee is on ``vals``; the first clause whose pattern matches
    binds its variables and has its right-hand side scheduled."""
    data = vals.pop()
    for c in e.clauses:
        binds = {}
        if _match(c.lhs, data, binds):
            env.vars.update(binds)
            push((_EVAL, c.rhs, env))
            break
    else:
        raise InterpreterError(
            f"no match clause applies to the value {describe_value(data)}", e.span
        )


def _match(p, v, binds) -> bool:
    if isinstance(p, PatternWildcard):
        return True
    if isinstance(p, PatternVar):
        binds[p.var] = v
        return True
    if isinstance(p, PatternConstructor):
        if not isinstance(v, ConstructorValue) or v.constructor.name_hint != p.constructor.name_hint:
            return False
        return all(_match(q, f, binds) for q, f in zip(p.patterns, v.fields))
    if isinstance(p, PatternTuple):
        return all(_match(q, f, binds) for q, f in zip(p.patterns, v))
    return False


class HostArray(np.ndarray):
    """A NumPy array that also has ``tvm.runtime.Tensor``'s ``numpy()`` / ``asnumpy()``: the
    tensors inside ADT values returned to the user (tvm.relay's interpreter gave NDArrays there;
    this keeps NumPy behaviour for code written against relay_tvm)."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)

    asnumpy = numpy


def _host_fields(v) -> None:
    """Give the tensors in the fields of ADT values reachable from ``v`` ``numpy()`` (in
    place, iteratively: long lists are normal)."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, ConstructorValue):
            fields = tuple(f.view(HostArray) if type(f) is np.ndarray else f for f in x.fields)
            x.fields = fields
            stack.extend(fields)


def native_order(a):
    """NumPy array ``a`` in the machine's byte order, values kept (a big-endian ``>f4`` array
    is converted: TVM stores only native ones); ``a`` itself when it is native already."""
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def host_tensor(a, device=None):
    """A TVM tensor holding a copy of NumPy array ``a`` (C order, native byte order: a
    big-endian ``>f4`` array keeps its values, TVM stores only native ones)."""
    import tvm

    a = native_order(a)
    if not a.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        a = np.array(a, order="C")
    return tvm.runtime.tensor(a, device) if device is not None else tvm.runtime.tensor(a)


def to_user(v):
    """Interpreter value -> what executors return (tvm Tensors for tensors)."""
    if isinstance(v, np.ndarray):
        return host_tensor(v)
    if isinstance(v, tuple):
        return tuple(to_user(x) for x in v)
    if isinstance(v, ConstructorValue):
        _host_fields(v)
    return v


__all__ = ["HostArray", "Interpreter", "Closure", "RefValue", "ConstructorValue", "Env", "to_value", "to_user", "check_arg"]
