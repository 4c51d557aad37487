"""MXNet converters: reshaping, slicing, joining, indexing and padding operators.

Where shapes are static at import, MXNet's special reshape codes, ``None`` slice bounds and
``*_like`` operators are resolved here against the inferred input shape, and Relay receives
plain shapes and indices (semantics: MXNet 1.9.1 operator docs, ``InferReshapeShape``). Where a
dimension they need is ``relay.Any()`` (a batch known only at run time), the codes go to Relay's
``reshape`` / ``reverse_reshape`` (the same codes 0/-1/-2/-3/-4), slices keep their bounds for
the kernel to clamp at run time, and ``*_like`` operators become Relay's ``slice_like`` /
``reshape_like``, so the VM computes the shapes from the run-time sizes.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import const
from ..ir.types import AnyDim
from ._mx_util import R, outputs_of

# a slice bound past any dimension: "to the end" for an ``Any`` dimension (clamped at run time)
_END = 2**31 - 1


def _has_any(shape) -> bool:
    return any(isinstance(d, AnyDim) for d in shape)


def mx_reshape_shape(dshape, codes, reverse=False, where="Reshape"):
    """The output shape of MXNet's legacy ``Reshape`` (codes 0, -1, -2, -3, -4, ``reverse``).

    Raises:
        ValueError: the codes do not fit the input shape (the message says why).
    """
    dshape, codes = list(dshape), list(codes)
    if reverse:
        dshape, codes = dshape[::-1], codes[::-1]
    out, src, inf, i = [], 0, -1, 0
    while i < len(codes):
        p = codes[i]
        if p == 0:
            if src >= len(dshape):
                raise ValueError(f"code 0 at position {i} has no input dimension to copy")
            out.append(dshape[src])
            src += 1
        elif p == -1:
            if inf >= 0:
                raise ValueError("only one dimension can be -1")
            inf = len(out)
            out.append(1)
            src += 1
        elif p == -2:
            out.extend(dshape[src:])
            src = len(dshape)
        elif p == -3:
            if src + 1 >= len(dshape):
                raise ValueError(f"code -3 at position {i} needs two input dimensions")
            out.append(dshape[src] * dshape[src + 1])
            src += 2
        elif p == -4:
            if i + 2 >= len(codes) or src >= len(dshape):
                raise ValueError(f"code -4 at position {i} needs two following values")
            d0, d1, d2 = dshape[src], codes[i + 1], codes[i + 2]
            src += 1
            i += 2
            if d1 == -1 and d2 == -1:
                raise ValueError("the two dimensions after -4 cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise ValueError(f"-4 splits {d0} into {d1} x {d2}")
            out.extend([d1, d2])
        elif p > 0:
            out.append(p)
            src += 1
        else:
            raise ValueError(f"unknown code {p}")
        i += 1
    total = int(np.prod(dshape))
    if inf >= 0:
        rest = int(np.prod([d for k, d in enumerate(out) if k != inf]))
        if rest == 0 or total % rest:
            raise ValueError(f"cannot infer -1: {total} elements, {rest} in the other dims")
        out[inf] = total // rest
    if int(np.prod(out)) != total:
        raise ValueError(f"{total} elements cannot take shape {tuple(out)}")
    return tuple(out[::-1] if reverse else out)


def npx_reshape_shape(dshape, codes, reverse=False):
    """The output shape of ``npx.reshape`` (codes -1 infer, -2 copy, -3 drop a 1, -4 copy the
    rest, -5 merge two, -6 split one into the two following values)."""
    dshape, codes = list(dshape), list(codes)
    if reverse:
        dshape, codes = dshape[::-1], codes[::-1]
    out, src, inf, i = [], 0, -1, 0
    while i < len(codes):
        p = codes[i]
        if p >= 0:
            out.append(p)
            src += 1
        elif p == -1:
            if inf >= 0:
                raise ValueError("only one dimension can be -1")
            inf = len(out)
            out.append(1)
            src += 1
        elif p == -2:
            out.append(dshape[src])
            src += 1
        elif p == -3:
            if dshape[src] != 1:
                raise ValueError(f"code -3 drops dimension {src} of size {dshape[src]}, not 1")
            src += 1
        elif p == -4:
            out.extend(dshape[src:])
            src = len(dshape)
        elif p == -5:
            out.append(dshape[src] * dshape[src + 1])
            src += 2
        elif p == -6:
            d0, d1, d2 = dshape[src], codes[i + 1], codes[i + 2]
            src += 1
            i += 2
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            out.extend([d1, d2])
        else:
            raise ValueError(f"unknown code {p}")
        i += 1
    total = int(np.prod(dshape))
    if inf >= 0:
        rest = int(np.prod([d for k, d in enumerate(out) if k != inf]))
        out[inf] = total // rest if rest else 0
    if int(np.prod(out)) != total:
        raise ValueError(f"{total} elements cannot take shape {tuple(out)}")
    return tuple(out[::-1] if reverse else out)


def _reshape(ins, a, c):
    x = ins[0]
    if "target_shape" in a.attrs and a.get_tuple("target_shape", ()) and "shape" not in a.attrs:
        raise c.error("the deprecated target_shape/keep_highest attributes are not supported")
    codes = a.get_tuple("shape")
    reverse = a.get_bool("reverse", False)
    xs = c.shape(x)
    if _has_any(xs):
        # Relay's reshape takes MXNet's legacy codes as they are and resolves them against the
        # run-time sizes (its type relation gives Any where the result depends on them)
        bad = [p for p in codes if p < -4]
        if bad:
            raise c.error(f"shape={codes}: unknown code(s) {bad} (MXNet's Reshape takes "
                          f"positive sizes, 0, -1, -2, -3 and -4)")
        return R("reverse_reshape" if reverse else "reshape")(x, list(codes))
    try:
        shape = mx_reshape_shape(xs, codes, reverse)
    except ValueError as e:
        raise c.error(f"shape={codes} does not fit input shape {xs}: {e}") from None
    return R("reshape")(x, list(shape))


# npx.reshape's codes as Relay's reshape codes: -2 copy one (0), -4 copy the rest (-2), -5 merge
# two (-3), -6 split one (-4); -1 and positive sizes are the same
_NPX_TO_RELAY = {-1: -1, -2: 0, -4: -2, -5: -3, -6: -4}


def _npx_reshape_any(x, codes, reverse, c):
    """``npx.reshape`` of an input with ``Any`` dimensions, as Relay's reshape codes."""
    out, i = [], 0
    while i < len(codes):
        p = codes[i]
        if p > 0:
            out.append(p)
        elif p in _NPX_TO_RELAY:
            out.append(_NPX_TO_RELAY[p])
            if p == -6:  # the two sizes that follow are taken as they are
                out.extend(codes[i + 1:i + 3])
                i += 2
        else:
            raise c.error(f"newshape={codes}: code {p} is not supported on an input with a "
                          f"dynamic (relay.Any()) dimension, shape {c.shape(x)}: give the "
                          f"input a static shape")
        i += 1
    return R("reverse_reshape" if reverse else "reshape")(x, out)


def _npx_reshape(ins, a, c):
    x = ins[0]
    codes = a.get_tuple("newshape")
    if _has_any(c.shape(x)):
        return _npx_reshape_any(x, codes, a.get_bool("reverse", False), c)
    try:
        shape = npx_reshape_shape(c.shape(x), codes, a.get_bool("reverse", False))
    except (ValueError, IndexError) as e:
        raise c.error(f"newshape={codes} does not fit input shape {c.shape(x)}: {e}") from None
    return R("reshape")(x, list(shape))


def _reshape_like(ins, a, c):
    lhs, rhs = ins
    ls, rs = c.shape(lhs), c.shape(rhs)

    def rng(b, e, n):
        b = 0 if b is None else (b + n if b < 0 else b)
        e = n if e is None else (e + n if e < 0 else e)
        return b, e

    lb, le = rng(a.get_int("lhs_begin", None), a.get_int("lhs_end", None), len(ls))
    rb, re_ = rng(a.get_int("rhs_begin", None), a.get_int("rhs_end", None), len(rs))
    shape = list(ls[:lb]) + list(rs[rb:re_]) + list(ls[le:])
    if _has_any(shape) or _has_any(ls):
        return R("reshape_like")(lhs, rhs, lhs_begin=lb, lhs_end=le, rhs_begin=rb, rhs_end=re_)
    if int(np.prod(shape)) != int(np.prod(ls)):
        raise c.error(f"cannot reshape {ls} like {rs}: result {tuple(shape)} has another size")
    return R("reshape")(lhs, shape)


def _flatten(ins, a, c):
    return R("nn.batch_flatten")(ins[0])


def _expand_dims(ins, a, c):
    return R("expand_dims")(ins[0], a.get_int("axis"))


def _squeeze(ins, a, c):
    axis = a.get_tuple("axis", None)
    return R("squeeze")(ins[0], axis=None if axis is None else list(axis))


def _transpose(ins, a, c):
    axes = a.get_tuple("axes", None)
    if axes is not None and len(axes) == 0:
        axes = None
    return R("transpose")(ins[0], axes=None if axes is None else list(axes))


def _swapaxis(ins, a, c):
    x = ins[0]
    n = len(c.shape(x))
    d1, d2 = a.get_int("dim1", 0) % n, a.get_int("dim2", 0) % n
    axes = list(range(n))
    axes[d1], axes[d2] = axes[d2], axes[d1]
    return R("transpose")(x, axes=axes)


def _broadcast_to(ins, a, c):
    x = ins[0]
    xs = c.shape(x)
    shape = a.get_tuple("shape")
    if len(shape) != len(xs):
        raise c.error(f"shape={shape} has another rank than the input {xs}")
    target = [xs[i] if d == 0 else d for i, d in enumerate(shape)]
    return R("broadcast_to")(x, target)


def _broadcast_axis(ins, a, c):
    x = ins[0]
    target = list(c.shape(x))
    axes = a.get_tuple("axis", ())
    sizes = a.get_tuple("size", ())
    if len(axes) != len(sizes):
        raise c.error(f"axis={axes} and size={sizes} differ in length")
    for ax, sz in zip(axes, sizes):
        target[ax] = sz
    return R("broadcast_to")(x, target)


def _broadcast_like(ins, a, c):
    lhs, rhs = ins
    ls, rs = c.shape(lhs), c.shape(rhs)
    la, ra = a.get_tuple("lhs_axes", None), a.get_tuple("rhs_axes", None)
    if la is None:
        return R("broadcast_to")(lhs, list(rs))
    target = list(ls)
    for i, j in zip(la, ra):
        target[i] = rs[j]
    return R("broadcast_to")(lhs, target)


def _slice_bounds(shape, begin, end, step):
    """Concrete strided_slice begin/end/strides from MXNet's (possibly short, None-holding)
    begin/end/step tuples. On an ``Any`` dimension the bounds stay as MXNet gives them (Python's
    slice rules, which strided_slice applies to the run-time size), ``None`` as a bound past
    either end."""
    nb, ne, ns = [], [], []
    for i, dim in enumerate(shape):
        b = begin[i] if i < len(begin) else None
        e = end[i] if i < len(end) else None
        s = step[i] if step and i < len(step) and step[i] is not None else 1
        if i >= len(begin) and i >= len(end):
            break
        if isinstance(dim, AnyDim):
            nb.append((0 if s > 0 else _END) if b is None else b)
            ne.append((_END if s > 0 else -_END) if e is None else e)
            ns.append(s)
            continue
        start, stop, stride = slice(b, e, s).indices(dim)
        if stride < 0 and stop < 0:
            stop = -(dim + 1)  # "before index 0" for a negative stride
        nb.append(start)
        ne.append(stop)
        ns.append(stride)
    return nb, ne, ns


def _slice(ins, a, c):
    x = ins[0]
    begin = a.get_tuple("begin", allow_none=True)
    end = a.get_tuple("end", allow_none=True)
    step = a.get_tuple("step", (), allow_none=True) or ()
    if step and any(s == 0 for s in step):
        raise c.error(f"step={step} contains 0")
    nb, ne, ns = _slice_bounds(c.shape(x), begin, end, step)
    return R("strided_slice")(x, begin=nb, end=ne, strides=ns)


def _slice_axis(ins, a, c):
    x = ins[0]
    shape = c.shape(x)
    axis = a.get_int("axis")
    axis = axis + len(shape) if axis < 0 else axis
    b, e = a.get_int("begin"), a.get_int("end", None)
    begin = [None] * axis + [b]
    end = [None] * axis + [e]
    nb, ne, ns = _slice_bounds(shape, begin, end, ())
    return R("strided_slice")(x, begin=nb, end=ne, strides=ns)


def _slice_like(ins, a, c):
    x, like = ins
    xs, ls = c.shape(x), c.shape(like)
    axes = a.get_tuple("axes", ())
    axes = range(len(xs)) if not axes else [ax % len(xs) for ax in axes]
    if _has_any(xs) or _has_any(ls):
        return R("slice_like")(x, like, axes=list(axes))
    end = list(xs)
    for ax in axes:
        end[ax] = ls[ax]
    return R("strided_slice")(x, begin=[0] * len(xs), end=end, strides=[1] * len(xs))


def _split_outputs(x, sections_or_indices, n, axis, squeeze, c):
    outs = outputs_of(R("split")(x, sections_or_indices, axis), n)
    if squeeze:
        outs = [R("squeeze")(o, axis=[axis]) for o in outs]
    return outs


def _slice_channel(ins, a, c):
    x = ins[0]
    n = a.get_int("num_outputs")
    axis = a.get_int("axis", 1)
    shape = c.shape(x)
    if shape[axis] % n:
        raise c.error(f"cannot split axis {axis} of size {shape[axis]} into {n} equal parts")
    return _split_outputs(x, n, n, axis, a.get_bool("squeeze_axis", False), c)


def _split_v2(ins, a, c):
    x = ins[0]
    axis = a.get_int("axis", 0)
    sections = a.get_int("sections", 0)
    squeeze = a.get_bool("squeeze_axis", False)
    if sections and sections > 0:
        return _split_outputs(x, sections, sections, axis, squeeze, c)
    indices = [i for i in a.get_tuple("indices") if i != 0]
    return _split_outputs(x, indices, len(indices) + 1, axis, squeeze, c)


def _concat(ins, a, c):
    axis = a.get_int("dim", None)
    if axis is None:
        axis = a.get_int("axis", 1)
    return R("concatenate")(list(ins), axis=axis)


def _np_concat(ins, a, c):
    return R("concatenate")(list(ins), axis=a.get_int("axis", 0))


def _rnn_param_concat(ins, a, c):
    return R("concatenate")(list(ins), axis=a.get_int("dim", 0))


def _stack(ins, a, c):
    return R("stack")(list(ins), axis=a.get_int("axis", 0))


def _tile(ins, a, c):
    return R("tile")(ins[0], list(a.get_tuple("reps")))


def _repeat(ins, a, c):
    x = ins[0]
    axis = a.get_int("axis", None)
    if axis is None:
        x, axis = R("reshape")(x, [-1]), 0
    return R("repeat")(x, a.get_int("repeats"), axis)


def _reverse(ins, a, c):
    x = ins[0]
    for ax in a.get_tuple("axis"):
        x = R("reverse")(x, ax)
    return x


def _take(ins, a, c):
    data, idx = ins
    mode = a.get_str("mode", "clip")
    if mode == "raise":
        mode = "clip"  # out-of-range indices raise in MXNet; in a compiled graph they clip
    idx = R("cast")(idx, "int32")
    return R("take")(data, idx, axis=a.get_int("axis", 0), mode=mode)


def _embedding(ins, a, c):
    data, weight = ins
    dims = (a.get_int("input_dim"), a.get_int("output_dim"))
    c.expect(weight, dims, "the embedding weight",
             {0: f"input_dim={dims[0]}", 1: f"output_dim={dims[1]}"})
    return R("take")(weight, R("cast")(data, "int32"), axis=0)


def _one_hot(ins, a, c):
    idx = ins[0]
    dtype = a.get_str("dtype", "float32")
    on = const(np.array(a.get_float("on_value", 1.0), dtype), dtype)
    off = const(np.array(a.get_float("off_value", 0.0), dtype), dtype)
    return R("one_hot")(R("cast")(idx, "int32"), on, off, a.get_int("depth"), -1, dtype)


def _gather_nd(ins, a, c):
    return R("gather_nd")(ins[0], R("cast")(ins[1], "int32"))


def _unravel_index(ins, a, c):
    idx = ins[0]
    shape = a.get_tuple("shape")
    out = R("unravel_index")(R("cast")(idx, "int32"), const(np.array(shape, "int32")))
    return R("cast")(out, c.dtype(idx))


def _pad(ins, a, c):
    x = ins[0]
    pw = a.get_tuple("pad_width")
    mode = a.get_str("mode", "constant")
    if len(pw) != 2 * len(c.shape(x)):
        raise c.error(f"pad_width={pw} needs 2 values per input dimension ({c.shape(x)})")
    pairs = [[pw[2 * i], pw[2 * i + 1]] for i in range(len(pw) // 2)]
    value = a.get_float("constant_value", 0.0)
    return R("nn.pad")(x, pairs, pad_value=value, pad_mode=mode)


def _npi_pad(ins, a, c):
    import ast

    x = ins[0]
    n = len(c.shape(x))
    raw = a.attrs.get("pad_width")
    try:
        parsed = ast.literal_eval(str(raw)) if isinstance(raw, str) else raw
        flat = []
        for item in parsed if isinstance(parsed, (list, tuple)) else [parsed]:
            flat.extend(item if isinstance(item, (list, tuple)) else [item])
        pw = tuple(int(v) for v in flat)
    except (ValueError, SyntaxError, TypeError):
        raise c.error(f"pad_width={raw!r} is not a tuple of (before, after) pairs") from None
    if len(pw) == 2 * n:
        pairs = [[pw[2 * i], pw[2 * i + 1]] for i in range(n)]
    elif len(pw) == 2:
        pairs = [[pw[0], pw[1]]] * n
    else:
        raise c.error(f"pad_width={pw} does not fit input rank {n}")
    mode = a.get_str("mode", "constant")
    return R("nn.pad")(x, pairs, pad_value=a.get_float("constant_values", 0.0), pad_mode=mode)


def _crop(ins, a, c):
    x = ins[0]
    xs = c.shape(x)
    if len(ins) == 2:
        h, w = c.shape(ins[1])[2:4]
    else:
        h, w = a.get_tuple("h_w")
    oy, ox = a.get_tuple("offset", (0, 0))
    center = a.get_bool("center_crop", False)
    if _has_any((h, w)) or (center and _has_any(xs[2:4])):
        if (oy, ox) == (0, 0) and not center:  # the top-left corner, sized like ins[1]
            return R("slice_like")(x, ins[1], axes=[2, 3])
        raise c.error(f"offset=({oy}, {ox}) / center_crop={center} with a dynamic "
                      f"(relay.Any()) height or width (input {xs}, crop like "
                      f"{c.shape(ins[1]) if len(ins) == 2 else (h, w)}) is not supported: "
                      f"give the spatial dimensions static sizes")
    if center:
        oy, ox = (xs[2] - h) // 2, (xs[3] - w) // 2
    # axes: the batch and channel axes are copied whole (they may be relay.Any())
    return R("strided_slice")(x, begin=[oy, ox], end=[oy + h, ox + w], strides=[1, 1],
                              axes=[2, 3])


def _depth_to_space(ins, a, c):
    return R("nn.depth_to_space")(ins[0], a.get_int("block_size"), mode="DCR")


def _space_to_depth(ins, a, c):
    return R("nn.space_to_depth")(ins[0], a.get_int("block_size"))


def _sequence_mask(ins, a, c):
    x = ins[0]
    if not a.get_bool("use_sequence_length", False):
        return x
    # MXNet truncates a fractional length (static_cast<int>, as SequenceLast and
    # SequenceReverse): 2.5 keeps two steps, not three (fresh-user trial)
    length = ins[1]
    if not c.dtype(length).startswith(("int", "uint")):
        length = R("cast")(length, "int32")
    return R("sequence_mask")(x, R("cast")(length, c.dtype(x)), a.get_float("value", 0.0),
                              a.get_int("axis", 0))


def _sequence_reverse(ins, a, c):
    x = ins[0]
    axis = a.get_int("axis", 0)
    if axis != 0:
        raise c.error(f"SequenceReverse axis={axis} is not supported (MXNet allows only 0)")
    if not a.get_bool("use_sequence_length", False):
        return R("reverse")(x, 0)
    length = R("cast")(ins[1], "int32")
    return R("reverse_sequence")(x, length, seq_axis=0, batch_axis=1)


def _sequence_last(ins, a, c):
    """MXNet's ``SequenceLast(data, sequence_length=None, use_sequence_length=False, axis=0)``:
    the last element of each sequence. ``data`` is ``(T, B, ...)`` for ``axis=0`` or
    ``(B, T, ...)`` for ``axis=1`` (MXNet allows no other axis, and rank >= 2); the result is
    ``(B, ...)``. Without ``use_sequence_length`` it is position ``T - 1``; with it, batch entry
    ``b`` takes position ``int(sequence_length[b]) - 1`` (lengths of shape ``(B,)``, any numeric
    dtype, truncated as MXNet's ``static_cast<int>``). A length outside ``[1, T]``, which MXNet
    reads out of bounds, is clipped to the first / last position here.
    (MXNet 1.9.1 ``src/operator/sequence_last-inl.h`` and its operator doc.)"""
    x = ins[0]
    shape = c.shape(x)
    axis = a.get_int("axis", 0)
    if axis not in (0, 1):
        raise c.error(f"axis={axis}: MXNet's SequenceLast supports only axis 0 and 1")
    if len(shape) < 2:
        raise c.error(f"data has shape {tuple(shape)}, expected rank >= 2 (sequence and batch)")
    if not a.get_bool("use_sequence_length", False):
        return R("take")(x, const(-1, "int32"), axis=axis, mode="wrap")
    if len(ins) < 2:
        raise c.error("use_sequence_length=True but the node has no sequence_length input")
    length = ins[1]
    batch = shape[1 - axis]
    lshape = tuple(c.shape(length))
    if len(lshape) != 1 or (isinstance(batch, int) and isinstance(lshape[0], int)
                            and lshape[0] != batch):
        raise c.error(f"sequence_length has shape {lshape}, expected ({batch},) (the batch "
                      f"size of data {tuple(shape)} with axis={axis})")
    if axis == 0:  # batch first, so that take's batch_dims pairs entry b with length b
        x = R("transpose")(x, [1, 0] + list(range(2, len(shape))))
    last = R("subtract")(R("cast")(length, "int32"), const(1, "int32"))
    return R("take")(x, last, axis=1, batch_dims=1, mode="clip")


def _boolean_mask(ins, a, c):
    """MXNet's ``_contrib_boolean_mask(data, index, axis=0)``: the rows of ``data`` (along axis
    0, the only axis MXNet 1.9.1 implements) whose entry of the 1-d ``index`` is nonzero, in
    order. The number of rows depends on the values: the result's first dimension is ``Any``,
    so the converted program runs on the VM or the interpreter (``relay.build`` refuses it).
    (MXNet 1.9.1 ``src/operator/contrib/boolean_mask.cc``.)"""
    data, index = ins
    axis = a.get_int("axis", 0)
    if axis != 0:
        raise c.error(f"axis={axis}: MXNet's boolean_mask supports only axis 0")
    shape, ishape = tuple(c.shape(data)), tuple(c.shape(index))
    if len(shape) < 1 or len(ishape) != 1 or (
            isinstance(shape[0], int) and isinstance(ishape[0], int) and shape[0] != ishape[0]):
        raise c.error(f"index has shape {ishape}, expected a 1-d mask of the {shape[:1]} rows "
                      f"of data {shape}")
    rows = R("argwhere")(R("not_equal")(index, c.scalar(0, index)))
    return R("take")(data, R("reshape")(rows, [-1]), axis=0)


def _ring_buffer(ins, a, c):
    """``ring_buffer(data, buffer, axis)`` (TVM 0.5's streaming op, topi.nn.ring_buffer):
    append ``data`` to ``buffer`` along ``axis`` and keep the newest ``buffer.shape[axis]``."""
    data, buf = ins
    bs = c.shape(buf)
    axis = a.get_int("axis", 0) % len(bs)
    joined = R("concatenate")([buf, data], axis=axis)
    total = bs[axis] + c.shape(data)[axis]
    begin = [0] * len(bs)
    begin[axis] = total - bs[axis]
    end = list(bs)
    end[axis] = total
    return R("strided_slice")(joined, begin=begin, end=end, strides=[1] * len(bs))


SHAPE_CONVERTERS = {
    "ring_buffer": _ring_buffer,
    "Reshape": _reshape,
    "reshape": _reshape,
    "_npx_reshape": _npx_reshape,
    "reshape_like": _reshape_like,
    "Flatten": _flatten,
    "flatten": _flatten,
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "transpose": _transpose,
    "_np_transpose": _transpose,
    "_npi_transpose": _transpose,
    "SwapAxis": _swapaxis,
    "swapaxes": _swapaxis,
    "broadcast_to": _broadcast_to,
    "broadcast_axis": _broadcast_axis,
    "broadcast_axes": _broadcast_axis,
    "broadcast_like": _broadcast_like,
    "slice": _slice,
    "crop": _slice,
    "slice_axis": _slice_axis,
    "slice_like": _slice_like,
    "SliceChannel": _slice_channel,
    "split": _slice_channel,
    "_split_v2": _split_v2,
    "Concat": _concat,
    "concat": _concat,
    "_npi_concatenate": _np_concat,
    "_rnn_param_concat": _rnn_param_concat,
    "stack": _stack,
    "_npi_stack": _stack,
    "tile": _tile,
    "repeat": _repeat,
    "reverse": _reverse,
    "flip": _reverse,
    "take": _take,
    "Embedding": _embedding,
    "one_hot": _one_hot,
    "gather_nd": _gather_nd,
    "_unravel_index": _unravel_index,
    "Pad": _pad,
    "pad": _pad,
    "_npi_pad": _npi_pad,
    "Crop": _crop,
    "depth_to_space": _depth_to_space,
    "space_to_depth": _space_to_depth,
    "SequenceMask": _sequence_mask,
    "SequenceReverse": _sequence_reverse,
    "SequenceLast": _sequence_last,
    "_contrib_boolean_mask": _boolean_mask,
}

__all__ = ["SHAPE_CONVERTERS", "mx_reshape_shape", "npx_reshape_shape"]
