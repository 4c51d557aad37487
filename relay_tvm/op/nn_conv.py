"""Convolutions (tvm.relay.nn): ``nn.conv1d``, ``nn.conv2d``, ``nn.conv3d``,
``nn.conv1d_transpose``, ``nn.conv2d_transpose``, ``nn.conv3d_transpose``.

Layouts are any permutation of the batch ``N``, channel ``C`` and spatial letters (``W``, ``HW``,
``DHW``) for data, and of ``O``, ``I`` and the spatial letters for kernels: NCHW/OIHW, NHWC/HWIO,
NHWC/HWOI (depthwise), ... ``groups`` splits the channels (``groups == C`` is a depthwise
convolution). Padding follows Relay: 1 value, one per spatial axis, or all befores then all
afters (``(top, left, bottom, right)`` in 2-D). The TE computes are ``topi.nn.conv`` (every
layout and group count) and ``topi.nn.group_conv{1,2}d_transpose_ncw/nchw``.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, IncompleteType, TensorType
from ._common import require_equal_dims, shape_str, tensor_args
from ._nn_common import (
    SPATIAL,
    check_operand_dtypes,
    check_positive,
    check_rank,
    check_window,
    dims_match,
    int_seq,
    layout_axes,
    np_acc,
    np_operands,
    ntuple,
    out_size,
    pad_before_after,
)
from .registry import OpPattern, make_call, register_op

_DEFAULT_LAYOUT = {1: ("NCW", "OIW"), 2: ("NCHW", "OIHW"), 3: ("NCDHW", "OIDHW")}


def _conv_attrs(nd: int, transpose: bool = False):
    data_layout, kernel_layout = _DEFAULT_LAYOUT[nd]
    if transpose:
        kernel_layout = "I" + "O" + kernel_layout[2:]
    ones = (1,) * nd
    fields = [
        F("strides", "ints", ones),
        F("padding", "ints", (0,) * nd),
        F("dilation", "ints", ones),
        F("groups", "int", 1),
        F("channels", "int?", None),
        F("kernel_size", "ints?", None),
        F("data_layout", "str", data_layout),
        F("kernel_layout", "str", kernel_layout),
        F("out_layout", "str", ""),
    ]
    if transpose:
        fields.append(F("output_padding", "ints", (0,) * nd))
    fields.append(F("out_dtype", "dtype", ""))
    key = f"relay.attrs.Conv{nd}D{'Transpose' if transpose else ''}Attrs"
    return key, fields


def _layouts(attrs, nd, op):
    sp = SPATIAL[nd]
    dl = layout_axes(attrs.data_layout, "NC" + sp, op, "data_layout")
    kl = layout_axes(attrs.kernel_layout, "OI" + sp, op, "kernel_layout")
    if attrs.out_layout not in ("", attrs.data_layout):
        raise TypeInferenceError(
            f"{op}: out_layout {attrs.out_layout!r} differs from data_layout "
            f"{attrs.data_layout!r}; only the data layout is supported"
        )
    return dl, kl


def _out_channels(op, transpose, c, i, o, groups, shapes):
    """Output channels of a convolution (``o``) or a transposed one (``o * groups``), after
    checking the weight's input channels ``i`` against the data channels ``c``."""
    if transpose:
        if not dims_match(i, c):
            raise TypeInferenceError(
                f"{op}: weight input channels {i} must equal data channels {c}; {shapes}"
            )
        return o * groups if isinstance(o, int) else o
    if isinstance(c, int) and c % groups:
        raise TypeInferenceError(
            f"{op}: data channels {c} are not divisible by groups={groups}; {shapes}")
    if isinstance(c, int) and isinstance(i, int) and c // groups != i:
        raise TypeInferenceError(
            f"{op}: weight input channels {i} must equal data channels / groups = "
            f"{c}/{groups} = {c // groups}; {shapes}"
        )
    if not isinstance(c, AnyDim) and not isinstance(i, AnyDim):
        need = f" = {i * groups}" if isinstance(i, int) else ""
        require_equal_dims(c, i * groups,
                           f"data channels must equal weight input channels x groups "
                           f"({i} x {groups}{need})")
    if isinstance(o, int) and o % groups:
        raise TypeInferenceError(
            f"{op}: output channels {o} are not divisible by groups={groups}; {shapes}"
        )
    return o


def _transposed_size(op, size, strides, before, after, ks, dil, opad):
    """Spatial output sizes of a transposed convolution (symbolic sizes pass through)."""
    for p, s, d in zip(opad, strides, dil):
        if p >= max(s, d):
            raise TypeInferenceError(
                f"{op}: output_padding {opad} must be smaller than strides {strides} "
                f"or dilation {dil}"
            )
    return [
        (x - 1) * s - b - a + (k - 1) * d + 1 + p if isinstance(x, int) else x
        for x, s, b, a, k, d, p in zip(size, strides, before, after, ks, dil, opad)
    ]


def _conv_rel(nd: int, transpose: bool):
    op = f"nn.conv{nd}d" + ("_transpose" if transpose else "")
    sp = SPATIAL[nd]

    def rel(types, attrs):
        data, weight = types
        if isinstance(data, IncompleteType):
            return None
        (data,) = tensor_args([data], ("data",), op)
        dl, kl = _layouts(attrs, nd, op)
        check_rank(data, nd + 2, op, "data", attrs.data_layout)
        n, c = data.shape[dl["N"]], data.shape[dl["C"]]
        size = [data.shape[dl[s]] for s in sp]
        groups = attrs.groups
        if groups < 1:
            raise TypeInferenceError(f"{op}: groups must be >= 1, got {groups}")
        strides = ntuple(attrs.strides, nd, "strides", op)
        dil = ntuple(attrs.dilation, nd, "dilation", op)
        before, after = pad_before_after(attrs.padding, nd, op)
        check_window(op, strides, dil, before, after)
        inferred = None
        # Kernel letters: for a convolution O = output channels, I = input channels / groups;
        # for a transposed one (Relay's IOHW) I = input channels, O = output channels / groups.
        if isinstance(weight, IncompleteType):
            if attrs.channels is None or attrs.kernel_size is None:
                return None
            ks = ntuple(attrs.kernel_size, nd, "kernel_size", op)
            if transpose:
                dims = {"I": c, "O": attrs.channels // groups}
            else:
                dims = {"O": attrs.channels, "I": c // groups if isinstance(c, int) else c}
            dims.update(zip(sp, ks))
            weight = TensorType(tuple(dims[ch] for ch in attrs.kernel_layout), data.dtype)
            inferred = {1: weight}
        else:
            (weight,) = tensor_args([weight], ("weight",), op)
            check_rank(weight, nd + 2, op, "weight", attrs.kernel_layout)
            check_operand_dtypes(data.dtype, weight.dtype, attrs.out_dtype, ("data", "weight"),
                                 op)
        o, i = weight.shape[kl["O"]], weight.shape[kl["I"]]
        ks = [weight.shape[kl[s]] for s in sp]
        shapes = (f"data shape {shape_str(data.shape)} ({attrs.data_layout}), weight shape "
                  f"{shape_str(weight.shape)} ({attrs.kernel_layout})")
        out_c = _out_channels(op, transpose, c, i, o, groups, shapes)
        if isinstance(c, int) and c % groups:
            raise TypeInferenceError(f"{op}: data channels {c} are not divisible by groups={groups}")
        if attrs.channels is not None and isinstance(out_c, int) and out_c != attrs.channels:
            raise TypeInferenceError(
                f"{op}: channels={attrs.channels} but the weight gives {out_c} output channels; "
                f"{shapes}"
            )
        if attrs.kernel_size is not None and all(isinstance(k, int) for k in ks):
            want = ntuple(attrs.kernel_size, nd, "kernel_size", op)
            if tuple(ks) != want:
                raise TypeInferenceError(
                    f"{op}: kernel_size={want} but the weight has kernel {tuple(ks)}; {shapes}"
                )
        if transpose:
            opad = ntuple(attrs.output_padding, nd, "output_padding", op)
            out_sp = _transposed_size(op, size, strides, before, after, ks, dil, opad)
        else:
            out_sp = [
                out_size(x, k, b, a, s, d)
                for x, k, b, a, s, d in zip(size, ks, before, after, strides, dil)
            ]
        check_positive(out_sp, sp, op, data, f" for the dilated kernel {tuple(ks)} with "
                       f"padding {attrs.padding}")
        dims = {"N": n, "C": out_c, **dict(zip(sp, out_sp))}
        out = TensorType(tuple(dims[ch] for ch in attrs.data_layout), attrs.out_dtype or data.dtype)
        return (out, inferred) if inferred else out

    return rel


def _to_canonical(data, weight, attrs, nd, kernel_letters):
    """Transpose data to N, C, spatial... and the weight to ``kernel_letters`` + spatial."""
    sp = SPATIAL[nd]
    data = data.transpose([attrs.data_layout.index(ch) for ch in "NC" + sp])
    weight = weight.transpose([attrs.kernel_layout.index(ch) for ch in kernel_letters + sp])
    return data, weight


def _from_canonical(out, attrs, nd):
    canon = "NC" + SPATIAL[nd]
    return out.transpose([canon.index(ch) for ch in attrs.data_layout])


def conv_nd_reference(x, w, strides, dilation, before, after, groups):
    """Direct N-d convolution in NumPy: ``x`` (N, C, *S), ``w`` (O, C/groups, *K); im2col (one
    strided view per kernel offset) then one matrix product per group, in ``x``'s dtype."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + list(zip(before, after)))
    n = x.shape[0]
    o, i = w.shape[:2]
    k = w.shape[2:]
    osz = [(x.shape[2 + d] - (k[d] - 1) * dilation[d] - 1) // strides[d] + 1 for d in range(nd)]
    xg = x.reshape(n, groups, i, *x.shape[2:])
    cols = np.stack([
        xg[(slice(None),) * 3 + tuple(
            slice(off[d] * dilation[d], off[d] * dilation[d] + strides[d] * (osz[d] - 1) + 1,
                  strides[d])
            for d in range(nd)
        )]
        for off in itertools.product(*[range(kk) for kk in k])
    ], axis=3)  # (N, G, I, prod(K), *osz)
    # explicit sizes, not -1: with 0 input channels the -1 would be ambiguous
    ik = i * int(np.prod(k, dtype=np.int64))
    cols = cols.reshape(n, groups, ik, int(np.prod(osz, dtype=np.int64)))
    wmat = w.reshape(groups, o // groups, ik)  # (G, O/G, I * prod(K)), same (I, K) order
    return np.matmul(wmat[None], cols).reshape(n, o, *osz)


def conv_transpose_nd_reference(x, w, strides, dilation, before, after, output_padding, groups):
    """Transposed N-d convolution in NumPy: ``x`` (N, C, *S), ``w`` (C, O/groups, *K); each
    input element scatters ``w`` into the output (the gradient of a convolution), then
    ``before`` is cropped at the start and ``after - output_padding`` at the end."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    size = x.shape[2:]
    k = w.shape[2:]
    opg = w.shape[1]
    full = [(size[d] - 1) * strides[d] + (k[d] - 1) * dilation[d] + 1 + output_padding[d]
            for d in range(nd)]
    xg = x.reshape(n, groups, c // groups, *size)
    wg = w.reshape(groups, c // groups, opg, *k)
    out = np.zeros((n, groups, opg, *full), dtype=x.dtype)
    for off in itertools.product(*[range(kk) for kk in k]):
        window = tuple(
            slice(off[d] * dilation[d], off[d] * dilation[d] + strides[d] * (size[d] - 1) + 1,
                  strides[d])
            for d in range(nd)
        )
        out[(slice(None),) * 3 + window] += np.einsum(
            "ngi...,gio->ngo...", xg, wg[(slice(None),) * 3 + off]
        )
    crop = tuple(slice(before[d], full[d] - after[d]) for d in range(nd))
    return out[(slice(None),) * 3 + crop].reshape(n, groups * opg, *[s.stop - s.start for s in crop])


def _conv_ref(nd: int, transpose: bool):
    op = f"nn.conv{nd}d" + ("_transpose" if transpose else "")

    def ref(args, attrs, out_type):
        data, weight = np_operands(args, out_type.dtype)
        acc = np_acc(out_type.dtype if data.dtype.kind in "iu" else data.dtype)
        data, weight = _to_canonical(data, weight, attrs, nd, "IO" if transpose else "OI")
        data, weight = data.astype(acc), weight.astype(acc)
        strides = ntuple(attrs.strides, nd, "strides", op)
        dil = ntuple(attrs.dilation, nd, "dilation", op)
        before, after = pad_before_after(attrs.padding, nd, op)
        if transpose:
            opad = ntuple(attrs.output_padding, nd, "output_padding", op)
            out = conv_transpose_nd_reference(data, weight, strides, dil, before, after, opad,
                                              attrs.groups)
        else:
            out = conv_nd_reference(data, weight, strides, dil, before, after, attrs.groups)
        return _from_canonical(out, attrs, nd).astype(out_type.dtype)

    return ref


def _conv_compute(nd: int):
    op = f"nn.conv{nd}d"

    def compute(attrs, inputs, out_type):
        from tvm import topi

        data, weight = inputs
        before, after = pad_before_after(attrs.padding, nd, op)
        dl, kl = attrs.data_layout, attrs.kernel_layout
        sp = SPATIAL[nd]
        # topi.nn.conv pairs the spatial axes by their order in each layout: with W before H
        # in either (NCWH, OIWH) it convolved H with the kernel's W, a silently wrong result.
        # Such layouts run as NC<sp>/OI<sp> between transposes.
        reorder = any("".join(ch for ch in lay if ch in sp) != sp for lay in (dl, kl))
        if reorder:
            data = topi.transpose(data, [dl.index(ch) for ch in "NC" + sp])
            weight = topi.transpose(weight, [kl.index(ch) for ch in "OI" + sp])
            dl, kl = "NC" + sp, "OI" + sp
        out = topi.nn.conv(
            data, weight, list(ntuple(attrs.strides, nd, "strides", op)), list(before + after),
            list(ntuple(attrs.dilation, nd, "dilation", op)), attrs.groups, dl, kl,
            out_type.dtype,
        )
        if reorder:
            out = topi.transpose(out, [("NC" + sp).index(ch) for ch in attrs.data_layout])
        return out

    return compute


def _conv_transpose_compute(nd: int):
    op = f"nn.conv{nd}d_transpose"
    sp = SPATIAL[nd]

    def compute(attrs, inputs, out_type):
        from tvm import topi

        data, weight = inputs
        # topi's transposed convolutions take NC[H]W data and IO[H]W kernels.
        canon_d, canon_k = "NC" + sp, "IO" + sp
        if attrs.data_layout != canon_d:
            data = topi.transpose(data, [attrs.data_layout.index(ch) for ch in canon_d])
        if attrs.kernel_layout != canon_k:
            weight = topi.transpose(weight, [attrs.kernel_layout.index(ch) for ch in canon_k])
        dil = ntuple(attrs.dilation, nd, "dilation", op)
        if any(d != 1 for d in dil):
            weight = topi.nn.dilate(weight, (1, 1, *dil))
        strides = ntuple(attrs.strides, nd, "strides", op)
        before, after = pad_before_after(attrs.padding, nd, op)
        opad = ntuple(attrs.output_padding, nd, "output_padding", op)
        if nd == 1:
            out = topi.nn.group_conv1d_transpose_ncw(
                data, weight, strides[0], (before[0], after[0]), out_type.dtype, opad[0],
                attrs.groups,
            ) if attrs.groups != 1 else topi.nn.conv1d_transpose_ncw(
                data, weight, strides[0], (before[0], after[0]), out_type.dtype, opad[0]
            )
        elif nd == 2:
            out = topi.nn.group_conv2d_transpose_nchw(
                data, weight, strides, before + after, out_type.dtype, opad, attrs.groups
            )
        else:
            out = topi.nn.group_conv3d_transpose_ncdhw(
                data, weight, strides, before + after, out_type.dtype, opad, attrs.groups
            )
        if attrs.data_layout != canon_d:
            out = topi.transpose(out, [canon_d.index(ch) for ch in attrs.data_layout])
        return out

    return compute


def _general_layouts(attrs) -> bool:
    """Whether a convolution's layouts need the primal-layout path: a blocked data / kernel
    layout (``NCHW16c``, ``OIHW16i16o``) or an ``out_layout`` other than the data layout."""
    ol = attrs.out_layout or attrs.data_layout
    return (ol != attrs.data_layout
            or any(not c.isupper() for c in attrs.data_layout + attrs.kernel_layout))


def _primal(layout: str) -> str:
    return "".join(c for c in layout if c.isupper())


def _primal_attrs(attrs):
    from ..ir.attrs import Attrs

    return Attrs(attrs.type_key, {**dict(attrs.items()), "data_layout": _primal(attrs.data_layout),
                                  "kernel_layout": _primal(attrs.kernel_layout),
                                  "out_layout": ""})


def _in_layout(t: TensorType, src: str, dst: str, op: str, what: str) -> TensorType:
    """``t`` (in layout ``src``) as the type of the same tensor in layout ``dst`` (the
    ``layout_transform`` relation, naming the operator and the tensor in errors)."""
    from types import SimpleNamespace

    from .shape_ops import _layout_rel

    try:
        return _layout_rel([t], SimpleNamespace(src_layout=src, dst_layout=dst))
    except TypeInferenceError as e:
        raise TypeInferenceError(f"{op}: {what} in layout {src!r}: {e}") from None


def _with_general_layouts(nd: int, rel):
    """The convolution relation for blocked layouts (Relay's conv relations read any layout
    whose primal axes are N, C and the spatial axes): the types are taken to the primal
    layouts, inferred there, and the output (and an inferred weight) taken to ``out_layout``
    (else the data layout) and the kernel layout."""
    op = f"nn.conv{nd}d"
    sp = SPATIAL[nd]

    def wrapped(types, attrs):
        if not _general_layouts(attrs):
            return rel(types, attrs)
        data, weight = types
        if isinstance(data, IncompleteType):
            return None
        (data,) = tensor_args([data], ("data",), op)
        dl, kl = attrs.data_layout, attrs.kernel_layout
        ol = attrs.out_layout or dl
        pd, pk = _primal(dl), _primal(kl)
        for lay, letters, what in ((dl, "NC" + sp, "data_layout"), (kl, "OI" + sp, "kernel_layout"),
                                   (ol, "NC" + sp, "out_layout")):
            if sorted(_primal(lay)) != sorted(letters):
                raise TypeInferenceError(f"{op}: {what} {lay!r}: expected the axes of "
                                         f"{letters!r} (a permutation, possibly blocked)")
        data_p = _in_layout(data, dl, pd, op, "data")
        if not isinstance(weight, IncompleteType):
            (weight,) = tensor_args([weight], ("weight",), op)
            weight = _in_layout(weight, kl, pk, op, "weight")
        res = rel([data_p, weight], _primal_attrs(attrs))
        if res is None:
            return None
        out, inferred = res if isinstance(res, tuple) else (res, None)
        out = _in_layout(out, pd, ol, op, "output")
        if inferred:
            inferred = {1: _in_layout(inferred[1], pk, kl, op, "weight")}
            return out, inferred
        return out

    return wrapped


def _general_compute(compute):
    def wrapped(attrs, inputs, out_type):
        if not _general_layouts(attrs):
            return compute(attrs, inputs, out_type)
        from tvm import topi

        data, weight = inputs
        dl, kl = attrs.data_layout, attrs.kernel_layout
        pd, pk = _primal(dl), _primal(kl)
        data = topi.layout_transform(data, dl, pd) if dl != pd else data
        weight = topi.layout_transform(weight, kl, pk) if kl != pk else weight
        out = compute(_primal_attrs(attrs), [data, weight], out_type)
        ol = attrs.out_layout or dl
        return topi.layout_transform(out, pd, ol) if ol != pd else out
    return wrapped


def _general_ref(ref):
    def wrapped(args, attrs, out_type):
        if not _general_layouts(attrs):
            return ref(args, attrs, out_type)
        from .shape_ops import layout_to

        dl, kl = attrs.data_layout, attrs.kernel_layout
        pd, pk = _primal(dl), _primal(kl)
        data = layout_to(np.asarray(args[0]), dl, pd)
        weight = layout_to(np.asarray(args[1]), kl, pk)
        out = ref([data, weight], _primal_attrs(attrs), out_type)
        return layout_to(out, pd, attrs.out_layout or dl)
    return wrapped


_DOCS = {
    1: "1-D convolution (topi.nn.conv): NCW/OIW, NWC/WIO, ...; groups, dilation, padding.",
    2: "2-D convolution (topi.nn.conv): NCHW/OIHW, NHWC/HWIO, NHWC/HWOI (depthwise), groups, "
       "dilation, asymmetric padding (top, left, bottom, right).",
    3: "3-D convolution (topi.nn.conv): NCDHW/OIDHW, NDHWC/DHWIO, groups, dilation, padding.",
}

for _nd in (1, 2, 3):
    register_op(
        f"nn.conv{_nd}d",
        num_inputs=2,
        arguments=("data", "weight"),
        attrs=_conv_attrs(_nd),
        rel=_with_general_layouts(_nd, _conv_rel(_nd, False)),
        ref=_general_ref(_conv_ref(_nd, False)),
        compute=_general_compute(_conv_compute(_nd)),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
        doc=_DOCS[_nd],
        level=2,
        schedule=f"conv{_nd}d",
    )

for _nd in (1, 2, 3):
    register_op(
        f"nn.conv{_nd}d_transpose",
        num_inputs=2,
        arguments=("data", "weight"),
        attrs=_conv_attrs(_nd, transpose=True),
        rel=_conv_rel(_nd, True),
        ref=_conv_ref(_nd, True),
        compute=_conv_transpose_compute(_nd),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
        doc=f"Transposed {_nd}-D convolution (topi.nn.group_conv{_nd}d_transpose); weight "
            f"{'IO' + SPATIAL[_nd]} = (in channels, out channels / groups, kernel...).",
        level=2,
        schedule=f"conv{_nd}d_transpose",
    )


def _tup(v, nd, name="", op=""):
    if v is None:
        return None
    return (v,) * nd if isinstance(v, int) else int_seq(v, name, op)


def _pad_tup(v, nd, op):
    # Relay's constructors store the full (befores..., afters...) form (get_pad_tuple2d).
    before, after = pad_before_after(v, nd, op)
    return before + after


def _make_conv(nd, data, weight, strides, padding, dilation, groups, channels, kernel_size,
               data_layout, kernel_layout, out_layout, out_dtype, **extra):
    name = f"nn.conv{nd}d" + ("_transpose" if "output_padding" in extra else "")
    return make_call(
        name, [data, weight], strides=_tup(strides, nd, "strides", name),
        padding=_pad_tup(padding, nd, name), dilation=_tup(dilation, nd, "dilation", name),
        groups=groups, channels=channels, kernel_size=_tup(kernel_size, nd, "kernel_size", name),
        data_layout=data_layout, kernel_layout=kernel_layout,
        out_layout=out_layout, out_dtype=out_dtype, **extra,
    )


def conv1d(data, weight, strides=1, padding=0, dilation=1, groups=1, channels=None,
           kernel_size=None, data_layout="NCW", kernel_layout="OIW", out_layout="", out_dtype=""):
    """1-D convolution (tvm.relay.nn.conv1d).

    Args:
        data: ``(N, C, W)`` for NCW (or the permutation named by ``data_layout``).
        weight: ``(O, C/groups, KW)`` for OIW.
        strides, dilation: an int or 1 int; padding: 1 or 2 ints (left, right).
        groups, channels, kernel_size, out_dtype: as :func:`conv2d`.

    Returns:
        ``(N, O, OW)`` with ``OW = (W + pl + pr - (KW-1)*dilation - 1) // stride + 1``.
    """
    return _make_conv(1, data, weight, strides, padding, dilation, groups, channels, kernel_size,
                      data_layout, kernel_layout, out_layout, out_dtype)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype=""):
    """2-D convolution (tvm.relay.nn.conv2d).

    Args:
        data: ``(N, C, H, W)`` for NCHW, ``(N, H, W, C)`` for NHWC.
        weight: ``(O, C/groups, KH, KW)`` for OIHW, ``(KH, KW, C/groups, O)`` for HWIO,
            ``(KH, KW, O, C/groups)`` for HWOI.
        strides, dilation: 1 or 2 ints.
        padding: 1, 2 (top/bottom, left/right) or 4 (top, left, bottom, right) ints.
        groups: channel groups (``groups == C`` is a depthwise convolution).
        channels, kernel_size: output channels and kernel size (let inference type the weight).
        out_dtype: output dtype; ``""`` means data's dtype.

    Returns:
        ``(N, O, OH, OW)`` (or NHWC) with ``OH = (H + pt + pb - (KH-1)*dil - 1) // stride + 1``.

    Raises:
        TypeInferenceError: at inference, when channels, ranks, layouts or dtypes do not agree.
    """
    return _make_conv(2, data, weight, strides, padding, dilation, groups, channels, kernel_size,
                      data_layout, kernel_layout, out_layout, out_dtype)


def conv3d(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1,
           channels=None, kernel_size=None, data_layout="NCDHW", kernel_layout="OIDHW",
           out_layout="", out_dtype=""):
    """3-D convolution (tvm.relay.nn.conv3d).

    Args:
        data: ``(N, C, D, H, W)`` for NCDHW, ``(N, D, H, W, C)`` for NDHWC.
        weight: ``(O, C/groups, KD, KH, KW)`` for OIDHW, ``(KD, KH, KW, C/groups, O)`` for DHWIO.
        padding: 1, 3 or 6 (front, top, left, back, bottom, right) ints.

    Returns:
        ``(N, O, OD, OH, OW)`` (or NDHWC).
    """
    return _make_conv(3, data, weight, strides, padding, dilation, groups, channels, kernel_size,
                      data_layout, kernel_layout, out_layout, out_dtype)


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                     channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout="", output_padding=(0, 0), out_dtype=""):
    """Transposed 2-D convolution (tvm.relay.nn.conv2d_transpose), the gradient of conv2d.

    Args:
        data: ``(N, C, H, W)`` (NCHW) or ``(N, H, W, C)`` (NHWC).
        weight: ``(C, O/groups, KH, KW)`` for IOHW (or the permutation in ``kernel_layout``).
        padding: cropped from the full output, 1, 2 or 4 ints as for conv2d.
        output_padding: extra rows/columns at the bottom/right (smaller than the stride).

    Returns:
        ``(N, O, OH, OW)`` with ``OH = (H-1)*stride - pt - pb + (KH-1)*dil + 1 + output_padding``.
    """
    return _make_conv(2, data, weight, strides, padding, dilation, groups, channels, kernel_size,
                      data_layout, kernel_layout, out_layout, out_dtype,
                      output_padding=_tup(output_padding, 2))


def conv1d_transpose(data, weight, strides=(1,), padding=(0,), dilation=(1,), groups=1,
                     channels=None, kernel_size=None, data_layout="NCW", kernel_layout="IOW",
                     out_layout="", output_padding=(0,), out_dtype=""):
    """Transposed 1-D convolution (tvm.relay.nn.conv1d_transpose); see :func:`conv2d_transpose`.

    Args:
        data: ``(N, C, W)``; weight: ``(C, O/groups, KW)`` (IOW).
    """
    return _make_conv(1, data, weight, strides, padding, dilation, groups, channels, kernel_size,
                      data_layout, kernel_layout, out_layout, out_dtype,
                      output_padding=_tup(output_padding, 1))


def conv3d_transpose(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
                     groups=1, channels=None, kernel_size=None, data_layout="NCDHW",
                     kernel_layout="IODHW", out_layout="", output_padding=(0, 0, 0), out_dtype=""):
    """Transposed 3-D convolution (tvm.relay.nn.conv3d_transpose); see :func:`conv2d_transpose`.

    Args:
        data: ``(N, C, D, H, W)``; weight: ``(C, O/groups, KD, KH, KW)`` (IODHW).
        padding: 1, 3 or 6 ints (front, top, left, back, bottom, right).
    """
    return _make_conv(3, data, weight, strides, padding, dilation, groups, channels, kernel_size,
                      data_layout, kernel_layout, out_layout, out_dtype,
                      output_padding=_tup(output_padding, 3))


__all__ = ["conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose",
           "conv3d_transpose"]
