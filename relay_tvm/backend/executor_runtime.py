"""``relay.backend.Executor`` / ``Runtime`` (tvm.relay 0.19's build options).

relay_tvm builds for the graph executor with TVM's C++ runtime; these objects say so in the
0.19 spelling. ``relay.build(..., executor=Executor("graph"), runtime=Runtime("cpp"))`` is
accepted; an executor or runtime relay_tvm does not have (``"aot"``, ``"crt"``, both removed
from TVM with microTVM) raises :class:`BuildError` at construction, naming the ones there are.
"""

from __future__ import annotations

from ..errors import BuildError, did_you_mean

#: name -> {option: type} of what relay_tvm can build for (0.19's option names).
EXECUTORS = {"graph": {"link-params": bool}}
RUNTIMES = {"cpp": {"system-lib": bool}}


class _Option:
    kind = ""
    table: dict = {}
    removed: dict = {}  # names TVM 0.19 had -> why they are not here

    def __init__(self, name: str, options: dict | None = None):
        if name not in self.table:
            if name in self.removed:
                raise BuildError(f"{self.kind}: {name!r} is not available in relay_tvm (it "
                                 f"builds for {sorted(self.table)}; {self.removed[name]})")
            hint = did_you_mean(name, self.table, clause=True)
            raise BuildError(f"{self.kind}: unknown name {name!r}; relay_tvm builds for "
                             f"{sorted(self.table)}{hint}")
        options = dict(options or {})
        allowed = self.table[name]
        for key, val in options.items():
            if key not in allowed:
                raise BuildError(f"{self.kind}({name!r}): unknown option {key!r}; known: "
                                 f"{sorted(allowed)}")
            if not isinstance(val, allowed[key]):
                raise BuildError(f"{self.kind}({name!r}): option {key!r} must be "
                                 f"{allowed[key].__name__}, got {val!r}")
        self.name = name
        self.attrs = options

    def __getitem__(self, key):
        return self.attrs[key]

    def get(self, key, default=None):
        return self.attrs.get(key, default)

    def __eq__(self, other):
        return type(other) is type(self) and (self.name, self.attrs) == (other.name, other.attrs)

    def __hash__(self):
        return hash((self.kind, self.name, tuple(sorted(self.attrs.items()))))

    def __repr__(self):
        return f"{self.kind}({self.name!r}, {self.attrs!r})"

    @classmethod
    def check(cls, value) -> _Option:
        """``value`` (None, a name, or an instance) as an instance; default when None."""
        if value is None:
            return cls(next(iter(cls.table)))
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, cls):
            return value
        raise BuildError(f"build: {cls.kind.lower()} must be a {cls.kind} or a name, got "
                         f"{type(value).__name__}")


class Executor(_Option):
    """How the built model is driven: ``Executor("graph", {"link-params": False})``."""

    kind = "Executor"
    table = EXECUTORS
    removed = {"aot": "the AOT executor was removed from TVM with microTVM"}


class Runtime(_Option):
    """The runtime the model runs in: ``Runtime("cpp", {"system-lib": False})``."""

    kind = "Runtime"
    table = RUNTIMES
    removed = {"crt": "the C runtime was removed from TVM with microTVM"}
