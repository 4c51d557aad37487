"""C-name helpers of tvm.relay 0.19's backend (``relay.backend.name_transforms`` and
``tvm.runtime.name_transforms``): the names TVM's C code generators gave generated symbols.

``prefix_name(["Device", "Invoke"]) -> "TVM_Device_Invoke"``, ``prefix_generated_name`` the
same with ``TVMGen``; ``to_c_function_style("TVMGen_model_run") -> "TVMGenModelRun"``,
``to_c_variable_style(...) -> "tvmgen_model_run"``, ``to_c_constant_style(...) ->
"TVMGEN_MODEL_RUN"``; ``sanitize_name`` replaces every character that is not a letter, digit
or ``_`` by ``_``. Empty names and names without the TVM prefix raise :class:`NameError_`.
"""

from __future__ import annotations

from ..errors import RelayError


class NameError_(RelayError):  # noqa: N801 - not Python's NameError
    """An empty name, an empty segment, or a name without the ``TVM`` prefix."""


def _check(name: str, what: str) -> None:
    if not name:
        raise NameError_(f"{what} name is empty")
    if not name.startswith("TVM"):
        raise NameError_(f"{what} not TVM prefixed: {name!r}")


def to_c_function_style(original_name: str) -> str:
    """``TVM_foo_bar`` -> ``TVMFooBar`` (each ``_``-separated word capitalized, joined)."""
    _check(original_name, "Function")
    head, *words = original_name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in words)


def to_c_variable_style(original_name: str) -> str:
    """``TVM_Foo_bar`` -> ``tvm_foo_bar``."""
    _check(original_name, "Variable")
    return original_name.lower()


def to_c_constant_style(original_name: str) -> str:
    """``TVM_foo_bar`` -> ``TVM_FOO_BAR``."""
    _check(original_name, "Constant")
    return original_name.upper()


def _combine(prefix: str, names) -> str:
    if isinstance(names, str):
        if not names:
            raise NameError_("Name is empty")
        names = [names]
    names = list(names)
    if not names:
        raise NameError_("Name segments empty")
    if any(not n for n in names):
        raise NameError_("Name segment is empty")
    return "_".join([prefix, *names])


def prefix_name(names) -> str:
    """``"x"`` or ``["x", "y"]`` -> ``TVM_x`` / ``TVM_x_y``."""
    return _combine("TVM", names)


def prefix_generated_name(names) -> str:
    """``"x"`` or ``["x", "y"]`` -> ``TVMGen_x`` / ``TVMGen_x_y``."""
    return _combine("TVMGen", names)


def sanitize_name(original_name: str) -> str:
    """Every character other than an ASCII letter, digit or ``_`` replaced by ``_``."""
    if not original_name:
        raise NameError_("Name is empty")
    return "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_" for c in original_name)


__all__ = ["to_c_function_style", "to_c_variable_style", "to_c_constant_style", "prefix_name",
           "prefix_generated_name", "sanitize_name", "NameError_"]
