"""tvm.relay 0.19's ``sparse_to_dense``, ``matrix_set_diag``, ``sliding_window``,
``strided_set`` and ``fixed_point_multiply``.

Names, arguments, attributes and semantics follow tvm.relay 0.19 (python/tvm/relay/op/transform.py
and src/relay/op/tensor/transform.cc); the TE computes are topi's. The type relations check what
0.19's left to the kernel (index dtypes, ranks, diagonal lengths) and name the argument at fault.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType, TupleType
from ._common import identity_rel, int_dtype_check, same_dtype, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

# ---- sparse_to_dense ---------------------------------------------------------------------------


def _sparse_to_dense_rel(types, attrs):
    names = ("sparse_indices", "sparse_values", "default_value")
    ts = tensor_args(types, names, "sparse_to_dense")
    if ts is None:
        return None
    idx, vals, default = ts
    int_dtype_check(idx, "sparse_indices", "sparse_to_dense")
    oshape = tuple(int(d) for d in attrs.output_shape)
    if idx.ndim > 2:
        raise TypeInferenceError(
            f"sparse_to_dense: sparse_indices must be 0-D, 1-D or 2-D, got shape "
            f"{shape_str(idx.shape)}"
        )
    want_rank = idx.shape[1] if idx.ndim == 2 else 1
    if isinstance(want_rank, int) and want_rank != len(oshape):
        raise TypeInferenceError(
            f"sparse_to_dense: sparse_indices of shape {shape_str(idx.shape)} address a rank "
            f"{want_rank} output, but output_shape is {shape_str(oshape)}"
        )
    want_vals = () if idx.ndim == 0 else (idx.shape[0],)
    if tuple(vals.shape) != want_vals:
        raise TypeInferenceError(
            f"sparse_to_dense: sparse_values must have shape {shape_str(want_vals)} (one value "
            f"per index of sparse_indices {shape_str(idx.shape)}), got {shape_str(vals.shape)}"
        )
    if default.ndim != 0 or default.dtype != vals.dtype:
        raise TypeInferenceError(
            f"sparse_to_dense: default_value must be a {vals.dtype} scalar (sparse_values' "
            f"dtype), got shape {shape_str(default.shape)} dtype {default.dtype}"
        )
    return TensorType(oshape, vals.dtype)


def _sparse_to_dense_ref(args, attrs, out_type):
    idx, vals, default = (np.asarray(a) for a in args)
    oshape = tuple(int(d) for d in attrs.output_shape)
    out = np.full(oshape, default, dtype=out_type.dtype)
    rows = idx.reshape(-1, 1) if idx.ndim < 2 else idx
    for j, pos in enumerate(rows):  # later entries win, as topi's select chain
        pos = tuple(int(p) for p in pos)
        if not all(0 <= p < n for p, n in zip(pos, oshape)):
            raise InterpreterError(
                f"sparse_to_dense: sparse_indices entry {j} = {list(pos)} is out of range for "
                f"output_shape {shape_str(oshape)}"
            )
        out[pos] = vals.reshape(-1)[j]
    return out


def _sparse_to_dense_compute(attrs, inputs, out_type):
    from tvm import topi

    oshape = [int(d) for d in attrs.output_shape]
    return topi.sparse_to_dense(inputs[0], oshape, inputs[1], inputs[2]())


register_op(
    "sparse_to_dense",
    num_inputs=3,
    arguments=("sparse_indices", "sparse_values", "default_value"),
    attrs=("relay.attrs.SparseToDenseAttrs", [F("output_shape", "ints")]),
    rel=_sparse_to_dense_rel,
    ref=_sparse_to_dense_ref,
    compute=_sparse_to_dense_compute,
    pattern=OpPattern.OPAQUE,
    doc="Dense tensor from indices and values, default elsewhere (topi.sparse_to_dense).",
    level=3,
)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0):
    """A dense tensor of shape ``output_shape`` holding ``sparse_values`` at ``sparse_indices``
    and ``default_value`` elsewhere (tvm.relay 0.19's ``relay.sparse_to_dense``).

    Args:
        sparse_indices: integer indices: a scalar or a vector ``(N,)`` for a 1-D output, or a
            matrix ``(N, len(output_shape))``. A later duplicate index wins.
        output_shape: the output shape, a list of ints (an Expr, 0.19's dynamic form, is
            refused: use ``relay.dyn`` operators).
        sparse_values: a scalar (with scalar indices) or a vector ``(N,)``.
        default_value: a scalar Expr of sparse_values' dtype, or a Python number (made a
            constant and given sparse_values' dtype with ``cast_like``).

    Returns:
        A tensor of shape ``output_shape`` and sparse_values' dtype.

    Raises:
        TypeError: output_shape is an Expr.
        TypeInferenceError: (at type inference) ranks, lengths or dtypes do not fit.
    """
    from ..ir.base import RelayExpr
    from ..ir.expr import const
    from .transform import cast_like

    if isinstance(output_shape, RelayExpr):
        raise TypeError(
            "sparse_to_dense: output_shape given as a Relay expression (0.19's dynamic "
            "dyn.sparse_to_dense) is not supported; pass a list of ints"
        )
    if isinstance(sparse_indices, (int, list, tuple, np.ndarray)):
        sparse_indices = const(sparse_indices, "int32")
    if not isinstance(default_value, RelayExpr):
        default_value = cast_like(const(default_value), sparse_values)
    shape = tuple(int(d) for d in output_shape)
    return make_call(
        "sparse_to_dense", [sparse_indices, sparse_values, default_value], output_shape=shape
    )


# ---- matrix_set_diag ---------------------------------------------------------------------------


def _max_diag_len(m, n, k1, k2):
    return min(m + min(k2, 0), n - max(k1, 0))


def _matrix_set_diag_rel(types, attrs):
    ts = tensor_args(types, ("input", "diagonal"), "matrix_set_diag")
    if ts is None:
        return None
    data, diag = ts
    k1, k2 = attrs.k1, attrs.k2
    if k1 > k2:
        raise TypeInferenceError(f"matrix_set_diag: k1 = {k1} is larger than k2 = {k2}")
    if data.ndim < 2:
        raise TypeInferenceError(
            f"matrix_set_diag: input must have rank >= 2, got shape {shape_str(data.shape)}"
        )
    same_dtype([data, diag], ("input", "diagonal"), "matrix_set_diag")
    m, n = data.shape[-2:]
    if isinstance(m, int) and isinstance(n, int):
        if not (-m < k1 and k2 < n):
            raise TypeInferenceError(
                f"matrix_set_diag: diagonals k = ({k1}, {k2}) out of range for {m}x{n} matrices"
            )
        band = () if k1 == k2 else (k2 - k1 + 1,)
        want = tuple(data.shape[:-2]) + band + (_max_diag_len(m, n, k1, k2),)
        if tuple(diag.shape) != want:
            raise TypeInferenceError(
                f"matrix_set_diag: diagonal must have shape {shape_str(want)} for input "
                f"{shape_str(data.shape)} and k = ({k1}, {k2}), got {shape_str(diag.shape)}"
            )
    return data


def _matrix_set_diag_ref(args, attrs, out_type):
    data, diag = args
    out = np.array(data, copy=True)
    m, n = data.shape[-2:]
    k1, k2 = attrs.k1, attrs.k2
    rows, cols = np.indices((m, n))
    d = cols - rows
    mask = (d >= k1) & (d <= k2)
    r, c, dd = rows[mask], cols[mask], d[mask]
    pos = np.where(dd >= 0, r, c)
    if k1 == k2:
        out[..., r, c] = diag[..., pos]
        return out
    maxlen = diag.shape[-1]
    length = np.where(dd >= 0, np.minimum(n - dd, m), np.minimum(n, m + dd))
    right = np.where(dd >= 0, attrs.super_diag_right_align, attrs.sub_diag_right_align)
    pos = pos + np.where(right, maxlen - length, 0)
    out[..., r, c] = diag[..., k2 - dd, pos]
    return out


def _matrix_set_diag_compute(attrs, inputs, out_type):
    from tvm import topi

    align = ("RIGHT" if attrs.super_diag_right_align else "LEFT") + "_" + (
        "RIGHT" if attrs.sub_diag_right_align else "LEFT"
    )
    return topi.matrix_set_diag(inputs[0], inputs[1], (attrs.k1, attrs.k2), align)


register_op(
    "matrix_set_diag",
    num_inputs=2,
    arguments=("input", "diagonal"),
    attrs=(
        "relay.attrs.MatrixSetDiagAttrs",
        [
            F("k1", "int", 0),
            F("k2", "int", 0),
            F("super_diag_right_align", "bool", False),
            F("sub_diag_right_align", "bool", False),
        ],
    ),
    rel=_matrix_set_diag_rel,
    ref=_matrix_set_diag_ref,
    compute=_matrix_set_diag_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Replace the diagonals k1..k2 of the innermost matrices (topi.matrix_set_diag).",
    level=10,
)

_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def matrix_set_diag(data, diagonal, k=0, align="RIGHT_LEFT"):
    """``data`` with the diagonals ``k`` of its innermost matrices replaced by ``diagonal``
    (tvm.relay 0.19's ``relay.matrix_set_diag``; TensorFlow's MatrixSetDiagV3).

    Args:
        data: ``(..., M, N)``.
        diagonal: one diagonal (``k`` an int or ``(k, k)``): ``(..., L)``; a band ``(k1, k2)``
            with ``k1 < k2``: ``(..., k2 - k1 + 1, L)``, row ``i`` holding diagonal ``k2 - i``;
            ``L = min(M + min(k2, 0), N - max(k1, 0))``, the longest diagonal's length.
        k: diagonal offset (positive: above the main diagonal) or a pair ``(k1, k2)``.
        align: how a band's shorter diagonals sit in their rows: ``"RIGHT_LEFT"`` (default,
            superdiagonals right-aligned, subdiagonals left-aligned), ``"LEFT_RIGHT"``,
            ``"LEFT_LEFT"``, ``"RIGHT_RIGHT"``.

    Returns:
        A tensor of data's shape and dtype.

    Raises:
        ValueError: align is not one of the four names.
        TypeInferenceError: (at type inference) k1 > k2, a diagonal outside the matrix, or
            diagonal's shape or dtype does not fit.
    """
    if align not in _ALIGNS:
        raise ValueError(f"matrix_set_diag: align must be one of {_ALIGNS}, got {align!r}")
    if isinstance(k, (tuple, list)):
        k1, k2 = int(k[0]), int(k[1] if len(k) >= 2 else k[0])
    else:
        k1 = k2 = int(k)
    return make_call(
        "matrix_set_diag",
        [data, diagonal],
        k1=k1,
        k2=k2,
        super_diag_right_align=align[:5] == "RIGHT",
        sub_diag_right_align=align[-5:] == "RIGHT",
    )


# ---- sliding_window ----------------------------------------------------------------------------


def _sliding_window_rel(types, attrs):
    ts = tensor_args(types, ("data",), "sliding_window")
    if ts is None:
        return None
    (data,) = ts
    axis, window, strides = attrs.axis, tuple(attrs.window_shape), tuple(attrs.strides)
    if not 0 <= axis < data.ndim:
        raise TypeInferenceError(
            f"sliding_window: axis {axis} is out of range for rank {data.ndim} (0 <= axis < rank)"
        )
    tail = data.ndim - axis
    if len(window) != tail or len(strides) != tail:
        raise TypeInferenceError(
            f"sliding_window: window_shape {list(window)} and strides {list(strides)} must "
            f"both have length rank - axis = {tail} (data shape {shape_str(data.shape)})"
        )
    places = []
    for i, (w, s) in enumerate(zip(window, strides)):
        dim = data.shape[axis + i]
        if w < 1 or s < 1:
            raise TypeInferenceError(
                f"sliding_window: window_shape and strides must be positive, got {list(window)}"
                f" and {list(strides)}"
            )
        if not isinstance(dim, int):
            raise TypeInferenceError(
                f"sliding_window: dimension {axis + i} of data {shape_str(data.shape)} must be "
                "static"
            )
        if w > dim:
            raise TypeInferenceError(
                f"sliding_window: window {w} is longer than dimension {axis + i} of data "
                f"{shape_str(data.shape)}"
            )
        places.append((dim - w) // s + 1)
    return TensorType(tuple(data.shape[:axis]) + tuple(places) + window, data.dtype)


def _sliding_window_ref(args, attrs, out_type):
    data = np.asarray(args[0])
    axis = attrs.axis
    axes = tuple(range(axis, data.ndim))
    view = np.lib.stride_tricks.sliding_window_view(data, tuple(attrs.window_shape), axis=axes)
    sel = (slice(None),) * axis + tuple(slice(None, None, s) for s in attrs.strides)
    return np.ascontiguousarray(view[sel])


def _sliding_window_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.sliding_window(
        inputs[0], attrs.axis, [int(w) for w in attrs.window_shape],
        [int(s) for s in attrs.strides],
    )


register_op(
    "sliding_window",
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.SlidingWindowAttrs",
        [F("axis", "int"), F("window_shape", "ints"), F("strides", "ints")],
    ),
    rel=_sliding_window_rel,
    ref=_sliding_window_ref,
    compute=_sliding_window_compute,
    pattern=OpPattern.OPAQUE,
    doc="Windows of data over its trailing axes (topi.sliding_window).",
    level=3,
)


def sliding_window(data, axis, window_shape, strides):
    """Every window of shape ``window_shape`` over the axes ``axis..rank-1`` of ``data``, placed
    every ``strides`` elements (tvm.relay 0.19's ``relay.sliding_window``).

    Args:
        data: a tensor of static shape over the windowed axes.
        axis: the first windowed axis, ``0 <= axis < rank``.
        window_shape: window length per windowed axis (``rank - axis`` entries).
        strides: step per windowed axis (``rank - axis`` entries).

    Returns:
        ``data.shape[:axis] + ((d - w) // s + 1 for each axis) + window_shape``, data's dtype:
        ``out[..., p_0, p_1, ..., :, :] = data[..., p_0*s_0 : p_0*s_0 + w_0, ...]``.

    Raises:
        TypeInferenceError: (at type inference) lengths, axis or windows do not fit.
    """
    return make_call(
        "sliding_window",
        [data],
        axis=int(axis),
        window_shape=tuple(int(w) for w in window_shape),
        strides=tuple(int(s) for s in strides),
    )


# ---- strided_set -------------------------------------------------------------------------------


def _strided_set_rel(types, attrs):
    ts = tensor_args(types, ("data", "v", "begin", "end", "strides"), "strided_set")
    if ts is None:
        return None
    data, v = ts[:2]
    if v.dtype != data.dtype or v.ndim != data.ndim:
        raise TypeInferenceError(
            f"strided_set: v must have data's dtype {data.dtype} and rank {data.ndim}, got "
            f"{v.dtype} of shape {shape_str(v.shape)}"
        )
    for name, t in zip(("begin", "end", "strides"), ts[2:]):
        ok_len = t.ndim == 1 and (not isinstance(t.shape[0], int) or t.shape[0] <= data.ndim)
        if t.dtype != "int32" or not ok_len:
            raise TypeInferenceError(
                f"strided_set: {name} must be an int32 vector of at most {data.ndim} entries, "
                f"got {t.dtype} of shape {shape_str(t.shape)}"
            )
    return data


def _axis_positions(b, e, s, n):
    """The positions of one axis that topi.strided_set writes, in the order of v's index."""
    if s == 0:
        raise InterpreterError("strided_set: a stride is 0")
    b = b + n if b < 0 else b
    e = e + n if e < 0 else e
    if s > 0:
        return [i for i in range(n) if b <= i < e and (i - b) % s == 0]
    return [i for i in range(n - 1, -1, -1) if e < i <= b and (b - i) % (-s) == 0]


def _strided_set_ref(args, attrs, out_type):
    data, v, begin, end, strides = (np.asarray(a) for a in args)
    out = np.array(data, copy=True)
    pos = []
    for i, n in enumerate(data.shape):
        s = int(strides[i]) if i < strides.shape[0] else 1
        b = int(begin[i]) if i < begin.shape[0] else (0 if s > 0 else n)
        e = int(end[i]) if i < end.shape[0] else (n + 1 if s > 0 else -(n + 1))
        pos.append(_axis_positions(b, e, s, n))
    want = tuple(len(p) for p in pos)
    if v.shape != want:
        raise InterpreterError(
            f"strided_set: v has shape {shape_str(v.shape)}, the slice begin={begin.tolist()} "
            f"end={end.tolist()} strides={strides.tolist()} of data {shape_str(data.shape)} "
            f"has shape {shape_str(want)}"
        )
    out[np.ix_(*pos)] = v
    return out


def _strided_set_compute(attrs, inputs, out_type):
    """topi.strided_set's rule, with every read of ``v`` guarded: a position is taken from
    ``v`` only when the slice covers it, its index into ``v`` is inside ``v``'s shape and the
    stride is not 0 (topi's form read past ``v``'s end when ``v`` was smaller than the slice,
    and divided by a zero stride)."""
    from tvm import te, tirx

    data, v, begin, end, strides = inputs
    n = len(data.shape)
    i32 = "int32"

    def entry(vec, i, default):
        return tirx.if_then_else(vec.shape[0] > i, vec[i], default)

    def f(*idx):
        conds, vidx = [], []
        for i in range(n):
            size = tirx.Cast(i32, data.shape[i])
            s = entry(strides, i, tirx.const(1, i32))
            b = entry(begin, i, tirx.Select(s > 0, tirx.const(0, i32), size))
            e = entry(end, i, tirx.Select(s > 0, size + 1, -(size + 1)))
            b = tirx.Select(b < 0, b + size, b)
            e = tirx.Select(e < 0, e + size, e)
            x = tirx.Cast(i32, idx[i])
            safe = tirx.Select(s == 0, tirx.const(1, i32), s)
            up = tirx.all(s > 0, b <= x, x < e, tirx.floormod(x - b, safe) == 0)
            down = tirx.all(s < 0, e < x, x <= b, tirx.floormod(b - x, -safe) == 0)
            k = tirx.Select(s > 0, tirx.floordiv(x - b, safe), tirx.floordiv(b - x, -safe))
            conds.append(tirx.all(tirx.any(up, down), k >= 0, k < tirx.Cast(i32, v.shape[i])))
            vidx.append(tirx.Select(tirx.all(k >= 0, k < tirx.Cast(i32, v.shape[i])), k, 0))
        inside = tirx.all(*conds)
        return tirx.if_then_else(inside, v(*vidx), data(*idx))

    return te.compute(data.shape, f, name="strided_set")


register_op(
    "strided_set",
    num_inputs=5,
    arguments=("data", "v", "begin", "end", "strides"),
    rel=_strided_set_rel,
    ref=_strided_set_ref,
    compute=_strided_set_compute,
    pattern=OpPattern.INJECTIVE,
    doc="data with a strided slice replaced by v (topi.strided_set).",
    level=4,
)


def strided_set(data, v, begin, end, strides=None):
    """``data`` with its strided slice ``begin:end:strides`` replaced by ``v`` (tvm.relay 0.19's
    ``relay.strided_set``).

    Args:
        data: the tensor.
        v: the values, data's dtype and rank, the slice's shape.
        begin, end, strides: int32 vectors (Exprs or lists/tuples, made constants) of at most
            rank entries; missing trailing entries take the whole axis, stride 1. A negative
            begin/end counts from the axis end; a negative stride walks the axis backwards.
            Unlike NumPy, begin and end are not clamped.

    Returns:
        A tensor of data's shape and dtype.

    Raises:
        TypeInferenceError: (at type inference) dtypes or ranks do not fit.
        InterpreterError: (the reference interpreter) v's shape is not the slice's, or a
            stride is 0. Compiled code cannot raise there: it never reads outside ``v`` and
            writes only the positions of the slice that ``v`` covers (a zero stride writes
            none); check such inputs with the interpreter.
    """
    from ..ir.expr import const
    from ._common import int_vector_const

    if strides is None:
        strides = const(np.array([1], "int32"))
    args = [data, v] + [int_vector_const(x, "strided_set") for x in (begin, end, strides)]
    _check_static_slice(*args)
    return make_call("strided_set", args)


def _static_shape(e):
    """The static shape of a typed ``Var`` or a ``Constant``, else None."""
    from ..ir.expr import Constant, Var

    if isinstance(e, Constant):
        return tuple(np.asarray(e.data.numpy()).shape)
    t = getattr(e, "type_annotation", None) if isinstance(e, Var) else None
    shape = getattr(t, "shape", None)
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    return tuple(shape)


def _check_static_slice(data, v, begin, end, strides):
    """Where data's and v's shapes and the begin/end/strides values are known when the call
    is made, v must have the slice's shape and no stride may be 0 (compiled code cannot raise
    at run time; see :func:`strided_set`)."""
    from ..ir.expr import Constant

    dshape, vshape = _static_shape(data), _static_shape(v)
    if dshape is None or vshape is None or len(vshape) != len(dshape) or \
            not all(isinstance(x, Constant) for x in (begin, end, strides)):
        return
    b, e, st = (np.asarray(x.data.numpy()).reshape(-1).tolist() for x in (begin, end, strides))
    want = []
    for i, size in enumerate(dshape):
        si = st[i] if i < len(st) else 1
        if si == 0:
            raise TypeInferenceError(f"strided_set: stride {i} is 0")
        bi = b[i] if i < len(b) else (0 if si > 0 else size)
        ei = e[i] if i < len(e) else (size + 1 if si > 0 else -(size + 1))
        want.append(len(_axis_positions(bi, ei, si, size)))
    if tuple(want) != vshape:
        raise TypeInferenceError(f"strided_set: v has shape {shape_str(vshape)}, the slice "
                                 f"begin={b} end={e} strides={st} of data "
                                 f"{shape_str(dshape)} has shape {shape_str(tuple(want))}")


# ---- fixed_point_multiply ----------------------------------------------------------------------


def _fixed_point_multiply_ref(args, attrs, out_type):
    x = np.asarray(args[0]).astype("int64")
    left, right = max(attrs.shift, 0), max(-attrs.shift, 0) + 31
    x = (x << left) * np.int64(attrs.multiplier)
    x = (x + (np.int64(1) << (right - 1))) >> right
    return x.astype("int32")


register_op(
    "fixed_point_multiply",
    batch_rows=True,
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.FixedPointMultiplyAttrs",
        [F("multiplier", "int"), F("shift", "int")],
    ),
    rel=identity_rel("fixed_point_multiply", ("int32",)),
    ref=_fixed_point_multiply_ref,
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.fixed_point_multiply(
        inputs[0], attrs.multiplier, attrs.shift
    ),
    pattern=OpPattern.ELEMWISE,
    doc="int32 times multiplier * 2**(shift - 31), rounded half up (topi.fixed_point_multiply).",
    level=10,
)


def fixed_point_multiply(data, multiplier, shift):
    """``data * multiplier * 2**(shift - 31)`` in fixed point (tvm.relay 0.19's
    ``relay.fixed_point_multiply``; TVM's ``q_multiply_shift`` with 31 fractional bits).

    The product is formed in int64 (after a left shift by ``max(shift, 0)``), rounded half
    towards +inf at the right shift by ``31 + max(-shift, 0)``, and wrapped to int32.

    Args:
        data: an int32 tensor.
        multiplier: the Q31 multiplier (an int32).
        shift: the power-of-two exponent.

    Returns:
        An int32 tensor of data's shape.

    Raises:
        TypeInferenceError: (at type inference) data is not int32.
    """
    return make_call("fixed_point_multiply", [data], multiplier=int(multiplier), shift=int(shift))


# ---- segment_sum (a composition, as in 0.19) -----------------------------------------------------


def segment_sum(data, segment_ids, num_segments=None):
    """Sums of the rows of ``data`` grouped by ``segment_ids`` (tvm.relay 0.19's
    ``relay.op.segment_sum``): ``out[s] = sum of data[i] over i with segment_ids[i] == s``.

    Built from other operators (each element's segment by ``take``, zeros, and
    ``scatter_elements`` with ``add``), like 0.19's. With an int ``num_segments`` and static
    data the result is static; otherwise its shape is known at run time (run it on the VM;
    data may have ``Any`` dims).

    Args:
        data: ``(d0, ...)``, any rank >= 1.
        segment_ids: ``(d0,)`` integers in ``[0, num_segments)``, in any order.
        num_segments: the number of segments (an int or a 1-element integer Expr); default
            ``max(segment_ids) + 1``.

    Returns:
        ``(num_segments, *data.shape[1:])``, data's dtype; segments no row maps to are 0.

    Raises:
        TypeInferenceError: (when the call is made, where both shapes are known then: typed
            variables or constants) segment_ids is not ``(d0,)``. tvm.relay 0.19 summed only
            the first ``len(segment_ids)`` rows of a longer ``data``; relay_tvm refuses it.
        InputError: (at run time) ``data`` has more rows than segment_ids has ids (the
            per-row lookup is checked; compiled code clamped to the last id before). Where
            both lengths are known only at run time, ids past data's rows are not read.
    """
    from ..ir.base import RelayExpr
    from ..ir.expr import const
    from . import reduce as _reduce
    from . import shape_ops as _sh
    from . import tensor as _tensor
    from . import transform as _tr

    dshape, sshape = _static_shape(data), _static_shape(segment_ids)
    if dshape is not None and sshape is not None and sshape != dshape[:1]:
        raise TypeInferenceError(
            f"segment_sum: segment_ids has shape {shape_str(sshape)}; expected "
            f"{shape_str(dshape[:1])}, one segment id per row of data {shape_str(dshape)} "
            f"(tvm.relay 0.19 summed only the rows that have an id)")
    # each element's segment: segment_ids[row], row counted by a cumsum of ones (any rank);
    # the lookup checks its indices ("fast": an InputError in compiled code where data has
    # more rows than there are ids; the default "clip" added those rows to the last id's
    # segment)
    from .annotation import stop_fusion

    rows = _tensor.subtract(_tr.cumsum(_tr.cast(_tensor.ones_like(data), "int32"), axis=0),
                            const(1, "int32"))
    # (a kernel checks the indices it receives as an input: rows must not fuse into the take)
    ids = _tr.take(segment_ids, stop_fusion(rows), axis=0, mode="fast")
    if isinstance(num_segments, int):
        # (num_segments, *data.shape[1:]) zeros of data's dtype, static when data's shape is
        # static
        first_rows = const(np.zeros(int(num_segments), "int32"))
        zeros = _tensor.zeros_like(_tr.take(data, first_rows, axis=0))
    else:
        if num_segments is None:
            count = _tensor.add(_tr.reshape(_reduce.max(segment_ids, axis=[0]), [-1]),
                                _tr.cast_like(const([1]), segment_ids))
        elif isinstance(num_segments, RelayExpr):
            count = _tr.reshape(num_segments, [-1])
        else:
            raise TypeError(f"segment_sum: num_segments must be an int, an Expr or None, got "
                            f"{num_segments!r}")
        rest = _tr.strided_slice(_sh.shape_of(data, "int64"), [1], [-1], slice_mode="size")
        shape = _tr.concatenate([_tr.cast(count, "int64"), rest], 0)
        zeros = _tr.cast_like(_tensor.zeros(shape, "float32"), data)  # exact: all zeros
    return _tr.scatter_elements(zeros, ids, data, axis=0, reduction="add")


# ---- sparse_reshape -------------------------------------------------------------------------------


def _sparse_reshape_rel(types, attrs):
    ts = tensor_args(types, ("sparse_indices", "prev_shape", "new_shape"), "sparse_reshape")
    if ts is None:
        return None
    idx, prev, new = ts
    for name, t, rank in (("sparse_indices", idx, 2), ("prev_shape", prev, 1),
                          ("new_shape", new, 1)):
        int_dtype_check(t, name, "sparse_reshape")
        if t.ndim != rank:
            raise TypeInferenceError(f"sparse_reshape: {name} must be {rank}-D, got shape "
                                     f"{shape_str(t.shape)}")
    cols, plen = idx.shape[1], prev.shape[0]
    if isinstance(cols, int) and isinstance(plen, int) and cols != plen:
        raise TypeInferenceError(f"sparse_reshape: sparse_indices {shape_str(idx.shape)} has "
                                 f"{cols} columns; prev_shape has {plen} dimensions")
    if prev.dtype != idx.dtype or new.dtype != idx.dtype:
        raise TypeInferenceError(f"sparse_reshape: sparse_indices, prev_shape and new_shape "
                                 f"must have one dtype, got {idx.dtype}, {prev.dtype}, "
                                 f"{new.dtype}")
    return TupleType([TensorType((idx.shape[0], new.shape[0]), idx.dtype),
                      TensorType(tuple(new.shape), new.dtype)])


def _sparse_reshape_ref(args, attrs, out_type):
    from ..errors import InputError

    idx, prev, new = (np.asarray(a).astype("int64") for a in args)
    total = int(np.prod(prev))
    unknown = np.flatnonzero(new == -1)
    known = int(np.prod(new[new != -1]))
    if len(unknown) > 1 or (new < -1).any() or (
            total != known if len(unknown) == 0 else known == 0 or total % known):
        raise InputError(f"sparse_reshape: new_shape {new.tolist()} does not fit prev_shape "
                         f"{prev.tolist()} ({total} elements; at most one -1)")
    out_shape = new.copy()
    out_shape[unknown] = total // known if len(unknown) else 0
    if ((idx < 0) | (idx >= prev[None, :])).any():
        raise InputError(f"sparse_reshape: an index of sparse_indices is outside prev_shape "
                         f"{prev.tolist()}")
    flat = np.ravel_multi_index(idx.T, prev) if len(idx) else np.zeros(0, "int64")
    new_idx = np.stack(np.unravel_index(flat, out_shape), axis=1) if len(idx) else \
        np.zeros((0, len(new)), "int64")
    dt = args[0].dtype
    return (new_idx.reshape(len(idx), len(new)).astype(dt), out_shape.astype(dt))


def _sparse_reshape_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    idx, prev, new = inputs
    dt = idx.dtype
    one = tirx.const(1, dt)
    prod = te.comm_reducer(lambda a, b: a * b, lambda t: tirx.const(1, t), name="prod")
    p_len, q_len = prev.shape[0], new.shape[0]
    r = te.reduce_axis((0, p_len), "r")
    total = te.compute((), lambda: prod(prev[r], axis=r), name="sr_total")
    q = te.reduce_axis((0, q_len), "q")
    known = te.compute((), lambda: prod(tirx.Select(new[q] == -1, one, new[q]), axis=q),
                       name="sr_known")
    # -1 becomes what the other dimensions leave (TensorFlow's SparseReshape); the division
    # is guarded (a new_shape that does not fit gives no error here: see sparse_reshape)
    shape = te.compute(
        (q_len,), lambda j: tirx.Select(new[j] == -1, tirx.floordiv(total(), tirx.max(known(),
                                                                                   one)), new[j]),
        name="sr_shape")
    r2 = te.reduce_axis((0, p_len), "r2")
    prev_stride = te.compute((p_len,), lambda i: prod(tirx.Select(r2 > i, prev[r2], one),
                                                      axis=r2), name="sr_prev_stride")
    q2 = te.reduce_axis((0, q_len), "q2")
    new_stride = te.compute((q_len,), lambda j: prod(tirx.Select(q2 > j, shape[q2], one),
                                                     axis=q2), name="sr_new_stride")
    r3 = te.reduce_axis((0, p_len), "r3")
    flat = te.compute((idx.shape[0],), lambda n: te.sum(idx[n, r3] * prev_stride[r3], axis=r3),
                      name="sr_flat")
    out = te.compute(
        (idx.shape[0], q_len),
        lambda n, j: tirx.floormod(tirx.floordiv(flat[n], tirx.max(new_stride[j], one)),
                                   tirx.max(shape[j], one)),
        name="sr_indices")
    return [out, shape]


register_op(
    "sparse_reshape",
    num_inputs=3,
    arguments=("sparse_indices", "prev_shape", "new_shape"),
    rel=_sparse_reshape_rel,
    ref=_sparse_reshape_ref,
    compute=_sparse_reshape_compute,
    pattern=OpPattern.OPAQUE,
    doc="The COO indices of a sparse tensor reshaped from prev_shape to new_shape.",
    level=3,
)


def sparse_reshape(sparse_indices, prev_shape, new_shape):
    """Reshape a sparse tensor in COO format (tvm.relay 0.19's ``relay.op.sparse_reshape``,
    TensorFlow's ``SparseReshape``): each nonzero's index in a dense tensor of ``prev_shape``,
    flattened row-major, re-read in ``new_shape``.

    Args:
        sparse_indices: ``(N, R)`` integers, row ``n`` the index of the ``n``-th value.
        prev_shape: ``(R,)`` the dense shape before, the same integer dtype.
        new_shape: ``(S,)`` the dense shape after; one entry may be -1 (inferred).

    Returns:
        A tuple (``TupleWrapper`` of 2): the new indices ``(N, S)`` and the new shape ``(S,)``
        with the -1 filled in, both of sparse_indices' dtype.

    Raises:
        TypeInferenceError: (at type inference) ranks, dtypes or column counts that do not
            fit.
        InputError: (the interpreter) a new_shape that does not fit prev_shape's element count
            or an index outside prev_shape. Compiled code does not check these values: there
            the result of such inputs is unspecified (as in tvm.relay 0.19).
    """
    from ._common import TupleWrapper

    return TupleWrapper(make_call("sparse_reshape", [sparse_indices, prev_shape, new_shape]), 2)


__all__ = [
    "sparse_to_dense",
    "matrix_set_diag",
    "sliding_window",
    "strided_set",
    "fixed_point_multiply",
    "segment_sum",
    "sparse_reshape",
]
