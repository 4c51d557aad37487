"""Tensor arrays over the Prelude's ``List`` (tvm.relay 0.19's ``TensorArrayOps`` and
``StaticTensorArrayOps``), the representation TensorFlow-era importers used for TensorList ops.

A tensor array is a ``List[tensor_t]`` where ``tensor_t`` is an ADT boxing one tensor:

* the *dynamic* kind (one per dtype ``D``): type ``tensor_D_t`` with constructors
  ``tensor_nil_D`` (an unwritten slot) and ``tensor0_D`` ... ``tensor6_D`` holding a tensor of
  rank 0..6 whose dimensions are all unknown (``Any``);
* the *static* kind (one per dtype and shape): type ``static_tensor_D_S_t`` with constructors
  ``tensor_nil_D_S`` and ``tensor_constructor_D_S`` holding ``Tensor[S, D]``, where ``S`` is the
  shape written ``3_any_4`` (``scalar`` for rank 0).

Functions (suffix ``_D`` resp. ``_D_S``): ``tensor_array(n)`` (n empty slots),
``tensor_array_read(ta, i)``, ``tensor_array_write(ta, i, t)``, ``tensor_take(t, lo, hi)``
(rows ``lo:hi`` of axis 0), ``tensor_expand_dims(t)`` (a new axis 0), ``tensor_concatenate(a,
b)`` (axis 0), ``tensor_array_unstack_tensorK`` (dynamic; static: ``tensor_array_unstack``),
``tensor_array_scatter(ta, indices, values)`` (``ta[indices[j]] = values[j]``),
``tensor_array_split(ta, value, lengths)`` (``ta[j]`` = the ``j``-th run of ``lengths[j]``
rows), ``tensor_array_concat(ta)``, ``tensor_array_stack(ta)`` and, static only,
``tensor_array_gather(ta, indices)`` and ``tensor_get_data(t)``. Reading, taking or concatenating a
mismatched constructor (e.g. an unwritten slot) is an incomplete match: the interpreter raises
:class:`~relay_tvm.errors.InterpreterError`.

Naming and semantics follow tvm.relay 0.19's ``python/tvm/relay/prelude.py``.
"""

from __future__ import annotations

from . import op
from .errors import RelayError
from .ir.adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .ir.expr import Function, GlobalVar, If, Let, Var, const
from .ir.types import Any, AnyDim, GlobalTypeVar, TensorType, scalar_type

MAX_RANK = 6
DTYPES = ("float32", "float16", "float64", "int32", "uint8", "int8", "int16", "uint16", "int64")

_I32 = scalar_type("int32")


def _idx_vec():
    return TensorType([Any()], "int32")


def _length(x):
    """``shape_of(x)[0]`` as an int32 scalar."""
    return op.take(op.shape_of(x), const(0))


def _arange(lo, hi):
    return op.arange(lo, hi, const(1, "int32"), dtype="int32")


def _has(mod, name: str) -> bool:
    return name in mod._global_vars


def _gv(mod, name: str) -> GlobalVar:
    """The module's GlobalVar ``name``, or a new one (so recursive definitions can refer to it)."""
    return mod._global_vars.get(name) or GlobalVar(name)


class _Lists:
    """The Prelude functions tensor arrays are written with."""

    def __init__(self, prelude):
        self.mod = prelude.mod
        self.list, self.cons, self.nil = prelude.mod.get_type("List")
        for name in ("nth", "update", "map", "foldl", "hd", "tl", "id"):
            setattr(self, name, prelude.mod.get_global_var(name))

    def of(self, gtv):
        return self.list(gtv())

    def scatter(self, name, ta_ty, write, read, indices_ty, limit_of):
        """``name(ta, indices, values)``: for each j, ``ta = write(ta, indices[j], values[j])``."""
        helper = _gv(self.mod, name.replace("tensor_array_scatter", "tensor_array_scatter_helper"))
        ta, cur, lim = Var("ta", ta_ty), Var("current", _I32), Var("limit", _I32)
        idx, vals = Var("indices_", indices_ty), Var("values_", ta_ty)
        step = write(ta, op.take(idx, cur), read(vals, cur))
        body = If(op.equal(cur, lim), ta, helper(step, op.add(cur, const(1)), lim, idx, vals))
        self.mod[helper] = Function([ta, cur, lim, idx, vals], body, ta_ty)
        ta, idx, vals = Var("tensor_array", ta_ty), Var("indices", indices_ty), Var("values", ta_ty)
        self.mod[_gv(self.mod, name)] = Function(
            [ta, idx, vals], helper(ta, const(0), lim_expr(limit_of, idx), idx, vals), ta_ty)

    def split(self, name, helper_name, out_ty, value_ty, write, take, lengths_ty, limit_of):
        """``name(ta, value, lengths)``: ``ta[j] = take(value, off_j, off_j + lengths[j])``."""
        helper = _gv(self.mod, helper_name)
        ta, val = Var("tensor_array", out_ty), Var("value1", value_ty)
        off, cur, lim = Var("offset1", _I32), Var("current1", _I32), Var("limit1", _I32)
        lengths = Var("lengths", lengths_ty)
        # lengths[j] read twice, not one shared node (0.19's helper had no sharing either:
        # detect_feature finds no fGraph in the Prelude)
        rest = helper(ta, val, op.add(off, op.take(lengths, cur)), op.add(cur, const(1)), lim,
                      lengths)
        body = If(op.equal(cur, lim), ta,
                  write(rest, cur, take(val, off, op.add(op.take(lengths, cur), off))))
        self.mod[helper] = Function([ta, val, off, cur, lim, lengths], body, out_ty)
        ta, val, lengths = Var("tensor_array", out_ty), Var("value", value_ty), Var("lengths",
                                                                                    lengths_ty)
        self.mod[_gv(self.mod, name)] = Function(
            [ta, val, lengths],
            helper(ta, val, const(0), const(0), lim_expr(limit_of, lengths), lengths), out_ty)

    def concat(self, name, ta_ty, out_ty, nil_ctor, concatenate):
        """``name(ta)``: the elements concatenated on axis 0 (``nil`` for an empty array)."""
        gv = _gv(self.mod, name)
        ta, hd, tl = Var("tensor_array", ta_ty), Var("hd"), Var("tl")
        rest = Match(tl, [Clause(PatternConstructor(self.nil), hd),
                          Clause(PatternWildcard(), concatenate(hd, gv(tl)))], False)
        body = Match(ta, [Clause(PatternConstructor(self.nil), nil_ctor()),
                          Clause(PatternConstructor(self.cons, [PatternVar(hd), PatternVar(tl)]),
                                 rest)], False)
        self.mod[gv] = Function([ta], body, out_ty)

    def stack(self, name, ta_ty, out_ty, expand_dims, concatenate, single=False):
        """``name(ta)``: the elements with a new axis 0, concatenated (``single``: one element)."""
        ta = Var("tensor_array", ta_ty)
        if single:
            body = self.id(self.hd(self.map(expand_dims, ta)))
        else:  # the mapped list let-bound (0.19's was in A-normal form): no shared node
            grown = Var("grown")
            body = Let(grown, self.map(expand_dims, ta),
                       self.foldl(concatenate, self.hd(grown), self.tl(grown)))
        self.mod[_gv(self.mod, name)] = Function([ta], body, out_ty)

    def gather(self, name, ta_ty, out_ty, read, stack):
        """``name(ta, indices)``: ``stack([ta[i] for i in indices])``."""
        helper = _gv(self.mod, name.replace("tensor_array_gather", "tensor_array_gather_helper"))
        ta, acc, cur = Var("ta", ta_ty), Var("accu", ta_ty), Var("current", _I32)
        lim, idx = Var("limit", _I32), Var("indices_", _idx_vec())
        prev = op.subtract(cur, const(1))
        body = If(op.equal(cur, const(0)), stack(acc),
                  helper(ta, self.cons(read(ta, op.take(idx, prev)), acc), prev, lim, idx))
        self.mod[helper] = Function([ta, acc, cur, lim, idx], body, out_ty)
        ta, idx = Var("tensor_array", ta_ty), Var("indices", _idx_vec())
        n = _length(idx)
        self.mod[_gv(self.mod, name)] = Function([ta, idx], helper(ta, self.nil(), n, n, idx),
                                                 out_ty)

    def new_array(self, name, elem_ty, nil_ctor):
        """``name(n)``: ``n`` unwritten slots."""
        gv = _gv(self.mod, name)
        n = Var("x", _I32)
        body = If(op.equal(n, const(0)), self.nil(),
                  self.cons(nil_ctor(), gv(op.subtract(n, const(1)))))
        self.mod[gv] = Function([n], body, self.of(elem_ty))

    def read_write(self, read_name, write_name, elem_ty):
        ta, n = Var("tensor_array", self.of(elem_ty)), Var("x", _I32)
        self.mod[_gv(self.mod, read_name)] = Function([ta, n], self.nth(ta, n), elem_ty())
        ta, n, v = Var("tensor_array", self.of(elem_ty)), Var("x", _I32), Var("v", elem_ty())
        self.mod[_gv(self.mod, write_name)] = Function([ta, n, v], self.update(ta, n, v),
                                                       self.of(elem_ty))

    def unstack(self, name, helper_name, tensor_ty, elem_ty, box):
        """``name(t)``: the list of ``box(t[i])`` over axis 0."""
        helper = _gv(self.mod, helper_name)
        i, up, t = Var("i", _I32), Var("up", _I32), Var("t", tensor_ty)
        body = If(op.equal(i, up), self.nil(),
                  self.cons(box(op.take(t, i, axis=0)), helper(op.add(i, const(1)), up, t)))
        self.mod[helper] = Function([i, up, t], body, self.of(elem_ty))
        t = Var("tensor", tensor_ty)
        self.mod[_gv(self.mod, name)] = Function([t], helper(const(0), _length(t), t),
                                                 self.of(elem_ty))


def lim_expr(limit_of, x):
    """The trip count of a scatter/split loop: a static count, or ``shape_of(x)[0]``."""
    return const(limit_of) if limit_of is not None else _length(x)


def _match1(x, ctor, make, complete=False):
    """``match? (x) { ctor(%t) => make(%t) }``"""
    t = Var("t")
    return Match(x, [Clause(PatternConstructor(ctor, [PatternVar(t)]), make(t))], complete)


class TensorArrayOps:
    """The dynamic-rank tensor array of one dtype (tvm.relay.prelude.TensorArrayOps).

    Args:
        prelude: a :class:`~relay_tvm.prelude.Prelude`; ``register()`` adds the definitions to
            ``prelude.mod``.
        dtype: element dtype, e.g. ``"float32"``.
    """

    def __init__(self, prelude, dtype: str):
        self.prelude, self.dtype = prelude, dtype
        self.list, self.cons, self.nil = prelude.mod.get_type("List")

    def get_name(self, canonical: str) -> str:
        return self.prelude.get_name(canonical, self.dtype)

    def get_global_var(self, canonical: str) -> GlobalVar:
        return self.prelude.get_global_var(canonical, self.dtype)

    def get_type(self, canonical: str) -> GlobalTypeVar:
        return self.prelude.get_type(canonical, self.dtype)

    def get_ctor(self, canonical: str) -> Constructor:
        return self.prelude.get_ctor("tensor_t", canonical, self.dtype)

    def register(self) -> None:
        """Add ``tensor_D_t`` and every tensor array function of this dtype to the module."""
        mod, nm = self.prelude.mod, self.get_name
        if _has(mod, nm("tensor_array_stack")):
            return
        L = _Lists(self.prelude)
        gtv = GlobalTypeVar(nm("tensor_t"))
        ranked = [TensorType([Any()] * r, self.dtype) for r in range(MAX_RANK + 1)]
        nil = Constructor(nm("tensor_nil"), [], gtv)
        box = [Constructor(nm(f"tensor{r}"), [ranked[r]], gtv) for r in range(MAX_RANK + 1)]
        mod[gtv] = TypeData(gtv, [], [nil, *box])
        elem = gtv()

        def by_rank(x, ranks, make):
            clauses = []
            for r in ranks:
                t = Var(f"t{r}")
                clauses.append(Clause(PatternConstructor(box[r], [PatternVar(t)]), make(r, t)))
            return Match(x, clauses, False)

        t, lo, hi = Var("tensor", elem), Var("lower", _I32), Var("upper", _I32)
        mod[_gv(mod, nm("tensor_take"))] = Function([t, lo, hi], by_rank(
            t, range(1, MAX_RANK + 1),
            lambda r, v: box[r](op.take(v, _arange(lo, hi), axis=0))), elem)
        x = Var("x", elem)
        expand = _gv(mod, nm("tensor_expand_dims"))
        mod[expand] = Function([x], by_rank(
            x, range(MAX_RANK), lambda r, v: box[r + 1](op.expand_dims(v, 0, 1))), elem)
        x, y = Var("x", elem), Var("y", elem)
        concat = _gv(mod, nm("tensor_concatenate"))
        # ranks 1-4, as tvm.relay 0.19 (a rank mismatch is an incomplete match)
        mod[concat] = Function([x, y], by_rank(x, range(1, 5), lambda r, a: _match1(
            y, box[r], lambda b: box[r](op.concatenate([a, b], axis=0)))), elem)
        L.new_array(nm("tensor_array"), gtv, nil)
        L.read_write(nm("tensor_array_read"), nm("tensor_array_write"), gtv)
        for r in range(1, MAX_RANK + 1):
            L.unstack(nm(f"tensor_array_unstack_tensor{r}"),
                      nm(f"tensor_array_unstack_tensor{r}_helper"), ranked[r], gtv, box[r - 1])
        read, write = mod.get_global_var(nm("tensor_array_read")), mod.get_global_var(
            nm("tensor_array_write"))
        L.scatter(nm("tensor_array_scatter"), L.of(gtv), write, read, _idx_vec(), None)
        L.split(nm("tensor_array_split"), nm("ta_split_helper"), L.of(gtv), elem, write,
                mod.get_global_var(nm("tensor_take")), _idx_vec(), None)
        L.concat(nm("tensor_array_concat"), L.of(gtv), elem, nil, concat)
        L.stack(nm("tensor_array_stack"), L.of(gtv), elem, expand, concat)
        # no dynamic tensor_array_gather, as in tvm.relay 0.19 (PartialEvaluate over a module
        # holding it breaks there and here; the static arrays have gather)


def _shape_str(shape) -> str:
    return "_".join("any" if isinstance(d, AnyDim) else str(int(d)) for d in shape)


def static_name(canonical: str, dtype: str, shape, batch_dim=None, extra_shapes=None) -> str:
    """The module name of a static tensor array definition (tvm.relay 0.19's scheme:
    ``static_tensor_float32_any_3_t``, ``tensor_array_read_float32_any_3``, ...)."""
    s = _shape_str(shape)
    for key, extra in (extra_shapes or {}).items():
        s += f"_{key}_{_shape_str(extra)}"
    s = s or "scalar"
    if canonical == "tensor_t":
        return f"static_tensor_{dtype}_{s}_t"
    if batch_dim == 1 and canonical not in ("tensor_constructor", "tensor_nil"):
        return f"{canonical}_{dtype}_batch1_{s}"
    return f"{canonical}_{dtype}_{s}"


class StaticTensorArrayOps:
    """Tensor array whose elements all have one fixed shape (tvm.relay.prelude's class).

    Args:
        prelude: the :class:`~relay_tvm.prelude.Prelude` whose module receives the definitions.
        dtype: element dtype.
        shape: element shape, a tuple of ints and ``relay.Any()``.
        batch_dim: 1 when the array is known to hold exactly one element (``stack`` and
            ``gather`` then give a leading dimension 1 instead of ``Any``).
    """

    def __init__(self, prelude, dtype: str, shape, batch_dim=None):
        self.prelude, self.dtype, self.batch_dim = prelude, dtype, batch_dim
        self.shape = tuple(shape)
        self.list, self.cons, self.nil = prelude.mod.get_type("List")

    @property
    def mod(self):
        return self.prelude.mod

    def get_name(self, canonical: str, extra_shapes=None) -> str:
        return static_name(canonical, self.dtype, self.shape, self.batch_dim, extra_shapes)

    def get_global_var(self, canonical: str) -> GlobalVar:
        return self.mod.get_global_var(self.get_name(canonical))

    def get_type(self, canonical: str) -> GlobalTypeVar:
        return self.mod.get_global_type_var(static_name(canonical, self.dtype, self.shape))

    def get_ctor(self, canonical: str) -> Constructor:
        name = static_name(canonical, self.dtype, self.shape)
        for c in self.mod[self.get_type("tensor_t")].constructors:
            if c.name_hint == name:
                return c
        raise RelayError(f"static tensor type {self.get_name('tensor_t')} has no constructor "
                         f"{name}")

    def _other(self, shape) -> StaticTensorArrayOps:
        ops = StaticTensorArrayOps(self.prelude, self.dtype, shape, self.batch_dim)
        ops.define_tensor_adt()
        return ops

    def _rows_any(self) -> StaticTensorArrayOps:
        return self._other([Any(), *self.shape[1:]])

    def _stacked(self) -> StaticTensorArrayOps:
        return self._other([1 if self.batch_dim == 1 else Any(), *self.shape])

    def define_tensor_adt(self) -> None:
        """``static_tensor_D_S_t`` with ``tensor_nil_D_S`` and ``tensor_constructor_D_S``."""
        name = self.get_name("tensor_t")
        if name in self.mod._global_type_vars:
            self.tensor_type_var = self.mod.get_global_type_var(name)
            return
        gtv = self.tensor_type_var = GlobalTypeVar(name)
        nil = Constructor(static_name("tensor_nil", self.dtype, self.shape), [], gtv)
        box = Constructor(static_name("tensor_constructor", self.dtype, self.shape),
                          [TensorType(list(self.shape), self.dtype)], gtv)
        self.mod[gtv] = TypeData(gtv, [], [nil, box])

    def _box(self):
        return self.get_ctor("tensor_constructor")

    def define_tensor_take(self) -> None:
        if not self.shape or _has(self.mod, self.get_name("tensor_take")):
            return
        out = self._rows_any()
        t, lo, hi = Var("tensor", self.tensor_type_var()), Var("lower", _I32), Var("upper", _I32)
        body = _match1(t, self._box(), lambda v: out._box()(
            op.take(v, _arange(lo, hi), axis=0)))
        self.mod[_gv(self.mod, self.get_name("tensor_take"))] = Function(
            [t, lo, hi], body, out.tensor_type_var())

    def define_tensor_concatenate(self) -> None:
        if not self.shape or _has(self.mod, self.get_name("tensor_concatenate")):
            return
        out = self._rows_any()
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())
        body = _match1(x, self._box(), lambda a: _match1(y, self._box(), lambda b: out._box()(
            op.concatenate([a, b], axis=0))))
        self.mod[_gv(self.mod, self.get_name("tensor_concatenate"))] = Function(
            [x, y], body, out.tensor_type_var())

    def define_tensor_expand_dims(self) -> None:
        out = self._stacked()
        x = Var("x", self.tensor_type_var())
        body = _match1(x, self._box(), lambda v: out._box()(op.expand_dims(v, 0, 1)))
        gv = _gv(self.mod, self.get_name("tensor_expand_dims"))
        self.mod[gv] = Function([x], body, out.tensor_type_var())
        setattr(self.prelude, gv.name_hint, gv)

    def define_tensor_array(self) -> None:
        _Lists(self.prelude).new_array(self.get_name("tensor_array"), self.tensor_type_var,
                                       self.get_ctor("tensor_nil"))

    def define_tensor_array_read(self) -> None:
        self._read_write()

    def define_tensor_array_write(self) -> None:
        self._read_write()

    def _read_write(self) -> None:
        if not _has(self.mod, self.get_name("tensor_array_write")):
            _Lists(self.prelude).read_write(self.get_name("tensor_array_read"),
                                            self.get_name("tensor_array_write"),
                                            self.tensor_type_var)

    def define_tensor_array_unstack(self) -> None:
        if not self.shape:
            return
        inner = self._other(self.shape[1:])
        _Lists(self.prelude).unstack(
            self.get_name("tensor_array_unstack"), self.get_name("tensor_array_unstack_helper"),
            TensorType(list(self.shape), self.dtype), inner.tensor_type_var, inner._box())

    def define_tensor_array_scatter(self, indices_shape=None, force_update=False) -> None:
        """``tensor_array_scatter``; ``indices_shape`` gives the indices a static shape (the
        name then carries it, e.g. ``..._indices_2``); ``force_update`` redefines it."""
        extra = {"indices": indices_shape} if indices_shape is not None else None
        name = self.get_name("tensor_array_scatter", extra)
        if _has(self.mod, name) and not force_update:
            return
        self._read_write()
        idx_ty = TensorType(list(indices_shape) if indices_shape else [Any()], "int32")
        limit = int(indices_shape[0]) if indices_shape is not None else None
        _Lists(self.prelude).scatter(name, _Lists(self.prelude).of(self.tensor_type_var),
                                     self.get_global_var("tensor_array_write"),
                                     self.get_global_var("tensor_array_read"), idx_ty, limit)
        setattr(self.prelude, name, self.mod.get_global_var(name))

    def define_tensor_array_split(self, value_shape=None, lengths_shape=None,
                                  force_update=False) -> None:
        """``tensor_array_split`` into an array of ``[Any, *shape[1:]]`` elements;
        ``value_shape``/``lengths_shape`` make the split value and lengths static."""
        if not self.shape:
            return
        name = self.get_name("tensor_array_split")
        if _has(self.mod, name) and not force_update:
            return
        out = self._rows_any()
        out._read_write()
        value = self._other(value_shape) if value_shape is not None else self
        value.define_tensor_take()
        lengths_ty = TensorType(list(lengths_shape) if lengths_shape else [Any()], "int32")
        limit = int(lengths_shape[0]) if lengths_shape is not None else None
        L = _Lists(self.prelude)
        L.split(name, self.get_name("ta_split_helper"), L.of(out.tensor_type_var),
                value.tensor_type_var(), out.get_global_var("tensor_array_write"),
                value.get_global_var("tensor_take"), lengths_ty, limit)

    def define_tensor_array_concat(self) -> None:
        if not self.shape or _has(self.mod, self.get_name("tensor_array_concat")):
            return
        out = self._rows_any()
        out.define_tensor_concatenate()
        L = _Lists(self.prelude)
        L.concat(self.get_name("tensor_array_concat"), L.of(out.tensor_type_var),
                 out.tensor_type_var(), out.get_ctor("tensor_nil"),
                 out.get_global_var("tensor_concatenate"))

    def define_tensor_array_stack(self) -> None:
        out = self._stacked()
        out.define_tensor_concatenate()
        if not _has(self.mod, self.get_name("tensor_expand_dims")):
            self.define_tensor_expand_dims()
        L = _Lists(self.prelude)
        L.stack(self.get_name("tensor_array_stack"), L.of(self.tensor_type_var),
                out.tensor_type_var(), self.get_global_var("tensor_expand_dims"),
                out.get_global_var("tensor_concatenate") if out.shape else None,
                single=self.batch_dim == 1)
        setattr(self.prelude, self.get_name("tensor_array_stack"),
                self.get_global_var("tensor_array_stack"))

    def define_tensor_array_gather(self) -> None:
        self._read_write()
        if not _has(self.mod, self.get_name("tensor_array_stack")):
            self.define_tensor_array_stack()
        L = _Lists(self.prelude)
        L.gather(self.get_name("tensor_array_gather"), L.of(self.tensor_type_var),
                 self._stacked().tensor_type_var(), self.get_global_var("tensor_array_read"),
                 self.get_global_var("tensor_array_stack"))

    def define_tensor_get_data(self) -> None:
        t = Var("tensor", self.tensor_type_var())
        self.mod[_gv(self.mod, self.get_name("tensor_get_data"))] = Function(
            [t], _match1(t, self._box(), lambda v: v), TensorType(list(self.shape), self.dtype))

    def register(self) -> None:
        """Add the type and every function for this dtype and shape to the module."""
        self.define_tensor_adt()
        self.define_tensor_take()
        self.define_tensor_concatenate()
        self.define_tensor_expand_dims()
        self.define_tensor_array()
        self._read_write()
        self.define_tensor_array_unstack()
        self.define_tensor_array_scatter()
        self.define_tensor_array_split()
        self.define_tensor_array_concat()
        self.define_tensor_array_stack()
        self.define_tensor_array_gather()
        self.define_tensor_get_data()


def get_tensor_array_shape(expr, dtype: str, prelude):
    """The element shape of a static tensor array expression (a tuple of ints and ``Any``), or
    None for a dynamic one; ``expr`` is type-checked in ``prelude.mod``."""
    from .analysis import free_vars
    from .transform import InferType

    prelude.mod["main"] = Function(free_vars(expr), expr)
    ty = InferType()(prelude.mod)["main"].body.checked_type
    name = ty.args[0].func.name_hint if getattr(ty, "args", None) else ""
    head = f"static_tensor_{dtype}_"
    if not name.startswith(head):
        return None
    dims = name[len(head):-len("_t")]
    if dims == "scalar":
        return ()
    return tuple(Any() if d in ("any", "?") else int(d) for d in dims.split("_"))


__all__ = ["TensorArrayOps", "StaticTensorArrayOps", "get_tensor_array_shape", "static_name",
           "DTYPES"]
