"""``tvm.relay`` as an alias of relay_tvm, and tvm.relay 0.19's module paths.

TVM 0.20 removed ``tvm.relay``. After :func:`install`, ``from tvm import relay``,
``import tvm.relay.testing`` or ``from tvm.relay.transform import InferType`` give relay_tvm's
modules: ``tvm.relay.X.Y`` is ``relay_tvm.X.Y``, except for the 0.19 module paths that live
elsewhere here (:data:`MODULE_PATHS`, e.g. ``tvm.relay.ty`` is :mod:`relay_tvm.ir.types`).
The same paths also work under ``relay_tvm`` (``relay_tvm.ty``, ``import relay_tvm.expr``).

The alias is a :class:`importlib.abc.MetaPathFinder`; it never shadows a module TVM itself
ships (TVM 0.27 has no ``tvm.relay``, and the finder gives way if a future TVM has one).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: tvm.relay 0.19 module path (relative to the package) -> the relay_tvm module holding it.
MODULE_PATHS = {
    "ty": "relay_tvm.ir.types",
    "expr": "relay_tvm.ir.expr",
    "function": "relay_tvm.ir.expr",
    "adt": "relay_tvm.ir.adt",
    "base": "relay_tvm.ir.base",
    "expr_functor": "relay_tvm.ir.functor",
    "type_functor": "relay_tvm.ir.functor",
    "scope_builder": "relay_tvm.scope_builder",
    "build_module": "relay_tvm.compat.build_module",
    "param_dict": "relay_tvm.backend.param_dict",
    "backend.interpreter": "relay_tvm.runtime.interpreter",
    "backend.vm": "relay_tvm.vm",
    "backend.executor": "relay_tvm.backend.executor_runtime",
    "backend.runtime": "relay_tvm.backend.executor_runtime",
    "backend.executor_factory": "relay_tvm.backend.executor_factory",
    "op.nn.nn": "relay_tvm.op.nn",
    "qnn.op.qnn": "relay_tvm.qnn.op",
    "op.tensor": "relay_tvm.op.tensor",
    "op.reduce": "relay_tvm.op.reduce",
    "op.transform": "relay_tvm.op.transform",
    "op.image.image": "relay_tvm.op.image",
    "op.vision.multibox": "relay_tvm.op.vision.multibox",
    "op.vision.nms": "relay_tvm.op.vision.nms",
    "op.vision.rcnn": "relay_tvm.op.vision.rcnn",
    "op.vision.yolo": "relay_tvm.op.vision.rcnn",
    "transform.transform": "relay_tvm.transform",
    "analysis.analysis": "relay_tvm.analysis",
    "analysis.feature": "relay_tvm.analysis.model_stats",  # Feature, detect_feature
}

_PREFIXES = ("tvm.relay", "relay_tvm")

#: Other module aliases (old path -> module), filled by :func:`install` with those of
#: :data:`relay_tvm.compat.tvm_shims.MODULE_ALIASES` whose old path TVM does not have.
EXTRA: dict[str, str] = {}

#: TVM 0.19 modules that TVM 0.27 and relay_tvm do not have -> why, and what to use instead.
#: Importing one raises :class:`relay_tvm.errors.ModuleNotProvidedError` (an ImportError)
#: with this message; :func:`install` keeps those TVM does not ship (:data:`REFUSED`).
NOT_PROVIDED = {
    "tvm.autotvm": (
        "tvm.autotvm: TVM removed AutoTVM in 0.20 (with Relay) and relay_tvm does not provide "
        "it; relay_tvm tunes with TVM's meta_schedule instead: relay_tvm.tune.extract_tasks("
        "mod, target, params) lists the kernels, relay_tvm.tune.tune_relay(mod, params, "
        "target, work_dir, max_trials_global) tunes them into a database, and "
        "relay.build(mod, target, params=params, database=db) applies it (the `relay-tvm "
        "tune` command does the same)"),
    "tvm.auto_scheduler": (
        "tvm.auto_scheduler: TVM removed the auto-scheduler (Ansor) in 0.20 and relay_tvm does "
        "not provide it; relay_tvm tunes with TVM's meta_schedule, its successor: "
        "relay_tvm.tune.extract_tasks(mod, target, params) lists the kernels, "
        "relay_tvm.tune.tune_relay(mod, params, target, work_dir, max_trials_global) tunes "
        "them into a database, and relay.build(mod, target, params=params, database=db) "
        "applies it (the `relay-tvm tune` command does the same)"),
}

#: The entries of :data:`NOT_PROVIDED` in force (filled by :func:`install`).
REFUSED: dict[str, str] = {}


def target_of(fullname: str) -> str | None:
    """The relay_tvm module that ``fullname`` (``tvm.relay...`` or ``relay_tvm...``) names, or
    ``None`` when it is neither an alias nor a 0.19 path."""
    for old, new in EXTRA.items():
        if fullname == old or fullname.startswith(old + "."):
            return new + fullname[len(old):]
    for prefix in _PREFIXES:
        if fullname == prefix:
            return "relay_tvm"
        if fullname.startswith(prefix + "."):
            rel = fullname[len(prefix) + 1:]
            if rel in MODULE_PATHS:
                return MODULE_PATHS[rel]
            if prefix == "tvm.relay":
                return "relay_tvm." + rel
            return None
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        # The import system returns whatever sys.modules holds under the name afterwards:
        # the real module, so both names give the same object.
        sys.modules[module.__name__] = importlib.import_module(self.target)


def refusal_of(fullname: str) -> str | None:
    """Why ``fullname`` cannot be imported, for a 0.19 module relay_tvm does not provide
    (:data:`REFUSED`, a ``tvm.relay.frontend``/``relay_tvm.frontend`` module of a frontend it
    lacks, or a submodule of one of them); ``None`` for any other name."""
    for old, why in REFUSED.items():
        if fullname == old or fullname.startswith(old + "."):
            return why
    for prefix in _PREFIXES:
        head = prefix + ".frontend."
        if fullname.startswith(head):
            # looked up in the package itself (already imported: it is the parent), so that
            # finding relay_tvm.frontend's own modules costs a dict look-up and no import
            frontend = sys.modules.get("relay_tvm.frontend")
            explain = getattr(frontend, "missing_module_message", None)
            name = fullname[len(head):].partition(".")[0]
            if explain is not None:
                # named by its 0.19 path: ``from tvm.relay.frontend import onnx`` asks for
                # relay_tvm.frontend.onnx (the import system joins "onnx" to the package's real
                # name), which would name a module the user never wrote
                return explain("tvm.relay.frontend." + fullname[len(head):], name)
    return None


def _not_provided_module(fullname: str) -> str:
    """Why a ``tvm.relay`` module of 0.19 that has no counterpart here cannot be imported."""
    return (f"{fullname}: no such module in relay_tvm (a module of tvm.relay 0.19 it does "
            f"not provide: 0.19's operator registrations, strategies, memory dialect and other "
            f"internals are relay_tvm's own code, in other places; or a misspelt name); the "
            f"public API is under tvm.relay / relay_tvm: tvm.relay.op (and .nn, .image, "
            f".vision), tvm.relay.qnn.op, tvm.relay.transform, tvm.relay.analysis, "
            f"tvm.relay.testing, tvm.relay.frontend")


class _RefusingLoader(importlib.abc.Loader):
    def __init__(self, message: str):
        self.message = message

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from ..errors import ModuleNotProvidedError

        # the import system drops the half-made module: every import raises again
        raise ModuleNotProvidedError(self.message)


class RelayAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``tvm.relay[.X]`` to ``relay_tvm[.X]``, the 0.19 module paths and
    :data:`EXTRA`."""

    def __init__(self, relay: bool = True):
        self.relay = relay

    def find_spec(self, fullname, path=None, target=None):
        if not self.relay and fullname.startswith("tvm.relay"):
            return None
        why = refusal_of(fullname)  # first: the message names the module as it was typed
        if why is not None:
            return importlib.util.spec_from_loader(fullname, _RefusingLoader(why))
        real = target_of(fullname)
        if real is None or real == fullname:
            return None
        try:
            found = importlib.util.find_spec(real) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            if fullname.startswith("tvm.relay."):  # a 0.19 module relay_tvm does not have
                return importlib.util.spec_from_loader(
                    fullname, _RefusingLoader(_not_provided_module(fullname)))
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real),
                                               is_package=True)


def _tvm_has_own_relay() -> bool:
    # Called before the finder is on sys.meta_path, so only TVM's own files can answer.
    import tvm  # noqa: F401

    return importlib.util.find_spec("tvm.relay") is not None


def install() -> bool:
    """Install the finder (idempotent). Returns ``False`` when TVM ships its own ``tvm.relay``
    (then nothing is changed)."""
    if any(isinstance(f, RelayAliasFinder) for f in sys.meta_path):
        return True
    from .tvm_shims import MODULE_ALIASES

    for old, new in MODULE_ALIASES.items():
        try:
            missing = importlib.util.find_spec(old) is None
        except ModuleNotFoundError:
            missing = True
        if missing:
            EXTRA[old] = new
    for old, why in NOT_PROVIDED.items():
        try:
            missing = importlib.util.find_spec(old) is None
        except ModuleNotFoundError:
            missing = True
        if missing:  # never in the way of a module TVM ships
            REFUSED[old] = why
    own = _tvm_has_own_relay()
    # the modules that hold a 0.19 path below them (op.nn for op.nn.nn, op.image for
    # op.image.image) are plain modules here: a package's __path__ lets the import system ask
    # the finder for their children
    for key in MODULE_PATHS:
        parent = key.rpartition(".")[0]
        mod = sys.modules.get(f"relay_tvm.{parent}") if parent else None
        if mod is not None and not hasattr(mod, "__path__"):
            mod.__path__ = []
    sys.meta_path.insert(0, RelayAliasFinder(relay=not own))
    _bind_aliases(relay=not own)
    return not own


def _bind_aliases(relay: bool = True) -> None:
    """Make ``tvm.nd`` / ``tvm.tir`` attributes right away (scripts use them after a bare
    ``import tvm``); the others, and ``tvm.relay`` itself (``import tvm, relay_tvm`` then
    ``tvm.relay.fromtext(...)``), on first attribute access of their parent package."""
    lazy: dict = {"tvm": {"relay"}} if relay else {}
    for old in EXTRA:
        parent, _, child = old.rpartition(".")
        if old in ("tvm.nd", "tvm.tir", "tvm.runtime.container"):
            importlib.import_module(old)
        else:
            lazy.setdefault(parent, set()).add(child)
    for parent, names in lazy.items():
        try:
            mod = importlib.import_module(parent)
        except ImportError:
            continue
        prev = vars(mod).get("__getattr__")
        if getattr(prev, "_relay_tvm", False):
            continue

        def __getattr__(name, _parent=parent, _names=frozenset(names), _prev=prev):
            if name in _names:
                return importlib.import_module(f"{_parent}.{name}")
            if _prev is not None:
                return _prev(name)
            raise AttributeError(f"module {_parent!r} has no attribute {name!r}")

        __getattr__._relay_tvm = True
        mod.__getattr__ = __getattr__


def uninstall() -> None:
    """Remove the finder and the ``tvm.relay`` entries it made."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, RelayAliasFinder)]
    for name in [n for n in sys.modules if n == "tvm.relay" or n.startswith("tvm.relay.")]:
        del sys.modules[name]
    tvm = sys.modules.get("tvm")
    if tvm is not None and getattr(tvm, "relay", None) is sys.modules.get("relay_tvm"):
        delattr(tvm, "relay")
