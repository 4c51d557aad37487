"""tvm.relay 0.19's ``relay.analysis._ffi_api`` entry that Relay-era tests use: the type
solver harness ``_test_type_solver`` (type_solver.cc's test hook), over relay_tvm's solver.

``solver = _test_type_solver()`` gives ``solver("Unify")(a, b)``, ``solver("Resolve")(t)``,
``solver("AddConstraint")(rel)`` and ``solver("Solve")()``. A constraint is a
``relay.ty.TypeRelation`` whose function is a relay_tvm relation (``f(arg_types, attrs)``), or
0.19's ``tvm.ir.EnvFunc.get("tvm.relay.type_relation.Identity" / "...Broadcast")``; the global
functions of those names are registered here so that ``EnvFunc.get`` finds them (they only name
the relation: calling one through TVM's FFI raises).
"""

from __future__ import annotations

from ..errors import RelayError, TypeInferenceError
from ..ir.types import TensorType, type_str
from ..typing.solver import TypeSolver, _has_incomplete, _UnifyError

_PREFIX = "tvm.relay.type_relation."


def _identity(solver, types, attrs):
    """0.19's IdentityRel: every argument, the output included, has the first one's type."""
    for t in types[1:]:
        solver.unify(t, types[0])
    return True


def _broadcast(solver, types, attrs):
    from ..op._common import broadcast_rel

    a, b = (solver.resolve(t) for t in types[:2])
    if not (isinstance(a, TensorType) and isinstance(b, TensorType)):
        return False
    solver.unify(types[2], broadcast_rel("Broadcast")([a, b], attrs))
    return True


_BUILTIN = {"Identity": _identity, "Broadcast": _broadcast}


def _register_names():
    import tvm_ffi

    for name in _BUILTIN:
        full = _PREFIX + name
        if tvm_ffi.get_global_func(full, allow_missing=True) is None:
            def named(*args, _n=full):
                raise RelayError(f"{_n} is a relay_tvm type relation; it runs in relay_tvm's "
                                 f"type solver, not through TVM's FFI")
            tvm_ffi.register_global_func(full, named)


class _TypeSolverHarness:
    """The object ``_test_type_solver()`` returns (see the module docstring)."""

    def __init__(self):
        self.solver = TypeSolver()
        self.pending = []
        # 0.19's solver puts whole types, not only unknowns, in its union-find: after
        # Unify(a, b), Resolve(a) is the unified type (type parameters included)
        self.unified = {}

    def __call__(self, name: str):
        methods = {"Solve": self.solve, "Unify": self.unify, "Resolve": self.resolve,
                   "AddConstraint": self.add_constraint}
        if name not in methods:
            raise RelayError(f"type solver harness has no method {name!r}; it has "
                             f"{sorted(methods)}")
        return methods[name]

    def unify(self, a, b):
        try:
            out = self.solver.unify(a, b)
        except _UnifyError as err:
            raise TypeInferenceError(f"cannot unify {type_str(self.solver.resolve(a))} with "
                                     f"{type_str(self.solver.resolve(b))}"
                                     f"{': ' + err.detail if err.detail else ''}") from None
        self.unified[a] = self.unified[b] = out
        return self.solver.resolve(out)

    def resolve(self, t):
        return self.solver.resolve(self.unified.get(t, t))

    def add_constraint(self, rel) -> None:
        func = rel.func
        name = getattr(func, "name", None)
        if isinstance(name, str) and name.startswith(_PREFIX):
            short = name[len(_PREFIX):]
            if short not in _BUILTIN:
                raise RelayError(f"type relation {name} is not known to relay_tvm's solver "
                                 f"(known: {', '.join(sorted(_BUILTIN))})")
            step = _BUILTIN[short]
        elif callable(func):
            step = _user_relation(func, rel.num_inputs)
        else:
            raise RelayError(f"AddConstraint: relation function {func!r} is neither a relay_tvm "
                             f"relation nor a tvm.relay.type_relation.* EnvFunc")
        self.pending.append((step, list(rel.args), rel.attrs))

    def solve(self) -> bool:
        """Run the relations until none makes progress; True when every one was solved."""
        progress = True
        while self.pending and progress:
            progress = False
            left = []
            for step, types, attrs in self.pending:
                try:
                    done = step(self.solver, types, attrs)
                except _UnifyError as err:
                    raise TypeInferenceError(f"type relation failed: {err.detail}") from None
                if done:
                    progress = True
                else:
                    left.append((step, types, attrs))
            self.pending = left
        return not self.pending


def _user_relation(func, num_inputs):
    def step(solver, types, attrs):
        ins = [solver.resolve(t) for t in types[:num_inputs]]
        if any(_has_incomplete(t) for t in ins):
            return False
        res = func(ins, attrs)
        if res is None:
            return False
        out, fill = res if isinstance(res, tuple) else (res, {})
        for i, t in fill.items():
            solver.unify(types[i], t)
        solver.unify(types[num_inputs], out)
        return True

    return step


def _test_type_solver():
    """A fresh type solver harness (see the module docstring)."""
    return _TypeSolverHarness()


_register_names()
