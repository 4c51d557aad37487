"""Relay's Prelude: the standard algebraic data types and list functions, written in the Relay
text format and parsed with :func:`relay_tvm.parse` (as tvm.relay's ``prelude.rly`` was).

Types: ``List[A]`` (``Cons``, ``Nil``), ``Option[A]`` (``Some``, ``None``), ``Tree[A]``
(``Rose``), ``nat`` (``z``, ``s``). Functions: ``id``, ``compose``, ``flip``, ``hd``, ``tl``,
``nth``, ``update``, ``map``, ``foldl``, ``foldr``, ``foldr1``, ``concat``, ``filter``, ``zip``,
``rev``, ``map_accuml``, ``map_accumr``, ``unfoldl``, ``unfoldr``, ``sum``, ``length``,
``tmap``, ``size``, ``iterate``, and on ``nat``: ``nat_to_int``, ``nat_add``, ``nat_double``,
``nat_iterate``, ``nat_nth``, ``nat_update`` (index a list by a ``nat``). Tensor arrays of every
dtype (:mod:`relay_tvm.tensor_array`) come with it. ``hd``, ``tl``, ``nth`` and ``foldr1`` are partial (``match?``): on an empty
list the interpreter raises :class:`~relay_tvm.errors.InterpreterError`.

Semantics follow tvm.relay 0.19's ``python/tvm/relay/std/prelude.rly`` and ``testing/nat.py``,
including ``map_accuml``'s: it goes through the list from left to right with a ``foldl`` that
conses each result onto those before it, so its result list is in reverse order (for
``[x1, x2, x3]``: ``[c3, c2, c1]``; Haskell's ``mapAccumL`` keeps the order), while
``map_accumr`` goes from right to left and keeps the order.
"""

from __future__ import annotations

from .ir.module import IRModule

PRELUDE_TEXT = """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

type Option[A] {
  Some(A),
  None,
}

type Tree[A] {
  Rose(A, List[Tree[A]]),
}

type nat {
  z,
  s(nat[]),
}

def @id[A](%x: A) -> A {
  %x
}

def @compose[A, B, C](%f: fn (B) -> C, %g: fn (A) -> B) -> fn (A) -> C {
  fn (%x: A) -> C { %f(%g(%x)) }
}

def @flip[A, B, C](%f: fn (A, B) -> C) -> fn (B, A) -> C {
  fn (%b: B, %a: A) -> C { %f(%a, %b) }
}

def @hd[A](%xs: List[A]) -> A {
  match? (%xs) {
    Cons(%x, _) => %x,
  }
}

def @tl[A](%xs: List[A]) -> List[A] {
  match? (%xs) {
    Cons(_, %rest) => %rest,
  }
}

def @nth[A](%xs: List[A], %n: int32) -> A {
  if (equal(%n, 0)) { @hd(%xs) } else { @nth(@tl(%xs), subtract(%n, 1)) }
}

def @update[A](%xs: List[A], %n: int32, %v: A) -> List[A] {
  if (equal(%n, 0)) {
    Cons(%v, @tl(%xs))
  } else {
    Cons(@hd(%xs), @update(@tl(%xs), subtract(%n, 1), %v))
  }
}

def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
    Nil => Nil(),
  }
}

def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %xs: List[B]) -> A {
  match (%xs) {
    Cons(%x, %rest) => @foldl(%f, %f(%acc, %x), %rest),
    Nil => %acc,
  }
}

def @foldr[A, B](%f: fn (A, B) -> B, %acc: B, %xs: List[A]) -> B {
  match (%xs) {
    Cons(%x, %rest) => %f(%x, @foldr(%f, %acc, %rest)),
    Nil => %acc,
  }
}

def @foldr1[A](%f: fn (A, A) -> A, %xs: List[A]) -> A {
  match? (%xs) {
    Cons(%x, Nil) => %x,
    Cons(%x, %rest) => %f(%x, @foldr1(%f, %rest)),
  }
}

def @concat[A](%xs: List[A], %ys: List[A]) -> List[A] {
  @foldr(fn (%x: A, %acc: List[A]) -> List[A] { Cons(%x, %acc) }, %ys, %xs)
}

def @filter[A](%f: fn (A) -> bool, %xs: List[A]) -> List[A] {
  match (%xs) {
    Cons(%x, %rest) => {
      if (%f(%x)) { Cons(%x, @filter(%f, %rest)) } else { @filter(%f, %rest) }
    },
    Nil => Nil(),
  }
}

def @zip[A, B](%xs: List[A], %ys: List[B]) -> List[(A, B)] {
  match ((%xs, %ys)) {
    (Cons(%x, %xr), Cons(%y, %yr)) => Cons((%x, %y), @zip(%xr, %yr)),
    _ => Nil(),
  }
}

def @rev[A](%xs: List[A]) -> List[A] {
  @foldl(fn (%acc: List[A], %x: A) -> List[A] { Cons(%x, %acc) }, Nil(), %xs)
}

def @map_accuml[A, B, C](%f: fn (A, B) -> (A, C), %init: A, %xs: List[B]) -> (A, List[C]) {
  @foldl(fn (%acc: (A, List[C]), %x: B) -> (A, List[C]) {
    let %r = %f(%acc.0, %x);
    (%r.0, Cons(%r.1, %acc.1))
  }, (%init, Nil()), %xs)
}

def @map_accumr[A, B, C](%f: fn (A, B) -> (A, C), %init: A, %xs: List[B]) -> (A, List[C]) {
  match (%xs) {
    Cons(%x, %rest) => {
      let %rs = @map_accumr(%f, %init, %rest);
      let %r = %f(%rs.0, %x);
      (%r.0, Cons(%r.1, %rs.1))
    },
    Nil => (%init, Nil()),
  }
}

def @unfoldr[A, B](%f: fn (A) -> Option[(A, B)], %seed: A) -> List[B] {
  match (%f(%seed)) {
    Some(%p) => Cons(%p.1, @unfoldr(%f, %p.0)),
    None => Nil(),
  }
}

def @unfoldl[A, B](%f: fn (A) -> Option[(A, B)], %seed: A) -> List[B] {
  @rev(@unfoldr(%f, %seed))
}

def @sum(%xs: List[int32]) -> int32 {
  @foldl(fn (%a: int32, %b: int32) -> int32 { add(%a, %b) }, 0, %xs)
}

def @length[A](%xs: List[A]) -> int32 {
  match (%xs) {
    Cons(_, %rest) => add(1, @length(%rest)),
    Nil => 0,
  }
}

def @tmap[A, B](%f: fn (A) -> B, %t: Tree[A]) -> Tree[B] {
  match (%t) {
    Rose(%v, %children) => {
      Rose(%f(%v), @map(fn (%c: Tree[A]) -> Tree[B] { @tmap(%f, %c) }, %children))
    },
  }
}

def @size[A](%t: Tree[A]) -> int32 {
  match (%t) {
    Rose(_, %children) => add(1, @sum(@map(fn (%c: Tree[A]) -> int32 { @size(%c) }, %children))),
  }
}

def @iterate[A](%f: fn (A) -> A, %n: int32) -> fn (A) -> A {
  if (equal(%n, 0)) {
    fn (%x: A) -> A { %x }
  } else {
    @compose(%f, @iterate(%f, subtract(%n, 1)))
  }
}

def @nat_to_int(%n: nat[]) -> int32 {
  match (%n) {
    z => 0,
    s(%m) => add(1, @nat_to_int(%m)),
  }
}

def @nat_add(%a: nat[], %b: nat[]) -> nat[] {
  match (%a) {
    z => %b,
    s(%m) => s(@nat_add(%m, %b)),
  }
}

def @nat_double(%n: nat[]) -> nat[] {
  @nat_add(%n, %n)
}

def @nat_iterate[A](%f: fn (A) -> A, %n: nat[]) -> fn (A) -> A {
  match (%n) {
    z => fn (%x: A) -> A { %x },
    s(%m) => @compose(%f, @nat_iterate(%f, %m)),
  }
}

def @nat_nth[A](%xs: List[A], %n: nat[]) -> A {
  match (%n) {
    z => @hd(%xs),
    s(%m) => @nat_nth(@tl(%xs), %m),
  }
}

def @nat_update[A](%xs: List[A], %n: nat[], %v: A) -> List[A] {
  match (%n) {
    z => Cons(%v, @tl(%xs)),
    s(%m) => Cons(@hd(%xs), @nat_update(@tl(%xs), %m, %v)),
  }
}
"""

TYPE_DEFS = {"List": "list", "Option": "optional", "Tree": "tree", "nat": "nat"}
GLOBAL_DEFS = [
    "id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr", "foldr1",
    "concat", "filter", "zip", "rev", "map_accuml", "map_accumr", "unfoldl", "unfoldr", "sum",
    "length", "tmap", "size", "iterate", "nat_to_int", "nat_add", "nat_double", "nat_iterate",
    "nat_nth", "nat_update",
]

_PARSED = None
_WITH_ARRAYS = None


def _prelude_module() -> IRModule:
    global _PARSED
    if _PARSED is None:
        from .text import parse

        _PARSED = parse(PRELUDE_TEXT, source_name="prelude.rly")
    return _PARSED


def _prelude_with_tensor_arrays() -> IRModule:
    """The Prelude plus the dynamic tensor arrays of every dtype of tvm.relay 0.19's Prelude
    (built once; modules share the definitions)."""
    global _WITH_ARRAYS
    if _WITH_ARRAYS is None:
        from .tensor_array import DTYPES, TensorArrayOps

        holder = Prelude.__new__(Prelude)
        holder.mod = _prelude_module().copy()
        for dtype in DTYPES:
            TensorArrayOps(holder, dtype).register()
        _WITH_ARRAYS = holder.mod
    return _WITH_ARRAYS


class Prelude:
    """Adds the Prelude's types and functions to ``mod`` (tvm.relay.prelude.Prelude).

    Attributes after construction: ``mod``; the types ``list``, ``optional``, ``tree``, ``nat``
    with their constructors ``cons``, ``nil``, ``some``, ``none``, ``rose``, ``z``, ``s``; and
    one ``GlobalVar`` per function (``p.map``, ``p.foldl``, ...). All modules share the same
    definitions (parsed once), so loading into several modules is cheap.

    Args:
        mod: the module to extend (a new ``IRModule`` when None). A module that already has a
            ``List`` type is assumed to hold the Prelude and is left as it is.
    """

    def __init__(self, mod: IRModule | None = None):
        self.mod = mod if mod is not None else IRModule()
        self.load_prelude()

    def load_prelude(self) -> None:
        if "List" not in self.mod._global_type_vars:
            self.mod.update(_prelude_with_tensor_arrays())
        elif "tensor_float32_t" not in self.mod._global_type_vars:
            self.mod.update(_prelude_with_tensor_arrays())
        self.list, self.cons, self.nil = self.mod.get_type("List")
        self.optional, self.some, self.none = self.mod.get_type("Option")
        self.tree, self.rose = self.mod.get_type("Tree")
        self.nat, self.z, self.s = self.mod.get_type("nat")
        for name in GLOBAL_DEFS:
            setattr(self, name, self.mod.get_global_var(name))

    def get_name(self, canonical: str, dtype: str | None = None) -> str:
        """The module name of ``canonical``; with a dtype, the tensor array naming
        (``tensor_t`` -> ``tensor_float32_t``, ``tensor_array`` -> ``tensor_array_float32``)."""
        if dtype is None:
            return canonical
        return f"tensor_{dtype}_t" if canonical == "tensor_t" else f"{canonical}_{dtype}"

    def get_global_var(self, canonical: str, dtype: str | None = None):
        """The ``GlobalVar`` of a Prelude function, e.g. ``get_global_var("map")``."""
        return self.mod.get_global_var(self.get_name(canonical, dtype))

    def get_type(self, canonical: str, dtype: str | None = None):
        """The ``GlobalTypeVar`` of a Prelude type, e.g. ``get_type("List")``."""
        return self.mod.get_global_type_var(self.get_name(canonical, dtype))

    def get_ctor(self, ty_name: str, canonical: str, dtype: str | None = None):
        """The constructor ``canonical`` of type ``ty_name``, e.g. ``get_ctor("List", "Cons")``."""
        from .errors import RelayError

        gtv = self.get_type(ty_name, dtype)
        for c in self.mod[gtv].constructors:
            if c.name_hint == self.get_name(canonical, dtype):
                return c
        raise RelayError(f"type {ty_name} has no constructor {canonical}")

    def get_tensor_ctor(self, canonical: str, dtype: str):
        """A constructor of the dynamic tensor type of ``dtype``, e.g. ``("tensor2", "int32")``."""
        return self.get_ctor("tensor_t", canonical, dtype)

    # static tensor arrays (relay_tvm.tensor_array.StaticTensorArrayOps) ------------------------
    def get_name_static(self, canonical: str, dtype: str, shape, batch_dim=None) -> str:
        from .tensor_array import static_name

        return static_name(canonical, dtype, shape, batch_dim)

    def get_global_var_static(self, canonical: str, dtype: str, shape, batch_dim=None):
        return self.mod.get_global_var(self.get_name_static(canonical, dtype, shape, batch_dim))

    def get_type_static(self, canonical: str, dtype: str, shape):
        return self.mod.get_global_type_var(self.get_name_static(canonical, dtype, shape))

    def get_ctor_static(self, ty_name: str, canonical: str, dtype: str, shape):
        from .errors import RelayError

        name = self.get_name_static(canonical, dtype, shape)
        for c in self.mod[self.get_type_static(ty_name, dtype, shape)].constructors:
            if c.name_hint == name:
                return c
        raise RelayError(f"static tensor type for {dtype} {tuple(shape)} has no constructor "
                         f"{name}")

    def get_tensor_ctor_static(self, canonical: str, dtype: str, shape):
        return self.get_ctor_static("tensor_t", canonical, dtype, shape)


# ``gradient.rly``: a tensor's gradient held lazily. ``One`` / ``Zero`` carry a thunk that makes
# the tensor of ones / zeros only when needed; multiplying by a Zero is that Zero, by a One the
# other cell, adding a Zero the other cell; anything else forces both and wraps the result.
GRADIENT_TEXT = """#[version = "0.0.5"]
type GradCell[T] {
  Raw(T),
  One(fn () -> T),
  Zero(fn () -> T),
}

def @FromGradCell[T](%cell: GradCell[T]) -> T {
  match (%cell) {
    Raw(%value) => %value,
    One(%make) => %make(),
    Zero(%make) => %make(),
  }
}

def @MultiplyGradCell[T](%times: fn (T, T) -> T, %a: GradCell[T], %b: GradCell[T]) -> GradCell[T] {
  match ((%a, %b)) {
    (Zero(_), _) => %a,
    (_, Zero(_)) => %b,
    (One(_), _) => %b,
    (_, One(_)) => %a,
    _ => Raw(%times(@FromGradCell(%a), @FromGradCell(%b))),
  }
}

def @AddGradCell[T](%plus: fn (T, T) -> T, %a: GradCell[T], %b: GradCell[T]) -> GradCell[T] {
  match ((%a, %b)) {
    (Zero(_), _) => %b,
    (_, Zero(_)) => %a,
    _ => Raw(%plus(@FromGradCell(%a), @FromGradCell(%b))),
  }
}
"""


def _import_std(mod: IRModule, name: str) -> None:
    """``IRModule.import_from_std``: ``prelude.rly`` and ``nat.rly`` are this Prelude (which
    holds ``nat``); ``gradient.rly`` the ``GradCell`` type and its functions (tvm.relay 0.19's
    file of that name); ``core.rly`` declares nothing relay_tvm needs (its ``Storage`` type
    belongs to the memory planner TVM removed)."""
    if name in ("prelude.rly", "nat.rly"):
        Prelude(mod)
    elif name == "gradient.rly":
        if "GradCell" not in [g.name_hint for g in mod.get_global_type_vars()]:
            from .text import parse

            mod.update(parse(GRADIENT_TEXT, source_name="gradient.rly"))
    elif name != "core.rly":
        from .errors import RelayError

        raise RelayError(f"import_from_std: unknown standard library file {name!r}; relay_tvm "
                         "provides 'prelude.rly', 'nat.rly', 'gradient.rly' and 'core.rly'")


IRModule._STD_IMPORTER = staticmethod(_import_std)

from .tensor_array import StaticTensorArrayOps, TensorArrayOps, get_tensor_array_shape  # noqa: E402

__all__ = ["Prelude", "PRELUDE_TEXT", "GLOBAL_DEFS", "StaticTensorArrayOps", "TensorArrayOps",
           "get_tensor_array_shape"]
