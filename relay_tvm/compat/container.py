"""``tvm.runtime.container`` of TVM 0.19 (removed in 0.27), as relay_tvm's executors return
values: a tuple result is a Python ``tuple`` of tensors and an algebraic-data-type value is a
:class:`relay_tvm.runtime.interpreter.ConstructorValue`. 0.19's runtime gave both as one
``ADT`` object (a tag and fields; iterating it gives the fields), so ``ADT`` here is a class
that both are instances of: ``isinstance(result, tvm.runtime.container.ADT)`` holds for tuple
and constructor results, and ``ADT(tag, fields)`` makes a tuple value (tag 0) as 0.19 did.
``tuple_object(fields)`` makes one."""

from __future__ import annotations


class _ADTMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        from ..runtime.interpreter import ConstructorValue

        return isinstance(obj, (tuple, ConstructorValue))

    def __subclasscheck__(cls, sub) -> bool:
        from ..runtime.interpreter import ConstructorValue

        return issubclass(sub, (tuple, ConstructorValue))


class ADT(metaclass=_ADTMeta):
    """A runtime tuple or constructor value (TVM 0.19's ``tvm.runtime.container.ADT``).

    ``ADT(0, fields)`` is the tuple of ``fields``; another tag names a constructor, which has
    no meaning without its module here, so it raises ``ValueError`` (build constructor values
    with ``relay_tvm.runtime.interpreter.ConstructorValue(constructor, fields)``).
    """

    def __new__(cls, tag, fields):
        if int(tag) != 0:
            raise ValueError(f"ADT({tag}, ...): only tag 0 (a tuple) can be built without its "
                             "constructor; use ConstructorValue(constructor, fields)")
        return tuple(fields)


def tuple_object(fields=None) -> tuple:
    """A tuple value holding ``fields``."""
    return tuple(fields or ())


class _KindMeta(type):
    """``isinstance`` against the Python types relay_tvm gives for a 0.19 container class."""

    _kinds: tuple = ()

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls._kinds)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls._kinds)


class Map(metaclass=_KindMeta):
    """TVM 0.19's ``tvm.container.Map``: relay_tvm's APIs give Python dicts (and TVM's own
    ``Map`` is a ``Mapping``), so any ``Mapping`` is one. ``Map(d)`` gives ``dict(d)``."""

    from collections.abc import Mapping as _M

    _kinds = (_M,)
    del _M

    def __new__(cls, items=None):
        return dict(items or {})


class ShapeTuple(metaclass=_KindMeta):
    """TVM 0.19's ``ShapeTuple``: a shape is a Python tuple of ints here (TVM 0.27's
    ``tvm_ffi.Shape`` is a tuple too). ``ShapeTuple([2, 3])`` gives ``(2, 3)``.

    Raises:
        TypeError: a dimension is not an integer.
    """

    _kinds = (tuple,)

    def __new__(cls, dims=()):
        out = []
        for d in dims:
            if isinstance(d, bool) or not hasattr(d, "__index__"):
                raise TypeError(f"ShapeTuple: dimensions must be integers, got {d!r}")
            out.append(int(d))
        return tuple(out)


class String(metaclass=_KindMeta):
    """TVM 0.19's ``tvm.runtime.container.String``: a Python ``str`` here."""

    _kinds = (str,)

    def __new__(cls, value=""):
        return str(value)
