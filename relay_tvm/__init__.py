"""relay_tvm: Relay, the functional, statically typed IR for machine learning (Roesch et al.,
"Relay: A New IR for Machine Learning Frameworks", MAPL 2018), as a Python package on Apache TVM.

Use it as ``import relay_tvm as relay``: the public names follow tvm.relay 0.19.
"""

from . import _threads

_threads.set_default_threads()  # before TVM's thread pool exists: every usable core

from . import analysis, errors, ir, op, text, transform, typing  # noqa: E402,F401
from .errors import *  # noqa: E402,F401,F403
from .ir import (  # noqa: F401
    Any,
    Attrs,
    Call,
    Clause,
    Constant,
    Constructor,
    DictAttrs,
    Expr,
    ExprFunctor,
    ExprMutator,
    ExprVisitor,
    Function,
    FuncType,
    GlobalTypeVar,
    GlobalVar,
    If,
    IncompleteType,
    IRModule,
    Let,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    Span,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    Type,
    TypeCall,
    TypeConstraint,
    TypeData,
    TypeFunctor,
    TypeKind,
    TypeMutator,
    TypeRelation,
    TypeVar,
    TypeVisitor,
    Var,
    bind,
    const,
    scalar_type,
    var,
)
from .op import *  # noqa: F401,F403
from .op import annotation, image, nn, random, vision  # noqa: F401
from .runtime.executor import create_executor  # noqa: F401
from .scope_builder import ScopeBuilder  # noqa: F401
from .transform.pass_infra import build_config  # noqa: F401,E402  (tvm.relay.build_config)
from .transform.span_check import SpanCheck  # noqa: F401,E402  (tvm.relay.SpanCheck)

# tvm.relay names for the IR base classes
RelayExpr = Expr
ShapeVar = lambda name: TypeVar(name, TypeKind.ShapeVar)  # noqa: E731


def _lazy(name):
    import importlib

    return importlib.import_module(f".{name}", __name__)


def __getattr__(name):
    # Parts built on TVM's compiler (text format, backend, frontends, ...) load on first use.
    if name in ("text", "backend", "frontend", "testing", "vm", "prelude", "cli",
                "dataflow_pattern", "loops", "report", "quantize"):
        return _lazy(name)
    if name == "relay":  # ``from relay_tvm import relay`` (as ``from tvm import relay``): the
        # package itself (not in __dir__, so walkers of the package do not loop through it)
        import sys

        return sys.modules[__name__]
    if name in ("astext", "parse", "parse_expr", "fromtext", "SourceName"):
        return getattr(_lazy("text"), name)
    if name in ("build", "optimize"):
        return getattr(_lazy("backend"), name)
    if name == "build_module":  # 0.19's module: the backend's names and create_executor
        return _lazy("compat.build_module")
    if name in ("save_param_dict", "load_param_dict"):
        return getattr(_lazy("backend").param_dict, name)
    if name == "Prelude":
        return _lazy("prelude").Prelude
    if name == "visualize":  # a function; the module is relay_tvm.report.graph
        return _lazy("report").visualize
    from .compat.alias import MODULE_PATHS

    if name in MODULE_PATHS:  # tvm.relay 0.19 module paths (relay.ty, relay.expr, ...)
        import importlib

        return importlib.import_module(MODULE_PATHS[name])
    raise AttributeError(f"module 'relay_tvm' has no attribute {name!r}")

from . import qnn  # noqa: E402,F401  (registers the qnn.* operators: the parser knows them)

_LAZY = ("text", "backend", "frontend", "testing", "vm", "prelude", "cli", "dataflow_pattern",
         "loops", "quantize", "astext",
         "parse", "parse_expr", "fromtext", "SourceName", "build", "optimize", "build_module",
         "save_param_dict", "load_param_dict", "Prelude", "report", "visualize")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

from . import compat as _compat  # noqa: E402

if _compat.enabled():
    _compat.install()
