"""Pass infrastructure (tvm.relay.transform / tvm.transform): ``PassContext``, ``Pass``,
``Sequential`` and the ``module_pass`` / ``function_pass`` decorators.

A pass runs when the current context's ``opt_level`` is at least the pass's ``opt_level`` or the
pass is in ``required_pass``, and never when it is in ``disabled_pass`` (Relay's rule). Passes
that need types (``required=["InferType"]``) get a typed module.
"""

from __future__ import annotations

import functools
import time
from typing import Callable

from ..errors import RelayError, did_you_mean
from ..ir.expr import Function
from ..ir.module import IRModule


class PassInfo:
    """Name, opt level and required passes of a pass."""

    def __init__(self, opt_level: int, name: str, required=()):
        self.opt_level = opt_level
        self.name = name
        self.required = tuple(required or ())

    def __repr__(self):
        return f"PassInfo({self.name}, opt_level={self.opt_level})"


#: ``relay.*`` config keys relay_tvm reads (what they do: where they are read)
RELAY_CONFIG_KEYS = {
    "relay.FuseOps.max_depth",  # transform.fuse_ops: largest fused group
    "relay.FuseOps.link_params",  # transform.fuse_ops: constants inside primitive functions
    "relay.FuseOps.depthwise_pointwise",  # transform.fuse_depthwise: merge dw into 1x1 (CPU)
    "relay.AlterOpLayout.winograd",  # transform.winograd_choice: "auto", "never", 2 or 4
    "relay.ToMixedPrecision.keep_orig_output_dtype",  # transform.mixed_precision
    "relay.backend.use_meta_schedule",  # backend.schedule: apply the tuning database
    "relay.backend.tuning_database",  # backend.schedule: the database itself
    "relay.debug.check_each_pass",  # here: well-formedness and types after every pass
}
#: keys TVM 0.19 registered that have no effect in relay_tvm (accepted with a warning, so a
#: 0.19 script runs; AOT, BYOC toolchains, auto_scheduler and device planning are gone)
RELAY_CONFIG_KEYS_WITHOUT_EFFECT = {
    "relay.backend.tir_converter",
    "relay.backend.use_auto_scheduler", "relay.backend.use_meta_schedule_dispatch",
    "relay.collage.byoc_fusion_style", "relay.collage.byoc_max_depth",
    "relay.collage.tvm_max_depth", "relay.fallback_device_type", "relay.frontend.fill_span",
    "relay.remove_standalone_reshapes.enable",
}


def _unwrap_imm(value):
    """The Python value of a TVM ``IntImm`` (a config read back from TVM's ``Map``)."""
    from tvm import tirx

    return value.value if isinstance(value, tirx.IntImm) else value


def config_flag(key: str, value) -> bool:
    """A boolean config value: ``True``/``False`` (also NumPy's and TVM's) or the ints 1/0, as
    TVM's ``Bool`` options take them. Raises RelayError for anything else (``"false"`` would be
    true as a Python truth value)."""
    import numbers

    import numpy as np

    value = _unwrap_imm(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(int(value))
    raise RelayError(f"PassContext config {key!r} must be True or False, got {value!r}")


def config_positive_int(key: str, value) -> int:
    """A positive int config value (not a bool). Raises RelayError otherwise."""
    import numbers

    value = _unwrap_imm(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 1:
        return int(value)
    raise RelayError(f"PassContext config {key!r} must be a positive int, got {value!r}")


def _winograd_option(key, value):
    from .winograd_choice import parse_winograd_mode

    return parse_winograd_mode(value)


_UNSET = object()

#: how each ``relay.*`` key's value is read (and checked when a PassContext is made, as TVM
#: 0.19 converted each option to its registered type there); keys not listed take any value
_CONFIG_VALUE = {
    "relay.FuseOps.max_depth": config_positive_int,
    "relay.FuseOps.link_params": config_flag,
    "relay.FuseOps.depthwise_pointwise": config_flag,
    "relay.AlterOpLayout.winograd": _winograd_option,
    "relay.ToMixedPrecision.keep_orig_output_dtype": config_flag,
    "relay.backend.use_meta_schedule": config_flag,
    "relay.debug.check_each_pass": config_flag,
}


def config_value(config, key: str, default):
    """``config[key]`` read as its option's type (``default`` when unset). Raises RelayError
    for a value of the wrong type or range."""
    value = config.get(key, _UNSET)
    if value is _UNSET:
        return default
    read = _CONFIG_VALUE.get(key)
    return read(key, value) if read else value


def check_relay_config(config: dict) -> None:
    """Refuse a ``relay.*`` key no pass reads (a typo would otherwise be ignored silently) and a
    value its option cannot take (see :func:`config_value`); warn on 0.19 keys that do nothing
    here. Raises RelayError naming the key and the nearest known ones, or the value and what
    was expected."""
    import warnings
    from collections.abc import Mapping

    if not isinstance(config, Mapping):
        raise RelayError(f"PassContext: config must be a dict of option name -> value, got "
                         f"{type(config).__name__} {config!r:.80}")
    for key in config:
        k = str(key)
        if k in _CONFIG_VALUE:
            config_value(config, key, None)
        if not k.startswith("relay.") or k in RELAY_CONFIG_KEYS or k.startswith("relay.ext."):
            continue
        if k in RELAY_CONFIG_KEYS_WITHOUT_EFFECT:
            warnings.warn(f"PassContext config {k!r} has no effect in relay_tvm", stacklevel=3)
            continue
        raise unknown_config_option(k, RELAY_CONFIG_KEYS | RELAY_CONFIG_KEYS_WITHOUT_EFFECT,
                                    "known keys")


def unknown_config_option(key, known, listing: str, spellings=()) -> RelayError:
    """The RelayError for a PassContext config ``key`` nobody reads: the nearest of ``known``
    (and of the other accepted ``spellings``), or ``listing: <every known key>`` when none is
    near."""
    hint = did_you_mean(key, sorted(set(known) | set(spellings)), n=3, clause=True) or \
        f"; {listing}: {', '.join(sorted(known))}"
    return RelayError(f"PassContext: unknown config option {key!r}{hint}")


def _warn_misspelt_passes(names) -> None:
    """Warn about a required/disabled pass name that is no pass of relay_tvm's but close to one
    (``"FoldConstnt"`` was ignored silently; fresh-user trial). Other unknown names may be the
    user's own passes and pass unsaid."""
    if not names:
        return
    import warnings

    from .. import transform

    known = {n for n in dir(transform) if n[:1].isupper() and callable(getattr(transform, n))}
    for name in names:
        if name in known:
            continue
        near = did_you_mean(name, sorted(known), n=2, cutoff=0.85, clause=True)
        if near:
            warnings.warn(f"PassContext: no pass is named {name!r}{near}", stacklevel=3)


class PassContext:
    """The settings passes run under; a context manager.

    Args:
        opt_level: 0..4; passes with a higher ``opt_level`` are skipped unless required.
        required_pass: names of passes that run whatever the level.
        disabled_pass: names of passes that never run.
        config: options, e.g. ``{"relay.FuseOps.max_depth": 256, "relay.debug.check_each_pass": True}``;
            an unknown ``relay.*`` key is a RelayError (see :data:`RELAY_CONFIG_KEYS`).
        instruments: objects with optional ``enter_pass_ctx``, ``exit_pass_ctx``,
            ``should_run(mod, info)``, ``run_before_pass(mod, info)``, ``run_after_pass(mod, info)``.
    """

    _stack: list = []

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, config=None,
                 instruments=None, trace=None):
        if not isinstance(opt_level, int) or not 0 <= opt_level <= 4:
            raise RelayError(f"PassContext: opt_level must be an int in 0..4, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = set(required_pass or ())
        self.disabled_pass = set(disabled_pass or ())
        _warn_misspelt_passes(self.required_pass | self.disabled_pass)
        check_relay_config(config or {})
        self.config = dict(config or {})
        self.instruments = list(instruments or ())
        self.trace = trace

    def __enter__(self):
        PassContext._stack.append(self)
        for ins in self.instruments:
            if hasattr(ins, "enter_pass_ctx"):
                ins.enter_pass_ctx()
        return self

    def __exit__(self, *exc):
        for ins in self.instruments:
            if hasattr(ins, "exit_pass_ctx"):
                ins.exit_pass_ctx()
        PassContext._stack.pop()
        return False

    @staticmethod
    def current() -> PassContext:
        """The innermost active context (a default ``opt_level=2`` one when none is active)."""
        if PassContext._stack:
            return PassContext._stack[-1]
        if _OUTER_CONTEXT is not None:  # a tvm.transform.PassContext the user entered
            ctx = _OUTER_CONTEXT()
            if ctx is not None:
                return ctx
        return _DEFAULT

    def pass_enabled(self, info: PassInfo) -> bool:
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return self.opt_level >= info.opt_level


def derived_context(opt_level, config, required_pass=None, disabled_pass=None,
                    instruments=None) -> PassContext:
    """A :class:`PassContext` made from an entered one's settings (``config`` was checked, and
    its keys without effect warned about, when that context was made): not checked again, so
    one ``with PassContext(config=...)`` warns once however many contexts relay_tvm derives
    from it (the compat mirror of a ``tvm.transform.PassContext``, task extraction, ...)."""
    ctx = PassContext(opt_level=opt_level, required_pass=required_pass,
                      disabled_pass=disabled_pass, instruments=instruments)
    ctx.config = dict(config)
    return ctx


def derived_tvm_context(cur, disabled_pass=(), config=None):
    """A ``tvm.transform.PassContext`` for TVM's own passes made from the entered one ``cur``:
    its opt level, required and disabled passes (plus ``disabled_pass``) and TVM options (plus
    ``config``). The ``relay.*`` keys stay out: TVM's passes read none, and relay_tvm's compat
    context would check them again (warning a second time about keys without effect). Its
    instruments are not carried (entering a context calls their ``enter_pass_ctx``, which
    clears a ``PassTimingInstrument``'s profile)."""
    import tvm

    cfg = {str(k): v for k, v in cur.config.items() if not str(k).startswith("relay.")}
    cfg.update(config or {})
    return tvm.transform.PassContext(
        opt_level=cur.opt_level, required_pass=list(cur.required_pass),
        disabled_pass=[*cur.disabled_pass, *disabled_pass], config=cfg)


_DEFAULT = PassContext()
#: Set by relay_tvm.compat: ``() -> PassContext | None`` mirroring an entered
#: ``tvm.transform.PassContext``, so relay passes and relay.build honour it.
_OUTER_CONTEXT = None


class Pass:
    """A transformation of an ``IRModule``; call it on a module to run it."""

    def __init__(self, info: PassInfo):
        self.info = info

    @property
    def name(self) -> str:
        return self.info.name

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise RelayError(f"pass {self.name} takes an IRModule, got {type(mod).__name__}")
        ctx = PassContext.current()
        for ins in ctx.instruments:
            # None (an instrument without its own should_run, as TVM's wrapper answers) runs
            if hasattr(ins, "should_run") and ins.should_run(mod, self.info) is False:
                return mod
        for req in self.info.required:
            mod = _required_pass(req)(mod)
        for ins in ctx.instruments:
            if hasattr(ins, "run_before_pass"):
                ins.run_before_pass(mod, self.info)
        out = self.transform_module(mod, ctx)
        if not isinstance(out, IRModule):
            raise RelayError(f"pass {self.name} returned {type(out).__name__}, not an IRModule")
        for ins in ctx.instruments:
            if hasattr(ins, "run_after_pass"):
                ins.run_after_pass(out, self.info)
        if config_value(ctx.config, "relay.debug.check_each_pass", False):
            _check_after(self.name, out)
        return out

    def __repr__(self):
        return f"Pass({self.name}, opt_level={self.info.opt_level})"


def _check_after(name: str, mod: IRModule) -> None:
    from ..analysis.well_formed import check_well_formed
    from ..ir.base import is_sealed
    from ..ir.functor import post_order
    from ..typing.infer import infer_module, short

    # the types a later inference would reuse without looking (sealed expressions) must be the
    # ones a fresh inference finds
    kept = [(e, e._checked_type) for f in mod.functions.values() for e in post_order(f)
            if is_sealed(e)]
    try:
        check_well_formed(mod)
        infer_module(mod, reuse=False)  # type everything again: the check trusts nothing
    except RelayError as e:
        raise RelayError(f"pass {name} left an ill-formed or ill-typed module: {e}") from e
    for e, t in kept:
        if e.checked_type != t:
            raise RelayError(f"pass {name} left {short(e)} with the type {t}; inference gives "
                             f"{e.checked_type}")


# The pass registry: name -> factory (a callable returning a Pass, such as ``FoldConstant``).
# relay_tvm.transform registers its passes when imported; pipelines, ``required`` passes and
# ``build`` look passes up here by name.
_PASSES: dict = {}


def register_pass(name: str, factory: Callable) -> Callable:
    """Register ``factory`` (``factory(**options) -> Pass``) under the pass name ``name``.

    Raises:
        RelayError: another factory is already registered under ``name``.
    """
    old = _PASSES.get(name)
    if old is not None and old is not factory:
        raise RelayError(f"register_pass: a pass named {name!r} is already registered ({old!r})")
    _PASSES[name] = factory
    return factory


def get_pass(name: str) -> Callable:
    """The factory registered under the pass name ``name``.

    Raises:
        RelayError: no pass of that name is registered (the error lists the known ones).
    """
    factory = _PASSES.get(name)
    if factory is None:
        raise RelayError(f"unknown pass {name!r}; registered passes: {', '.join(sorted(_PASSES))}")
    return factory


def list_passes() -> list:
    """The names of the registered passes, sorted."""
    return sorted(_PASSES)


def _required_pass(name: str) -> Pass:
    return get_pass(name)()


class ModulePass(Pass):
    def __init__(self, func: Callable, info: PassInfo):
        super().__init__(info)
        self.func = func

    def transform_module(self, mod, ctx):
        return self.func(mod, ctx)


class FunctionPass(Pass):
    """Applies ``func(function, mod, ctx)`` to every function that is not primitive."""

    def __init__(self, func: Callable, info: PassInfo):
        super().__init__(info)
        self.func = func

    def transform_module(self, mod, ctx):
        out = mod.copy()
        for gv, f in mod.functions.items():
            if f.is_primitive:
                continue
            nf = self.func(f, mod, ctx)
            if not isinstance(nf, Function):
                raise RelayError(f"function pass {self.name} returned {type(nf).__name__} for @{gv.name_hint}")
            if nf is not f:
                out[gv] = nf
        return out


class Sequential(Pass):
    """Run passes in order, each only if enabled under the current :class:`PassContext`."""

    def __init__(self, passes=None, opt_level=0, name="sequential", required=None):
        super().__init__(PassInfo(opt_level, name, required))
        self.passes = list(passes or ())
        for i, p in enumerate(self.passes):  # (a string or a pass class failed when run)
            if not (isinstance(p, Pass) or callable(p) and hasattr(p, "info")):
                call = (f"; call it: {p.__name__}()" if isinstance(p, type) or callable(p)
                        and hasattr(p, "__name__") else "")
                raise RelayError(f"Sequential: passes[{i}] is {type(p).__name__} {p!r}, not a "
                                 f"pass (expected pass objects, e.g. "
                                 f"relay.transform.FoldConstant()){call}")

    def transform_module(self, mod, ctx):
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            mod = p(mod)
        return mod


def _decorator(kind, pass_func, opt_level, name, required):
    if opt_level is None:
        raise RelayError("a pass needs an opt_level")

    def create(fn):
        pname = name or getattr(fn, "__name__", "pass")
        info = PassInfo(opt_level, pname, required)
        if isinstance(fn, type):
            @functools.wraps(fn)
            def make(*args, **kwargs):
                inst = fn(*args, **kwargs)
                method = inst.transform_module if kind is ModulePass else inst.transform_function
                return kind(method, info)

            return make
        return kind(fn, info)

    return create(pass_func) if pass_func is not None else create


def module_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Decorate ``f(mod, ctx) -> mod`` (or a class with ``transform_module``) into a pass."""
    return _decorator(ModulePass, pass_func, opt_level, name, required)


class _UserFunctionPass(FunctionPass):
    """A function pass written by a user: as 0.19's FunctionPass did, the module it returns
    is type-checked (InferType runs as a pass, seen by instruments), so a new function the
    user built without types comes back typed."""

    def transform_module(self, mod, ctx):
        out = super().transform_module(mod, ctx)
        if out is mod:
            return mod
        try:
            return get_pass("InferType")()(out)
        except RelayError as e:
            raise RelayError(f"pass {self.name} left an ill-formed or ill-typed module: {e}") \
                from e


def function_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Decorate ``f(func, mod, ctx) -> func`` (or a class with ``transform_function``); the
    resulting module is type-checked after the pass, as in tvm.relay 0.19."""
    return _decorator(_UserFunctionPass, pass_func, opt_level, name, required)


class PassTimingInstrument:
    """Records the wall time of each pass run (``records``: ``(name, seconds)``) and its CPU
    time (``cpu_records``, the same order: on a shared machine the wall time also counts the
    waits for a core); ``render()`` prints a table."""

    def __init__(self):
        self.records: list = []
        self.cpu_records: list = []
        self._start: list = []

    def run_before_pass(self, mod, info):
        self._start.append((time.perf_counter(), time.process_time()))

    def run_after_pass(self, mod, info):
        wall, cpu = self._start.pop()
        self.records.append((info.name, time.perf_counter() - wall))
        self.cpu_records.append((info.name, time.process_time() - cpu))

    def render(self) -> str:
        lines = [f"{'pass':<32} {'ms':>10}"]
        for n, t in self.records:
            lines.append(f"{n:<32} {t * 1e3:>10.2f}")
        return "\n".join(lines)


def build_config(opt_level=2, required_pass=None, disabled_pass=None, trace=None):
    """tvm.relay 0.19's older spelling of ``PassContext(opt_level, required_pass,
    disabled_pass, trace=trace)`` (``with relay.build_config(opt_level=3): relay.build(...)``).

    Returns:
        a :class:`PassContext`; raises as ``PassContext`` does for a bad ``opt_level``.
    """
    return PassContext(opt_level=opt_level, required_pass=required_pass,
                       disabled_pass=disabled_pass, trace=trace)


__all__ = [
    "build_config",
    "PassInfo",
    "PassContext",
    "Pass",
    "ModulePass",
    "FunctionPass",
    "Sequential",
    "module_pass",
    "function_pass",
    "PassTimingInstrument",
]
