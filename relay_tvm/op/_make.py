"""tvm.relay 0.19's ``relay.op._make``: the operator constructors with positional arguments,
``_make.concatenate(data, axis)``, as Relay's C++ ``Make*`` functions took them (the inputs,
then the attributes in declaration order).

``_make.<name>`` exists for every registered operator without a namespace (``add``,
``concatenate``, ``reshape``, ...); the namespaced operators have theirs where 0.19 kept them:
``relay.op.nn._make.conv2d``, ``relay.op.image._make.resize2d``, ``relay.op.vision._make``,
``relay.op.random._make``, ``relay.op.dyn._make``, ``relay.op.annotation._make``,
``relay.qnn.op._make`` (a :class:`Namespace` each, attached by ``relay_tvm.op`` and
``relay_tvm.qnn.op``). The attributes' order is the operator's
attribute schema (``relay_tvm.op.get(name).attrs_schema``), which follows Relay's.
"""

from __future__ import annotations

from ..errors import RelayError
from ._common import named


def _maker(name):
    from .registry import get, make_call

    op = get(name)

    def make(*args, **kwargs):
        n = op.num_inputs if op.num_inputs >= 0 else len(op.arguments)
        inputs, values = list(args[:n]), args[n:]
        fields = list(op.attrs_schema.fields) if op.attrs_schema is not None else []
        if len(values) > len(fields):
            raise RelayError(f"_make.{name}: {len(args)} arguments given; it takes {n} inputs "
                             f"{list(op.arguments)} and the attributes {fields}")
        attrs = dict(zip(fields, values))
        attrs.update(kwargs)
        return make_call(name, inputs, **attrs)

    named(make, name)
    make.__doc__ = f"``{name}`` with positional inputs {list(op.arguments)}, then attributes."
    return make


class Namespace:
    """The ``_make`` of one operator namespace: ``Namespace("nn", "relay.op.nn").conv2d`` is
    the positional constructor of ``nn.conv2d``; the prefix ``""`` is this module's (the
    operators without a namespace).

    Raises:
        AttributeError: no operator ``<prefix>.<name>`` is registered.
    """

    def __init__(self, prefix: str, where: str):
        self._prefix, self._where = prefix, where

    def _full(self, name: str) -> str:
        return f"{self._prefix}.{name}" if self._prefix else name

    def __getattr__(self, name):
        from .registry import is_registered

        full = self._full(name)
        if name.startswith("_") or "." in name or not is_registered(full):
            raise AttributeError(f"{self._where}._make has no operator {name!r} (no {full!r} "
                                 f"is registered)")
        return _maker(full)

    def __dir__(self):
        from .registry import list_op_names

        pre = self._full("")
        return sorted(n[len(pre):] for n in list_op_names()
                      if n.startswith(pre) and "." not in n[len(pre):])

    def __repr__(self):
        return f"<{self._where}._make: constructors of the {self._prefix or 'un-namespaced'} " \
               f"operators>"


_ROOT = Namespace("", "relay.op")


def __getattr__(name):
    return getattr(_ROOT, name)
