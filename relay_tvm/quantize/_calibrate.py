"""The calibrate step (tvm.relay 0.19's ``_calibrate.py``): give every ``simulated_quantize``
its ``dom_scale``, ``clip_min`` and ``clip_max``.

A field of ``n`` bits (signed) with threshold ``t`` gets ``dom_scale = t / 2**(n-1)`` and clip
bounds ``+-(2**(n-1) - 1)``; an unsigned one (``sign=False``, see ``dtype_input="uint8"``)
``dom_scale = t / 2**n`` and ``[0, 2**n - 1]``. Weights: ``t = max|w|`` ("max"), that rounded up to a power of
two ("power2"), or, for the kernel of a conv2d/conv1d/dense, ``max|w|`` per output channel
("channel_max", a relay_tvm extension: ``dom_scale`` is then a float32 tensor of shape ``(O, 1,
...)``). Inputs and activations: ``global_scale`` ("global_scale"), or from their values
on the calibration set: the KL-optimal threshold ("kl_divergence", see
:mod:`.kl_divergence`) or the 99.999th percentile of ``|x|`` ("percentile"); a value that is
0 on the whole calibration set falls back to ``global_scale``. The values are
collected by running the annotated program, compiled with every ``simulated_quantize`` made
the identity and its input added to the outputs.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import RelayError
from ..ir.expr import Call, Constant, Function, Tuple, bind, const
from ..ir.module import IRModule
from ..op.registry import get
from ..transform._rewrite import post_order
from ._op import OP_NAME
from .kl_divergence import _find_scale_by_kl
from .qconfig import QAnnotateKind, current_qconfig


def _sq_calls(func):
    op = get(OP_NAME)
    return [n for n in post_order(func.body) if type(n) is Call and n.op is op]


def _stats_function(func):
    """``func`` with every simulated_quantize the identity, returning the tuple of the inputs
    of the non-weight ones (in post-order)."""
    from ..transform._rewrite import Rewriter

    op = get(OP_NAME)
    zero = const(0.0, "float32")
    profile = []

    class _Collect(Rewriter):
        def post_call(self, orig, new):
            if new.op is not op:
                return new
            attrs = new.attrs.with_fields(kind=int(QAnnotateKind.IDENTITY))
            ident = Call(op, [new.args[0], zero, zero, zero], attrs, (), new.span)
            if int(orig.attrs.kind) != QAnnotateKind.WEIGHT:
                profile.append(ident)
            return ident

    _Collect().rewrite(func.body)
    from ..analysis import free_vars

    body = Tuple(profile)
    return Function(free_vars(body), body)


def collect_stats(mod, dataset, chunk_by=-1):
    """Run the annotated ``mod`` on ``dataset`` and yield, per chunk of ``chunk_by``
    simulated_quantize calls (all at once for -1), the list of their inputs' values, each
    flattened over the whole dataset.

    Args:
        mod: the annotated module.
        dataset: iterable of ``{input name: array}``.
        chunk_by: how many outputs per chunk.

    Raises:
        RelayError: no dataset, or an empty one.
    """
    import tvm

    from ..backend import build
    from ..runtime.graph_executor import GraphModule
    from ..transform import PassContext

    if dataset is None:
        raise RelayError("calibration: calibrate_mode 'kl_divergence'/'percentile' needs a "
                         "dataset (a list of {input name: array})")
    if isinstance(dataset, dict) or not hasattr(dataset, "__iter__"):
        raise RelayError(f"calibration: the dataset must be a list (or iterable) of "
                         f"{{input name: array}}, got {type(dataset).__name__}")
    batches = list(dataset)
    if not batches:
        raise RelayError("calibration: the dataset is empty")
    for i, batch in enumerate(batches):
        if not isinstance(batch, dict):
            raise RelayError(f"calibration: dataset item {i} is a {type(batch).__name__}; "
                             f"each item must be a dict {{input name: array}}")
    func = _stats_function(mod["main"])
    n_out = len(func.body.fields)
    if n_out == 0:
        return
    with PassContext(opt_level=3):
        lib = build(IRModule.from_expr(func), target="llvm")
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    chunk = n_out if chunk_by == -1 else int(chunk_by)
    for i in range(0, n_out, chunk):
        outs = [[] for _ in range(min(chunk, n_out - i))]
        for batch in batches:
            # tvm / MXNet tensors as NumPy arrays (np.asarray made object arrays of them)
            gm.set_input(**{k: _as_numpy(v) for k, v in batch.items()})
            gm.run()
            for j in range(len(outs)):
                outs[j].append(gm.get_output(i + j).numpy())
        yield [np.concatenate([o.reshape(-1) for o in out]) for out in outs]


def _as_numpy(v):
    """A calibration value as a NumPy array: tvm tensors and MXNet NDArrays by their
    ``numpy()`` / ``asnumpy()``, anything else by ``np.asarray``."""
    if isinstance(v, np.ndarray):
        return v
    for name in ("numpy", "asnumpy"):
        f = getattr(v, name, None)
        if callable(f):
            return np.asarray(f())
    return np.asarray(v)


def _find_scale_by_percentile(arr, percentile=0.99999):
    """The ``percentile`` quantile of ``|arr|`` (the element of rank ``int(size *
    percentile)``)."""
    x = np.abs(np.asarray(arr)).reshape(-1)
    k = min(int(x.size * percentile), x.size - 1)
    return float(np.partition(x, k)[k])


def _data_scales(mod, dataset, find):
    cfg = current_qconfig()
    calls = [c for c in _sq_calls(mod["main"]) if int(c.attrs.kind) != QAnnotateKind.WEIGHT]
    scales = []
    for samples in collect_stats(mod, dataset, cfg.calibrate_chunk_by):
        for s in samples:
            bad = np.count_nonzero(~np.isfinite(s))
            if bad:  # a NaN / inf would give no threshold (or NumPy's ValueError): say so
                from ..typing.solver import short

                i = len(scales)
                what = short(calls[i].args[0], 80) if i < len(calls) else "?"
                raise RelayError(
                    f"calibration ({cfg.calibrate_mode}): {bad} of the {s.size} values the "
                    f"dataset gives quantized field {i} ({what}) are NaN or infinite; "
                    "calibrate with finite data")
            scales.append(find(s))
    # a value that was 0 on the whole calibration set gives no threshold: use global_scale
    scales = [float(s) if s > 0 and np.isfinite(s) else cfg.global_scale for s in scales]
    return dict(zip(calls, scales))


def _weight_value(call):
    w = call.args[0]
    if type(w) is not Constant:
        raise RelayError("calibration: a WEIGHT simulated_quantize needs a constant weight "
                         f"(bind the parameters: quantize(mod, params)), got {type(w).__name__}")
    return np.abs(np.asarray(w.data, dtype=np.float64))


def _power2_scale(call):
    val = float(_weight_value(call).max(initial=0.0))
    return 2.0 ** math.ceil(math.log2(val)) if val > 0 else 1.0


def _max_scale(call):
    val = float(_weight_value(call).max(initial=0.0))
    return val if val > 0 else 1.0  # an all-zero weight (e.g. a folded zero bias): any scale


_KERNEL_LAYOUTS = {"nn.conv2d": ("NCHW", "OIHW"), "nn.conv1d": ("NCW", "OIW")}


def _kernel_sq_calls(func) -> set:
    """The WEIGHT simulated_quantize calls that are the kernel of a conv2d (NCHW/OIHW),
    conv1d (NCW/OIW) or dense: their first axis is the output channel."""
    op = get(OP_NAME)
    out = set()
    for n in post_order(func.body):
        if type(n) is not Call or not hasattr(n.op, "name") or len(n.args) < 2:
            continue
        w = n.args[1]
        if type(w) is not Call or w.op is not op or int(w.attrs.kind) != QAnnotateKind.WEIGHT:
            continue
        name = n.op.name
        if name == "nn.dense":
            out.add(w)
        elif name in _KERNEL_LAYOUTS:
            a = n.attrs
            if ((a.data_layout, a.kernel_layout) == _KERNEL_LAYOUTS[name]
                    and a.out_layout in ("", a.data_layout)):
                out.add(w)
    return out


def _channel_max_scale(kernels):
    """``weight_scale="channel_max"``: a kernel's threshold per output channel (shape ``(O, 1,
    ...)``, broadcasting over the kernel), any other weight's ``max|w|``."""

    def find(call):
        if call not in kernels:
            return _max_scale(call)
        w = _weight_value(call)
        t = w.reshape(w.shape[0], -1).max(axis=1)
        t[t == 0] = 1.0  # an all-zero channel: any scale
        return t.reshape((w.shape[0],) + (1,) * (w.ndim - 1))

    return find


def set_params(mod, input_scale, weight_scale):
    """Bind the dom_scale / clip_min / clip_max variables of every simulated_quantize of
    ``mod["main"]`` (``input_scale(call)``, ``weight_scale(call)`` give thresholds)."""
    cfg = current_qconfig()
    func = mod["main"]
    binds = {}
    for call in _sq_calls(func):
        kind = int(call.attrs.kind)
        if kind == QAnnotateKind.IDENTITY:
            continue
        _, dom, lo, hi = call.args
        nbit = cfg.get_nbit_by_kind(kind)
        valid = 2.0 ** (nbit - int(bool(call.attrs.sign)))
        t = weight_scale(call) if kind == QAnnotateKind.WEIGHT else input_scale(call)
        low = -(valid - 1) if call.attrs.sign else 0.0  # unsigned: [0, 2**nbit - 1]
        for v, val in ((dom, t / valid), (lo, low), (hi, valid - 1)):
            if type(v) is Constant:
                continue
            binds[v] = const(np.asarray(val, "float32"), "float32")
    out = mod.copy()
    out["main"] = bind(func, binds)
    return out


def calibrate(dataset=None):
    """The calibration step as a function ``(mod, ctx) -> mod`` (tvm.relay 0.19's
    ``calibrate``; wrap it with ``module_pass`` to put it in a pipeline).

    Args:
        dataset: iterable of ``{input name: array}`` (needed by "kl_divergence" and
            "percentile").
    """

    def wrapped_func(mod, _ctx=None):
        cfg = current_qconfig()
        if cfg.calibrate_mode == "kl_divergence":
            table = _data_scales(mod, dataset, _find_scale_by_kl)
            input_scale = table.__getitem__
        elif cfg.calibrate_mode == "percentile":
            table = _data_scales(mod, dataset, _find_scale_by_percentile)
            input_scale = table.__getitem__
        elif cfg.calibrate_mode == "global_scale":
            def input_scale(call):
                return cfg.global_scale
        else:
            raise RelayError(f"calibration: unknown calibrate_mode {cfg.calibrate_mode!r}")
        if cfg.weight_scale == "channel_max":
            weight_scale = _channel_max_scale(_kernel_sq_calls(mod["main"]))
        else:
            weight_scale = {"power2": _power2_scale, "max": _max_scale}.get(cfg.weight_scale)
        if weight_scale is None:
            raise RelayError(f"calibration: unknown weight_scale {cfg.weight_scale!r}")
        return set_params(mod, input_scale, weight_scale)

    return wrapped_func
