"""tvm.relay 0.19's ``relay.op._make``: the operator constructors with positional arguments,
``_make.concatenate(data, axis)``, as Relay's C++ ``Make*`` functions took them (the inputs,
then the attributes in declaration order).

``_make.<name>`` exists for every registered operator without a namespace (``add``,
``concatenate``, ``reshape``, ...); the namespaced operators have theirs where 0.19 kept them:
``relay.op.nn._make.conv2d``, ``relay.op.image._make.resize2d``, ``relay.op.vision._make``,
``relay.op.random._make``, ``relay.op.dyn._make``, ``relay.op.annotation._make``,
``relay.qnn.op._make`` (a :class:`Namespace` each). The attributes' order is the operator's
attribute schema (``relay_tvm.op.get(name).attrs_schema``), which follows Relay's.
"""

from __future__ import annotations

from ..errors import RelayError


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

    make.__name__ = name
    make.__qualname__ = make.__name__  # TypeErrors name the op
    make.__doc__ = f"``{name}`` with positional inputs {list(op.arguments)}, then attributes."
    return make


def __getattr__(name):
    from .registry import is_registered

    if name.startswith("_") or "." in name or not is_registered(name):
        raise AttributeError(f"relay.op._make has no operator {name!r}")
    return _maker(name)


class Namespace:
    """The ``_make`` of one operator namespace: ``Namespace("nn").conv2d`` is the positional
    constructor of ``nn.conv2d`` (as the module-level ``_make.<name>`` for un-namespaced ones).

    Raises:
        AttributeError: no operator ``<prefix>.<name>`` is registered.
    """

    def __init__(self, prefix: str, where: str):
        self._prefix, self._where = prefix, where

    def __getattr__(self, name):
        from .registry import is_registered

        full = f"{self._prefix}.{name}"
        if name.startswith("_") or "." in name or not is_registered(full):
            raise AttributeError(f"{self._where}._make has no operator {name!r} (no {full!r} "
                                 f"is registered)")
        return _maker(full)

    def __dir__(self):
        from .registry import list_op_names

        pre = self._prefix + "."
        return sorted(n[len(pre):] for n in list_op_names()
                      if n.startswith(pre) and "." not in n[len(pre):])

    def __repr__(self):
        return f"<{self._where}._make: constructors of the {self._prefix}.* operators>"
