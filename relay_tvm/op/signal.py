"""tvm.relay 0.19's ``relay.op.stft``: the short-time Fourier transform of a signal.

The semantics are those of ``torch.stft`` / librosa without centering (and the reference of
TVM v0.19's own test): frame ``m`` starts at sample ``m * hop_length``; the window (of
``win_length`` samples) is zero-padded on both sides to ``n_fft`` samples, centred (left pad
``(n_fft - win_length) // 2``); ``out[..., w, m, :] = sum_k window_padded[k] *
x[m * hop_length + k] * exp(-2 pi i w k / n_fft)`` as (real, imaginary). TVM's
``topi.stft`` divides the angle by ``win_length`` and reads only ``win_length`` samples, which
agrees only where ``win_length == n_fft``; relay_tvm's compute follows the definition above
for every ``win_length <= n_fft``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import out_dims, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op


def _stft_rel(types, attrs):
    ts = tensor_args(types, ("data", "window"), "stft")
    if ts is None:
        return None
    data, window = ts
    if data.ndim not in (1, 2):
        raise TypeInferenceError(f"stft: data must be 1-D (samples) or 2-D (batch, samples), "
                                 f"got shape {shape_str(data.shape)}")
    if not str(data.dtype).startswith("float"):
        raise TypeInferenceError(f"stft: data must be a float tensor, got {data.dtype}")
    if window.ndim != 1 or not str(window.dtype).startswith(("float", "int", "uint")):
        raise TypeInferenceError(f"stft: window must be a 1-D numeric tensor, got "
                                 f"{shape_str(window.shape)} {window.dtype}")
    n_fft, hop, win = int(attrs.n_fft), int(attrs.hop_length), int(attrs.win_length)
    if n_fft < 1 or hop < 1 or not 1 <= win <= n_fft:
        raise TypeInferenceError(f"stft: need n_fft >= 1, hop_length >= 1 and 1 <= win_length "
                                 f"<= n_fft, got n_fft={n_fft}, hop_length={hop}, "
                                 f"win_length={win}")
    wlen = window.shape[0]
    if isinstance(wlen, int) and wlen != win:
        raise TypeInferenceError(f"stft: window has {wlen} samples; expected win_length={win}")
    length = data.shape[-1]
    if isinstance(length, AnyDim):
        frames = AnyDim()
    else:
        if isinstance(length, int) and length < n_fft:
            raise TypeInferenceError(f"stft: data {shape_str(data.shape)} has fewer samples "
                                     f"than n_fft={n_fft}")
        frames = (length - n_fft) // hop + 1
    rows = n_fft // 2 + 1 if attrs.onesided else n_fft
    return TensorType(tuple(data.shape[:-1]) + (rows, frames, 2), data.dtype)


def _stft_ref(args, attrs, out_type):
    x = np.asarray(args[0])
    window = np.asarray(args[1]).astype(x.dtype)
    n_fft, hop, win = int(attrs.n_fft), int(attrs.hop_length), int(attrs.win_length)
    if window.shape[0] != win or x.shape[-1] < n_fft:  # Any shapes: known only now
        from ..errors import InputError

        raise InputError(f"stft: window {window.shape} / data {x.shape} do not fit "
                                 f"n_fft={n_fft}, win_length={win}")
    lpad = (n_fft - win) // 2
    frames = (x.shape[-1] - n_fft) // hop + 1
    rows = n_fft // 2 + 1 if attrs.onesided else n_fft
    k = np.arange(win)
    starts = np.arange(frames) * hop + lpad
    seg = x[..., starts[:, None] + k[None, :]].astype("float64")  # (..., frames, win)
    ang = 2 * np.pi * ((np.arange(rows)[:, None] * (k + lpad)[None, :]) % n_fft) / n_fft
    wseg = seg * window.astype("float64")
    re = np.einsum("...mk,wk->...wm", wseg, np.cos(ang))
    im = -np.einsum("...mk,wk->...wm", wseg, np.sin(ang))
    out = np.stack([re, im], axis=-1)
    if attrs.normalized:
        out = out / math.sqrt(n_fft)
    return out.astype(x.dtype)


def _stft_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    data, window = inputs
    n_fft, hop, win = int(attrs.n_fft), int(attrs.hop_length), int(attrs.win_length)
    lpad = (n_fft - win) // 2
    dt = data.dtype
    scale = 1.0 / math.sqrt(n_fft) if attrs.normalized else 1.0
    k = te.reduce_axis((0, win), "k")
    batched = len(data.shape) == 2

    def f(*idx):
        w, m, c = idx[-3:]
        start = m * hop + lpad + k
        x = data[idx[0], start] if batched else data[start]
        # the angle's integer part modulo n_fft first: cos/sin of small arguments in data's
        # dtype (2 pi w k / n_fft in float32 lost digits for long frames)
        turn = tirx.floormod(w * (k + lpad), n_fft).astype(dt)
        ang = turn * tirx.const(2 * math.pi / n_fft, dt)
        trig = tirx.Select(c == 0, tirx.cos(ang), -tirx.sin(ang))
        return te.sum(window[k].astype(dt) * x * trig * tirx.const(scale, dt), axis=k)

    return te.compute(out_dims(out_type.shape), f, name="stft")


register_op(
    "stft",
    num_inputs=2,
    arguments=("data", "window"),
    attrs=(
        "relay.attrs.StftAttrs",
        [F("n_fft", "int"), F("hop_length", "int"), F("win_length", "int"),
         F("normalized", "bool", False), F("onesided", "bool", True)],
    ),
    rel=_stft_rel,
    ref=_stft_ref,
    compute=_stft_compute,
    pattern=OpPattern.OPAQUE,
    doc="Short-time Fourier transform (real, imaginary) of 1-D or batched signals.",
    level=3,
)


def stft(data, n_fft, hop_length=None, win_length=None, window=None, normalized=False,
         onesided=True):
    """The short-time Fourier transform (tvm.relay 0.19's ``relay.op.stft``; the definition in
    this module's docstring: ``torch.stft`` without centering).

    Args:
        data: ``(samples,)`` or ``(batch, samples)``, float; at least ``n_fft`` samples.
        n_fft: the transform size (samples per frame).
        hop_length: samples between frame starts; default ``n_fft // 4``.
        win_length: the window's length, ``<= n_fft``; default the window's static length
            when a window is given, else ``n_fft``.
        window: ``(win_length,)``, any numeric dtype (read as data's dtype), zero-padded to
            ``n_fft`` centred; default ones.
        normalized: divide by ``sqrt(n_fft)``.
        onesided: keep the ``n_fft // 2 + 1`` non-negative frequencies (else all ``n_fft``).

    Returns:
        ``(batch?, frequencies, frames, 2)`` of data's dtype: (real, imaginary) per frequency and
        frame, ``frames = (samples - n_fft) // hop_length + 1``.

    Raises:
        TypeError: n_fft, hop_length or win_length not an int, or the default hop_length 0.
        TypeInferenceError: (at type inference) a shape, dtype or size that does not fit.
    """
    from ..ir.expr import Constant, Var
    from . import tensor as _tensor

    def whole(v, name):  # a float n_fft of 16.7 was read as 16
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"stft: {name} must be an int, got {v!r}")
        return int(v)

    n_fft = whole(n_fft, "n_fft")
    if hop_length is None:
        hop = n_fft // 4
        if hop < 1:
            raise TypeError(f"stft: the default hop_length n_fft // 4 is 0 for n_fft={n_fft}; "
                            f"give hop_length")
    else:
        hop = whole(hop_length, "hop_length")
    if win_length is None:
        shape = None
        if isinstance(window, Constant):
            shape = np.asarray(window.data.numpy()).shape
        elif isinstance(window, Var):
            shape = getattr(window.type_annotation, "shape", None)
        win_length = int(shape[0]) if shape and isinstance(shape[0], int) else n_fft
    win_length = whole(win_length, "win_length")
    if window is None:
        window = _tensor.ones((win_length,), "float32")
    return make_call("stft", [data, window], n_fft=n_fft, hop_length=hop,
                     win_length=win_length, normalized=bool(normalized),
                     onesided=bool(onesided))


__all__ = ["stft"]
