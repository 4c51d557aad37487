"""FakeQuantizationToInteger (tvm.relay 0.19's ``transform.FakeQuantizationToInteger``).

A fake-quantized region is a subgraph whose inputs are ``qnn.dequantize`` calls and whose
output feeds a ``qnn.quantize``: float operators between integer tensors. The pass rewrites
each such region into integer (qnn) operators, so ``dequantize -> conv2d -> quantize`` becomes
``qnn.conv2d -> qnn.requantize``. Every tensor of a region carries an affine type (integer
expression, scale, zero point, dtype, channel axis); the supported operators and their rules:

- ``nn.conv2d`` / ``nn.conv2d_transpose`` / ``nn.dense`` / ``nn.batch_matmul``: the qnn
  operator of that name, int32 output with scale
  ``s_data * s_weight`` (per channel when the weight is) and zero point 0;
- ``nn.bias_add`` / ``add`` of an int32 accumulator and a quantized bias: the bias is
  requantized to the accumulator's scale (used as it is when it is int32 with that scale and
  zero point 0) and added;
- ``add``, ``subtract``, ``multiply``: ``qnn.add`` / ``qnn.subtract`` / ``qnn.mul`` with the
  region's final quantize's parameters as the output's wherever in the region they are (as
  0.19; the left operand's when that quantize is per channel or of another dtype); operands
  may be quantized per channel (``lhs_axis`` / ``rhs_axis``; for ``multiply`` both along the
  same axis of operands of the output's rank);
- ``nn.leaky_relu``: ``qnn.leaky_relu``, input to output parameters as the unary operators;
- ``nn.relu`` (``maximum`` with the zero point), ``clip`` (bounds quantized);
- ``nn.max_pool2d``, ``reshape``, ``transpose``, ``squeeze``, ``expand_dims``,
  ``nn.batch_flatten``, ``strided_slice``, ``max``, ``min``, ``nn.depth_to_space``,
  ``broadcast_to``, ``topk`` (``ret_type="values"`` only), ``split`` (and the tuple items taken
  from it), ``take`` (the indices stay outside the region), ``image.resize2d`` (interpolating
  the integers is the affine image of interpolating the reals, up to rounding): applied to the
  integer tensor unchanged;
- ``minimum`` / ``maximum``: both operands requantized to the output's parameters (a constant
  float operand quantized with the other operand's), then applied to the integers;
- ``sqrt``, ``rsqrt``, ``exp``, ``erf``, ``sigmoid``, ``tanh``, ``log``, ``abs``: the qnn
  unary operator (a lookup table) from the input's parameters to the output's (the final
  quantize's at the region's root, else the input's);
- ``mean``: computed on the int32 widening (integer division, as Relay's mean of an integer
  tensor) and cast back; ``nn.pad``: a constant float pad value is quantized with the tensor's
  parameters;
- ``nn.avg_pool2d``, ``nn.global_avg_pool2d``, ``nn.adaptive_avg_pool1d/2d``: the input
  requantized to the output's parameters as int32 (0.19's order), then averaged (integer
  division truncates); ``nn.avg_pool2d``'s result is saturated back to the input's dtype (as
  0.19's ``qnn.avg_pool2d``), the others stay int32; ``concatenate``: ``qnn.concatenate``.

With ``use_qat=True`` a second step follows (0.19's quantization-aware-training mode): outside
those regions, an operator of ``_QAT_OPS`` whose tensor inputs are all dequantize calls is
rewritten by the same rules into its integer form followed by one dequantize.

``nn.softmax`` becomes ``qnn.softmax`` (into the final quantize's parameters) only when
``optional_qnn_ops`` names it. A region with any other operator (or non-constant scales) stays
as it is, unless ``hard_fail``, which raises. Scales and zero points must be per-tensor except for weights.

Rules registered with ``relay.op.register_fake_quantization_to_integer(op_name, func)``
(0.19's ``FTVMFakeQuantizationToInteger`` attribute; ``register_optional_...`` for rules used
only when ``optional_qnn_ops`` names the operator) join the table: the operator becomes part of
regions and ``func(expr, type_map) -> [new_expr, affine_type]`` replaces the built-in rule, as in
0.19 (see :func:`relay_tvm.op.op.register_fake_quantization_to_integer`). The built-in rules
hold level 10, so overriding one takes ``level=11`` or more. A rule that raises, or returns
non-constant parameters, leaves its region unconverted (``hard_fail``: raises, with its
message). ``qnn.dequantize`` keeps its built-in rule.
"""

from __future__ import annotations

import numpy as np

from ..errors import RelayError, UnsupportedOperatorError
from ..ir.affine_type import TensorAffineType, TupleAffineType
from ..ir.expr import Call, Constant, Tuple, TupleGetItem, const
from ..op.op import (
    FQ2I_KEY,
    FQ2I_OPTIONAL_KEY,
    register_fake_quantization_to_integer,
    register_optional_fake_quantization_to_integer,
)
from ..op.op_attrs import declare_builtin, get_op_attr
from ..op.registry import Op, make_call
from ._rewrite import Rewriter, called_ops
from .pass_infra import FunctionPass, PassInfo

_IDENTITY = {"nn.max_pool2d", "reshape", "transpose", "squeeze", "expand_dims",
             "nn.batch_flatten", "strided_slice", "max", "min", "nn.depth_to_space",
             "broadcast_to", "topk", "split", "image.resize2d"}
SUPPORTED = _IDENTITY | {"qnn.dequantize", "nn.conv2d", "nn.dense", "nn.conv2d_transpose",
                         "nn.batch_matmul", "nn.bias_add", "add",
                         "subtract", "multiply", "nn.relu", "clip", "nn.avg_pool2d",
                         "concatenate", "minimum", "maximum", "mean", "take", "nn.pad"}
# operators of which only the first argument belongs to the region (the rest are integer
# indices or a float constant handled by the rule)
_FIRST_ARG_ONLY = {"take", "nn.pad"}
_UNARY_QNN = {"sqrt", "rsqrt", "exp", "erf", "sigmoid", "tanh", "log", "abs"}
SUPPORTED |= _UNARY_QNN
_AVG_POOLS = {"nn.avg_pool2d", "nn.global_avg_pool2d", "nn.adaptive_avg_pool1d",
              "nn.adaptive_avg_pool2d"}
SUPPORTED |= _AVG_POOLS
SUPPORTED.add("nn.leaky_relu")
_ONE_TENSOR = _IDENTITY | _UNARY_QNN | {"take", "nn.pad", "mean", "nn.leaky_relu"}


class _Affine:
    __slots__ = ("expr", "scale", "zp", "dtype", "axis")

    def __init__(self, expr, scale, zp, dtype, axis=-1):
        self.expr, self.scale, self.zp, self.dtype, self.axis = expr, scale, zp, dtype, axis


class _NotConvertible(Exception):
    pass


def _name(e):
    return e.op.name if type(e) is Call and isinstance(e.op, Op) else None


def _cval(e):
    if isinstance(e, Constant):
        return np.asarray(e.data)
    raise _NotConvertible("a scale or zero point is not a constant")


def _f32(v):
    return const(np.asarray(v, "float32"), "float32")


def _i32(v):
    return const(np.asarray(v, "int32"), "int32")


def _scalar(v):
    v = np.asarray(v)
    if v.size != 1:
        raise _NotConvertible("per-channel parameters on an activation")
    return v.reshape(())


def _same_params(scale, zp, oscale, ozp) -> bool:
    s, os_ = np.asarray(scale, "float32").reshape(-1), np.asarray(oscale, "float32").reshape(-1)
    z, oz = np.asarray(zp).reshape(-1), np.asarray(ozp).reshape(-1)
    return (s.size == os_.size and z.size == oz.size and np.array_equal(s, os_)
            and np.array_equal(z, oz))


#: operators converted only when named in ``optional_qnn_ops`` (0.19's optional rules)
OPTIONAL = frozenset({"nn.softmax"})

declare_builtin(FQ2I_KEY, SUPPORTED)
declare_builtin(FQ2I_OPTIONAL_KEY, OPTIONAL)


def _has_optional_rule(name: str) -> bool:
    return name in OPTIONAL or get_op_attr(name, FQ2I_OPTIONAL_KEY) is not None


class _FQ2I(Rewriter):
    def __init__(self, hard_fail, optional=frozenset()):
        super().__init__()
        self.hard_fail = hard_fail
        self.optional = frozenset(optional)
        self._region_type = None  # the final quantize's TensorAffineType (user rules)

    def _user_rule(self, name):
        """The registered rule for ``name`` (an optional one only when requested), or None."""
        if name is None or name == "qnn.dequantize":
            return None
        fn = get_op_attr(name, FQ2I_KEY)
        if fn is None and name in self.optional:
            fn = get_op_attr(name, FQ2I_OPTIONAL_KEY)
        return fn

    def post_call(self, orig, new):
        if _name(orig) != "qnn.quantize":
            return new
        try:
            return self._convert(orig, new)
        except _NotConvertible as err:
            if self.hard_fail:
                raise UnsupportedOperatorError(
                    f"FakeQuantizationToInteger: the region ending in {orig!r:.80} cannot be "
                    f"converted: {err}") from None
            return new

    def _region(self, root):
        """The region's nodes in post order (children first), leaves = dequantize calls."""
        order, seen, stack = [], set(), [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            name = _name(node)
            if type(node) is Tuple:
                kids = list(node.fields)
            elif type(node) is TupleGetItem:
                kids = [node.tuple_value]
            elif name is None:
                raise _NotConvertible(f"{type(node).__name__} inside the region")
            elif self._user_rule(name) is not None:
                kids = [a for a in node.args if not isinstance(a, Constant)]
            elif name not in SUPPORTED and name not in self.optional:
                raise _NotConvertible(f"operator {name} is not supported" + (
                    " (add it to optional_qnn_ops)" if name in OPTIONAL else ""))
            else:
                args = node.args[:1] if name in _FIRST_ARG_ONLY else node.args
                kids = [] if name == "qnn.dequantize" else [a for a in args
                                                            if not isinstance(a, Constant)]
            stack.append((node, True))
            stack.extend((k, False) for k in kids)
        return order

    def _convert(self, orig, new):
        root = orig.args[0]
        oscale, ozp = _cval(new.args[1]), _cval(new.args[2])
        if oscale.size == 1 and ozp.size == 1:
            out_params = (oscale.reshape(()), ozp.reshape(()))
        else:  # per-channel output: the root works in its input's parameters
            out_params = None
        # the final quantize's parameters, which 0.19 gives every binary operator of the
        # region as its output's (an operand's own parameters may not hold the result, e.g.
        # a uint8 operand with zero point 0 minus a positive constant)
        self._region_out = (out_params, new.attrs.out_dtype)
        self._region_type = TensorAffineType(new.args[1], new.args[2], new.attrs.out_dtype,
                                             new.attrs.axis)
        aff = {}
        for node in self._region(root):
            aff[id(node)] = self._rule(node, aff, out_params if node is root else None)
        a = aff[id(root)]
        dt = new.attrs.out_dtype
        if a.dtype == dt and _same_params(a.scale, a.zp, oscale, ozp):
            return a.expr  # already in the output's parameters (0.19 drops the requantize)
        if out_params is None:  # qnn.requantize takes one output scale and zero point
            raise _NotConvertible(
                f"the output is quantized per channel (scale of shape {oscale.shape}, zero "
                f"point of shape {ozp.shape}) and the region's result is in other parameters; "
                f"qnn.requantize takes a per-tensor output scale")
        return make_call("qnn.requantize", [a.expr, _f32(a.scale), _i32(a.zp), new.args[1],
                                            new.args[2]], axis=a.axis, rounding="UPWARD",
                         compute_dtype="int64", out_dtype=dt)

    def _rule(self, node, aff, out_params):
        if type(node) is Tuple:
            return [aff[id(f)] for f in node.fields]
        if type(node) is TupleGetItem:
            t = aff[id(node.tuple_value)]
            if isinstance(t, list):
                return t[node.index]
            return _Affine(TupleGetItem(t.expr, node.index), t.scale, t.zp, t.dtype, t.axis)
        name = _name(node)
        a = node.attrs
        kw = dict(a.items()) if a is not None else {}
        if name == "qnn.dequantize":
            x = self.memo.get(node.args[0], node.args[0])
            return _Affine(x, _cval(node.args[1]), _cval(node.args[2]),
                           node.args[0].checked_type.dtype, a.axis)
        user = self._user_rule(name)
        if user is not None:
            return self._apply_user(user, name, node, aff)
        args = [aff.get(id(x)) for x in node.args]
        if name in _ONE_TENSOR:
            return self._one_tensor(name, node, args[0], kw, out_params)
        if name in ("minimum", "maximum"):
            return self._min_max(name, node, args, out_params)
        if name == "nn.softmax":
            return self._softmax(node, args[0], kw)
        if name in ("nn.conv2d", "nn.dense", "nn.conv2d_transpose", "nn.batch_matmul"):
            return self._product(name, a, args)
        if name in ("nn.relu", "clip"):
            return self._relu_clip(name, node, args[0], a)
        if name in _AVG_POOLS:
            t = args[0]
            s, z = _scalar(t.scale), _scalar(t.zp)
            os_, oz = out_params or (s, z)
            if _same_params(s, z, os_, oz):
                x = make_call("cast", [t.expr], dtype="int32")
            else:  # into the output's parameters first: the average's truncation is then
                # at most one output step (0.19's order)
                x = make_call("qnn.requantize", [t.expr, _f32(s), _i32(z), _f32(os_), _i32(oz)],
                              axis=-1, rounding="UPWARD", compute_dtype="int64",
                              out_dtype="int32")
            pooled = make_call(name, [x], **kw)
            if name != "nn.avg_pool2d":
                return _Affine(pooled, os_, oz, "int32")
            # 0.19 turns nn.avg_pool2d into qnn.avg_pool2d, whose result is saturated to the
            # input's dtype (a following qnn.conv2d needs 8- or 16-bit data)
            info = np.iinfo(t.dtype)
            out = make_call("cast", [make_call("clip", [pooled], a_min=float(info.min),
                                               a_max=float(info.max))], dtype=t.dtype)
            return _Affine(out, os_, oz, t.dtype)
        if name == "concatenate":
            ts = args[0]
            os_, oz = out_params or (_scalar(ts[0].scale), _scalar(ts[0].zp))
            if len({t.dtype for t in ts}) != 1:
                raise _NotConvertible("concatenate of different integer dtypes")
            call = make_call("qnn.concatenate", [
                Tuple([t.expr for t in ts]), Tuple([_f32(_scalar(t.scale)) for t in ts]),
                Tuple([_i32(_scalar(t.zp)) for t in ts]), _f32(os_), _i32(oz)], axis=a.axis)
            return _Affine(call, os_, oz, ts[0].dtype)
        if name in ("nn.bias_add", "add", "subtract", "multiply"):
            return self._binary(name, node, args, out_params)
        raise _NotConvertible(f"operator {name} is not supported")

    def _apply_user(self, fn, name, node, aff):
        """Run a registered rule the way 0.19 did: on the call with integer arguments and a
        map from each (and from the call: the region's final quantize) to its affine type."""
        args, type_map = [], {}
        for x in node.args:
            t = aff.get(id(x))
            if t is None:  # a constant outside the region (0.19 passed it unchanged)
                args.append(self.memo.get(x, x))
                continue
            if isinstance(t, list):
                e = Tuple([f.expr for f in t])
                type_map[e] = TupleAffineType([_affine_type(f) for f in t])
            else:
                e = t.expr
                type_map[e] = _affine_type(t)
            args.append(e)
        expr = Call(node.op, tuple(args), node.attrs, span=node.span)
        if self._region_type is not None:
            type_map[expr] = self._region_type
        try:
            vals = fn(expr, type_map)
        except Exception as err:  # 0.19 kept the region as it was (or raised with hard_fail)
            raise _NotConvertible(f"the registered rule of {name} raised "
                                  f"{type(err).__name__}: {err}") from None
        if not (isinstance(vals, (list, tuple)) and len(vals) == 2):
            raise RelayError(f"FakeQuantizationToInteger: the rule registered for {name} "
                             f"returned a {type(vals).__name__}; expected "
                             f"[new_expr, TensorAffineType or TupleAffineType]")
        return _from_affine_type(name, vals[0], vals[1])

    @staticmethod
    def _const_operand(name, expr, t, other):
        """A float constant operand of a binary operator, quantized with the other operand's
        (per-tensor) parameters, as 0.19's rules do; a quantized operand as it is."""
        if t is not None:
            return t
        if other is None or not isinstance(expr, Constant) or \
                not str(expr.data.dtype).startswith("float"):
            raise _NotConvertible(f"{name} with a float operand")
        s, z = _scalar(other.scale), _scalar(other.zp)
        q = make_call("qnn.quantize", [expr, _f32(s), _i32(z)], axis=-1, out_dtype=other.dtype)
        return _Affine(q, s, z, other.dtype)

    @staticmethod
    def _product(name, a, args):
        """conv2d / conv2d_transpose / dense / batch_matmul: the qnn product, an int32
        accumulator with scale ``s_x * s_w`` (per output channel when the weight's is)."""
        x, w = args
        if x is None or w is None:
            raise _NotConvertible(f"{name} with a float operand")
        attrs = dict(a.items())
        attrs["out_dtype"] = "int32"
        qname = "qnn." + name.split(".")[1]
        if name == "nn.batch_matmul":
            wzp, wscale = _scalar(w.zp), _scalar(w.scale)
        else:
            wzp, wscale = w.zp, w.scale
        call = make_call(qname, [x.expr, w.expr, _i32(_scalar(x.zp)), _i32(wzp),
                                 _f32(_scalar(x.scale)), _f32(wscale)], **attrs)
        scale = (np.float32(_scalar(x.scale)) * np.asarray(wscale, "float32")).astype("float32")
        if name in ("nn.conv2d", "nn.conv2d_transpose"):
            axis = (a.out_layout or a.data_layout).index("C")
        else:
            axis = -1
        return _Affine(call, scale, np.int32(0), "int32", axis)

    def _binary(self, name, node, args, out_params):
        lhs, rhs = (self._const_operand(name, x, t, o) for x, t, o in
                    ((node.args[0], args[0], args[1]), (node.args[1], args[1], args[0])))
        if lhs.dtype == "int32" and np.all(np.asarray(lhs.zp) == 0) and name in ("nn.bias_add",
                                                                                  "add"):
            # accumulator + bias: the bias in the accumulator's (per-channel) scale
            nd = len(node.args[0].checked_type.shape)
            axis = node.attrs.axis % nd if name == "nn.bias_add" else lhs.axis % nd
            if rhs.dtype == "int32" and np.all(np.asarray(rhs.zp) == 0) and np.array_equal(
                    np.asarray(rhs.scale, "float32").reshape(-1),
                    np.asarray(lhs.scale, "float32").reshape(-1)):
                b = rhs.expr  # the bias is already in the accumulator's scale
            elif np.asarray(lhs.scale).size > 1:
                b = self._bias_per_channel(rhs, lhs)
            else:
                b = make_call("qnn.requantize", [rhs.expr, _f32(rhs.scale), _i32(rhs.zp),
                                                 _f32(_scalar(lhs.scale)), _i32(0)],
                              rounding="UPWARD", compute_dtype="int64", out_dtype="int32")
            if name == "nn.bias_add":
                out = make_call("nn.bias_add", [lhs.expr, b], axis=axis)
            else:
                out = make_call("add", [lhs.expr, b])
            return _Affine(out, lhs.scale, lhs.zp, "int32", lhs.axis)
        if name == "nn.bias_add":
            raise _NotConvertible("bias_add of a non-accumulator")
        if lhs.dtype != rhs.dtype:
            raise _NotConvertible(f"{name} of {lhs.dtype} and {rhs.dtype}")
        region_params, region_dtype = self._region_out
        if region_params is not None and region_dtype == lhs.dtype:
            os_, oz = region_params
        elif out_params is not None:
            os_, oz = out_params
        else:
            os_, oz = _scalar(lhs.scale), _scalar(lhs.zp)

        def side(t, arg):
            """(scale, zero point, axis) of an operand; per-channel values (qnn's binary
            operators take them along ``lhs_axis`` / ``rhs_axis`` of that operand)."""
            s, z = np.asarray(t.scale), np.asarray(t.zp)
            s = s.reshape(()) if s.size == 1 else s.reshape(-1)
            z = z.reshape(()) if z.size == 1 else z.reshape(-1)
            if s.size == 1 and z.size == 1:
                return s, z, -1, False, None
            rank = len(arg.checked_type.shape)
            return s, z, t.axis % rank, True, rank

        (ls, lz, la, lpc, lr), (rs, rz, ra, rpc, rr) = (side(lhs, node.args[0]),
                                                        side(rhs, node.args[1]))
        nd = len(node.checked_type.shape)
        if name == "multiply" and ((lpc and lr != nd) or (rpc and rr != nd)
                                   or (lpc and rpc and la != ra)):
            # qnn.mul requantizes the product along one axis of it
            raise _NotConvertible("multiply of per-channel operands along different axes")
        qname = {"add": "qnn.add", "subtract": "qnn.subtract", "multiply": "qnn.mul"}[name]
        call = make_call(qname, [lhs.expr, rhs.expr, _f32(ls), _i32(lz), _f32(rs), _i32(rz),
                                 _f32(os_), _i32(oz)], lhs_axis=la, rhs_axis=ra)
        return _Affine(call, os_, oz, lhs.dtype)

    def _one_tensor(self, name, node, t, kw, out_params):
        """Operators with one quantized tensor input (the rest indices or constants)."""
        if name in _IDENTITY:
            if name == "topk" and kw["ret_type"] != "values":
                raise _NotConvertible(f"topk with ret_type {kw['ret_type']!r}")
            return _Affine(make_call(name, [t.expr], **kw), _scalar(t.scale),
                           _scalar(t.zp), t.dtype)
        if name == "take":
            idx = self.memo.get(node.args[1], node.args[1])
            return _Affine(make_call(name, [t.expr, idx], **kw), _scalar(t.scale),
                           _scalar(t.zp), t.dtype)
        if name == "nn.pad":
            pv = node.args[1]
            if not isinstance(pv, Constant):
                raise _NotConvertible("nn.pad with a computed pad value")
            s, z = _scalar(t.scale), _scalar(t.zp)
            qpv = make_call("qnn.quantize", [pv, _f32(s), _i32(z)], axis=-1, out_dtype=t.dtype)
            return _Affine(make_call(name, [t.expr, qpv], **kw), s, z, t.dtype)
        if name == "mean":
            wide = make_call("cast", [t.expr], dtype="int32")
            out = make_call("cast", [make_call("mean", [wide], **kw)], dtype=t.dtype)
            return _Affine(out, _scalar(t.scale), _scalar(t.zp), t.dtype)
        # the qnn unary operators
        s, z = _scalar(t.scale), _scalar(t.zp)
        os_, oz = out_params or (s, z)
        if t.dtype not in ("int8", "uint8", "int16"):
            raise _NotConvertible(f"{name} of {t.dtype}")
        if name == "nn.leaky_relu":
            call = make_call("qnn.leaky_relu", [t.expr, _f32(s), _i32(z), _f32(os_), _i32(oz)],
                             alpha=kw["alpha"])
            return _Affine(call, os_, oz, t.dtype)
        call = make_call("qnn." + name, [t.expr, _f32(s), _i32(z), _f32(os_), _i32(oz)])
        return _Affine(call, os_, oz, t.dtype)

    def _softmax(self, node, t, kw):
        """nn.softmax: qnn.softmax into the region's output parameters (the softmax's range
        is [0, 1], which the input's parameters need not suit)."""
        region_params, region_dtype = self._region_out
        if region_params is None or region_dtype != t.dtype:
            raise _NotConvertible("nn.softmax needs a per-tensor final quantize of its input's "
                                  "dtype")
        if t.dtype not in ("int8", "uint8", "int16"):
            raise _NotConvertible(f"nn.softmax of {t.dtype}")
        os_, oz = region_params
        call = make_call("qnn.softmax", [t.expr, _f32(_scalar(t.scale)), _i32(_scalar(t.zp)),
                                         _f32(os_), _i32(oz)], axis=kw["axis"])
        return _Affine(call, os_, oz, t.dtype)

    @staticmethod
    def _relu_clip(name, node, t, a):
        """relu: max with the zero point; clip: the bounds quantized (per channel when the
        tensor's parameters are)."""
        nd = len(node.args[0].checked_type.shape)
        info = np.iinfo(t.dtype)
        per_channel = np.asarray(t.scale).size > 1 or np.asarray(t.zp).size > 1

        def along(v):
            v = np.asarray(v)
            if not per_channel or v.size == 1:
                return v.reshape(())
            shape = [1] * nd
            shape[t.axis % nd] = v.size
            return v.reshape(shape)

        z = along(t.zp).astype("float64")
        if name == "nn.relu":
            lo, hi = z, None
        else:
            sf = along(t.scale).astype("float32")

            def bound(v, default):
                if not np.isfinite(v):
                    return np.asarray(float(default))
                q = np.round(np.float32(v) / sf).astype("float64") + z
                return np.clip(q, info.min, info.max)

            lo, hi = bound(a.a_min, info.min), bound(a.a_max, info.max)
        if not per_channel:
            if name == "nn.relu":
                out = make_call("maximum", [t.expr, const(np.asarray(lo, t.dtype), t.dtype)])
            else:
                out = make_call("clip", [t.expr], a_min=float(lo), a_max=float(hi))
            return _Affine(out, _scalar(t.scale), _scalar(t.zp), t.dtype, t.axis)
        out = make_call("maximum", [t.expr, const(lo.astype(t.dtype), t.dtype)])
        if hi is not None:
            out = make_call("minimum", [out, const(hi.astype(t.dtype), t.dtype)])
        return _Affine(out, t.scale, t.zp, t.dtype, t.axis)

    @staticmethod
    def _min_max(name, node, args, out_params):
        """minimum / maximum on integers: both operands in the output's parameters."""
        lhs, rhs = args
        if lhs is None and rhs is None:
            raise _NotConvertible(f"{name} of two float operands")
        known = lhs or rhs
        os_, oz = out_params or (_scalar(known.scale), _scalar(known.zp))
        dt = known.dtype
        ops = []
        for t, arg in zip(args, node.args):
            if t is None:  # a float constant: quantized straight to the output's parameters
                ops.append(make_call("qnn.quantize", [arg, _f32(os_), _i32(oz)], axis=-1,
                                     out_dtype=dt))
                continue
            if t.dtype != dt:
                raise _NotConvertible(f"{name} of {t.dtype} and {dt}")
            same = (np.asarray(t.scale).size == 1 and np.float32(_scalar(t.scale)) ==
                    np.float32(os_) and int(_scalar(t.zp)) == int(oz))
            ops.append(t.expr if same else make_call(
                "qnn.requantize", [t.expr, _f32(t.scale), _i32(t.zp), _f32(os_), _i32(oz)],
                axis=t.axis, rounding="UPWARD", compute_dtype="int64", out_dtype=dt))
        return _Affine(make_call(name, ops), os_, oz, dt)

    @staticmethod
    def _bias_per_channel(bias, acc):
        """The quantized bias re-expressed in the accumulator's per-channel scale (int32)."""
        if not isinstance(bias.expr, Constant):
            raise _NotConvertible("a per-channel accumulator needs a constant bias")
        real = (np.asarray(bias.expr.data).astype("float64") - np.asarray(bias.zp)) \
            * np.asarray(bias.scale, "float64")
        q = np.round(real / np.asarray(acc.scale, "float64"))
        return const(q.astype("int32"), "int32")


def _affine_type(t):
    """An internal affine value as the TensorAffineType a registered rule reads."""
    return TensorAffineType(_f32(t.scale), _i32(t.zp), t.dtype, t.axis)


def _rule_const(name, e):
    if isinstance(e, Constant):
        return np.asarray(e.data)
    from ..typing.infer import infer_expr
    from .fold_constant import fold_constant_expr

    try:
        folded = fold_constant_expr(infer_expr(e))
    except RelayError:
        folded = None
    if isinstance(folded, Constant):
        return np.asarray(folded.data)
    raise _NotConvertible(f"the registered rule of {name} returned a scale or zero point "
                          f"that is not constant ({type(e).__name__})")


def _from_affine_type(name, expr, t):
    """The internal affine value(s) of a registered rule's result."""
    from ..ir.base import RelayExpr

    if not isinstance(expr, RelayExpr):
        raise RelayError(f"FakeQuantizationToInteger: the rule registered for {name} returned "
                         f"{type(expr).__name__} as its expression; expected a Relay expression")
    if isinstance(t, TensorAffineType):
        return _Affine(expr, _rule_const(name, t.scale), _rule_const(name, t.zero_point),
                       t.dtype, t.axis)
    if isinstance(t, TupleAffineType):
        return [_from_affine_type(name, expr.fields[i] if type(expr) is Tuple
                                  else TupleGetItem(expr, i), f) for i, f in enumerate(t.types)]
    raise RelayError(f"FakeQuantizationToInteger: the rule registered for {name} returned "
                     f"{type(t).__name__} as its type; expected TensorAffineType or "
                     f"TupleAffineType")


# the operators 0.19's QAT mode rewrites one at a time: those whose output parameters follow
# from their inputs' (split is left out: a tuple cannot be dequantized)
_QAT_OPS = {"broadcast_to", "clip", "expand_dims", "max", "min", "nn.avg_pool2d",
            "nn.batch_flatten", "nn.batch_matmul", "nn.bias_add", "nn.conv2d",
            "nn.conv2d_transpose", "nn.dense", "nn.depth_to_space", "nn.global_avg_pool2d",
            "nn.max_pool2d", "nn.pad", "nn.relu", "reshape", "squeeze", "strided_slice",
            "transpose"}


class _QAT(_FQ2I):
    """The use_qat step: a supported operator whose tensor inputs are all dequantize calls
    becomes its integer form followed by one dequantize, ``op(dq(a), dq(b))`` ->
    ``dq(qop(a, b))``; bottom-up, so chains of such operators move their dequantize past
    them. Runs on the typed result of the main rewrite."""

    def __init__(self, hard_fail):
        super().__init__(hard_fail)
        self._region_out = (None, None)
        self._made = {}  # id(dequantize call made here) -> (call, its input's dtype)

    def post_call(self, orig, new):
        name = _name(orig)
        if name not in _QAT_OPS:
            return new
        aff, seen = {}, False
        for oarg, narg in zip(orig.args, new.args):
            if isinstance(narg, Constant):
                continue
            if _name(narg) != "qnn.dequantize":
                return new
            seen = True
            made = self._made.get(id(narg))
            dtype = made[1] if made is not None and made[0] is narg else \
                narg.args[0].checked_type.dtype
            try:
                aff[id(oarg)] = _Affine(narg.args[0], _cval(narg.args[1]),
                                        _cval(narg.args[2]), dtype, narg.attrs.axis)
            except _NotConvertible:
                return new
        if not seen:
            return new
        try:
            a = self._rule(orig, aff, None)
        except _NotConvertible as err:
            if self.hard_fail:
                raise UnsupportedOperatorError(
                    f"FakeQuantizationToInteger(use_qat=True): {name} cannot be converted: "
                    f"{err}") from None
            return new
        out = make_call("qnn.dequantize", [a.expr, _f32(a.scale), _i32(a.zp)], axis=a.axis,
                        out_dtype=orig.checked_type.dtype)
        self._made[id(out)] = (out, a.dtype)
        return out


def fake_quantization_to_integer(func, hard_fail=False, use_qat=False, mod=None,
                                 optional_qnn_ops=()):
    """The rewrite on one typed function (see :func:`FakeQuantizationToInteger`)."""
    from ..typing.infer import infer_expr

    if "qnn.quantize" in called_ops(func):
        func = _FQ2I(hard_fail, optional_qnn_ops).rewrite(func)
    if use_qat and "qnn.dequantize" in called_ops(func):
        func = _QAT(hard_fail).rewrite(infer_expr(func, mod))
    return func


def FakeQuantizationToInteger(hard_fail=False, use_qat=False, optional_qnn_ops=None):  # noqa: N802
    """Rewrite fake-quantized regions (``dequantize -> float ops -> quantize``) into qnn
    integer operators (tvm.relay 0.19's pass; see the module doc for the operators).

    Args:
        hard_fail: raise :class:`UnsupportedOperatorError` for a region that cannot be
            converted instead of leaving it unchanged.
        use_qat: after that rewrite, also convert operators outside such regions whose
            inputs are all ``qnn.dequantize`` calls and whose output parameters follow from
            the inputs' (0.19's quantization-aware-training mode): ``op(dq(a), dq(b))``
            becomes ``dq(qop(a, b))``, bottom-up, for the shape operators, ``nn.relu``,
            ``clip``, ``max`` / ``min``, ``nn.pad``, the max / average pools, ``nn.conv2d``,
            ``nn.conv2d_transpose``, ``nn.dense``, ``nn.batch_matmul`` and ``nn.bias_add``
            of an accumulator. A float operator after them (``erf``, ``add``, ...) then
            reads the dequantized integer result.
        optional_qnn_ops: names of operators converted only on request: ``"nn.softmax"``
            (into ``qnn.softmax``, which computes the softmax of the dequantized values in
            float32; 0.19 used an integer approximation).

    Returns:
        a function pass (opt level 0) that needs typed input.

    Raises:
        UnsupportedOperatorError: ``optional_qnn_ops`` names an operator without an optional
            rule.
    """
    optional = frozenset(str(n) for n in (optional_qnn_ops or ()))
    unknown = sorted(n for n in optional if not _has_optional_rule(n))
    if unknown:
        raise UnsupportedOperatorError(
            f"FakeQuantizationToInteger: optional_qnn_ops {unknown} have no optional rule; "
            f"the built-in optional operators are {sorted(OPTIONAL)} (others need "
            f"relay.op.register_optional_fake_quantization_to_integer)")
    return FunctionPass(
        lambda f, m, c: fake_quantization_to_integer(f, hard_fail, use_qat, m, optional),
        PassInfo(0, "FakeQuantizationToInteger", ("InferType",)))


def register_unary_identity(op_name, level=10):
    """Register a rule that applies ``op_name`` to the integers unchanged, the output in the
    input's affine type (0.19's helper; for shape operators such as ``reshape``)."""

    def identity(expr, type_map):
        return [expr, type_map[expr.args[0]]]

    return register_fake_quantization_to_integer(op_name, identity, level)


def register_unary_qnn(op_name, op, level=10):
    """Register a rule mapping ``op_name`` to the qnn unary operator ``op(x, scale,
    zero_point, output_scale, output_zero_point)`` into the region's output parameters
    (0.19's helper, e.g. ``register_unary_qnn("sqrt", relay.qnn.op.sqrt)``)."""

    def unary(expr, type_map):
        x = expr.args[0]
        t, out_t = type_map[x], type_map[expr]
        return [op(x, t.scale, t.zero_point, out_t.scale, out_t.zero_point), out_t]

    return register_fake_quantization_to_integer(op_name, unary, level)


def _binary_types(expr, type_map):
    """The two operands and their affine types (a float constant operand quantized with the
    other's), and the output's: the region's, unless its dtype differs from the left's."""
    def quantize(x, t):
        return make_call("qnn.quantize", [x, t.scale, t.zero_point], axis=t.axis,
                         out_dtype=t.dtype)

    lhs, rhs = expr.args
    lt, rt = type_map.get(lhs), type_map.get(rhs)
    if lt is None and rt is None:
        raise RelayError(f"{expr.op.name}: neither operand is quantized")
    if lt is None:
        lhs = quantize(lhs, rt)
        lt = rt
    if rt is None:
        rhs = quantize(rhs, lt)
        rt = lt
    out_t = type_map.get(expr, lt)
    if out_t.dtype != lt.dtype:
        out_t = lt
    return lhs, rhs, lt, rt, out_t


def register_binary_qnn(op_name, op, level=10):
    """Register a rule mapping ``op_name`` to the qnn binary operator ``op(lhs, rhs,
    lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale, output_zero_point)``
    (0.19's helper, e.g. ``register_binary_qnn("add", relay.qnn.op.add)``)."""

    def binary(expr, type_map):
        lhs, rhs, lt, rt, out_t = _binary_types(expr, type_map)
        return [op(lhs, rhs, lt.scale, lt.zero_point, rt.scale, rt.zero_point, out_t.scale,
                   out_t.zero_point), out_t]

    return register_fake_quantization_to_integer(op_name, binary, level)


def register_binary_identity(op_name, op, level=10):
    """Register a rule that requantizes both operands to the output's parameters and applies
    ``op(lhs, rhs)`` to the integers (0.19's helper, e.g. for ``minimum`` / ``maximum``)."""

    def binary(expr, type_map):
        lhs, rhs, lt, rt, out_t = _binary_types(expr, type_map)

        def to_out(x, t):
            if t == out_t:
                return x
            return make_call("qnn.requantize", [x, t.scale, t.zero_point, out_t.scale,
                                                out_t.zero_point], axis=t.axis,
                             rounding="UPWARD", compute_dtype="int64", out_dtype=out_t.dtype)

        return [op(to_out(lhs, lt), to_out(rhs, rt)), out_t]

    return register_fake_quantization_to_integer(op_name, binary, level)


__all__ = ["FakeQuantizationToInteger", "fake_quantization_to_integer",
           "register_fake_quantization_to_integer",
           "register_optional_fake_quantization_to_integer", "register_unary_identity",
           "register_unary_qnn", "register_binary_qnn", "register_binary_identity"]
