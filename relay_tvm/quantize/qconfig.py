"""The quantization configuration (tvm.relay 0.19's ``QConfig``, ``qconfig``,
``current_qconfig``) and the annotation context (``QuantizeContext``: which conv2d layers to
skip, when to stop quantizing)."""

from __future__ import annotations

import enum
import math
import threading

import numpy as np

from ..errors import RelayError, did_you_mean


class QAnnotateKind(enum.IntEnum):
    """The kind of a quantization annotation: which bit width and dtype apply
    (``nbit_input``/``dtype_input`` for INPUT, ``*_weight`` for WEIGHT, ``*_activation`` for
    ACTIVATION; IDENTITY passes values through)."""

    IDENTITY = 0
    INPUT = 1
    WEIGHT = 2
    ACTIVATION = 3


def kind2str(kind) -> str:
    """``"identity"``, ``"input"``, ``"weight"`` or ``"activation"`` for a :class:`QAnnotateKind`."""
    return QAnnotateKind(int(kind)).name.lower()


_CHOICES = {
    "calibrate_mode": ("global_scale", "kl_divergence", "percentile"),
    "weight_scale": ("power2", "max", "channel_max"),
    "rounding": ("UPWARD", "TONEAREST"),
    "partition_conversions": ("disabled", "enabled", "fully_integral"),
}

_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


class QConfig:
    """The settings of automatic quantization; build one with :func:`qconfig`, use it as a
    ``with`` block. Fields are read-only (0.19's rule); see :func:`qconfig` for their meaning."""

    _node_defaults = {
        "nbit_input": 8,
        "nbit_weight": 8,
        "nbit_activation": 32,
        "dtype_input": "int8",
        "dtype_weight": "int8",
        "dtype_activation": "int32",
        "calibrate_mode": "global_scale",
        "global_scale": 8.0,
        "weight_scale": "power2",
        "skip_dense_layer": True,
        "skip_conv_layers": [0],
        "do_simulation": False,
        "round_for_shift": True,
        "debug_enabled_ops": None,
        "rounding": "UPWARD",
        "calibrate_chunk_by": -1,
        "partition_conversions": "disabled",
    }

    def __init__(self, **fields):
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, name, value):
        if name in QConfig._node_defaults:
            raise AttributeError(f"'{type(self).__name__}' object cannot set attribute '{name}'")
        object.__setattr__(self, name, value)

    def guard(self, ref_call) -> bool:
        """Whether the operator of ``ref_call`` is enabled (``debug_enabled_ops``)."""
        if self.debug_enabled_ops is None:
            return True
        return ref_call.op.name in self.debug_enabled_ops

    def get_nbit_by_kind(self, kind) -> int:
        return getattr(self, "nbit_" + kind2str(kind))

    def get_dtype_by_kind(self, kind) -> str:
        return getattr(self, "dtype_" + kind2str(kind))

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, ptype, value, trace):
        _stack().pop()

    def __repr__(self):
        body = ", ".join(f"{k}={getattr(self, k)!r}" for k in QConfig._node_defaults)
        return f"qconfig({body})"


_LOCAL = threading.local()


def _stack() -> list:
    s = getattr(_LOCAL, "stack", None)
    if s is None:
        s = _LOCAL.stack = []
    return s


_DEFAULT = None


def current_qconfig() -> QConfig:
    """The configuration of the innermost ``with qconfig(...)`` block of this thread, or the
    default one."""
    s = _stack()
    if s:
        return s[-1]
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = qconfig()
    return _DEFAULT


def qconfig(**kwargs) -> QConfig:
    """A quantization configuration (tvm.relay 0.19's ``relay.quantize.qconfig``).

    Args:
        nbit_input, nbit_weight, nbit_activation: bits of the INPUT, WEIGHT and ACTIVATION
            fields (8, 8, 32). A signed field of ``n`` bits is clipped to
            ``[-(2**(n-1) - 1), 2**(n-1) - 1]``.
        dtype_input, dtype_weight, dtype_activation: their integer dtypes ("int8", "int8",
            "int32"). An unsigned ``dtype_input`` ("uint8", relay_tvm's meaning; 0.19 wrapped
            negative values around) quantizes each INPUT field that is non-negative by
            construction (a relu's output, also through max pooling) to ``[0, 2**nbit_input -
            1]`` in that dtype (one more bit of resolution for post-ReLU activations, as
            uint8 x int8 inference engines do), and every other INPUT field to the signed
            twin ("int8").
        calibrate_mode: "global_scale" (every input/activation field uses ``global_scale``),
            "kl_divergence" (the threshold minimizing the KL divergence between the histogram
            of the values on ``dataset`` and its quantized form, TensorRT's method) or
            "percentile" (the 99.999th percentile of ``|value|`` on ``dataset``).
        global_scale: the threshold (real value of the largest quantized value) in
            "global_scale" mode (8.0).
        weight_scale: "power2" (``max|w|`` rounded up to a power of two), "max" (``max|w|``)
            or "channel_max" (a relay_tvm extension, not in 0.19: each output channel of a
            conv2d (NCHW/OIHW), conv1d (NCW/OIW) or dense kernel gets its own ``max|w|``; the
            integer accumulator then has one scale per channel, a constant added to it (a
            folded bias or batch-norm shift) is quantized to ``dtype_activation`` at that
            scale instead of ``nbit_weight`` bits, and the next requantization multiplies
            each channel by its own fixed-point factor).
        skip_dense_layer: leave every ``nn.dense`` in float32 (True).
        skip_conv_layers: indices (in program order, from 0) of the ``nn.conv2d`` layers left
            in float32 ([0]); None quantizes all.
        do_simulation: stop after calibration (float32 program that simulates the rounding).
        round_for_shift: add half of the divisor before a right shift (round to nearest).
        debug_enabled_ops: None, or the names of the only operators to quantize.
        rounding: "UPWARD" or "TONEAREST", rounding of fixed-point multiplications.
        calibrate_chunk_by: how many statistics outputs to collect per run (-1: all at once).
        partition_conversions: "disabled", "enabled" (the result is split into
            ``@quantize_inputs``, ``@quantized_main`` (the integer core),
            ``@dequantize_outputs`` and a ``@main`` calling the three; see
            ``relay_tvm.quantize._partition_conversions``) or "fully_integral" (as "enabled",
            and :class:`~relay_tvm.errors.NotFullyIntegralError` unless the core uses only the
            three dtypes above and the ends only conversion operators).

    Returns:
        A :class:`QConfig`; use it as ``with relay.quantize.qconfig(...):``.

    Raises:
        RelayError: an unknown field, an unknown mode, a dtype that is not an integer type,
            more bits than a field's dtype holds, or a ``global_scale`` that is not a finite
            number > 0.
    """
    unknown = sorted(set(kwargs) - set(QConfig._node_defaults))
    if unknown:
        # a misspelt field would otherwise be ignored (0.19 ignored it: the setting it meant
        # silently kept its default); name the nearest field of each
        named = ", ".join(f"{k!r}{did_you_mean(k, QConfig._node_defaults)}" for k in unknown)
        raise RelayError(f"qconfig: unknown field{'s' if len(unknown) > 1 else ''} {named}; "
                         f"expected one of {', '.join(QConfig._node_defaults)}")
    fields = {k: kwargs.get(k, v) for k, v in QConfig._node_defaults.items()}
    for k, choices in _CHOICES.items():
        if fields[k] not in choices:
            raise RelayError(f"qconfig: {k}={fields[k]!r} is not one of {', '.join(choices)}"
                             f"{did_you_mean(fields[k], choices)}")
    for k in ("dtype_input", "dtype_weight", "dtype_activation"):
        if str(fields[k]) not in _INT_DTYPES:
            raise RelayError(f"qconfig: {k}={fields[k]!r} is not an integer dtype "
                             f"({', '.join(_INT_DTYPES)})")
        fields[k] = str(fields[k])
    for k in ("nbit_input", "nbit_weight", "nbit_activation"):
        if not isinstance(fields[k], int) or not 2 <= fields[k] <= 32:
            raise RelayError(f"qconfig: {k}={fields[k]!r} must be an int in [2, 32]")
    for kind in ("input", "weight", "activation"):
        # an n-bit field needs n bits of its dtype: 16-bit values stored as int8 wrapped
        # around (every output wrong; fresh-user trial)
        nbit, dt = fields["nbit_" + kind], fields["dtype_" + kind]
        bits = int("".join(ch for ch in dt if ch.isdigit()))
        if nbit > bits:
            raise RelayError(f"qconfig: nbit_{kind}={nbit} does not fit dtype_{kind}={dt!r} "
                             f"({bits} bits); give a wider dtype_{kind} or fewer bits")
    try:
        gs = float(fields["global_scale"])
    except (TypeError, ValueError):
        gs = float("nan")
    if not (math.isfinite(gs) and gs > 0):  # a scale <= 0 negated or divided by zero
        raise RelayError(f"qconfig: global_scale={fields['global_scale']!r} must be a finite "
                         f"number > 0 (the real value of the largest quantized value)")
    for key in ("skip_conv_layers", "debug_enabled_ops"):
        v = fields[key]
        # a string was taken as its characters (debug_enabled_ops="nn.conv2d" quantized
        # nothing), a number was Python's "'int' object is not iterable" (fresh-user trial)
        if v is not None and (isinstance(v, (str, bytes, int, float)) or
                              not hasattr(v, "__iter__")):
            what = "indices of conv2d layers, e.g. [0]" if key == "skip_conv_layers" else \
                "operator names, e.g. ['nn.conv2d']"
            raise RelayError(f"qconfig: {key}={v!r} must be a list of {what}, or None")
    if fields["skip_conv_layers"] is not None:
        items = [getattr(i, "value", i) for i in fields["skip_conv_layers"]]
        # integers only: 0.5 was taken as 0 (fresh-user trial)
        if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items):
            raise RelayError(f"qconfig: skip_conv_layers={fields['skip_conv_layers']!r} must "
                             f"be a list of conv2d layer indices")
        fields["skip_conv_layers"] = [int(i) for i in items]
    if fields["debug_enabled_ops"] is not None:
        names = [str(getattr(o, "value", o)) for o in fields["debug_enabled_ops"]]
        from ..op.registry import is_registered, list_op_names

        unknown = [n for n in names if not is_registered(n)]
        if unknown:  # quantized nothing unsaid (fresh-user trial)
            raise RelayError(f"qconfig: debug_enabled_ops names no operator {unknown[0]!r}"
                             f"{did_you_mean(unknown[0], list_op_names())}")
        fields["debug_enabled_ops"] = names
    fields["global_scale"] = gs
    return QConfig(**fields)


class QuantizeContext:
    """State of one annotation run: the conv2d counter (for ``skip_conv_layers``), whether
    quantization stopped (after ``nn.global_avg_pool2d``), and the simulated_quantize nodes
    made so far (one per (expression, kind, sign, rounding))."""

    Current = None

    def __init__(self):
        self.qnode_map: dict = {}
        self._conv2d_counter = 0
        self._stop_quantize = False

    def check_to_skip(self, ref_call) -> bool:
        """Whether to leave ``ref_call`` unquantized (counts conv2d layers as it goes)."""
        if self._stop_quantize:
            return True
        skip = current_qconfig().skip_conv_layers
        if ref_call.op.name == "nn.conv2d":
            idx = self._conv2d_counter
            self._conv2d_counter += 1
            if skip is not None and idx in skip:
                return True
        return False

    def stop_quantize(self):
        self._stop_quantize = True

    def reset(self):
        self._conv2d_counter = 0
        self._stop_quantize = False
        self.qnode_map = {}

    def __enter__(self):
        self.reset()
        return self

    def __exit__(self, ptype, value, traceback):
        pass


def quantize_context() -> QuantizeContext:
    """The annotation context (one per process, reset by each annotation run)."""
    if QuantizeContext.Current is None:
        QuantizeContext.Current = QuantizeContext()
    return QuantizeContext.Current
