"""IRModule: the global functions and type definitions of a Relay program."""

from __future__ import annotations

from ..errors import RelayError, did_you_mean
from .adt import Constructor, TypeData
from .base import Node
from .expr import Function, GlobalVar
from .types import GlobalTypeVar


class _Map(dict):
    """A copy of one of a module's mappings. ``items()`` is a list, as TVM 0.19's ``Map.items()``
    was (``mod.type_definitions.items()[0]``); iterating and unpacking work as for a dict."""

    def items(self):
        return list(super().items())


class IRModule(Node):
    """A Relay module: global functions by :class:`GlobalVar` and ADT definitions by
    :class:`GlobalTypeVar`. Functions may refer to each other (mutual recursion).

    Args:
        functions: mapping of ``GlobalVar`` or name to ``Function``.
        type_definitions: mapping of ``GlobalTypeVar`` or name to ``TypeData``.
    """

    __slots__ = ("_functions", "_global_vars", "_type_defs", "_global_type_vars", "_constructors",
                 "source_map", "attrs")

    def __init__(self, functions=None, type_definitions=None):
        self._functions: dict[GlobalVar, Function] = {}
        self._global_vars: dict[str, GlobalVar] = {}
        self._type_defs: dict[GlobalTypeVar, TypeData] = {}
        self._global_type_vars: dict[str, GlobalTypeVar] = {}
        self._constructors: dict[int, Constructor] = {}
        self.source_map = None
        self.attrs = None
        for k, v in (type_definitions or {}).items():
            self._add_type(k, v)
        for k, v in (functions or {}).items():
            self[k] = v

    # ---- functions ----------------------------------------------------------------------------
    @property
    def functions(self) -> dict:
        """A copy of the ``GlobalVar -> Function`` mapping."""
        return _Map(self._functions)

    @property
    def type_definitions(self) -> dict:
        """A copy of the ``GlobalTypeVar -> TypeData`` mapping."""
        return _Map(self._type_defs)

    def _gv(self, key) -> GlobalVar:
        if isinstance(key, GlobalVar):
            return key
        if isinstance(key, str):
            gv = self._global_vars.get(key)
            if gv is None:
                names = list(self._global_vars)
                near = did_you_mean(key, names, n=3)
                # a Prelude module has ~330 functions: name the nearest, or a few and a count
                listing = ", ".join("@" + n for n in names[:12]) or "none"
                if len(names) > 12:
                    listing += f", ... ({len(names)} in all)"
                raise RelayError(f"IRModule has no global function @{key}{near}; it has "
                                 f"{listing}")
            return gv
        raise RelayError(f"IRModule key must be a name or GlobalVar, got {type(key).__name__}")

    def __getitem__(self, key):
        if isinstance(key, GlobalTypeVar):
            return self._type_defs[key]
        gv = self._gv(key)
        try:
            return self._functions[gv]
        except KeyError:
            raise RelayError(f"IRModule has no function for @{gv.name_hint}") from None

    def __setitem__(self, key, func):
        if isinstance(key, GlobalTypeVar) or isinstance(func, TypeData):
            self._add_type(key, func)
            return
        if not isinstance(func, Function):
            from .expr import Expr

            if isinstance(func, Expr):
                from .free import free_vars

                func = Function(free_vars(func), func)
            else:
                raise RelayError(f"IRModule values must be Functions, got {type(func).__name__}")
        if isinstance(key, str):
            gv = self._global_vars.get(key) or GlobalVar(key)
        elif isinstance(key, GlobalVar):
            gv = key
            old = self._global_vars.get(gv.name_hint)
            if old is not None and old is not gv:
                # The same name twice: keep one GlobalVar so that calls stay consistent.
                self._functions.pop(old)
        else:
            raise RelayError(f"IRModule key must be a name or GlobalVar, got {type(key).__name__}")
        self._global_vars[gv.name_hint] = gv
        self._functions[gv] = func

    def add(self, key, func):
        self[key] = func
        return self

    def _add(self, key, func, update: bool = True):
        """tvm.relay 0.19's ``IRModule._add(var, val, update)``: add a function or type
        definition; with ``update=False`` a name already defined is an error.

        Raises:
            RelayError: ``update`` is False and the module already defines the name.
        """
        if not update:
            name = key if isinstance(key, str) else key.name_hint
            if isinstance(func, TypeData) or isinstance(key, GlobalTypeVar):
                taken = name in self._global_type_vars
            else:
                taken = name in self._global_vars
            if taken:
                raise RelayError(f"IRModule._add: {name} is already defined (pass update=True "
                                 "to replace it)")
        self[key] = func

    def __contains__(self, key):
        if isinstance(key, str):
            return key in self._global_vars
        if isinstance(key, GlobalTypeVar):
            return key in self._type_defs
        return key in self._functions

    def __delitem__(self, key):
        gv = self._gv(key)
        self._functions.pop(gv)
        self._global_vars.pop(gv.name_hint)

    def get_global_var(self, name: str) -> GlobalVar:
        return self._gv(name)

    def get_global_vars(self) -> list:
        return list(self._functions.keys())

    def __iter__(self):
        return iter(self._functions.items())

    def __len__(self):
        return len(self._functions)

    # ---- types --------------------------------------------------------------------------------
    def _add_type(self, key, data: TypeData):
        if isinstance(key, str):
            key = data.header
        if not isinstance(data, TypeData):
            raise RelayError(f"type definitions must be TypeData, got {type(data).__name__}")
        if key is not data.header:
            raise RelayError(f"type definition key {key.name_hint} is not its header")
        self._type_defs[key] = data
        self._global_type_vars[key.name_hint] = key
        for c in data.constructors:
            self._constructors[c.tag] = c

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        try:
            return self._global_type_vars[name]
        except KeyError:
            raise RelayError(f"IRModule has no type definition {name}") from None

    def get_global_type_vars(self) -> list:
        return list(self._type_defs.keys())

    def get_constructor(self, tag: int) -> Constructor:
        """The constructor whose ``tag`` is given (:meth:`lookup_constructor` finds one by
        name)."""
        if isinstance(tag, str):
            raise RelayError(f"IRModule.get_constructor takes a constructor tag (an int), got "
                             f"the name {tag!r}; lookup_constructor({tag!r}) finds it by name")
        c = self._constructors.get(tag)
        if c is None:
            known = [f"{c.name_hint} (tag {t}, of {c.belong_to.name_hint})"
                     for t, c in self._constructors.items()]
            listing = ", ".join(known[:12]) or "none (the module defines no ADTs)"
            if len(known) > 12:
                listing += f", ... ({len(known)} in all)"
            raise RelayError(f"IRModule has no constructor with tag {tag}; it has {listing}")
        return c

    def get_type(self, name: str):
        """``(GlobalTypeVar, *constructors)`` of the type definition ``name`` (Relay's helper)."""
        gtv = self.get_global_type_var(name)
        return (gtv, *self._type_defs[gtv].constructors)

    def lookup_constructor(self, name: str) -> Constructor:
        for c in self._constructors.values():
            if c.name_hint == name:
                return c
        raise RelayError(f"IRModule has no constructor {name}")

    # ---- whole module -------------------------------------------------------------------------
    def update(self, other: IRModule) -> None:
        """Add (or replace) every function and type definition of ``other``."""
        for gtv, data in other._type_defs.items():
            self._add_type(gtv, data)
        for gv, f in other._functions.items():
            self[gv] = f

    # set by relay_tvm.prelude (a layer above): the Relay standard library files
    _STD_IMPORTER = None

    def import_from_std(self, name: str) -> None:
        """Add a file of Relay's standard library to this module (tvm.relay's
        ``IRModule.import_from_std``): ``"prelude.rly"``, ``"nat.rly"`` (the Prelude, which
        holds ``nat``) or ``"core.rly"``.

        Raises:
            RelayError: an unknown file name.
        """
        if IRModule._STD_IMPORTER is None:
            import relay_tvm.prelude  # noqa: F401  (installs the importer)
        IRModule._STD_IMPORTER(self, name)

    def update_func(self, gv, func) -> None:
        self[gv] = func

    def copy(self) -> IRModule:
        m = IRModule()
        m.update(self)
        m.source_map = self.source_map
        return m

    def shallow_copy(self) -> IRModule:
        return self.copy()

    @staticmethod
    def from_expr(expr, functions=None, type_defs=None) -> IRModule:
        """A module whose ``main`` is ``expr`` (wrapped in a function of its free variables when it
        is not a function already)."""
        mod = IRModule(functions, type_defs)
        mod["main"] = expr
        return mod

    def __repr__(self):
        return str(self)


__all__ = ["IRModule"]
