"""The legacy NNVM frontend: ``from_nnvm`` converts an NNVM graph to a Relay module.

NNVM (TVM's graph IR before Relay) stored a model as graph JSON of the same layout as MXNet's
symbol JSON (``nodes`` with ``op``/``name``/``inputs``/``attrs`` strings, ``arg_nodes``,
``heads``) using NNVM operator names (``conv2d``, ``dense``, ``max_pool2d``, ``batch_norm``,
``elemwise_add``, ``broadcast_mul``, ``flatten``, ``softmax``, ...), and parameters saved with
``nnvm.compiler.save_param_dict`` (TVM's NDArray-list format). Operator semantics are those
``nnvm.to_relay`` mapped to Relay (TVM 0.5/0.6, ``nnvm/top`` operator docs).
"""

from __future__ import annotations

import os
import struct

import numpy as np

from ..backend.param_dict import load_tvm_param_bytes  # noqa: E402,F401 - TVM's format
from ..errors import ConversionError
from ..ir.expr import const
from ._mx_shape import mx_reshape_shape
from ._mx_util import R, first, outputs_of
from .common import report_unsupported, to_numpy
from .graph_converter import convert_graph
from .mxnet_json import parse_graph


def _load_params(params):
    if params is None:
        return {}, False
    if isinstance(params, (str, os.PathLike, bytes, bytearray)):
        if isinstance(params, (bytes, bytearray)):
            data, source = bytes(params), "<params bytes>"
        else:
            source = os.fspath(params)
            try:
                with open(source, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise ConversionError(f"cannot read parameter file {source!r}: {e}") from None
        head = data[:8]
        if head == b"RLYPARAM":
            from ..backend.param_dict import load_param_dict

            return {k: to_numpy(v, k) for k, v in load_param_dict(data).items()}, True
        if len(head) == 8 and struct.unpack("<Q", head)[0] == 0x112:
            from .mxnet_params import load_ndarray_bytes, split_arg_aux

            arg, aux = split_arg_aux(load_ndarray_bytes(data, source), source)
            return {**arg, **aux}, True
        return load_tvm_param_bytes(data, source), True
    if isinstance(params, dict):
        return {k: to_numpy(v, k) for k, v in params.items()}, True
    raise ConversionError(f"params: expected a dict, bytes or a path, got {type(params).__name__}")


# ---- converters ----


def _u(name):
    return lambda ins, a, c: R(name)(ins[0])


def _b(name):
    return lambda ins, a, c: R(name)(ins[0], ins[1])


def _scalar(name, reverse=False):
    def conv(ins, a, c):
        s = c.scalar(a.get_float("scalar"), ins[0])
        return R(name)(s, ins[0]) if reverse else R(name)(ins[0], s)

    return conv


def _use_bias(ins, a, c, out, axis=1):
    # NNVM's default is use_bias=True; without the attribute, a third input is the bias
    if a.get_bool("use_bias", len(ins) >= 3):
        if len(ins) < 3:
            raise c.error("use_bias=True but the node has no bias input")
        out = R("nn.bias_add")(out, ins[2], axis=axis)
    return out


def _conv2d(ins, a, c):
    layout = a.get_str("layout", "NCHW")
    out = R("nn.conv2d")(
        ins[0], ins[1], strides=a.get_tuple("strides", (1, 1)),
        padding=a.get_tuple("padding", (0, 0)), dilation=a.get_tuple("dilation", (1, 1)),
        groups=a.get_int("groups", 1), channels=a.get_int("channels"),
        kernel_size=a.get_tuple("kernel_size"), data_layout=layout,
        kernel_layout=a.get_str("kernel_layout", "OIHW"))
    return _use_bias(ins, a, c, out, layout.index("C"))


def _conv2d_transpose(ins, a, c):
    out = R("nn.conv2d_transpose")(
        ins[0], ins[1], strides=a.get_tuple("strides", (1, 1)),
        padding=a.get_tuple("padding", (0, 0)), dilation=a.get_tuple("dilation", (1, 1)),
        groups=a.get_int("groups", 1), channels=a.get_int("channels"),
        kernel_size=a.get_tuple("kernel_size"),
        output_padding=a.get_tuple("output_padding", (0, 0)))
    return _use_bias(ins, a, c, out)


def _dense(ins, a, c):
    out = R("nn.dense")(ins[0], ins[1], units=a.get_int("units"))
    return _use_bias(ins, a, c, out, axis=-1)


def _pool(kind):
    def conv(ins, a, c):
        kw = dict(pool_size=a.get_tuple("pool_size"), strides=a.get_tuple("strides", (1, 1)),
                  padding=a.get_tuple("padding", (0, 0)), layout=a.get_str("layout", "NCHW"),
                  ceil_mode=a.get_bool("ceil_mode", False))
        if kind == "avg":
            kw["count_include_pad"] = a.get_bool("count_include_pad", False)
        return R(f"nn.{kind}_pool2d")(ins[0], **kw)

    return conv


def _global_pool(kind):
    return lambda ins, a, c: R(f"nn.global_{kind}_pool2d")(ins[0],
                                                          layout=a.get_str("layout", "NCHW"))


def _batch_norm(ins, a, c):
    data, gamma, beta, mean, var = ins
    bn = R("nn.batch_norm")(data, gamma, beta, mean, var, axis=a.get_int("axis", 1),
                            epsilon=a.get_float("epsilon", 1e-5),
                            center=a.get_bool("center", True), scale=a.get_bool("scale", True))
    return [first(bn), mean, var]


def _reshape(ins, a, c):
    x = ins[0]
    try:
        shape = mx_reshape_shape(c.shape(x), a.get_tuple("shape"))
    except ValueError as e:
        raise c.error(str(e)) from None
    return R("reshape")(x, list(shape))


def _reduce(name):
    def conv(ins, a, c):
        axis = a.get_tuple("axis", None)
        if axis is not None and not axis:
            axis = None
        return R(name)(ins[0], axis=axis, keepdims=a.get_bool("keepdims", False),
                       exclude=a.get_bool("exclude", False))

    return conv


def _split(ins, a, c):
    # an integer: that many equal sections; a tuple (even of one): the split indices
    x = ins[0]
    raw = str(a.get_str("indices_or_sections")).strip()
    ios = a.get_tuple("indices_or_sections")
    axis = a.get_int("axis", 0)
    if raw[:1] not in "([":
        return outputs_of(R("split")(x, ios[0], axis), ios[0])
    return outputs_of(R("split")(x, list(ios), axis), len(ios) + 1)


def _compare(name):
    def conv(ins, a, c):
        out = R(name)(ins[0], ins[1])
        dt = a.get_str("out_type", None)
        return R("cast")(out, dt) if dt not in (None, "", "None") else out

    return conv


def _strided_slice(ins, a, c):
    strides = a.get_tuple("strides", None) or a.get_tuple("stride", None)
    return R("strided_slice")(ins[0], begin=list(a.get_tuple("begin")),
                              end=list(a.get_tuple("end")),
                              strides=list(strides) if strides else None)


def _shift_scalar(name):
    def conv(ins, a, c):
        v = a.get_float("scalar")
        if v != int(v) or v < 0:
            raise c.error(f"scalar={v}: a shift amount must be a non-negative integer")
        dt = c.dtype(ins[0])
        if not dt.startswith(("int", "uint")):
            raise c.error(f"shifts need an integer input, got {dt}")
        return R(name)(ins[0], c.scalar(int(v), ins[0]))

    return conv


def _matmul(ins, a, c):
    # NNVM's matmul: 2-d a @ b with optional transposes (nnvm/top matrix_op; to_relay mapped it
    # to dense(a, transpose(b)))
    return R("nn.matmul")(ins[0], ins[1], transpose_a=a.get_bool("transpose_a", False),
                          transpose_b=a.get_bool("transpose_b", False))


def _elemwise_sum(ins, a, c):
    if not ins:
        raise c.error("elemwise_sum needs at least one input")
    out = ins[0]
    for x in ins[1:]:
        out = R("add")(out, x)
    return out


def _collapse_sum(ins, a, c):
    for key in ("axis", "keepdims", "exclude"):
        if key in a.attrs:
            raise c.error(f"attribute {key!r} is not supported (collapse_sum reduces data to "
                          f"the shape of its second input)")
    return R("collapse_sum_like")(ins[0], ins[1])


def _upsampling(ins, a, c):
    """NNVM's ``upsampling``: ``method`` NEAREST_NEIGHBOR (default) or BILINEAR; another name
    became nearest neighbour unsaid (fresh-user trial)."""
    methods = {"NEAREST_NEIGHBOR": "nearest_neighbor", "BILINEAR": "bilinear"}
    method = a.get_str("method", "NEAREST_NEIGHBOR")
    if method.upper() not in methods:
        raise c.error(f"method={method!r} is not one of {sorted(methods)}")
    return R("nn.upsampling")(ins[0], scale_h=a.get_int("scale"), scale_w=a.get_int("scale"),
                              layout=a.get_str("layout", "NCHW"), method=methods[method.upper()])


def _pad(ins, a, c):
    pw = a.attrs.get("pad_width")
    try:
        import ast

        pairs = [list(map(int, p)) for p in ast.literal_eval(str(pw))]
    except (ValueError, SyntaxError, TypeError):
        raise c.error(f"pad_width={pw!r} is not a tuple of (before, after) pairs") from None
    return R("nn.pad")(ins[0], pairs, pad_value=a.get_float("pad_value", 0.0))


def _full(ins, a, c):
    dt = a.get_str("dtype", "float32")
    return const(np.full(a.get_tuple("shape"), a.get_float("fill_value"), dt), dt)


def _const_like(value):
    def conv(ins, a, c):
        if value is None:
            return R("full_like")(ins[0], c.scalar(a.get_float("fill_value"), ins[0]))
        return R("zeros_like" if value == 0 else "ones_like")(ins[0])

    return conv


def _const_shape(value):
    def conv(ins, a, c):
        dt = a.get_str("dtype", "float32")
        return const(np.full(a.get_tuple("shape"), value, dt), dt)

    return conv


CONVERTERS = {
    "conv2d": _conv2d,
    "conv2d_transpose": _conv2d_transpose,
    "dense": _dense,
    "max_pool2d": _pool("max"),
    "avg_pool2d": _pool("avg"),
    "global_max_pool2d": _global_pool("max"),
    "global_avg_pool2d": _global_pool("avg"),
    "batch_norm": _batch_norm,
    "relu": _u("nn.relu"),
    "leaky_relu": lambda ins, a, c: R("nn.leaky_relu")(ins[0], alpha=a.get_float("alpha", 0.25)),
    "prelu": lambda ins, a, c: R("nn.prelu")(ins[0], ins[1], axis=a.get_int("axis", 1)),
    "sigmoid": _u("sigmoid"),
    "tanh": _u("tanh"),
    "exp": _u("exp"),
    "log": _u("log"),
    "sqrt": _u("sqrt"),
    "negative": _u("negative"),
    "abs": _u("abs"),
    "floor": _u("floor"),
    "ceil": _u("ceil"),
    "round": _u("round"),
    "trunc": _u("trunc"),
    "copy": _u("copy"),
    "softmax": lambda ins, a, c: R("nn.softmax")(ins[0], axis=a.get_int("axis", -1)),
    "log_softmax": lambda ins, a, c: R("nn.log_softmax")(ins[0], axis=a.get_int("axis", -1)),
    "dropout": lambda ins, a, c: ins[0],
    "flatten": lambda ins, a, c: R("nn.batch_flatten")(ins[0]),
    "reshape": _reshape,
    "transpose": lambda ins, a, c: R("transpose")(
        ins[0], axes=(list(a.get_tuple("axes")) or None) if "axes" in a else None),
    "concatenate": lambda ins, a, c: R("concatenate")(list(ins), axis=a.get_int("axis", 1)),
    "split": _split,
    "squeeze": lambda ins, a, c: R("squeeze")(
        ins[0], axis=list(a.get_tuple("axis")) if a.get_tuple("axis", ()) else None),
    "expand_dims": lambda ins, a, c: R("expand_dims")(ins[0], a.get_int("axis"),
                                                      a.get_int("num_newaxis", 1)),
    "strided_slice": _strided_slice,
    "greater": _compare("greater"),
    "greater_equal": _compare("greater_equal"),
    "less": _compare("less"),
    "less_equal": _compare("less_equal"),
    "__rshift_scalar__": _shift_scalar("right_shift"),
    "__lshift_scalar__": _shift_scalar("left_shift"),
    "broadcast_left_shift": lambda ins, a, c: R("left_shift")(ins[0], ins[1]),
    "broadcast_right_shift": lambda ins, a, c: R("right_shift")(ins[0], ins[1]),
    "matmul": _matmul,
    "elemwise_sum": _elemwise_sum,
    "reshape_like": lambda ins, a, c: R("reshape_like")(ins[0], ins[1]),
    "collapse_sum": _collapse_sum,
    "take": lambda ins, a, c: R("take")(ins[0], R("cast")(ins[1], "int32"),
                                        axis=a.get_int("axis", None)),
    "cast": lambda ins, a, c: R("cast")(ins[0], a.get_str("dtype")),
    "clip": lambda ins, a, c: R("clip")(ins[0], a.get_float("a_min"), a.get_float("a_max")),
    "pad": _pad,
    "lrn": lambda ins, a, c: R("nn.lrn")(ins[0], size=a.get_int("size"), axis=a.get_int("axis", 1),
                                         bias=a.get_float("bias", 2.0),
                                         alpha=a.get_float("alpha", 1e-4),
                                         beta=a.get_float("beta", 0.75)),
    "l2_normalize": lambda ins, a, c: R("nn.l2_normalize")(
        ins[0], eps=a.get_float("eps"), axis=list(a.get_tuple("axis", ())) or None),
    "upsampling": _upsampling,
    "full": _full,
    "zeros": _const_shape(0),
    "ones": _const_shape(1),
    "full_like": _const_like(None),
    "zeros_like": _const_like(0),
    "ones_like": _const_like(1),
    "where": lambda ins, a, c: R("where")(R("cast")(ins[0], "bool"), ins[1], ins[2]),
    "sum": _reduce("sum"),
    "mean": _reduce("mean"),
    "max": _reduce("max"),
    "min": _reduce("min"),
    "prod": _reduce("prod"),
    "elemwise_add": _b("add"),
    "elemwise_sub": _b("subtract"),
    "elemwise_mul": _b("multiply"),
    "elemwise_div": _b("divide"),
    "elemwise_mod": _b("mod"),
    "elemwise_pow": _b("power"),
    "broadcast_add": _b("add"),
    "broadcast_sub": _b("subtract"),
    "broadcast_mul": _b("multiply"),
    "broadcast_div": _b("divide"),
    "broadcast_mod": _b("mod"),
    "broadcast_pow": _b("power"),
    "broadcast_max": _b("maximum"),
    "broadcast_min": _b("minimum"),
    "broadcast_equal": _b("equal"),
    "broadcast_not_equal": _b("not_equal"),
    "broadcast_greater": _b("greater"),
    "broadcast_greater_equal": _b("greater_equal"),
    "broadcast_less": _b("less"),
    "broadcast_less_equal": _b("less_equal"),
    "broadcast_to": lambda ins, a, c: R("broadcast_to")(ins[0], list(a.get_tuple("shape"))),
    "__add_scalar__": _scalar("add"),
    "__sub_scalar__": _scalar("subtract"),
    "__rsub_scalar__": _scalar("subtract", reverse=True),
    "__mul_scalar__": _scalar("multiply"),
    "__div_scalar__": _scalar("divide"),
    "__rdiv_scalar__": _scalar("divide", reverse=True),
    "__pow_scalar__": _scalar("power"),
    "__rpow_scalar__": _scalar("power", reverse=True),
}


def _graph_text(graph):
    for attr in ("json", "tojson"):
        f = getattr(graph, attr, None)
        if callable(f):
            return f()
    return graph


def from_nnvm(graph, params=None, shape=None, dtype="float32"):
    """Convert a legacy NNVM graph to a Relay module.

    Args:
        graph: NNVM graph JSON (a path, the text, the parsed dict) or an object with ``json()``
            (``nnvm.graph.Graph``) or ``tojson()`` (``nnvm.symbol.Symbol``).
        params: ``{name: array}``; or a path / bytes of ``nnvm.compiler.save_param_dict``
            output, of an MXNet ``.params`` file or of ``relay_tvm.save_param_dict``.
        shape: ``{input name: shape}`` of the data inputs.
        dtype: input dtype, or ``{input name: dtype}``.

    Returns:
        ``(mod, params)`` as :func:`relay_tvm.frontend.from_mxnet` returns them.

    Raises:
        UnsupportedOperatorError: lists every NNVM operator without converter, with counts.
        ConversionError: malformed JSON or parameters, a missing or mis-shaped parameter.
    """
    g = parse_graph(_graph_text(graph), "NNVM graph")
    from .mxnet import CONVERTERS as MX_CONVERTERS

    report_unsupported([(n.op, n.name) for n in g.nodes if n.op != "null"], CONVERTERS, "NNVM",
                       None,
                       (MX_CONVERTERS, "This looks like an MXNet symbol: use "
                        "relay.frontend.from_mxnet (relay-tvm --format mxnet)"))
    values, given = _load_params(params)
    return convert_graph(g, dict(shape or {}), dtype, values, given, CONVERTERS, "NNVM")


__all__ = ["from_nnvm", "load_tvm_param_bytes", "CONVERTERS"]
