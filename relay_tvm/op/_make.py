"""tvm.relay 0.19's ``relay.op._make``: the operator constructors with positional arguments,
``_make.concatenate(data, axis)``, as Relay's C++ ``Make*`` functions took them (the inputs,
then the attributes in declaration order).

``_make.<name>`` exists for every registered operator without a namespace (``add``,
``concatenate``, ``reshape``, ...); the attributes' order is the operator's attribute schema
(``relay_tvm.op.get(name).attrs_schema``), which follows Relay's.
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
    make.__doc__ = f"``{name}`` with positional inputs {list(op.arguments)}, then attributes."
    return make


def __getattr__(name):
    from .registry import is_registered

    if name.startswith("_") or "." in name or not is_registered(name):
        raise AttributeError(f"relay.op._make has no operator {name!r}")
    return _maker(name)
