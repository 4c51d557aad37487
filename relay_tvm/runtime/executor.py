"""``relay.create_executor``: one interface over the interpreter and the compiled executors."""

from __future__ import annotations

from ..errors import InputError, RelayError, did_you_mean
from ..ir.expr import Function, GlobalVar
from ..ir.module import IRModule
from ..transform.bind_params import bind_params_by_name, check_arg  # noqa: F401  (API names)
from .argcheck import check_value
from .interpreter import Interpreter, to_user, to_value


class Executor:
    """Base of executors: ``evaluate(expr=None)`` returns a callable (or a value)."""

    def __init__(self, mod, device, target, params=None):
        self.mod = mod if mod is not None else IRModule()
        self.device = device
        self.target = target
        self.params = params or {}

    def _main_params(self, mod, entry: str = "main") -> dict:
        """The bound parameters that name a parameter of ``mod[entry]`` (the function
        evaluated).

        Raises:
            InputError: a name that is a parameter neither of it nor of the executor's module's
                own ``main`` (0.19 ignored it: a misspelt weight stayed an input).
        """
        from ..backend.build_module import check_param_names

        func = mod[entry]
        names = {p.name_hint for p in func.params}
        own = self.mod["main"] if "main" in self.mod else None
        # the message lists (and suggests among) the module's own main's parameters where it
        # has one: the function evaluated may be a wrapper of an expression, with none
        check_param_names(own if own is not None else func, self.params, "create_executor",
                          also=names)
        return {k: v for k, v in self.params.items() if k in names}

    def _make_executor(self, expr=None):
        raise NotImplementedError

    def evaluate(self, expr=None, binds=None):
        """Evaluate ``expr`` (``mod["main"]`` when None). A function gives a Python callable taking
        NumPy arrays / tvm Tensors; any other expression is evaluated at once."""
        if binds:
            from ..ir.expr import Expr, const
            from ..ir.functor import substitute

            # values may be arrays (tvm.relay took NumPy / tvm tensors there too)
            binds = {k: v if isinstance(v, Expr) else const(
                v.numpy() if hasattr(v, "numpy") else v) for k, v in binds.items()}
            expr = substitute(expr, binds)
        return self._make_executor(expr)

    @staticmethod
    def _main_module(mod: IRModule, expr, entry: str = "main"):
        """A copy of ``mod`` whose ``@entry`` is what ``evaluate(expr)`` runs, and whether the
        result is a value to compute at once (``expr`` is not a function). The compiled
        executors build ``@main`` (replaced by ``expr``'s function, as 0.19's did); the
        interpreter asks for another name, so that ``expr`` may call the module's ``@main``
        (0.19's interpreter added it under a fresh name)."""
        from ..analysis.free import free_vars

        mod = mod.copy()
        if expr is None:
            if "main" not in mod:
                raise RelayError("evaluate(): no expression given and the module has no @main")
            if entry != "main":
                mod[entry] = mod["main"]
            return mod, False
        if isinstance(expr, GlobalVar):
            mod[entry] = mod[expr]
            return mod, False
        if isinstance(expr, Function):
            mod[entry] = expr
            return mod, False
        fv = free_vars(expr)
        if fv:
            names = ", ".join("%" + v.name_hint for v in fv)
            raise RelayError(f"evaluate(): the expression has free variables {names}")
        mod[entry] = Function([], expr)
        return mod, True


def order_args(names, args, kwargs, where: str = "@main") -> list:
    """Positional and keyword arguments of a call to a function with parameters ``names``, in
    parameter order (tvm.relay 0.19's executors' rule: the positional ones first, then each
    keyword at its parameter's place).

    Args:
        names: the parameters' names, in order.
        args, kwargs: the call's arguments.
        where: the function, as error messages name it (``"@main"``; the VM names the one called).

    Raises:
        InputError: an unknown keyword; a parameter given both by position and by keyword (0.19
            refused it too; the keyword used to win silently); too many arguments; or
            parameters left without a value (named).
    """
    names = list(names)
    args = list(args)
    missing = object()
    for k, v in kwargs.items():
        if k not in names:
            raise InputError(f"{where}: unknown argument {k!r}{did_you_mean(k, names)}; "
                             f"parameters are {names}")
        idx = names.index(k)
        if idx < len(args) and args[idx] is not missing:
            raise InputError(f"{where}: argument {k!r} given twice, by position (argument "
                             f"{idx}) and by keyword")
        while len(args) <= idx:
            args.append(missing)
        args[idx] = v
    unset = [n for n, a in zip(names, args) if a is missing] + names[len(args):]
    if len(args) > len(names) or unset:
        given = sum(a is not missing for a in args)
        left = f"; no value for {unset}" if unset else ""
        raise InputError(f"{where} takes {len(names)} argument(s) {names}, got {given}{left}")
    return args


class Interpreter_(Executor):
    """The reference interpreter executor (``kind="debug"``)."""

    def __init__(self, mod, device=None, target="llvm", params=None):
        super().__init__(mod, device, target, params)

    def _make_executor(self, expr=None):
        from ..typing.infer import infer_module

        entry = "main"
        if expr is not None:  # a name of its own: the expression may call @main
            entry = "__evaluate"
            while entry in self.mod:
                entry += "_"
        mod, immediate = self._main_module(self.mod, expr, entry)
        if self.params:
            mod[entry] = bind_params_by_name(mod[entry], self._main_params(mod, entry),
                                             record=False)
        mod = infer_module(mod)
        interp = Interpreter(mod)
        func = mod[entry]
        closure = interp.global_closure(mod.get_global_var(entry))
        if immediate:
            return to_user(interp.apply(closure, []))

        def run(*args, **kwargs):
            args = order_args([p.name_hint for p in func.params], args, kwargs)
            vals, sizes = [], {}  # sizes: the symbolic dimensions' values, across arguments
            for i, (p, a) in enumerate(zip(func.params, args)):
                ty = p.checked_type
                given = a  # for messages: to_value makes a list a tuple
                if hasattr(ty, "dtype"):  # as the compiled executors
                    from .pyargs import python_arg

                    a = python_arg(a, ty.dtype, f"argument {i} (%{p.name_hint})")
                v = to_value(a)
                check_value(v, ty, f"argument {i} (%{p.name_hint})", mod, sizes, given)
                vals.append(v)
            return to_user(interp.apply(closure, vals))

        return run


_KINDS = ("debug", "graph", "vm", "aot")


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """An executor for ``mod`` (tvm.relay.create_executor).

    Args:
        kind: ``"debug"`` (the reference interpreter), ``"graph"`` (compiled dataflow program)
            or ``"vm"`` (compiled, the full language). tvm.relay 0.19's ``"aot"`` runs on the
            graph executor, with a warning (TVM 0.27 has no AOT executor).
        mod: the module (``IRModule()`` when None).
        device: a ``tvm.runtime.Device`` for compiled executors (CPU by default).
        target: the compilation target for compiled executors.
        params: constants bound to ``main``'s parameters by name.

    Returns:
        an executor whose ``evaluate(expr=None)`` gives a callable or a value.
    """
    if mod is None:
        mod = IRModule()
    if kind == "debug":
        return Interpreter_(mod, device, target, params)
    if kind in ("graph", "vm", "aot"):
        from .compiled import make_compiled_executor

        if kind == "aot":
            import warnings

            warnings.warn("create_executor('aot'): relay_tvm has no AOT executor (TVM 0.27 "
                          "removed it); the graph executor compiles and runs the program",
                          UserWarning, stacklevel=2)

        return make_compiled_executor(kind, mod, device, target, params)
    raise RelayError(f"unknown executor kind {kind!r}{did_you_mean(kind, _KINDS)}; expected "
                     f"'debug', 'graph' or 'vm' ('aot' runs on the graph executor, with a "
                     f"warning)")


__all__ = ["create_executor", "Executor", "bind_params_by_name"]
