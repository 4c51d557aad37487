"""The exception hierarchy of relay_tvm.

Every error the package raises on purpose derives from :class:`RelayError`. Messages say what was
wrong, where (a span or a node name) and what was expected::

    RelayError
    ├── TypeInferenceError      type checking failed (unification, a type relation, arity, ...)
    │   └── UntypedError        ``checked_type`` read before type inference ran (also a ValueError)
    ├── WellFormedError         unbound / doubly bound variables and other malformed IR
    ├── StructuralMismatchError ``assert_structural_equal`` found two programs that differ
    │                           (also a ValueError)
    ├── ParseError              the text format could not be parsed (carries all diagnostics)
    ├── AttributeSchemaError    an operator got an unknown or badly typed attribute
    ├── UnsupportedOperatorError / OpNotImplemented
    │                           an importer met operators it cannot convert (lists all of them)
    ├── ConversionError         an importer met a malformed model or parameter file
    ├── NotProvidedError        a tvm.relay 0.19 name relay_tvm cannot provide faithfully (also an
    │   │                       AttributeError); the message names what to use instead
    │   └── UnsupportedFrontendError  a tvm.relay 0.19 frontend relay_tvm lacks
    ├── ModuleNotProvidedError  a tvm.relay 0.19 / TVM 0.19 module relay_tvm does not provide
    │                           (``import tvm.relay.frontend.onnx``, ``from tvm import
    │                           autotvm``; also an ImportError); the message names what to use
    ├── InterpreterError        the reference interpreter failed (non-exhaustive match at run time)
    ├── GradientError           ``transform.gradient`` met a program or operator it cannot differentiate
    └── BuildError              lowering or compiling failed, or a runtime input is wrong
        └── InputError          an argument or bound parameter does not match the declared type
"""

from __future__ import annotations

from tvm.error import DiagnosticError as _DiagnosticError


class RelayError(RuntimeError):
    """Base class of all errors raised by relay_tvm.

    A ``RuntimeError``, as tvm.relay 0.19's ``TVMError`` was: TVM 0.27 has no ``TVMError``
    class (its FFI errors are ``RuntimeError`` and other built-ins), and relay_tvm's
    compatibility layer names ``RuntimeError`` ``tvm.error.TVMError``, so 0.19-era
    ``pytest.raises(tvm.error.TVMError)`` catches relay_tvm's errors.

    Args:
        message: what went wrong and what was expected.
        span: optional :class:`relay_tvm.ir.Span` naming where; appended to the message.
    """

    def __init__(self, message: str, span=None):
        self.span = span
        if span is not None:
            message = f"{message}\n  at {span}"
        super().__init__(message)


class TypeInferenceError(RelayError):
    """Type inference failed: two types do not unify, a type relation rejected its arguments,
    a call has the wrong number of arguments, a condition is not a boolean scalar, etc."""


class UntypedError(RelayError, ValueError):
    """``checked_type`` was read on a node that type inference has not visited."""


class WellFormedError(RelayError):
    """The IR is malformed: a variable is unbound, bound twice, or a node is of the wrong kind."""


class StructuralMismatchError(RelayError, ValueError):
    """``assert_structural_equal`` / ``assert_graph_equal`` found the two sides different; the
    message shows both and their first difference. Also a ``ValueError``, the class TVM 0.19
    and TVM 0.27 raise for it, so ``pytest.raises(ValueError)`` holds."""


class ParseError(RelayError, _DiagnosticError):
    """The Relay text could not be parsed.

    Also a ``tvm.error.DiagnosticError``, the class tvm.relay 0.19's parser raised (it reported
    through TVM's diagnostic context), so ``pytest.raises(tvm.error.DiagnosticError)`` holds.

    Attributes:
        diagnostics: list of ``(line, column, message)`` for every error found.
    """

    def __init__(self, message: str, diagnostics=None, span=None):
        self.diagnostics = list(diagnostics or [])
        super().__init__(message, span)


class AttributeSchemaError(RelayError, TypeError):
    """An operator attribute is unknown, missing or of the wrong kind."""


class UnsupportedOperatorError(RelayError):
    """A frontend met operators it cannot convert; the message lists all of them with counts."""


OpNotImplemented = UnsupportedOperatorError


class ConversionError(RelayError):
    """A frontend met a malformed model: bad JSON, missing or mismatched parameters, corrupt files."""


class UnknownInputError(ConversionError):
    """A frontend was given a shape or dtype for an input name its graph does not have (the
    caller's argument, not the model, is wrong: the command line reports it as a usage error)."""


class InputShapeError(ConversionError):
    """An operator of a frontend's graph refused the shape given for one of its inputs (the
    caller's ``shape=`` argument, like :class:`UnknownInputError`, rather than the model, is
    likely wrong: the command line reports it as a usage error of ``--shape``).

    Attributes:
        input_name: the input whose given shape the operator refused.
    """

    def __init__(self, message: str, input_name: str, span=None):
        super().__init__(message, span)
        self.input_name = input_name


class NotProvidedError(RelayError, AttributeError):
    """A tvm.relay 0.19 name (module attribute, pass, method) that relay_tvm does not provide
    because it cannot behave as 0.19's did; the message names what is missing and what to use
    instead. Also an ``AttributeError``, so ``hasattr`` is False for such module attributes."""


def not_provided_getattr(module: str, messages: dict):
    """A module-level ``__getattr__`` for ``module``: a name of ``messages`` (tvm.relay 0.19
    names relay_tvm does not provide) raises :class:`NotProvidedError` with its message, any
    other name Python's ``AttributeError``."""

    def __getattr__(name):
        why = messages.get(name)
        if why is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise NotProvidedError(why)

    return __getattr__


class UnsupportedFrontendError(NotProvidedError):
    """A tvm.relay 0.19 frontend that relay_tvm does not have (``relay.frontend.from_onnx``,
    ...). Also an ``AttributeError``, so ``hasattr(relay.frontend, "from_onnx")`` is False."""


class ModuleNotProvidedError(RelayError, ImportError):
    """Importing a module of tvm.relay 0.19 or TVM 0.19 that relay_tvm does not provide
    (``tvm.relay.frontend.onnx`` and the other frontends it lacks, ``tvm.autotvm``): the
    message names what to use instead. Also an ``ImportError`` (not a ``ModuleNotFoundError``:
    ``from tvm import autotvm`` would replace that by "cannot import name 'autotvm'"), so
    ``try: import ... except ImportError`` feature detection keeps working."""


class InterpreterError(RelayError):
    """The reference interpreter could not evaluate a program (e.g. no match clause applies)."""


class GradientError(RelayError):
    """Automatic differentiation (``transform.gradient``) cannot differentiate the program: an
    operator without a gradient rule on floating-point data, an integer parameter, a construct the
    chosen mode does not support."""


class BuildError(RelayError):
    """Lowering, scheduling or compiling failed, or a compiled module got a bad input."""


class InputError(BuildError, ValueError):
    """An argument given to an executor, or a parameter bound by name, does not have the dtype
    and shape its parameter declares (nothing is cast or broadcast); also other values a user
    gives that cannot be taken as they are: a target string or an ``-mattr`` feature TVM or
    LLVM does not know, a ``relay.const`` value its dtype cannot hold."""


class TuningError(RelayError):
    """Autotuning (``relay_tvm.tune``) cannot start or continue: an unknown target, a work
    directory holding another model's or target's database, a corrupted database file, an RPC
    tracker that is down or a device key nobody serves, a budget that is not a positive number."""


class NotFullyIntegralError(RelayError, AssertionError):
    """``relay.quantize.quantize`` under ``qconfig(partition_conversions="fully_integral")``:
    the quantized program is not integer-only between its input quantization and its output
    dequantization (a float operator was left unquantized, or an end holds other operators
    than the conversions). Also an ``AssertionError``, which 0.19 raised for it."""


def close_names(name, choices, n: int = 1, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``choices`` closest to ``name``, the nearest first: those equal to it but
    for case (``"X"`` for ``"x"``), then ``difflib``'s close matches (ratio >= ``cutoff``)
    compared case-insensitively. ``name`` itself is never one of them.

    Args:
        name: the unknown name (any object: compared as ``str``).
        choices: the known names.
        n: at most this many.
        cutoff: ``difflib.get_close_matches``' similarity threshold, 0..1.
    """
    import difflib

    name = str(name)
    key = name.casefold()
    by_key: dict[str, list[str]] = {}
    for c in dict.fromkeys(str(c) for c in choices):
        if c != name:
            by_key.setdefault(c.casefold(), []).append(c)
    # a case-only difference first: difflib ranks "X" against "x" at 0 and never offers it
    keys = ([key] if key in by_key else []) + [
        k for k in difflib.get_close_matches(key, list(by_key), n=n + 1, cutoff=cutoff)
        if k != key]
    return [c for k in keys for c in by_key[k]][:n]


def did_you_mean(name, choices, *, n: int = 1, cutoff: float = 0.6, show=repr,
                 clause: bool = False) -> str:
    """The tail of an error message about an unknown name: ``" (did you mean 'x'?)"`` naming
    the choices closest to ``name`` (:func:`close_names`: case-only differences first, then
    ``difflib``), or ``""`` when none is close.

    Args:
        name, choices, n, cutoff: as :func:`close_names`.
        show: how a choice is written (``repr`` by default; ``str`` for operator names,
            ``lambda c: "%" + c`` for Relay variables, ...).
        clause: ``"; did you mean 'x'?"`` instead of the parenthesis.
    """
    close = close_names(name, choices, n=n, cutoff=cutoff)
    if not close:
        return ""
    text = f"did you mean {' or '.join(show(c) for c in close)}?"
    return f"; {text}" if clause else f" ({text})"


def no_implicit_cast(want, value=None) -> str:
    """The tail of an error message about a value of the wrong dtype: ``" (no implicit cast;
    convert it with .astype('float32'))"`` naming the expected dtype ``want`` (``value``: the
    value given; a tvm tensor is converted through ``.numpy()``)."""
    import numpy as np

    tensor = not isinstance(value, np.ndarray) and hasattr(value, "numpy")
    how = ".numpy().astype" if tensor else ".astype"
    return f" (no implicit cast; convert it with {how}({str(want)!r}))"


__all__ = [
    "not_provided_getattr",
    "UnknownInputError",
    "InputShapeError",
    "close_names",
    "did_you_mean",
    "no_implicit_cast",
    "NotFullyIntegralError",
    "GradientError",
    "TuningError",
    "InputError",
    "RelayError",
    "TypeInferenceError",
    "UntypedError",
    "WellFormedError",
    "StructuralMismatchError",
    "ParseError",
    "AttributeSchemaError",
    "UnsupportedOperatorError",
    "OpNotImplemented",
    "ConversionError",
    "NotProvidedError",
    "UnsupportedFrontendError",
    "ModuleNotProvidedError",
    "InterpreterError",
    "BuildError",
]
