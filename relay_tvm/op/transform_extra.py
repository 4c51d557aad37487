"""Less common operators of tvm.relay.op.transform: ``reinterpret``, ``cumsum``, ``cumprod``,
``meshgrid``, ``scatter_elements``, ``scatter_nd``, ``adv_index``, ``unravel_index``, ``trilu``,
``einsum``. Names, attributes and semantics as tvm.relay 0.19; TE computes are topi's.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType, TupleType
from ._common import (
    TupleWrapper,
    as_int64,
    as_tuple_expr,
    broadcast_shapes,
    dim_mul,
    int_dtype_check,
    normalize_axis,
    require_equal_dims,
    require_indices_in_range,
    shape_str,
    tensor_args,
    tuple_or_tensors,
)
from .registry import OpPattern, make_call, register_gradient, register_op


def _bits(dtype: str) -> int:
    import tvm

    t = tvm.DataType(dtype)
    return t.bits * t.lanes


# ---- reinterpret -------------------------------------------------------------------------------


def _reinterpret_rel(types, attrs):
    ts = tensor_args(types, ("data",), "reinterpret")
    if ts is None:
        return None
    if _bits(ts[0].dtype) != _bits(attrs.dtype):
        raise TypeInferenceError(
            f"reinterpret: data dtype {ts[0].dtype} ({_bits(ts[0].dtype)} bits) and dtype "
            f"{attrs.dtype} ({_bits(attrs.dtype)} bits) differ in width"
        )
    return TensorType(ts[0].shape, attrs.dtype)


def _reinterpret_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.reinterpret(
        inputs[0], attrs.dtype
    )


register_op(
    "reinterpret",
    batch_rows=True,
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.CastAttrs", [F("dtype", "dtype")]),
    rel=_reinterpret_rel,
    ref=lambda args, attrs, out_type: np.ascontiguousarray(args[0]).view(attrs.dtype),
    compute=_reinterpret_compute,
    pattern=OpPattern.ELEMWISE,
    doc="Reinterpret the bits of each element as dtype (same width) (topi.reinterpret).",
    level=5,
)


def reinterpret(data, dtype):
    """View the bits of ``data`` as ``dtype`` (of the same bit width)."""
    return make_call("reinterpret", [data], dtype=dtype)


# ---- cumsum / cumprod --------------------------------------------------------------------------

_SCAN_ATTRS = (
    "relay.attrs.ScanopAttrs",
    [F("axis", "int?", None), F("dtype", "dtype", ""), F("exclusive", "bool", False)],
)


def _scan_rel(name):
    def rel(types, attrs):
        ts = tensor_args(types, ("data",), name)
        if ts is None:
            return None
        t = ts[0]
        dtype = attrs.dtype or t.dtype
        if attrs.axis is None:
            # the flattened length: Any where a dimension is, symbolic in a dynamic kernel
            # being lowered (so the VM computes it from the input's shape, as 0.19's shape
            # function did)
            n = 1
            for d in t.shape:
                n = dim_mul(n, d)
            return TensorType((n,), dtype)
        normalize_axis(attrs.axis, t.ndim, name)
        return TensorType(t.shape, dtype)

    return rel


def _scan_ref(fn, identity):
    def ref(args, attrs, out_type):
        x = args[0].astype(out_type.dtype)
        axis = attrs.axis
        if axis is None:
            x, axis = x.reshape(-1), 0
        out = fn(x, axis=axis, dtype=out_type.dtype)
        if attrs.exclusive:
            out = np.concatenate(
                [
                    np.full_like(np.take(out, [0], axis=axis), identity),
                    np.take(out, np.arange(out.shape[axis] - 1), axis=axis),
                ],
                axis=axis,
            )
        return out

    return ref


def _axis_loops(stack, shape, axis):
    """Enter (on the ``ExitStack`` ``stack``) loops over every dimension of ``shape`` but
    ``axis``, the first parallel (each iteration owns the line along ``axis`` through its
    position); returns ``at(k)``, the multi-dimensional index of element ``k`` of the line.

    The kernels of ``scatter_elements`` and the scans index their buffers through this rather
    than with flat offsets (as ``topi.scatter_elements`` / ``topi.cumsum`` do): with symbolic
    (``Any``) dimensions a flat offset becomes a quotient / remainder chain over the others,
    repeated in every index, and LLVM took 54-79 s to compile a 3-D scatter and 12 s a 3-D
    cumsum (0.3 s each now)."""
    from tvm.script.ir_builder import tirx as T

    extents = [e for a, e in enumerate(shape) if a != axis]
    others = [stack.enter_context((T.parallel if n == 0 else T.serial)(0, e))
              for n, e in enumerate(extents)]
    return lambda k: tuple(others[:axis] + [k] + others[axis:])


def _scan_compute(name: str):
    """The TE compute of the scan ``name``: along an axis, a sequential loop per line, the
    lines in parallel (:func:`_axis_loops`); over the flattened data (``axis=None``),
    ``topi.cumsum`` / ``topi.cumprod``."""
    identity = {"cumsum": 0, "cumprod": 1}[name]

    def compute(attrs, inputs, out_type):
        import contextlib

        from tvm import tirx, topi
        from tvm.script.ir_builder import tirx as T

        from .vision import _ir

        data, dtype = inputs[0], out_type.dtype
        if attrs.axis is None:
            return getattr(topi, name)(data, None, dtype, attrs.exclusive)
        axis = attrs.axis % len(data.shape)
        n = data.shape[axis]

        def op(a, b):
            return a + b if name == "cumsum" else a * b

        def body(ins, outs):
            src, out = ins[0], outs[0]
            with contextlib.ExitStack() as stack:
                at = _axis_loops(stack, src.shape, axis)
                with T.If(n > 0):  # an empty axis (known at run time) has no first element
                    with T.Then():
                        first = at(0)
                        out[first] = (tirx.const(identity, dtype) if attrs.exclusive
                                      else tirx.Cast(dtype, src[first]))
                        with T.serial(1, n) as k:
                            prev = src[at(k - 1)] if attrs.exclusive else src[at(k)]
                            out[at(k)] = op(out[at(k - 1)], tirx.Cast(dtype, prev))

        return _ir.extern(name, [data.shape], [dtype], [data], body)[0]

    compute.__name__ = f"_{name}_compute"
    return compute


for _name, _np_fn, _identity in (("cumsum", np.cumsum, 0), ("cumprod", np.cumprod, 1)):
    register_op(
        _name,
        num_inputs=1,
        arguments=("data",),
        attrs=_SCAN_ATTRS,
        rel=_scan_rel(_name),
        ref=_scan_ref(_np_fn, _identity),
        compute=_scan_compute(_name),
        pattern=OpPattern.OPAQUE,
        doc=f"Running {_name[3:]} along axis (of the flattened data when None) (topi.{_name}).",
        level=3,
    )


def cumsum(data, axis=None, dtype=None, exclusive=None):
    """Cumulative sum along ``axis`` (flattened when None); ``exclusive`` starts from 0."""
    return make_call("cumsum", [data], axis=axis, dtype=dtype or "", exclusive=bool(exclusive))


def cumprod(data, axis=None, dtype=None, exclusive=None):
    """Cumulative product along ``axis`` (flattened when None); ``exclusive`` starts from 1."""
    return make_call("cumprod", [data], axis=axis, dtype=dtype or "", exclusive=bool(exclusive))


# ---- meshgrid ----------------------------------------------------------------------------------


def _meshgrid_rel(types, attrs):
    fields = tuple_or_tensors(types[0], "meshgrid")
    if fields is None:
        return None
    if attrs.indexing not in ("ij", "xy"):
        raise TypeInferenceError(f"meshgrid: indexing must be 'ij' or 'xy', got {attrs.indexing!r}")
    for k, f in enumerate(fields):
        if f.ndim > 1:
            raise TypeInferenceError(
                f"meshgrid: field {k} must be 0-d or 1-d, got shape {shape_str(f.shape)}"
            )
    shape = [f.shape[0] if f.ndim else 1 for f in fields]
    if attrs.indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    return TupleType([TensorType(shape, f.dtype) for f in fields])


def _meshgrid_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.meshgrid(inputs, attrs.indexing)


register_op(
    "meshgrid",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.MeshgridAttrs", [F("indexing", "str", "ij")]),
    rel=_meshgrid_rel,
    ref=lambda args, attrs, out_type: tuple(
        np.meshgrid(*[a.reshape(-1) for a in args[0]], indexing=attrs.indexing)
    ),
    compute=_meshgrid_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Coordinate grids from 1-d tensors, 'ij' (matrix) or 'xy' (Cartesian) (topi.meshgrid).",
    level=3,
)


def meshgrid(data, indexing="ij"):
    """Grids from a list of 1-d tensors (numpy.meshgrid); a :class:`TupleWrapper`."""
    data = as_tuple_expr(data)
    n = len(data.fields)
    return TupleWrapper(make_call("meshgrid", [data], indexing=indexing), n)


# ---- scatter_elements / scatter_nd -------------------------------------------------------------

_SCATTER_REDUCE = {
    "update": lambda a, b: b,
    "add": np.add,
    "mul": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}


def _scatter_elements_rel(types, attrs):
    ts = tensor_args(types, ("data", "indices", "updates"), "scatter_elements")
    if ts is None:
        return None
    data, idx, upd = ts
    int_dtype_check(idx, "indices", "scatter_elements")
    if attrs.reduction not in _SCATTER_REDUCE:
        raise TypeInferenceError(
            f"scatter_elements: reduction must be one of {', '.join(_SCATTER_REDUCE)}, got "
            f"{attrs.reduction!r}"
        )
    if upd.dtype != data.dtype:
        raise TypeInferenceError(
            f"scatter_elements: updates dtype {upd.dtype} differs from data dtype {data.dtype}"
        )
    if (
        idx.ndim != data.ndim
        or upd.ndim != data.ndim
        or any(
            isinstance(a, int) and isinstance(b, int) and a != b
            for a, b in zip(idx.shape, upd.shape)
        )
    ):
        raise TypeInferenceError(
            f"scatter_elements: indices shape {shape_str(idx.shape)} and updates shape "
            f"{shape_str(upd.shape)} must be equal and of data's rank (data shape "
            f"{shape_str(data.shape)})"
        )
    for j, (a, b) in enumerate(zip(idx.shape, upd.shape)):
        require_equal_dims(a, b, f"indices and updates differ on axis {j}")
    normalize_axis(attrs.axis, data.ndim, "scatter_elements")
    return data


def _scatter_elements_ref(args, attrs, out_type):
    data, idx, upd = args
    out = data.copy()
    axis = attrs.axis % data.ndim
    n = data.shape[axis]
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise InputError(f"scatter_elements: index {int(bad.flat[0])} out of range for axis "
                         f"{axis} of data shape {shape_str(data.shape)} (valid: [{-n}, {n}))")
    fn = _SCATTER_REDUCE[attrs.reduction]
    for pos in np.ndindex(*idx.shape):
        i = int(idx[pos])
        i = i + n if i < 0 else i
        dst = pos[:axis] + (i,) + pos[axis + 1 :]
        out[dst] = fn(out[dst], upd[pos])
    return out


def _scatter_elements_compute(attrs, inputs, out_type):
    """The kernel: a copy of ``data``, then, in parallel over the positions of the other axes
    (no two of them write the same element), a sequential loop along ``axis`` applying each
    update in order (multi-dimensional indices, :func:`_axis_loops`).

    Before it runs, the kernel checks that every index lies in ``[-n, n)`` (``n`` the size of
    data's ``axis``; an :class:`~relay_tvm.errors.InputError` otherwise, as the reference
    kernel raises), the check gather's kernel makes (``require_indices_in_range``). An index
    outside that range that the check cannot see (``indices`` computed inside the kernel) is
    skipped, never written out of bounds."""
    import contextlib

    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    from .vision import _ir

    data, indices, updates = inputs
    rank = len(data.shape)
    axis = attrs.axis % rank
    require_indices_in_range(
        indices, lambda i: as_int64(data.shape[axis]),
        f"scatter_elements: an index is out of range for data shape {shape_str(data.shape)} "
        f"on axis {axis} (valid: [-n, n) with n = data.shape[{axis}])")
    apply = {
        "update": lambda old, new: new,
        "add": lambda old, new: old + new,
        "mul": lambda old, new: old * new,
        "min": tirx.min,
        "max": tirx.max,
    }[attrs.reduction]

    def body(ins, outs):
        src, idx, upd = ins
        out = outs[0]
        with T.seq_scope():
            with contextlib.ExitStack() as stack:  # the copy, the last axis innermost
                at = _axis_loops(stack, src.shape, rank - 1)
                with T.serial(0, src.shape[rank - 1]) as k:
                    out[at(k)] = src[at(k)]
            with contextlib.ExitStack() as stack:
                at = _axis_loops(stack, idx.shape, axis)
                with T.serial(0, idx.shape[axis]) as k:
                    n = tirx.Cast(str(indices.dtype), src.shape[axis])
                    i = idx[at(k)]
                    i = tirx.Select(i < 0, i + n, i)
                    dst = at(k)
                    dst = dst[:axis] + (i,) + dst[axis + 1:]
                    with T.If(tirx.all(i >= 0, i < n)):
                        with T.Then():
                            out[dst] = apply(out[dst], upd[at(k)])

    return _ir.extern("scatter_elements", [data.shape], [data.dtype], inputs, body)[0]


register_op(
    "scatter_elements",
    num_inputs=3,
    arguments=("data", "indices", "updates"),
    attrs=(
        "relay.attrs.ScatterElementsAttrs",
        [F("axis", "int", 0), F("reduction", "str", "update")],
    ),
    rel=_scatter_elements_rel,
    ref=_scatter_elements_ref,
    compute=_scatter_elements_compute,
    pattern=OpPattern.OPAQUE,
    doc="out[..., indices[p], ...] = reduce(data, updates[p]) along axis (ONNX ScatterElements).",
    level=10,
)


def scatter_elements(data, indices, updates, axis=0, reduction="update"):
    """Scatter ``updates`` into a copy of ``data`` at ``indices`` along ``axis``.

    ``out[p with p[axis] = indices[p]] = reduce(out[...], updates[p])`` for every position
    ``p`` of ``indices`` (ONNX ScatterElements; tvm.relay 0.19's ``scatter_elements``).

    Args:
        data: any rank ``r`` and dtype.
        indices: integers, rank ``r``, the shape of ``updates``; values in ``[-n, n)`` with
            ``n = data.shape[axis]``, a negative one counted from the end (ONNX).
        updates: ``data``'s dtype, ``indices``' shape.
        axis: the axis indexed (negative: from the end).
        reduction: ``"update"`` (replace), ``"add"``, ``"mul"``, ``"min"`` or ``"max"``.

    Raises:
        InputError: (when run, interpreter and compiled alike) an index outside ``[-n, n)``.
    """
    return make_call("scatter_elements", [data, indices, updates], axis=axis, reduction=reduction)


def _scatter_nd_rel(types, attrs):
    ts = tensor_args(types, ("data", "indices", "updates"), "scatter_nd")
    if ts is None:
        return None
    data, idx, upd = ts
    int_dtype_check(idx, "indices", "scatter_nd")
    if attrs.mode not in ("update", "add"):
        raise TypeInferenceError(f"scatter_nd: mode must be 'update' or 'add', got {attrs.mode!r}")
    if idx.ndim < 1 or not isinstance(idx.shape[0], int):
        raise TypeInferenceError(
            f"scatter_nd: indices shape {shape_str(idx.shape)} needs a static first axis"
        )
    m = idx.shape[0]
    want = (*idx.shape[1:], *data.shape[m:])
    if (
        m > data.ndim
        or len(want) != upd.ndim
        or any(
            isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(want, upd.shape)
        )
    ):
        raise TypeInferenceError(
            f"scatter_nd: updates shape {shape_str(upd.shape)} must be {shape_str(want)} for "
            f"indices shape {shape_str(idx.shape)} and data shape {shape_str(data.shape)}"
        )
    for j, (a, b) in enumerate(zip(want, upd.shape)):
        require_equal_dims(a, b, f"updates differ on axis {j} from indices.shape[1:] + "
                                 "data.shape[M:]")
    if upd.dtype != data.dtype:
        raise TypeInferenceError(
            f"scatter_nd: updates dtype {upd.dtype} differs from data dtype {data.dtype}"
        )
    return data


def _scatter_nd_ref(args, attrs, out_type):
    data, idx, upd = args
    for r in range(idx.shape[0]):
        n = data.shape[r]
        bad = idx[r][(idx[r] < -n) | (idx[r] >= n)]
        if bad.size:
            raise InputError(f"scatter_nd: index {int(bad.flat[0])} out of range for axis {r} "
                             f"of data shape {tuple(data.shape)} (valid: [{-n}, {n}))")
    out = data.copy()
    for y in np.ndindex(*idx.shape[1:]):
        dst = tuple(int(v) for v in idx[(slice(None), *y)])
        if attrs.mode == "add":
            out[dst] = out[dst] + upd[y]
        else:
            out[dst] = upd[y]
    return out


def _scatter_nd_compute(attrs, inputs, out_type):
    from tvm import topi

    from .indexing import checked_nd_indices

    x, idx, upd = inputs
    return topi.scatter_nd(x, checked_nd_indices("scatter_nd", x, idx, 0), upd, attrs.mode)


register_op(
    "scatter_nd",
    num_inputs=3,
    arguments=("data", "indices", "updates"),
    attrs=("relay.attrs.ScatterNDAttrs", [F("mode", "str", "update")]),
    rel=_scatter_nd_rel,
    ref=_scatter_nd_ref,
    compute=_scatter_nd_compute,
    pattern=OpPattern.OPAQUE,
    doc="out[indices[:, y]] = updates[y] (or +=, mode 'add'): the inverse of gather_nd.",
    level=3,
)


def scatter_nd(data, indices, updates, mode="update"):
    """Scatter ``updates`` (shape ``Y + data.shape[M:]``) into a copy of ``data`` at the
    ``M``-d ``indices`` (shape ``(M,) + Y``)."""
    return make_call("scatter_nd", [data, indices, updates], mode=mode)


# ---- adv_index ---------------------------------------------------------------------------------


def _adv_index_rel(types, attrs):
    fields = tuple_or_tensors(types[0], "adv_index")
    if fields is None:
        return None
    data, idx = fields[0], fields[1:]
    if len(idx) > data.ndim:
        raise TypeInferenceError(
            f"adv_index: {len(idx)} index tensors for data shape {shape_str(data.shape)}"
        )
    shape = ()
    for k, t in enumerate(idx):
        int_dtype_check(t, f"index {k}", "adv_index")
        shape = broadcast_shapes(shape, t.shape, f"adv_index index {k}")
    return TensorType((*shape, *data.shape[len(idx) :]), data.dtype)


def _adv_index_ref(args):
    x = args[0]
    for k, t in enumerate(args[1:]):
        bad = t[(t < -x.shape[k]) | (t >= x.shape[k])]
        if bad.size:
            raise InputError(f"adv_index: index {int(bad.flat[0])} out of range for axis {k} "
                             f"of data shape {tuple(x.shape)}")
    return x[tuple(a.astype("int64") for a in args[1:])]


def _adv_index_compute(attrs, inputs, out_type):
    from tvm import topi

    from .indexing import checked_indices

    x = inputs[0]
    return topi.adv_index(x, [checked_indices("adv_index", x, t, x.shape[k], k)
                              for k, t in enumerate(inputs[1:])])


register_op(
    "adv_index",
    num_inputs=1,
    arguments=("inputs",),
    rel=_adv_index_rel,
    ref=lambda args, attrs, out_type: _adv_index_ref(args[0]),
    compute=_adv_index_compute,
    pattern=OpPattern.INJECTIVE,
    doc="NumPy advanced indexing data[i0, i1, ...] with broadcast index tensors (topi.adv_index).",
    level=3,
)


def adv_index(inputs):
    """``data[i0, i1, ...]`` for ``inputs = [data, i0, i1, ...]`` (NumPy advanced indexing)."""
    return make_call("adv_index", [as_tuple_expr(inputs)])


# ---- unravel_index -----------------------------------------------------------------------------


def _unravel_rel(types, attrs):
    ts = tensor_args(types, ("indices", "shape"), "unravel_index")
    if ts is None:
        return None
    idx, shp = ts
    int_dtype_check(idx, "indices", "unravel_index")
    int_dtype_check(shp, "shape", "unravel_index")
    if idx.ndim > 1 or shp.ndim != 1:
        raise TypeInferenceError(
            f"unravel_index: indices must be 0-d or 1-d and shape 1-d, got indices shape "
            f"{shape_str(idx.shape)} and shape shape {shape_str(shp.shape)}"
        )
    return TensorType((shp.shape[0], *idx.shape), idx.dtype)


def _unravel_index_ref(args, out_type):
    idx, shape = args[0].astype("int64"), tuple(int(d) for d in args[1])
    n = int(np.prod(shape))
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise InputError(f"unravel_index: index {int(bad.flat[0])} is out of range for shape "
                         f"{shape} (valid: [0, {n}))")
    return np.stack(np.unravel_index(idx, shape)).astype(out_type.dtype)


def _unravel_index_compute(attrs, inputs, out_type):
    from tvm import te, tirx, topi

    from ._common import require_indices_in_range

    idx, shp = inputs
    rank = int(shp.shape[0])

    def size(_, load):  # the element count of the shape given (a kernel input's values)
        n = tirx.const(1, "int64")
        for j in range(rank):
            n = n * load(tirx.const(j, "int64")).astype("int64")
        return n

    # NumPy's rule (a flat index in [0, size)); topi's kernel wraps others round silently
    require_indices_in_range(idx, size, "unravel_index: an index is out of range for the "
                             "shape given (valid: [0, its element count))", nonnegative=True,
                             reads=(shp,))
    if idx.ndim == 0:
        return topi.unravel_index(idx, shp)
    safe = te.compute(idx.shape, lambda *i: tirx.max(idx(*i), tirx.const(0, idx.dtype)),
                      name="unravel_index_index")
    return topi.unravel_index(safe, shp)


register_op(
    "unravel_index",
    num_inputs=2,
    arguments=("indices", "shape"),
    rel=_unravel_rel,
    ref=lambda args, attrs, out_type: _unravel_index_ref(args, out_type),
    compute=_unravel_index_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Coordinates of flat indices in a tensor of the given shape (numpy.unravel_index).",
    level=10,
)


def unravel_index(indices, shape):
    """The coordinate array ``(len(shape),) + indices.shape`` of flat ``indices`` in ``shape``
    (a 1-d integer tensor expression)."""
    return make_call("unravel_index", [indices, shape])


# ---- trilu -------------------------------------------------------------------------------------


def _trilu_rel(types, attrs):
    ts = tensor_args(types, ("data", "k"), "trilu")
    if ts is None:
        return None
    data, k = ts
    int_dtype_check(k, "k", "trilu")
    if k.ndim != 0:
        raise TypeInferenceError(f"trilu: k must be a scalar, got shape {shape_str(k.shape)}")
    if data.ndim < 2:
        raise TypeInferenceError(
            f"trilu: data must have rank >= 2, got shape {shape_str(data.shape)}"
        )
    return data


def _trilu_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.trilu(
        inputs[0], inputs[1](), attrs.upper
    )


def _trilu_rows(attrs, rank):
    # the mask is over the last two axes: a batch axis exists only above them
    return rank > 2


register_op(
    "trilu",
    batch_rows=_trilu_rows,
    num_inputs=2,
    arguments=("data", "k"),
    attrs=("relay.attrs.TriluAttrs", [F("upper", "bool", True)]),
    rel=_trilu_rel,
    ref=lambda args, attrs, out_type: (np.triu if attrs.upper else np.tril)(args[0], int(args[1])),
    compute=_trilu_compute,
    pattern=OpPattern.ELEMWISE,
    doc="Zero the elements below (upper) or above (lower) the k-th diagonal of the last two axes.",
    level=3,
)


def trilu(data, k, upper=True):
    """Upper (``upper=True``) or lower triangle of the last two axes of ``data``, relative to
    diagonal ``k`` (an int or a 0-d integer expression), as numpy.triu/tril."""
    from ..ir.expr import const

    if isinstance(k, (int, np.integer)):
        k = const(int(k), "int32")
    return make_call("trilu", [data, k], upper=upper)


# ---- einsum ------------------------------------------------------------------------------------


def _einsum_parse(equation, nops):
    eq = equation.replace(" ", "")
    if "." in eq:
        raise TypeInferenceError(f"einsum: ellipsis in {equation!r} is not supported")
    lhs, _, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != nops:
        raise TypeInferenceError(
            f"einsum: equation {equation!r} has {len(ins)} operands, got {nops} tensors"
        )
    if "->" not in eq:
        letters = "".join(ins)
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return ins, rhs


def _einsum_rel(types, attrs):
    fields = tuple_or_tensors(types[0], "einsum")
    if fields is None:
        return None
    ins, rhs = _einsum_parse(attrs.equation, len(fields))
    sizes = {}
    for k, (sub, t) in enumerate(zip(ins, fields)):
        if len(sub) != t.ndim:
            raise TypeInferenceError(
                f"einsum: operand {k} has shape {shape_str(t.shape)} but subscripts {sub!r}"
            )
        if t.dtype != fields[0].dtype:
            raise TypeInferenceError(
                f"einsum: operand {k} has dtype {t.dtype}, operand 0 has {fields[0].dtype}"
            )
        for c, d in zip(sub, t.shape):
            if c in sizes and isinstance(d, int) and isinstance(sizes[c], int) and d != sizes[c]:
                raise TypeInferenceError(
                    f"einsum: index {c!r} has size {sizes[c]} and {d} (operand {k} shape "
                    f"{shape_str(t.shape)}, equation {attrs.equation!r})"
                )
            if c in sizes:
                require_equal_dims(sizes[c], d, f"index {c!r} has two sizes (operand {k})")
            if c not in sizes or not isinstance(sizes[c], int):
                sizes[c] = d
    for c in rhs:
        if c not in sizes:
            raise TypeInferenceError(f"einsum: output index {c!r} appears in no operand")
    return TensorType([sizes[c] for c in rhs], fields[0].dtype)


def _einsum_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.einsum(attrs.equation, *inputs)


register_op(
    "einsum",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.EinsumAttrs", [F("equation", "str")]),
    rel=_einsum_rel,
    ref=lambda args, attrs, out_type: np.einsum(attrs.equation, *args[0]).astype(out_type.dtype),
    compute=_einsum_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Einstein summation over a tuple of tensors (numpy.einsum; topi.einsum).",
    level=3,
)


def einsum(data, equation):
    """``numpy.einsum(equation, *data)`` for a list/tuple of tensors (no ellipsis)."""
    return make_call("einsum", [as_tuple_expr(data)], equation=equation)


# ---- invert_permutation ------------------------------------------------------------------------


def _invert_permutation_rel(types, attrs):
    ts = tensor_args(types, ("data",), "invert_permutation")
    if ts is None:
        return None
    int_dtype_check(ts[0], "data", "invert_permutation")
    if ts[0].ndim != 1:
        raise TypeInferenceError(
            f"invert_permutation: data must be 1-d, got shape {shape_str(ts[0].shape)}"
        )
    return ts[0]


def _invert_permutation_compute(attrs, inputs, out_type):
    # out[j] = the i with data[i] == j, as a sum over i (a gather form TE can express)
    from tvm import te, tirx

    x = inputs[0]
    n = x.shape[0]
    i = te.reduce_axis((0, n), name="i")
    return te.compute(
        (n,),
        lambda j: te.sum(
            tirx.Select(x[i] == j.astype(x.dtype), i.astype(x.dtype), tirx.const(0, x.dtype)),
            axis=i,
        ),
        name="invert_permutation",
    )


register_op(
    "invert_permutation",
    num_inputs=1,
    arguments=("data",),
    rel=_invert_permutation_rel,
    ref=lambda args, attrs, out_type: np.argsort(args[0], kind="stable").astype(out_type.dtype),
    compute=_invert_permutation_compute,
    pattern=OpPattern.INJECTIVE,
    doc="The inverse of a permutation vector: out[data[i]] = i.",
    level=10,
)


def invert_permutation(data):
    """The inverse of the permutation ``data`` (a 1-d integer tensor): ``out[data[i]] = i``."""
    return make_call("invert_permutation", [data])


__all__ = [
    "reinterpret",
    "cumsum",
    "cumprod",
    "meshgrid",
    "scatter_elements",
    "scatter_nd",
    "adv_index",
    "unravel_index",
    "trilu",
    "einsum",
    "invert_permutation",
]


# ---- gradients (FPrimalGradient) --------------------------------------------------------------


@register_gradient("cumsum")
def _cumsum_grad(orig, g):
    """The gradient of a running sum is the running sum of g taken from the other end."""
    from .transform import reshape_like, reverse

    x = orig.args[0]
    a = orig.attrs
    if a.axis is None:
        rev = reverse(g, 0)
        return [reshape_like(reverse(cumsum(rev, 0, exclusive=a.exclusive), 0), x)]
    rev = reverse(g, a.axis)
    return [reverse(cumsum(rev, a.axis, exclusive=a.exclusive), a.axis)]


register_gradient("invert_permutation", lambda orig, g: [make_call("zeros_like", [orig.args[0]])])
register_gradient(
    "unravel_index", lambda orig, g: [make_call("zeros_like", [a]) for a in orig.args]
)
