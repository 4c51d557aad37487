"""Non-polymorphic ADTs in the text format: a bare ``L`` and ``L[]`` name the same type (as
tvm.relay 0.19's parser read them), so programs over them type-check and run."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.ir.types import TypeCall

SRC = """#[version = "0.0.5"]
type L { Nil, Cons(int32, L) }
def @len(%l: L) -> int32 { match (%l) { Nil => 0, Cons(_, %t) => add(1, @len(%t)) } }
def @sum(%l: L[]) -> int32 { match (%l) { Nil => 0, Cons(%h, %t) => add(%h, @sum(%t)) } }
def @build(%n: int32) -> L {
  if (less(%n, 1)) { Nil } else { Cons(%n, @build(subtract(%n, 1))) }
}
def @main(%n: int32) -> (int32, int32) { %0 = @build(%n); (@len(%0), @sum(%0)) }
"""


def _run(mod, n):
    out = relay.create_executor("debug", mod=mod).evaluate()(np.int32(n))
    return int(out[0].numpy()), int(out[1].numpy())


def test_bare_and_empty_brackets_parse_to_the_same_type():
    mod = relay.transform.InferType()(relay.fromtext(SRC))
    t_len = mod["len"].params[0].checked_type
    t_sum = mod["sum"].params[0].checked_type
    assert isinstance(t_len, TypeCall) and list(t_len.args) == []
    assert t_len.func.same_as(t_sum.func) and list(t_sum.args) == []
    assert _run(mod, 4) == (4, 4 + 3 + 2 + 1)
    assert _run(mod, 0) == (0, 0)


def test_roundtrip_keeps_meaning():
    mod = relay.transform.InferType()(relay.fromtext(SRC))
    again = relay.transform.InferType()(relay.fromtext(mod.astext()))
    assert _run(again, 5) == (5, 15)
    assert again.astext() == mod.astext()


def test_polymorphic_adt_without_arguments_is_an_error():
    src = """#[version = "0.0.5"]
type P[A] { PNil, PCons(A, P[A]) }
def @f(%l: P) -> int32 { 0 }
"""
    with pytest.raises(relay.errors.RelayError, match=r"type P takes 1 type argument"):
        relay.fromtext(src)



def test_prelude_list_needs_its_argument():
    from relay_tvm.prelude import Prelude
    from relay_tvm.text.parser import parse

    mod = relay.IRModule()
    Prelude(mod)
    head = '#[version = "0.0.5"]\n'
    parsed = parse(head + "def @f(%l: List[int32]) -> int32 { 0 }", init_module=mod)
    assert isinstance(parsed["f"].params[0].type_annotation, TypeCall)
    with pytest.raises(relay.errors.RelayError, match=r"type List takes 1 type argument"):
        parse(head + "def @g(%l: List) -> int32 { 0 }", init_module=mod)
