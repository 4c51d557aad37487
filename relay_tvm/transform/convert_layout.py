"""ConvertLayout (Relay's ``convert_layout.cc`` with ``transform_layout.h``): convert the
operators named in ``desired_layouts`` to those layouts and carry the new layouts forward
through every operator that has a layout rule, so ``layout_transform`` appears only where a
tensor enters or leaves the converted region.

The walk (post-order over the dataflow, as Relay's ``ForwardRewrite``) keeps, for each
tensor value, its *old* layout (the layout the original program had there) and its *new* one
(the layout the rewritten value is in); a variable or constant has neither. For each operator
call:

1. The operator's **layout rule** (Relay's ``FInferCorrectLayout``) is asked, with the old
   layouts of the arguments, which layouts the call reads and writes in the original program
   (``old_cur``, ``old_out``). An operator without a rule, or whose rule cannot say, is a
   boundary: its arguments go back to their old layouts and its result has none.
2. The call is rebuilt with the new attributes; an operator named in ``desired_layouts`` is
   rebuilt by its **convert hook** (Relay's ``FTVMConvertOpLayout``: a convolution gets the
   desired data / kernel layouts, a pooling its layout).
3. The rule is asked again for the rebuilt call with the new layouts of the arguments
   (``new_cur``, ``new_out``): an elementwise operator reads and writes whatever it is given,
   a reduction moves its axes, a broadcast operator transforms its smaller operand the same
   way as the larger one, a convolution reads its attributes' layouts.
4. Each argument is transformed from the layout it is in to the one the call reads
   (``layout_transform``, after ``expand_dims`` where a lower-rank operand meets a full-rank
   layout; one transform per value and layout pair). The function's result and every value a
   boundary reads go back to the old layout.

Users change a step per operator with ``register_convert_op_layout`` (step 2) and
``register_infer_correct_layout`` (steps 1 and 3; the function returns an
:class:`~relay_tvm.transform.infer_layout_utils.InferCorrectLayoutOutput`), and skip
convolutions with :class:`LayoutConfig`.

Layouts are strings (``"NCHW"``, ``"NCHW16c"``, ``"C"``; ``""`` is a scalar's layout), ``None``
where a value has none.
"""

from __future__ import annotations

import re

from ..errors import RelayError
from ..ir.attrs import Attrs
from ..ir.expr import Call, Tuple, TupleGetItem
from ..ir.types import TensorType, TupleType
from ..op.registry import Op, OpPattern, make_call
from ._rewrite import Rewriter, children, rebuild

_AXIS = re.compile(r"(\d*)([A-Za-z])")


# ---- layout strings ----------------------------------------------------------------------------


def _axes(layout: str) -> list:
    """``"NCHW16c"`` -> ``["N", "C", "H", "W", "16c"]``."""
    out, pos = [], 0
    for m in _AXIS.finditer(layout):
        if m.start() != pos:
            break
        out.append(m.group(0))
        pos = m.end()
    if pos != len(layout):
        raise RelayError(f"ConvertLayout: malformed layout {layout!r} (expected axes such as "
                         f"'NCHW' or 'NCHW16c')")
    return out


def _name(tok: str) -> str:
    return tok[-1]


def _is_primal(tok: str) -> bool:
    return tok[-1].isupper()


def _ndim_primal(layout: str) -> int:
    return sum(1 for c in layout if c.isupper())


def _index_of(layout: str, axis: str) -> int:
    """Position of the axis named ``axis`` (``"C"`` primal, ``"c"`` subordinate), else -1."""
    for i, tok in enumerate(_axes(layout)):
        if _name(tok) == axis:
            return i
    return -1


def _factor_of(layout: str, axis: str) -> int:
    """Block size of the subordinate axis of ``axis`` (either case), else -1."""
    for tok in _axes(layout):
        if _name(tok) == axis.lower() and not _is_primal(tok):
            return int(tok[:-1])
    return -1


def _sub(layout: str, start: int, n: int) -> str:
    return "".join(_axes(layout)[start:start + n])


def _expand_primal(src: str, dst: str) -> str:
    """``src`` with the primal axes of ``dst`` it lacks put in front (Relay's ExpandPrimal):
    ``("C", "NCHW") -> "NHWC"``."""
    have = {c for c in src if c.isupper()}
    return "".join(c for c in dst if c.isupper() and c not in have) + src


def _isomorphic(a: str, b: str) -> bool:
    """Same structure up to renaming the axes (``NCHW`` ~ ``NCDW``; blocks must match)."""
    ta, tb = _axes(a), _axes(b)
    if len(ta) != len(tb):
        return False
    to, back = {}, {}
    for x, y in zip(ta, tb):
        if _is_primal(x) != _is_primal(y):
            return False
        nx, ny = _name(x).upper(), _name(y).upper()
        if to.setdefault(nx, ny) != ny or back.setdefault(ny, nx) != nx:
            return False
        if not _is_primal(x) and x[:-1] != y[:-1]:
            return False
    return True


def _transform_like(old: str, ref_old: str, ref_new: str):
    """The layout ``old`` becomes when it changes as ``ref_old`` changed into ``ref_new``
    (``old`` broadcasts against ``ref_old`` from the right); None where they do not line up."""
    big, small = (ref_old, old) if len(_axes(ref_old)) > len(_axes(old)) else (old, ref_old)
    tb = _axes(big)
    k = len(tb) - len(_axes(small))
    tail, rest = "".join(tb[k:]), tb[:k]
    tail_names = {_name(t).upper() for t in _axes(tail)}
    if any(_name(t).upper() in tail_names for t in rest) or not _isomorphic(tail, small):
        return None
    if not old:
        return old
    mapping, used = {}, set()
    to, tr = _axes(old), _axes(ref_old)
    for j, i in zip(range(len(to) - 1, -1, -1), range(len(tr) - 1, -1, -1)):
        mapping[_name(tr[i]).upper()] = _name(to[j]).upper()
        used.add(_name(to[j]).upper())
    for tok in reversed(tr):
        n = _name(tok).upper()
        if n not in mapping:
            pick = n if n not in used else next(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                 if c not in used)
            mapping[n] = pick
            used.add(pick)
    out = []
    for ch in ref_new:
        if ch.isupper():
            out.append(mapping[ch])
        elif ch.isalpha():
            out.append(mapping[ch.upper()].lower())
        else:
            out.append(ch)
    return "".join(out)


def _adjust_factors(src: str, old_layout: str, old_shape) -> str:
    """``src`` with each block of an axis that the smaller operand broadcasts (size 1, or
    absent) set to 1: ``NCHW16c`` for an operand of shape ``(N, H, W, 1)`` is ``NCHW1c``."""
    out = []
    for tok in _axes(src):
        if not _is_primal(tok):
            prim = _name(tok).upper()
            i = _index_of(old_layout, prim)
            one = i == -1 or (old_shape[i] == 1 and _index_of(old_layout, prim.lower()) == -1)
            tok = ("1" if one else tok[:-1]) + _name(tok)
        out.append(tok)
    return "".join(out)


class Layout(str):
    """A layout as TVM 0.19's ``tvm.tir.Layout`` offered it to layout rules: the layout string
    (``"NCHW16c"``) with ``name``, ``ndim``, ``ndim_primal``, ``index_of(axis)`` and
    ``factor_of(axis)`` (a subordinate axis's block size, else -1)."""

    @property
    def name(self) -> str:
        return str(self)

    @property
    def ndim(self) -> int:
        return len(_axes(self))

    @property
    def ndim_primal(self) -> int:
        return _ndim_primal(self)

    def index_of(self, axis: str) -> int:
        return _index_of(self, axis)

    def factor_of(self, axis: str) -> int:
        return _factor_of(self, axis)


def layout(layout_str: str, dtype: str = "int32"):
    """TVM 0.19's ``tvm.tir.layout``: a :class:`Layout`, or None for ``""`` / ``"__undef__"``
    (an undefined layout).

    Raises:
        RelayError: a malformed layout string.
    """
    s = str(layout_str)
    if s in ("", "__undef__"):
        return None
    _axes(s)
    return Layout(s)


# ---- the layout rules (FInferCorrectLayout) ----------------------------------------------------


class _Inferred:
    __slots__ = ("ins", "outs", "attrs")

    def __init__(self, ins, outs, attrs):
        self.ins, self.outs, self.attrs = list(ins), list(outs), attrs


def _with(attrs, **fields):
    """``attrs`` with ``fields`` replaced (a new attrs node of the same operator)."""
    if not fields:
        return attrs
    return Attrs(attrs.type_key, {**dict(attrs.items()), **fields})


def _elemwise(attrs, new_in, old_in, types):
    """Relay's ElemwiseArbitraryLayout: every input and the output in the first input's layout
    (the new one once known)."""
    if new_in is not None:
        lay = new_in[0]
    else:
        lay = next((x for x in old_in if x is not None), None)
    return _Inferred([lay] * len(old_in), [lay], attrs)


def _shape(t):
    return tuple(t.shape) if isinstance(t, TensorType) else ()


def _binary(attrs, new_in, old_in, types):
    """Relay's BinaryBroadcastLayout: the operand of lower rank is laid out as the trailing
    axes of the other; once the larger operand's layout changed, the smaller one is changed the
    same way (its broadcast axes keep a block of 1)."""
    shapes = [_shape(t) for t in types]
    big_old = 0 if len(shapes[0]) >= len(shapes[1]) else 1
    lays = list(old_in)
    fail = _Inferred([None, None], [None], attrs)
    if lays[0] is None and lays[1] is None:
        return fail
    if lays[0] is None or lays[1] is None:
        d = 0 if lays[0] is not None else 1
        u = 1 - d
        if len(shapes[d]) < len(shapes[u]):
            return fail
        lays[u] = _sub(lays[d], len(shapes[d]) - len(shapes[u]), len(shapes[u]))
        out = _Inferred(lays, [lays[d]], attrs)
    else:
        out = _Inferred(lays, [lays[big_old]], attrs)
    if new_in is None:
        return out
    ret = new_in[big_old]
    large = 0 if _ndim_primal(new_in[0]) >= _ndim_primal(new_in[1]) else 1
    small = 1 - large
    tgt = _transform_like(lays[small], lays[large], new_in[large])
    if tgt is None:
        return fail
    new_small = _adjust_factors(tgt, lays[small], shapes[small])
    ins = [None, None]
    ins[large], ins[small] = new_in[large], new_small
    return _Inferred(ins, [ret], attrs)


def _conv(attrs, new_in, old_in, types):
    """A convolution reads its attributes' data and kernel layouts; writes ``out_layout``
    (the data layout when empty)."""
    out = getattr(attrs, "out_layout", "") or attrs.data_layout
    return _Inferred([attrs.data_layout, attrs.kernel_layout], [out], attrs)


def _deformable(attrs, new_in, old_in, types):
    out = attrs.out_layout or attrs.data_layout
    return _Inferred([attrs.data_layout, attrs.data_layout, attrs.kernel_layout], [out], attrs)


def _pool(attrs, new_in, old_in, types):
    """Relay's PoolInferCorrectLayout: a pooling follows the layout it is given unless its
    ``out_layout`` is set."""
    if attrs.out_layout:
        if attrs.out_layout != attrs.layout:
            raise RelayError(f"ConvertLayout: pooling with layout {attrs.layout!r} and "
                             f"out_layout {attrs.out_layout!r}: expected the same layout")
    elif new_in is not None and new_in[0] is not None:
        attrs = _with(attrs, layout=new_in[0])
    return _Inferred([attrs.layout], [attrs.layout], attrs)


def _concat(attrs, new_in, old_in, types):
    """Relay's ConcatenateLayout: when all inputs arrive in one new layout, concatenate in it
    (along the original axis's new position)."""
    rank = len(types[0].fields[0].shape) if isinstance(types[0], TupleType) else 0
    axis = attrs.axis + rank if attrs.axis < 0 else attrs.axis
    if new_in is not None and len(set(new_in)) == 1 and new_in[0] is not None:
        dim = _name(_axes(old_in[0])[axis])
        lay = new_in[0]
        return _Inferred([lay] * len(old_in), [lay], _with(attrs, axis=_index_of(lay, dim)))
    lay = next((x for x in old_in if x is not None), None)
    if lay is None or len(_axes(lay)) <= axis or not _is_primal(_axes(lay)[axis]):
        return _Inferred([None], [None], attrs)
    return _Inferred([lay] * len(old_in), [lay], attrs)


def _reduce_axes(ndim, axis, exclude):
    axes = list(range(ndim)) if axis is None else [a % ndim for a in axis]
    if exclude:
        axes = [i for i in range(ndim) if i not in axes]
    return sorted(set(axes))


def _reduce(attrs, new_in, old_in, types):
    """Relay's ReduceInferCorrectLayout: the reduced axes follow their names into the new
    layout (a blocked axis reduces both of its parts; with keepdims its block becomes 1)."""
    ndim = len(types[0].shape)
    r_axes = _reduce_axes(ndim, attrs.axis, attrs.exclude)
    exclude, keep = bool(attrs.exclude), bool(attrs.keepdims)

    def infer(layout):
        old_r = {_name(_axes(old_in[0])[a]) for a in r_axes}
        new_axes, lin, lout = [], "", ""

        def push(dim, i):
            if (dim in old_r) != exclude:
                new_axes.append(i)
                return True
            return False

        for i, tok in enumerate(_axes(layout)):
            if _is_primal(tok):
                push(tok, i)
                lin += tok
                if tok not in old_r or keep:
                    lout += tok
            else:
                lin += tok
                if push(_name(tok).upper(), i):
                    if exclude:
                        lout += tok
                    elif keep:
                        lout += "1" + _name(tok)
                else:
                    lout += tok
        return lin, lout, new_axes

    lin = lout = None
    if new_in is not None and r_axes and new_in[0] is not None and old_in[0] is not None:
        if len(old_in) == 2 and any(
                _factor_of(new_in[0], _name(_axes(old_in[0])[a])) > 0 for a in r_axes):
            return None  # variance / std: the mean's reduced axis cannot follow a block
        lin, lout, new_axes = infer(new_in[0])
        attrs = _with(attrs, axis=new_axes)
    elif old_in[0] is not None:
        lin, lout, _ = infer(old_in[0])
    if lout == "":
        return None  # every axis reduced: a scalar has no layout to carry (Relay: undefined)
    return _Inferred([lin] * len(old_in), [lout], attrs)


def _transpose(attrs, new_in, old_in, types):
    """Relay's TransposeInferCorrectLayout: the axes permutation is re-expressed in the new
    layout's positions (a blocked layout is a boundary)."""
    ndim = len(types[0].shape)
    axes = list(range(ndim - 1, -1, -1)) if not attrs.axes else [a % ndim for a in attrs.axes]
    if new_in is not None and new_in[0] is not None and old_in[0] is not None:
        old_l, new_l = old_in[0], new_in[0]
        if len(_axes(new_l)) != ndim or len(_axes(old_l)) != ndim:
            return _Inferred([None], [None], attrs)
        # output old layout: the axes of old_l permuted
        out_old = "".join(_axes(old_l)[a] for a in axes)
        # keep the output in the old output layout: new axes say where each name sits in new_l
        new_axes = [_index_of(new_l, _name(_axes(out_old)[i])) for i in range(ndim)]
        return _Inferred([new_l], [out_old], _with(attrs, axes=new_axes))
    if old_in[0] is None:
        return _Inferred([None], [None], attrs)
    out = "".join(_axes(old_in[0])[a] for a in axes)
    return _Inferred([old_in[0]], [out], attrs)


def _axis_rule(n_c: int, n_c_out: int = 0, list_axis: bool = False):
    """Rules of operators with an ``axis`` attribute that names one (or, ``list_axis``, a list
    of) axes of the data (Relay's BatchNorm / Normalization / L2Normalize rules): in the new
    layout the axis moves to where its name went; ``n_c`` more inputs (and ``n_c_out`` more
    outputs) are per-channel vectors in layout ``"C"``."""

    def rule(attrs, new_in, old_in, types):
        ndim = len(types[0].shape)
        lay = None
        if new_in is not None and old_in[0] is not None and new_in[0] is not None:
            old_t = _axes(old_in[0])
            names = [_name(old_t[a % ndim]) for a in (attrs.axis if list_axis else [attrs.axis])]
            if any(_factor_of(new_in[0], n) > 0 for n in names):
                return None  # the axis is split into blocks: one axis attribute cannot say it
            axes = [_index_of(new_in[0], n) for n in names]
            if any(a < 0 for a in axes):
                return None
            attrs = _with(attrs, axis=axes if list_axis else axes[0])
            lay = new_in[0]
        elif old_in[0] is not None:
            lay = old_in[0]
        return _Inferred([lay] + ["C"] * n_c, [lay] + ["C"] * n_c_out, attrs)
    return rule


def _squeeze(attrs, new_in, old_in, types):
    """Relay's SqueezeInferCorrectLayout: the squeezed axes are found by name in the new
    layout; the output layout drops them."""
    shape = types[0].shape
    lay = new_in[0] if new_in is not None else old_in[0]
    if lay is None or old_in[0] is None:
        return None
    if attrs.axis is not None:
        axis = [int(a) for a in attrs.axis]
    else:
        axis = [i for i, d in enumerate(shape) if d == 1]
    if new_in is not None:
        old_t = _axes(old_in[0])
        axis = [_index_of(lay, _name(old_t[a % len(shape)])) for a in axis]
        attrs = _with(attrs, axis=axis)
    toks = _axes(lay)
    drop = {a % len(toks) for a in axis}
    return _Inferred([lay], ["".join(t for i, t in enumerate(toks) if i not in drop)], attrs)


def _split(attrs, new_in, old_in, types):
    """Relay's SplitInferCorrectLayout: split along the axis's new position (indices divided
    by the block where the axis is blocked and they divide)."""
    ndim = len(types[0].shape)
    ios = attrs.indices_or_sections
    size = int(ios) if isinstance(ios, int) else len(ios) + 1
    if old_in[0] is None:
        return None
    lay = old_in[0]
    if new_in is not None and new_in[0] is not None:
        dim = _name(_axes(old_in[0])[attrs.axis % ndim])
        fields = {"axis": _index_of(new_in[0], dim)}
        factor = _factor_of(new_in[0], dim)
        ok = True
        if factor > 1:
            if isinstance(ios, int):  # equal sections of the outer (blocked) axis
                n = types[0].shape[attrs.axis % ndim]
                ok = isinstance(n, int) and (n // factor) % ios == 0
            else:
                ok = all(int(v) % factor == 0 for v in ios)
                if ok:
                    fields["indices_or_sections"] = tuple(int(v) // factor for v in ios)
        if ok:  # else: split in the old layout (the input is transformed back)
            lay = new_in[0]
            attrs = _with(attrs, **fields)
    return _Inferred([lay], [lay] * size, attrs)


def _strided_slice(attrs, new_in, old_in, types):
    """Relay's StridedSliceInferCorrectLayout for a permuted (unblocked) layout: begin, end
    and strides are moved to the axes' new positions (the unspecified ones spelled out);
    a blocked layout is a boundary."""
    if old_in[0] is None:
        return None
    if new_in is None or new_in[0] is None or new_in[0] == old_in[0]:
        return _Inferred([old_in[0]], [old_in[0]], attrs)
    new_l, old_l = new_in[0], old_in[0]
    if any(not _is_primal(t) for t in _axes(new_l) + _axes(old_l)) or \
            sorted(new_l) != sorted(old_l) or getattr(attrs, "slice_mode", "end") != "end":
        return None
    shape = types[0].shape
    ndim = len(shape)
    old_t = _axes(old_l)
    if attrs.axes is not None:
        axes = [_index_of(new_l, old_t[a % ndim]) for a in attrs.axes]
        return _Inferred([new_l], [new_l], _with(attrs, axes=axes))
    begin, end = list(attrs.begin or []), list(attrs.end or [])
    strides = list(attrs.strides or [1])
    b, e, st = [0] * ndim, list(shape), [1] * ndim
    for i in range(ndim):
        if i < len(begin) and begin[i] is not None:
            b[i] = begin[i]
        if i < len(end) and end[i] is not None:
            e[i] = end[i]
        st[i] = strides[i] if i < len(strides) else 1  # unspecified strides are 1
    if any(not isinstance(x, int) for x in e):
        return None
    perm = [old_t.index(t) for t in _axes(new_l)]
    fields = {"begin": tuple(b[i] for i in perm), "end": tuple(e[i] for i in perm),
              "strides": tuple(st[i] for i in perm)}
    return _Inferred([new_l], [new_l], _with(attrs, **fields))


def _with_channel_params(rule, n_params):
    """A qnn operator's rule: the float operator's, with ``n_params`` scale / zero-point
    inputs laid out as ``"C"`` (Relay's Qnn*InferCorrectLayout)."""

    def qrule(attrs, new_in, old_in, types):
        k = len(old_in) - n_params
        r = rule(attrs, None if new_in is None else new_in[:k], old_in[:k], types[:k])
        if r is None:
            return None
        return _Inferred(r.ins + ["C"] * n_params, r.outs, r.attrs)
    return qrule


def _requantize(attrs, new_in, old_in, types):
    """Relay's RequantizeInferCorrectLayout: ``axis`` (the per-channel parameters' axis)
    follows its name into the new layout; with per-channel parameters a blocked layout is
    unblocked (the parameters cannot follow the block)."""
    if new_in is None or new_in[0] is None:
        if old_in[0] is None:
            return None
        return _Inferred([old_in[0]] + ["C"] * 4, [old_in[0]], attrs)
    if old_in[0] is None:
        return None
    ndim = len(types[0].shape)
    axis = attrs.axis % ndim
    old_dim = _name(_axes(old_in[0])[axis])
    scalar = all(isinstance(t, TensorType) and len(t.shape) == 0 for t in types[1:3])
    lay, new_axis, i = "", None, 0
    for tok in _axes(new_in[0]):
        if _name(tok) == old_dim:
            new_axis = i
        if _is_primal(tok):
            lay += tok
            i += 1
        elif scalar:
            lay += tok
            i += 1
    if new_axis is None:
        return None
    return _Inferred([lay] + ["C"] * 4, [lay], _with(attrs, axis=new_axis))


def _resize(attrs, new_in, old_in, types):
    """Relay's ResizeInferCorrectLayout: an image operator in its input's old layout follows
    the new one."""
    if (new_in is not None and new_in[0] is not None and old_in[0] is not None
            and new_in[0] != old_in[0] and attrs.layout == old_in[0]
            and len(_axes(new_in[0])) == len(_axes(old_in[0]))):
        attrs = _with(attrs, layout=new_in[0])
    return _Inferred([attrs.layout], [attrs.layout], attrs)


def _topk(attrs, new_in, old_in, types):
    """Relay's TopKInferCorrectLayout: ``axis`` follows its name; values and indices both in
    the input's layout."""
    if old_in[0] is None:
        return None
    n_out = 2 if attrs.ret_type == "both" else 1
    lay = old_in[0]
    if new_in is not None and new_in[0] is not None:
        dim = _name(_axes(old_in[0])[attrs.axis % len(types[0].shape)])
        if _factor_of(new_in[0], dim) > 0:
            return None  # top-k along a blocked axis: not one axis of the new layout
        attrs = _with(attrs, axis=_index_of(new_in[0], dim))
        lay = new_in[0]
    return _Inferred([lay], [lay] * n_out, attrs)


def _slice_like(attrs, new_in, old_in, types):
    """Relay's SliceLikeInferCorrectLayout: with both inputs in one new layout, ``axes``
    follow their names."""
    if old_in[0] is None or old_in[1] is None:
        return None
    if (new_in is not None and new_in[0] is not None and new_in[0] == new_in[1]
            and old_in[0] == old_in[1] and attrs.axes is not None):
        old_t = _axes(old_in[0])
        axes = [_index_of(new_in[0], _name(old_t[a])) for a in attrs.axes]
        if axes and all(a >= 0 for a in axes):
            return _Inferred([new_in[0]] * 2, [new_in[0]], _with(attrs, axes=axes))
    return _Inferred([old_in[0], old_in[1]], [old_in[1]], attrs)


def _pad(attrs, new_in, old_in, types):
    """``nn.pad`` in a permuted (unblocked) layout: ``pad_width`` moves with the axes; the pad
    value (second input) is a scalar."""
    if old_in[0] is None:
        return None
    lay = old_in[0]
    if (new_in is not None and new_in[0] is not None and new_in[0] != old_in[0]
            and all(_is_primal(t) for t in _axes(new_in[0]) + _axes(old_in[0]))
            and sorted(new_in[0]) == sorted(old_in[0])):
        old_t = _axes(old_in[0])
        width = [attrs.pad_width[old_t.index(t)] for t in _axes(new_in[0])]
        attrs = _with(attrs, pad_width=tuple(tuple(w) for w in width))
        lay = new_in[0]
    return _Inferred([lay, ""][:len(old_in)], [lay], attrs)


def _sim_quantize(attrs, new_in, old_in, types):
    """Relay's SimQuantizeLayout: the data in any layout, the scale and clip bounds "C"."""
    lay = new_in[0] if new_in is not None else old_in[0]
    return _Inferred([lay, "C", "C", "C"], [lay], attrs)


def _qnn_concat(attrs, new_in, old_in, types):
    """Relay's QnnConcatenateLayout: concatenate's rule for the data tuple; the scales and
    zero points (two per input, then the output's) are "C"."""
    n = len(types[0].fields)
    r = _concat(attrs, None if new_in is None else new_in[:n], old_in[:n], types[:1])
    if r is None:
        return None
    return _Inferred(r.ins + ["C"] * (2 * n + 2), r.outs, r.attrs)


# operator name -> rule; filled below and by register_infer_correct_layout
_BROADCAST_OPS = (
    "add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "power", "mod",
    "floor_mod", "trunc_mod", "maximum", "minimum", "left_shift", "right_shift", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal",
)
_CONV_OPS = (
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc",
)
_POOL_OPS = (
    "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
    "nn.avg_pool3d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
)
_REDUCE_OPS = ("sum", "max", "min", "mean", "prod", "all", "any", "argmax", "argmin",
               "variance", "std")
_ELEMWISE_EXTRA = ("cast", "clip", "nn.relu", "nn.leaky_relu", "copy", "annotation.stop_fusion",
                   "fixed_point_multiply", "cast_like", "zeros_like", "ones_like")

# single-input elementwise-pattern operators whose output is not laid out as their input
_NOT_ELEMWISE_LAYOUT = {"full"}  # a fill value: the shape comes from the attributes

_RULES: dict = {}
for _n in _BROADCAST_OPS:
    _RULES[_n] = _binary
for _n in _CONV_OPS:
    _RULES[_n] = _conv
for _n in _POOL_OPS:
    _RULES[_n] = _pool
for _n in _REDUCE_OPS:
    _RULES[_n] = _reduce
for _n in _ELEMWISE_EXTRA:
    _RULES[_n] = _elemwise
_RULES["nn.deformable_conv2d"] = _deformable
_RULES["concatenate"] = _concat
_RULES["transpose"] = _transpose
_RULES["nn.batch_norm"] = _axis_rule(4, 2)
_RULES["nn.layer_norm"] = _axis_rule(2)
_RULES["nn.instance_norm"] = _axis_rule(2)
_RULES["nn.l2_normalize"] = _axis_rule(0, list_axis=True)
_RULES["squeeze"] = _squeeze
_RULES["split"] = _split
_RULES["strided_slice"] = _strided_slice
_RULES["qnn.conv2d"] = _with_channel_params(_conv, 4)
_RULES["qnn.conv2d_transpose"] = _with_channel_params(_conv, 4)
for _n in ("qnn.add", "qnn.subtract", "qnn.mul"):
    _RULES[_n] = _with_channel_params(_binary, 6)
_RULES["qnn.requantize"] = _requantize
for _n in ("image.resize1d", "image.resize2d", "image.resize3d"):
    _RULES[_n] = _resize
_RULES["topk"] = _topk
_RULES["slice_like"] = _slice_like
_RULES["nn.pad"] = _pad
_RULES["relay.op.annotation.simulated_quantize"] = _sim_quantize
_RULES["qnn.concatenate"] = _qnn_concat
_RULES["qnn.avg_pool2d"] = _with_channel_params(_pool, 4)
_RULES["nn.dense"] = lambda attrs, new_in, old_in, types: _Inferred(["NC", "NC"], ["NC"], attrs)
_RULES["nn.contrib_dense_pack"] = lambda attrs, new_in, old_in, types: _Inferred(
    ["NC", attrs.weight_layout], ["NC"], attrs)


def _rule(op: Op):
    from ..op.op_attrs import get_op_attr

    user = get_op_attr(op.name, "FInferCorrectLayout")
    if user is not None:
        return _user_rule(user)
    rule = _RULES.get(op.name)
    if rule is None and op.pattern == OpPattern.ELEMWISE and op.num_inputs == 1 \
            and op.name not in _NOT_ELEMWISE_LAYOUT:
        return _elemwise
    return rule


def _user_rule(fn):
    def wrap(lays):
        return None if lays is None else [None if x is None else Layout(x) for x in lays]

    def rule(attrs, new_in, old_in, types):
        out = fn(attrs, wrap(new_in), wrap(old_in), types)
        if not hasattr(out, "input_layouts") or not hasattr(out, "output_layouts"):
            raise RelayError(f"ConvertLayout: the FInferCorrectLayout function {fn.__name__!r} "
                             f"returned {type(out).__name__}; expected an "
                             f"InferCorrectLayoutOutput (relay.transform.infer_layout_utils)")
        ins = [str(x) if x is not None else None for x in out.input_layouts]
        outs = [str(x) if x is not None else None for x in out.output_layouts]
        return _Inferred(ins, outs, out.new_attrs if out.new_attrs is not None else attrs)
    return rule


def _infer(op, attrs, new_in, old_in, types):
    rule = _rule(op)
    if rule is None:
        return None
    r = rule(attrs, new_in, old_in, types)
    if r is None or any(x is None for x in r.ins + r.outs):
        return None
    return r


# ---- convert hooks (FTVMConvertOpLayout) -------------------------------------------------------


class LayoutConfig:
    """Relay's ``LayoutConfig``: within ``with LayoutConfig(skip_layers=[i, ...])``, the
    convolutions numbered ``i`` (0-based, in the order ConvertLayout visits them, i.e. the
    program's dataflow order) keep their layouts."""

    current = None

    def __init__(self, skip_layers=None):
        self.skip_counter = 0
        self.skip_layers = list(skip_layers) if skip_layers is not None else []

    def check_skip(self) -> bool:
        skip = self.skip_counter in self.skip_layers
        self.skip_counter += 1
        return skip

    def reset(self, skip_layers=None):
        self.skip_counter = 0
        self.skip_layers = list(skip_layers) if skip_layers is not None else []

    def __enter__(self):
        self._old = LayoutConfig.current
        LayoutConfig.current = self
        return self

    def __exit__(self, *exc):
        LayoutConfig.current = self._old


def _channels(t, layout: str, axis: str = "C"):
    """The size of primal ``axis`` of a tensor of type ``t`` in ``layout`` (its outer part
    times its block where it is blocked)."""
    n = t.shape[_index_of(layout, axis)]
    f = _factor_of(layout, axis)
    return n * f if isinstance(n, int) and f > 0 else n


def _is_depthwise(data_t, data_layout, weight_t, kernel_layout, groups) -> bool:
    """One filter per input channel (Relay's is_depthwise_conv2d)."""
    ic = data_t.shape[data_layout.index("C")]
    oc = weight_t.shape[kernel_layout.index("O")]
    return groups > 1 and ic == groups == oc


def _desired_pair(name, desired):
    if len(desired) != 2:
        raise RelayError(f"ConvertLayout: {name} needs a desired layout for its data and its "
                         f"kernel, got {list(desired)}")
    d, k = (str(x) for x in desired)
    if d == "default":
        raise RelayError(f"ConvertLayout: {name}: the data layout cannot be 'default'")
    return d, k


def _convert_conv2d(attrs, args, types, desired, name="nn.conv2d"):
    """Relay's convert_conv2d (``qnn.conv2d``: the same with ``name``; no blocked layouts)."""
    cfg = LayoutConfig.current
    if cfg is not None and cfg.check_skip():
        return None
    d, k = _desired_pair(name, desired)
    tile = re.fullmatch(r"NCHW(\d+)c", d)
    if k != "default" and not tile:
        return make_call(name, list(args), **{**dict(attrs.items()), "data_layout": d,
                                               "kernel_layout": k})
    if tile and name != "nn.conv2d":
        raise RelayError(f"ConvertLayout: {name} to the blocked layout {d} is not supported "
                         "(NCHW, NHWC, HWNC)")
    if tile:
        if k == "default":
            raise RelayError(f"ConvertLayout: {name} to {d}: give the blocked kernel layout "
                             "(e.g. OIHW16i16o), not 'default'")
        ib = int(tile.group(1))
        kb = re.fullmatch(r"OIHW(\d+)i(\d+)o", k)
        if kb is None or int(kb.group(1)) != ib:
            raise RelayError(f"ConvertLayout: {name} to {d} needs the kernel layout "
                             f"OIHW{ib}i<n>o, got {k!r}")
        ob = int(kb.group(2))
        c = _channels(types[0], attrs.data_layout)
        o = _channels(types[1], attrs.kernel_layout, "O")
        if (attrs.groups != 1 or not isinstance(c, int) or not isinstance(o, int)
                or c % ib or o % ob):
            return None  # grouped, or blocks that do not divide the channels: keep it
        fields = {**dict(attrs.items()), "data_layout": d, "kernel_layout": k,
                  "out_layout": f"NCHW{ob}c"}
        return make_call("nn.contrib_conv2d_NCHWc", list(args), **fields)
    if d == "NCHW":
        k = "OIHW"
    elif d == "NHWC":
        k = "HWOI" if _is_depthwise(types[0], attrs.data_layout, types[1], attrs.kernel_layout,
                                    attrs.groups) else "HWIO"
    elif d == "HWNC":
        k = "HWOI"
    else:
        raise RelayError(f"ConvertLayout: {name} to data layout {d!r} with the default kernel "
                         "layout is not supported (NCHW, NHWC, HWNC, or give the kernel layout)")
    return make_call(name, list(args), **{**dict(attrs.items()), "data_layout": d,
                                           "kernel_layout": k})


def _convert_conv_default(name, defaults):
    def hook(attrs, args, types, desired):
        d, k = _desired_pair(name, desired)
        if k == "default":
            if d not in defaults:
                raise RelayError(f"ConvertLayout: {name} to data layout {d!r} with the default "
                                 f"kernel layout is not supported ({', '.join(defaults)}, or "
                                 "give the kernel layout)")
            k = defaults[d]
        return make_call(name, list(args), **{**dict(attrs.items()), "data_layout": d,
                                               "kernel_layout": k})
    return hook


def _convert_pool(name):
    def hook(attrs, args, types, desired):
        lay = str(desired[0])
        f = _factor_of(lay, "C")
        if f > 0 and types and isinstance(types[0], TensorType):
            c = _channels(types[0], attrs.layout)
            if not isinstance(c, int) or c % f:
                return None  # the block does not divide the channels: keep the pooling
        return make_call(name, list(args), **{**dict(attrs.items()), "layout": lay,
                                               "out_layout": lay})
    return hook


_CONVERT: dict = {
    "nn.conv2d": _convert_conv2d,
    "nn.conv2d_transpose": _convert_conv_default("nn.conv2d_transpose",
                                                 {"NCHW": "IOHW", "NHWC": "HWIO"}),
    "nn.conv3d": _convert_conv_default("nn.conv3d", {"NCDHW": "OIDHW", "NDHWC": "DHWIO"}),
    "nn.conv3d_transpose": _convert_conv_default("nn.conv3d_transpose",
                                                 {"NCDHW": "IODHW", "NDHWC": "DHWIO"}),
    "nn.deformable_conv2d": _convert_conv_default("nn.deformable_conv2d",
                                                  {"NCHW": "OIHW", "NHWC": "HWIO"}),
}
for _n in ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d"):
    _CONVERT[_n] = _convert_pool(_n)
_CONVERT["qnn.conv2d"] = lambda a, x, t, d: _convert_conv2d(a, x, t, d, name="qnn.conv2d")
_CONVERT["qnn.conv2d_transpose"] = _convert_conv_default("qnn.conv2d_transpose",
                                                         {"NCHW": "IOHW", "NHWC": "HWIO"})


def _convert_resize(name):
    def hook(attrs, args, types, desired):
        return make_call(name, list(args), **{**dict(attrs.items()), "layout": str(desired[0])})
    return hook


_CONVERT["image.resize2d"] = _convert_resize("image.resize2d")
_CONVERT["qnn.avg_pool2d"] = _convert_pool("qnn.avg_pool2d")


# ---- the rewrite -------------------------------------------------------------------------------


class _Convert(Rewriter):
    """``memo[node]`` is the rewritten value (in its new layout); ``lay[node]`` its
    ``(old, new)`` layouts, or a list of them for a tuple."""

    def __init__(self, desired):
        super().__init__()
        self.desired = desired
        self.lay: dict = {}
        self.cache: dict = {}

    # layout_transform with expand_dims for a lower-rank source, one per (value, src, dst)
    def transform(self, value, src, dst):
        if src is None or dst is None or src == dst:
            return value
        key = (id(value), src, dst)
        hit = self.cache.get(key)
        if hit is not None and hit[0] is value:
            return hit[1]
        out = value
        if _ndim_primal(src) < _ndim_primal(dst):
            t = getattr(value, "_checked_type", None)
            if isinstance(t, TensorType) and all(d == 1 for d in t.shape):
                # a scalar or all-ones tensor broadcasts against any layout (Relay's IsScalar)
                self.cache[key] = (value, value)
                return value
            n = _ndim_primal(dst) - _ndim_primal(src)
            src = _expand_primal(src, dst)
            out = make_call("expand_dims", [out], axis=0, num_newaxis=n)
        if src != dst:
            out = make_call("layout_transform", [out], src_layout=src, dst_layout=dst)
        self.cache[key] = (value, out)
        return out

    def realize(self, node):
        """``node``'s rewritten value back in its old layout."""
        value = self.memo[node]
        info = self.lay.get(node)
        return self._realize(value, info)

    def _realize(self, value, info):
        if info is None:
            return value
        if isinstance(info, list):
            if type(value) is Tuple:
                fields = [self._realize(f, i) for f, i in zip(value.fields, info)]
                if all(a is b for a, b in zip(fields, value.fields)):
                    return value
                return Tuple(fields, value.span)
            return value
        old, new = info
        return self.transform(value, new, old)

    def post(self, orig, new):
        t = type(orig)
        if t is Call and isinstance(orig.op, Op):
            return self._call(orig)
        if t is Tuple:
            infos = [self.lay.get(f) for f in orig.fields]
            if any(i is not None for i in infos):
                self.lay[orig] = infos
            return new
        if t is TupleGetItem:
            src = orig.tuple_value
            value, info = self.memo[src], self.lay.get(src)
            if type(value) is Tuple and isinstance(info, list):
                field = value.fields[orig.index]
                if info[orig.index] is not None:
                    self.lay[orig] = info[orig.index]
                return field
            if type(value) is Tuple:
                return value.fields[orig.index]
            return new
        kids = children(orig)
        return rebuild(orig, [self.realize(k) for k in kids])

    def _fallback(self, orig):
        return rebuild(orig, [self.realize(k) for k in children(orig)])

    def _call(self, orig):
        # flatten the arguments (one level of tuple, as Relay)
        values, old_prd, new_prd = [], [], []
        args = []
        for a in orig.args:
            v, info = self.memo[a], self.lay.get(a)
            if type(v) is Tuple:
                infos = info if isinstance(info, list) else [None] * len(v.fields)
                for f, i in zip(v.fields, infos):
                    values.append(f)
                    old_prd.append(i[0] if i else None)
                    new_prd.append(i[1] if i else None)
                args.append(v)
            else:
                values.append(v)
                old_prd.append(info[0] if isinstance(info, tuple) else None)
                new_prd.append(info[1] if isinstance(info, tuple) else None)
                args.append(v)
        types = [a.checked_type for a in orig.args]
        direct = self._direct(orig, types)
        if direct is not None:
            return direct
        first = _infer(orig.op, orig.attrs, None, old_prd, types)
        if first is None:
            return self._fallback(orig)
        old_cur, old_out = first.ins, first.outs
        if len(old_cur) != len(values):
            return self._fallback(orig)
        new_inf = [n if n is not None else c for n, c in zip(new_prd, old_cur)]
        old_inf = [o if o is not None else c for o, c in zip(old_prd, old_cur)]
        new_call = self._with_new_layouts(orig, first.attrs, args, types)
        if not isinstance(new_call.op, Op):
            return self._fallback(orig)
        second = _infer(new_call.op, new_call.attrs, new_inf, old_inf, types)
        if second is None:
            return self._fallback(orig)
        new_cur, new_out = second.ins, second.outs
        if len(new_out) != len(old_out) or len(new_cur) != len(values):
            return self._fallback(orig)

        def move(x, i):
            if old_cur[i] == old_prd[i]:
                return self.transform(x, new_prd[i], new_cur[i])
            if old_prd[i] is not None:
                x = self.transform(x, new_prd[i], old_prd[i])
            return self.transform(x, old_cur[i], new_cur[i])

        out_args, k = [], 0
        for a in new_call.args:
            if type(a) is Tuple:
                fields = []
                for f in a.fields:
                    fields.append(move(f, k))
                    k += 1
                out_args.append(Tuple(fields, a.span))
            else:
                out_args.append(move(a, k))
                k += 1
        call = Call(new_call.op, out_args, second.attrs, (), orig.span)
        if isinstance(orig.checked_type, TupleType):
            n = len(orig.checked_type.fields)
            self.lay[orig] = [(old_out[i], new_out[i]) if i < len(new_out) else None
                              for i in range(n)]
            return Tuple([TupleGetItem(call, i) for i in range(n)])
        self.lay[orig] = (old_out[0], new_out[0])
        return call

    def _direct(self, orig, types):
        """A replacement made without layout rules (AlterOpLayout's hooks of operators that
        have none), else None."""
        return None

    def _with_new_layouts(self, orig, attrs, args, types):
        from ..op.op_attrs import get_op_attr

        name = orig.op.name
        hook = get_op_attr(name, "FTVMConvertOpLayout") or _CONVERT.get(name)
        out = None
        if hook is not None and name in self.desired:
            out = hook(attrs, list(args), _tinfos(types), list(self.desired[name]))
        if out is None:
            return Call(orig.op, list(args), attrs, (), orig.span)
        if type(out) is not Call:
            raise RelayError(f"ConvertLayout: the convert hook of {name} returned "
                             f"{type(out).__name__}; expected a call of an operator")
        return out


class _AlterWithHooks(_Convert):
    """AlterOpLayout with users' ``FTVMAlterOpLayout`` hooks (Relay's alter_op_layout.cc):
    the same walk, the hook deciding each call's new form."""

    def __init__(self):
        super().__init__({})

    def _hook(self, orig, attrs, args, types):
        from ..op.op_attrs import get_op_attr

        fn = get_op_attr(orig.op.name, "FTVMAlterOpLayout")
        out = None if fn is None else fn(attrs, list(args), _tinfos(types), orig.checked_type)
        if out is None:
            return Call(orig.op, list(args), attrs, (), orig.span)
        if type(out) is not Call:
            raise RelayError(f"AlterOpLayout: the FTVMAlterOpLayout hook of {orig.op.name} "
                             f"returned {type(out).__name__}; expected a call of an operator")
        return Call(out.op, out.args, out.attrs, out.type_args, orig.span)

    def _direct(self, orig, types):
        from ..op.op_attrs import get_op_attr

        if get_op_attr(orig.op.name, "FTVMAlterOpLayout") is None or _rule(orig.op) is not None:
            return None
        args = [self.realize(a) for a in orig.args]
        return self._hook(orig, orig.attrs, args, types)

    def _with_new_layouts(self, orig, attrs, args, types):
        return self._hook(orig, attrs, args, types)


def _run(rewriter, func, mod):
    """``func`` with its body rewritten by ``rewriter`` (a :class:`_Convert`) and the result
    back in its old layouts; typed. ``func`` itself when nothing changed."""
    from ..ir.expr import Function
    from ..typing.infer import infer_expr

    infer_expr(func, mod)
    rewriter.rewrite(func.body)
    body = rewriter.realize(func.body)
    if body is func.body:
        return func
    out = Function(func.params, body, func.ret_type, func.type_params, func.attrs, func.span)
    infer_expr(out, mod)
    return out


def alter_with_hooks(func, mod=None):
    """AlterOpLayout's rewrite by the users' ``FTVMAlterOpLayout`` hooks on one function
    (operators without a hook keep their form; layouts are carried as in ConvertLayout)."""
    return _run(_AlterWithHooks(), func, mod)


def _tinfos(types):
    """The arguments' tensor types, tuples flattened (what Relay's hooks receive)."""
    out = []
    for t in types:
        out.extend(t.fields if isinstance(t, TupleType) else [t])
    return out


def convert_layout(func, desired, mod=None):
    """ConvertLayout on one function (``desired``: operator name -> list of layouts)."""
    from ._rewrite import called_ops
    from .canonicalize import canonicalize_ops

    if not any(name in desired for name in called_ops(func)):
        return func  # nothing is converted, so no layout changes anywhere
    return _run(_Convert(desired), canonicalize_ops(func), mod)


__all__ = ["Layout", "LayoutConfig", "alter_with_hooks", "convert_layout", "layout"]
