"""Counter-based random numbers (tvm.relay.random): Threefry keys, bits, uniform and normal.

A *key* is a ``uint64`` tensor of shape ``(10,)`` that determines every number drawn from it;
operators take a key and return a new key with the numbers, so a program threads keys through
and stays purely functional (the same key always gives the same numbers). The API and the key's
type are tvm.relay 0.19's (``threefry_key``, ``threefry_generate``, ``threefry_split``,
``uniform``, ``normal``); the bits are relay_tvm's own, not 0.19's (that a seed gives the same
numbers as under TVM 0.19 is not promised).

The generator is Threefry-2x64 with 20 rounds (Salmon et al., "Parallel random numbers: as easy
as 1, 2, 3", SC 2011): a keyed bijection of 128-bit blocks, so drawing word ``i`` is one
independent block ``threefry(K, (path, counter + i))``, a TE elementwise compute. Key layout:

- words 0..3: the seed's 256 bits; the cipher key is ``(w0 ^ w2, w1 ^ w3)``;
- word 4: the stream (``path``), 0 for a fresh key, a random word after a split;
- words 5..8: unused (word 8 holds ``1 << 63`` as in 0.19's keys); word 9: the counter, the
  number of words drawn from this stream so far.

``threefry_split`` gives two keys with fresh streams taken from the block
``threefry(K, (path ^ SPLIT, counter))``; ``SPLIT`` is an odd 63-bit constant, so a split's
block is not one that a generate on the same stream uses while its counter is below 2**63.
``uniform`` maps the top 23 (float32) or 52 (float64) bits of a word onto ``[low, high)``;
``normal`` takes both words of a block and applies the Box-Muller transform.
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType, TupleType
from ._common import shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

KEY_WORDS = 10
_ROT = (16, 42, 12, 31, 16, 32, 24, 21)
_PARITY = 0x1BD11BDAA9FC1A22
_SPLIT = 0x5851F42D4C957F2D
_FLOATS = {"float32": 23, "float64": 52}


def _rounds(k0, k1, p0, p1, const):
    """Threefry-2x64-20 of the block ``(p0, p1)`` under the key ``(k0, k1)``: works on NumPy
    uint64 arrays and on TVM uint64 expressions alike (``const`` makes a uint64 constant)."""
    ks = (k0, k1, k0 ^ k1 ^ const(_PARITY))
    x0, x1 = p0 + ks[0], p1 + ks[1]
    for r in range(20):
        rot = _ROT[r % 8]
        x0 = x0 + x1
        x1 = (x1 << const(rot)) | (x1 >> const(64 - rot))
        x1 = x1 ^ x0
        if r % 4 == 3:
            s = r // 4 + 1
            x0 = x0 + ks[s % 3]
            x1 = x1 + ks[(s + 1) % 3] + const(s)
    return x0, x1


# --- types ---------------------------------------------------------------------------------

_KEY_T = TensorType((KEY_WORDS,), "uint64")


def _check_key(t, op):
    if t.dtype != "uint64" or tuple(t.shape) != (KEY_WORDS,):
        raise TypeInferenceError(f"{op}: key must be a uint64 tensor of shape ({KEY_WORDS},) "
                                 f"(made by threefry_key), got {t.dtype} {shape_str(t.shape)}")


def _static_shape(shape, op):
    out = tuple(int(d) for d in shape)
    if any(d < 0 for d in out):
        raise TypeInferenceError(f"{op}: shape {out} has a negative dimension")
    return out


def _generate_rel(types, attrs):
    ts = tensor_args(types, ("key",), "random.threefry_generate")
    if ts is None:
        return None
    _check_key(ts[0], "random.threefry_generate")
    shape = _static_shape(attrs.out_shape, "random.threefry_generate")
    return TupleType([_KEY_T, TensorType(shape, "uint64")])


def _split_rel(types, attrs):
    ts = tensor_args(types, ("key",), "random.threefry_split")
    if ts is None:
        return None
    _check_key(ts[0], "random.threefry_split")
    return TupleType([_KEY_T, _KEY_T])


def _dist_rel(name, bounds):
    def rel(types, attrs):
        op = f"random.{name}"
        ts = tensor_args(types, ("key",) + bounds, op)
        if ts is None:
            return None
        _check_key(ts[0], op)
        if attrs.out_dtype not in _FLOATS:
            raise TypeInferenceError(f"{op}: out_dtype must be float32 or float64, got "
                                     f"{attrs.out_dtype}")
        for b, t in zip(bounds, ts[1:]):
            if t.dtype != attrs.out_dtype or len(t.shape) != 0:
                raise TypeInferenceError(f"{op}: {b} must be a {attrs.out_dtype} scalar, got "
                                         f"{t.dtype} {shape_str(t.shape)}")
        shape = _static_shape(attrs.out_shape, op)
        return TupleType([_KEY_T, TensorType(shape, attrs.out_dtype)])

    return rel


# --- NumPy reference (the interpreter) -------------------------------------------------------

def _np_key(key):
    key = np.asarray(key, dtype="uint64")
    return key[0] ^ key[2], key[1] ^ key[3], key[4], key[9]


def _np_blocks(key, n):
    k0, k1, path, ctr = _np_key(key)
    with np.errstate(over="ignore"):
        p1 = ctr + np.arange(n, dtype="uint64")
        return _rounds(k0, k1, np.full(n, path, "uint64"), p1, np.uint64)


def _np_next(key, n):
    out = np.array(key, dtype="uint64")
    with np.errstate(over="ignore"):
        out[9] = out[9] + np.uint64(n)
    return out


def _to_unit(bits, dtype):
    """``[0, 1)`` from the top mantissa bits of uint64 words."""
    m = _FLOATS[dtype]
    return ((bits >> np.uint64(64 - m)).astype(dtype) * np.asarray(2.0 ** -m, dtype)).astype(dtype)


def _generate_ref(args, attrs, out_type):
    shape = tuple(int(d) for d in attrs.out_shape)
    n = int(np.prod(shape, dtype=np.int64))
    return _np_next(args[0], n), _np_blocks(args[0], n)[0].reshape(shape)


def _split_ref(args, attrs, out_type):
    k0, k1, path, ctr = _np_key(args[0])
    with np.errstate(over="ignore"):
        a, b = _rounds(k0, k1, path ^ np.uint64(_SPLIT), ctr, np.uint64)
    left, right = np.array(args[0], "uint64"), np.array(args[0], "uint64")
    left[4], right[4] = a, b
    left[9] = right[9] = 0
    return left, right


def _uniform_ref(args, attrs, out_type):
    dtype = attrs.out_dtype
    shape = tuple(int(d) for d in attrs.out_shape)
    n = int(np.prod(shape, dtype=np.int64))
    low, high = (np.asarray(a, dtype) for a in args[1:3])
    u = _to_unit(_np_blocks(args[0], n)[0], dtype)
    return _np_next(args[0], n), (low + u * (high - low)).astype(dtype).reshape(shape)


def _normal_ref(args, attrs, out_type):
    dtype = attrs.out_dtype
    shape = tuple(int(d) for d in attrs.out_shape)
    n = int(np.prod(shape, dtype=np.int64))
    mean, scale = (np.asarray(a, dtype) for a in args[1:3])
    w0, w1 = _np_blocks(args[0], n)
    u1, u2 = _to_unit(w0, dtype), _to_unit(w1, dtype)
    z = np.sqrt(-2 * np.log1p(-u1)) * np.cos(np.asarray(2 * np.pi, dtype) * u2)
    return _np_next(args[0], n), (mean + scale * z.astype(dtype)).astype(dtype).reshape(shape)


# --- TE computes ----------------------------------------------------------------------------

def _ir_block(k, p0, p1):
    """Emit Threefry-2x64-20 of the block ``(p0, p1)`` under the key of the key buffer ``k``
    into an IR-builder body (inside a frame); returns the local buffers holding ``x0``, ``x1``.
    Statements, not one expression: each word is read twice per round, so one expression
    would double in size every round."""
    from tvm import tirx

    from .vision import _ir

    def c(v):
        return tirx.const(int(v), "uint64")

    ks = [_ir.local("uint64", k[0] ^ k[2]), _ir.local("uint64", k[1] ^ k[3])]
    ks.append(_ir.local("uint64", ks[0][0] ^ ks[1][0] ^ c(_PARITY)))
    x0 = _ir.local("uint64", p0 + ks[0][0])
    x1 = _ir.local("uint64", p1 + ks[1][0])
    for r in range(20):
        rot = _ROT[r % 8]
        x0[0] = x0[0] + x1[0]
        x1[0] = ((x1[0] << c(rot)) | (x1[0] >> c(64 - rot))) ^ x0[0]
        if r % 4 == 3:
            s = r // 4 + 1
            x0[0] = x0[0] + ks[s % 3][0]
            x1[0] = x1[0] + ks[(s + 1) % 3][0] + c(s)
    return x0, x1


def _kernel(name, inputs, shape, out_dtype, finish):
    """``[new_key, out]``: ``out[i] = finish(w0, w1, inputs)`` of the block of word ``i``."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    from .vision import _ir

    n = int(np.prod(shape, dtype=np.int64))
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]

    def body(ins, outs):
        k, (nk, out) = ins[0], outs
        with T.serial(0, 1):  # the IR builder's body is one statement
            for j in range(KEY_WORDS):
                nk[j] = k[j] + tirx.const(n, "uint64") if j == KEY_WORDS - 1 else k[j]
            with T.serial(0, n) as i:
                x0, x1 = _ir_block(k, k[4], k[9] + i.astype("uint64"))
                idx = [(i // st) % d for st, d in zip(strides, shape)]
                out[tuple(idx)] = finish(x0[0], x1[0], ins)

    return _ir.extern(name, [(KEY_WORDS,), shape], ["uint64", out_dtype], list(inputs), body)


def _te_unit(bits, dtype):
    from tvm import tirx

    m = _FLOATS[dtype]
    return (bits >> tirx.const(64 - m, "uint64")).astype(dtype) * tirx.const(2.0 ** -m, dtype)


def _generate_compute(attrs, inputs, out_type):
    shape = tuple(int(d) for d in attrs.out_shape)
    return _kernel("threefry_generate", inputs, shape, "uint64", lambda w0, w1, ins: w0)


def _split_compute(attrs, inputs, out_type):
    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    from .vision import _ir

    def body(ins, outs):
        k, (left, right) = ins[0], outs
        with T.serial(0, 1):
            x0, x1 = _ir_block(k, k[4] ^ tirx.const(_SPLIT, "uint64"), k[9])
            for j in range(KEY_WORDS):
                for dst, w in ((left, x0), (right, x1)):
                    dst[j] = (w[0] if j == 4 else tirx.const(0, "uint64")
                              if j == KEY_WORDS - 1 else k[j])

    return _ir.extern("threefry_split", [(KEY_WORDS,), (KEY_WORDS,)], ["uint64", "uint64"],
                      list(inputs), body)


def _uniform_compute(attrs, inputs, out_type):
    dtype = attrs.out_dtype
    shape = tuple(int(d) for d in attrs.out_shape)

    def finish(w0, w1, ins):
        low, high = ins[1][()], ins[2][()]
        return low + _te_unit(w0, dtype) * (high - low)

    return _kernel("uniform", inputs, shape, dtype, finish)


def _normal_compute(attrs, inputs, out_type):
    from tvm import tirx

    dtype = attrs.out_dtype
    shape = tuple(int(d) for d in attrs.out_shape)

    def finish(w0, w1, ins):
        u1, u2 = _te_unit(w0, dtype), _te_unit(w1, dtype)
        r = tirx.sqrt(tirx.const(-2.0, dtype) * tirx.log(tirx.const(1.0, dtype) - u1))
        return ins[1][()] + ins[2][()] * r * tirx.cos(tirx.const(2 * np.pi, dtype) * u2)

    return _kernel("normal", inputs, shape, dtype, finish)


register_op("random.threefry_generate", num_inputs=1, arguments=("key",),
            attrs=("relay.attrs.ThreefryGenerateAttrs", [F("out_shape", "ints")]),
            rel=_generate_rel, ref=_generate_ref, compute=_generate_compute,
            pattern=OpPattern.OPAQUE, level=10,
            doc="random uint64 words of a shape from a key, and the next key (Threefry-2x64)")
register_op("random.threefry_split", num_inputs=1, arguments=("key",),
            rel=_split_rel, ref=_split_ref, compute=_split_compute, pattern=OpPattern.OPAQUE,
            level=10, doc="two independent keys from one")
for _name, _bounds, _rel_ref_compute in (
        ("uniform", ("low", "high"), (_uniform_ref, _uniform_compute)),
        ("normal", ("mean", "scale"), (_normal_ref, _normal_compute))):
    register_op(f"random.{_name}", num_inputs=3, arguments=("key",) + _bounds,
                attrs=(f"relay.attrs.{_name.capitalize()}Attrs",
                       [F("out_shape", "ints"), F("out_dtype", "dtype", "float32")]),
                rel=_dist_rel(_name, _bounds), ref=_rel_ref_compute[0],
                compute=_rel_ref_compute[1], pattern=OpPattern.OPAQUE, level=10,
                doc=f"{_name} random numbers of a shape from a key, and the next key")


# --- constructors ---------------------------------------------------------------------------

def threefry_key(seed: int):
    """A new key from an integer ``seed`` (tvm.relay.random.threefry_key).

    Args:
        seed: 0 <= seed < 2**256.

    Returns:
        a ``relay.Constant`` uint64 tensor of shape (10,).

    Raises:
        ValueError: a negative seed or one of more than 256 bits.
    """
    from ..ir.expr import const

    seed = int(seed)
    if not 0 <= seed < 1 << 256:
        raise ValueError(f"threefry_key: seed must be in [0, 2**256), got {seed}")
    words = np.frombuffer(seed.to_bytes(32, sys.byteorder), dtype="uint64")
    tail = np.array([0, 0, 0, 0, 1 << 63, 0], dtype="uint64")
    return const(np.concatenate([words, tail]))


def _shape_attr(shape):
    return tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))


def threefry_generate(key, shape):
    """Random uint64 words (tvm.relay.random.threefry_generate).

    Args:
        key: a key, uint64 (10,) (from threefry_key / threefry_split / a previous draw);
            use each key once.
        shape: the output shape (static ints).

    Returns:
        a call whose value is the tuple ``(new_key, bits)`` (wrap it in ``relay.TupleWrapper(call, 2)`` to unpack): bits is uint64 of ``shape``.

    Raises:
        TypeInferenceError: at inference, a key of another dtype or shape.
    """
    return make_call("random.threefry_generate", [key],
                                  out_shape=_shape_attr(shape))


def threefry_split(key):
    """Two new independent keys from ``key`` (tvm.relay.random.threefry_split); returns the
    tuple expression ``(key1, key2)``; raises ``TypeInferenceError`` for a malformed key."""
    return make_call("random.threefry_split", [key])


def _bound(v, dtype):
    from ..ir.expr import Expr, const

    return v if isinstance(v, Expr) else const(v, dtype=dtype)


def uniform(key, shape, dtype="float32", low=0.0, high=1.0):
    """Uniform random numbers on ``[low, high)`` (tvm.relay.random.uniform).

    Args:
        key: a key (see threefry_generate).
        shape: the output shape.
        dtype: float32 or float64.
        low, high: bounds, numbers or scalar expressions of ``dtype``.

    Returns:
        a tuple expression ``(new_key, values)``.
    """
    return make_call("random.uniform", [key, _bound(low, dtype), _bound(high, dtype)],
                                  out_shape=_shape_attr(shape), out_dtype=dtype)


def normal(key, shape, dtype="float32", mean=0.0, scale=1.0):
    """Normal random numbers of mean ``mean`` and standard deviation ``scale``
    (tvm.relay.random.normal); the arguments and result are as :func:`uniform`'s."""
    return make_call("random.normal",
                                  [key, _bound(mean, dtype), _bound(scale, dtype)],
                                  out_shape=_shape_attr(shape), out_dtype=dtype)


__all__ = ["threefry_key", "threefry_generate", "threefry_split", "uniform", "normal"]
