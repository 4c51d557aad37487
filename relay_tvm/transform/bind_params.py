"""Binding parameters to constants by name (``tvm.relay.build_module.bind_params_by_name``) and
the check of a value against a parameter's type that binding and the executors share.

Nothing is cast or broadcast: a value must have the declared dtype and shape.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import InputError, RelayError, no_implicit_cast
from ..ir.expr import Constant, Function
from ..ir.functor import substitute
from ..ir.types import TensorType, type_str


def _as_array(x):
    """A user value (NumPy array, tvm Tensor, scalar, nested tuple) as NumPy data."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "numpy"):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return tuple(_as_array(v) for v in x)
    return np.asarray(x)


def check_arg(value, ty, where: str, sizes=None):
    """Check a user tensor against a parameter's tensor type: no silent cast or broadcast.

    The value (a NumPy array or a tvm tensor) must have the type's dtype and shape; a symbolic
    dimension (``tvm.tir.Var``) takes the size of its first occurrence and must have it wherever
    else it occurs in the values checked with the same ``sizes`` dict; ``Any`` takes any size.
    Other types are not checked here (:func:`relay_tvm.runtime.argcheck.check_value` checks
    tuples, ADT values, references and functions, and calls this for their tensors).

    Args:
        value: the value.
        ty: the parameter's type.
        where: the argument, for messages (``"argument 0 (%x)"``).
        sizes: ``{tir.Var: (size, where)}`` shared across the arguments of one call.

    Raises:
        InputError: dtype or shape differs, or not a tensor.
    """
    if isinstance(ty, TensorType):
        _check_tensor(value, ty, where, {} if sizes is None else sizes)


def describe_kind(v) -> str:
    """How a value is named in messages: its class, a tensor's shape and dtype, the length of
    a list or tuple."""
    if isinstance(v, np.ndarray):
        return f"a NumPy array ({np.asarray(v).dtype}, shape {tuple(v.shape)})"
    if type(v) in (list, tuple):
        return f"a {type(v).__name__} of {len(v)}"
    return type(v).__name__


def not_a_tensor(ty, where: str, value) -> InputError:
    """The error for a value that is not a tensor given for a parameter of tensor type
    ``ty`` (``value``: what the user passed, named in the message)."""
    return InputError(f"{where}: expected a NumPy array or a tvm tensor ({type_str(ty)}), "
                      f"got {describe_kind(value)}")


def _check_tensor(value, ty, where, sizes):
    if not hasattr(value, "shape") or not hasattr(value, "dtype"):
        raise not_a_tensor(ty, where, value)
    want = ty.dtype
    nd = _np_dtype(want)
    if nd is not None and isinstance(value, np.ndarray) and value.dtype == nd:
        got = want
    else:
        got = "bool" if value.dtype == np.bool_ else np.dtype(str(value.dtype)).name
    if got != want:
        raise InputError(f"{where}: got dtype {got}, expected {want}"
                         f"{no_implicit_cast(want, value)}")
    shape = tuple(int(d) for d in value.shape)
    if len(shape) != len(ty.shape):
        raise InputError(f"{where}: got shape {shape}, expected {type_str(ty)}")
    for i, (d, s) in enumerate(zip(ty.shape, shape)):
        if isinstance(d, int):
            if d != s:
                raise InputError(f"{where}: got shape {shape}, expected {type_str(ty)}")
        elif _is_size_var(d):
            seen = next((k for k in sizes if k.same_as(d)), None)
            if seen is None:
                sizes[d] = (s, f"{where}.shape[{i}]")
            elif sizes[seen][0] != s:
                size, first = sizes[seen]
                raise InputError(f"{where}: got shape {shape}, expected {type_str(ty)}: "
                                 f"{d.name} is {size} ({first}), here {s}")


@functools.lru_cache(maxsize=None)
def _np_dtype(name: str):
    try:
        return np.dtype(name)
    except TypeError:  # a dtype NumPy does not have (bfloat16, custom): compared by name
        return None


def _is_size_var(d) -> bool:
    """A symbolic dimension named by a variable (``tvm.tir.Var``), not ``Any`` (any size)."""
    return hasattr(d, "same_as") and hasattr(d, "name") and type(d).__name__ in (
        "Var", "SizeVar")


def list_to_array(value, dtype: str, where: str) -> np.ndarray:
    """``value`` (a Python number, or a nested list of them) as a NumPy array of ``dtype``.

    Args:
        value: a Python ``bool`` / ``int`` / ``float``, or a list (nested for more
            dimensions; rows of equal length).
        dtype: the parameter's dtype (e.g. ``"float32"``).
        where: the argument, for messages (``"argument 0 (%x)"``).

    Raises:
        InputError: ragged rows, elements that are not numbers, booleans for a dtype other
            than ``bool``, or values ``dtype`` cannot hold exactly (fractions for an integer
            dtype, integers out of range, finite values beyond a float dtype's range).
    """
    listed = isinstance(value, list)
    what = "the list's values do" if listed else f"the value {value!r} does"
    import warnings

    try:
        with warnings.catch_warnings():
            # NumPy < 1.24 warns of ragged rows (VisibleDeprecationWarning, leaked before the
            # InputError; fresh-user trial) and makes an object array: the same error as 1.24's
            warnings.simplefilter("error", getattr(np, "VisibleDeprecationWarning", Warning))
            arr = np.array(value)
    except (ValueError, Warning):  # ragged rows
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor, or a list of "
                         f"numbers with rows of equal length (its rows differ in length)"
                         ) from None
    if arr.dtype.kind == "O" and isinstance(value, int):  # an integer beyond 64 bits
        raise InputError(f"{where}: {what} not fit dtype {dtype} (out-of-range integer)")
    if arr.dtype.kind == "b" and np.dtype(dtype).kind != "b":
        which = "the list's values are" if listed else f"{value!r} is"
        raise InputError(f"{where}: {which} boolean, the parameter is {dtype} (a Python bool "
                         f"is not taken for a number); pass a number or a NumPy array of dtype "
                         f"{dtype}")
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor (a list converts "
                         f"only when it holds numbers; this one holds {arr.dtype} elements)")
    kind = np.dtype(dtype).kind
    with np.errstate(all="ignore"):
        out = arr.astype(dtype)
        if kind in "biu":
            fits = np.array_equal(out.astype(arr.dtype), arr)
        elif kind in "fc":
            fits = bool(np.all(np.isfinite(out) | ~np.isfinite(arr)))
        else:
            fits = True
    if not fits:
        why = "fractions or out-of-range integers" if kind in "biu" else "beyond its range"
        raise InputError(f"{where}: {what} not fit dtype {dtype} exactly ({why}); pass a "
                         f"NumPy array of dtype {dtype}")
    return out


#: the function attribute recording the params bound into a function by name (JSON
#: ``{name: param_fingerprint}``): ``relay.build(mod, params=params)`` after
#: ``bind_params_by_name`` or ``relay.quantize.quantize``, a common tvm.relay 0.19 idiom, then
#: skips those params when their values are the ones bound and refuses different ones
BOUND_PARAMS_ATTR = "relay_tvm.bound_params"


def param_fingerprint(value) -> str:
    """dtype, shape and a SHA-1 of the bytes of a NumPy array / tvm Tensor."""
    import hashlib

    a = np.ascontiguousarray(value.numpy() if hasattr(value, "numpy") else np.asarray(value))
    return f"{a.dtype}{a.shape}:{hashlib.sha1(a.tobytes()).hexdigest()}"


def record_bound_params(func: Function, params: dict) -> Function:
    """``func`` with ``params``' fingerprints added to its :data:`BOUND_PARAMS_ATTR` record (a
    JSON string, so that the text format keeps it)."""
    import json

    old = func.attrs.get(BOUND_PARAMS_ATTR) if func.attrs is not None else None
    record = json.loads(old) if isinstance(old, str) else dict(old or {})
    record.update({k: param_fingerprint(v) for k, v in params.items()})
    return func.with_attr(BOUND_PARAMS_ATTR, json.dumps(record, sort_keys=True))


def bind_params_by_name(func: Function, params: dict, record: bool = True) -> Function:
    """Replace the parameters of ``func`` named in ``params`` by constants.

    A value must have exactly the dtype and shape the parameter declares (nothing is cast or
    broadcast); a Python scalar takes the declared dtype where it holds the value exactly.
    Names that are not parameters of ``func`` are skipped (as in tvm.relay 0.19), with a
    ``UserWarning`` naming them (and the closest parameter) when ``record`` is set. With
    ``record`` (the default) the result remembers what was bound (:data:`BOUND_PARAMS_ATTR`),
    so that ``relay.build(mod, params=params)`` afterwards accepts the same values again.

    Raises:
        RelayError: two parameters share a bound name, or a value's dtype or shape differs from
            the parameter's annotation (naming the parameter and both types), or a Python
            scalar the declared dtype cannot hold exactly (an InputError: a fraction for an
            integer dtype, an integer out of its range, a bool for a number).
    """
    if not params:
        return func
    by_name = {}
    for p in func.params:
        if p.name_hint in by_name:
            if p.name_hint in params:
                raise RelayError(f"cannot bind parameter {p.name_hint!r}: several parameters have that name")
        by_name[p.name_hint] = p
    binds = {}
    if record:  # the user-facing call: 0.19 skipped such names silently
        unknown = [k for k in params if k not in by_name]
        if unknown:
            import warnings

            from ..errors import did_you_mean

            hint = did_you_mean(unknown[0], by_name) if len(unknown) == 1 else ""
            warnings.warn(f"bind_params_by_name: {unknown} are not parameters of the function"
                          f"{hint} (parameters: {sorted(by_name)}); they are skipped, as in "
                          f"tvm.relay 0.19", stacklevel=2)
    for name, value in params.items():
        if name not in by_name:
            continue
        p = by_name[name]
        ann = p.type_annotation
        if isinstance(value, (bool, int, float)) and isinstance(ann, TensorType):
            # a Python scalar has no dtype of its own: it takes the declared one, where that
            # holds it exactly (0.5 for an int32 parameter was bound as 0, 2**40 as 0)
            value = list_to_array(value, ann.dtype, f"param {name!r}")
        if not isinstance(value, (np.ndarray, np.generic, list, tuple, bool, int, float)) \
                and not hasattr(value, "numpy"):
            # NumPy made an object array of it, refused as "dtype object" with advice to cast
            # (an MXNet NDArray; fresh-user trial)
            hint = (" (an MXNet NDArray: pass its .asnumpy())" if hasattr(value, "asnumpy")
                    else "")
            raise InputError(f"param {name!r}: expected a NumPy array or a tvm Tensor, got "
                             f"{type(value).__module__}.{type(value).__name__}{hint}")
        arr = np.asarray(_as_array(value))
        if isinstance(ann, TensorType):
            what = f"param {name!r}"
            if isinstance(value, (list, tuple)):  # NumPy's dtype for it, not one the user gave
                what += f" (a Python {type(value).__name__}, which NumPy reads as {arr.dtype})"
            check_arg(arr, ann, what)
        binds[p] = Constant(arr)
    out = substitute(func, binds)
    if record and binds:
        out = record_bound_params(out, {p.name_hint: c.data for p, c in binds.items()})
    return out


__all__ = ["bind_params_by_name", "check_arg", "BOUND_PARAMS_ATTR", "param_fingerprint",
           "record_bound_params"]
