"""Backend helpers of tvm.relay 0.19 (``relay.backend.utils``)."""

from __future__ import annotations


def mangle_module_name(name: str | None) -> str:
    """The C-symbol prefix of a built module: ``"default" -> "tvmgen_default"``, empty or None
    -> ``"tvmgen"``.

    Raises:
        ValueError: ``name`` has non-ASCII characters (not valid in a C symbol).
    """
    if not name:
        return "tvmgen"
    if not name.isascii():
        raise ValueError(f"module name {name!r} has non-ASCII characters; a C symbol cannot")
    return "tvmgen_" + name


__all__ = ["mangle_module_name"]
