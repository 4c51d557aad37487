"""BYOC annotation as IR passes: compiler_begin/compiler_end, AnnotateTarget,
AnnotatedRegionSet and MergeCompilerRegions (tvm.relay 0.19's semantics), on programs of our
own; the annotations are identities, so removing them must give the input back."""

from __future__ import annotations

import pytest
import tvm

import relay_tvm as relay
from relay_tvm.analysis import AnnotatedRegionSet, structural_equal
from relay_tvm.errors import RelayError
from relay_tvm.ir.functor import Rewriter
from relay_tvm.op import get as get_op
from relay_tvm.op.annotation import compiler_begin, compiler_end
from relay_tvm.op.op_attrs import get_op_attr, reset_op_attr, temp_op_attr
from relay_tvm.transform import AnnotateTarget, InferType, MergeCompilerRegions

TGT = "mytgt"
KEY = "target." + TGT


def _yes(call):
    return True


class _Strip(Rewriter):
    def post_call(self, orig, new):
        if isinstance(new.op, relay.op.Op) and new.op.name.startswith("annotation.compiler_"):
            return new.args[0]
        return new


def _regions(func):
    return AnnotatedRegionSet(func, get_op("annotation.compiler_begin"),
                              get_op("annotation.compiler_end"))


def _chain():
    x = relay.var("x", shape=(4,))
    a = relay.nn.relu(x)
    b = relay.exp(a)
    c = relay.nn.relu(b)
    return relay.Function([x], relay.add(c, a))


def test_annotate_target_wraps_each_supported_call():
    with temp_op_attr("nn.relu", KEY, _yes):
        out = AnnotateTarget(TGT)(relay.IRModule.from_expr(_chain()))["main"]
    x = relay.var("x", shape=(4,))
    a = relay.nn.relu(compiler_begin(x, TGT))
    a1, a2 = compiler_end(a, TGT), compiler_end(a, TGT)  # one end per use
    b = relay.exp(compiler_begin(a1, "default"))
    c = relay.nn.relu(compiler_begin(compiler_end(b, "default"), TGT))
    add = relay.add(compiler_begin(compiler_end(c, TGT), "default"),
                    compiler_begin(a2, "default"))
    want = InferType()(relay.IRModule.from_expr(
        relay.Function([x], compiler_end(add, "default"))))["main"]
    assert structural_equal(out, want), out
    # the annotations are identities
    assert structural_equal(_Strip().rewrite(out), InferType()(
        relay.IRModule.from_expr(_chain()))["main"])
    regions = _regions(out)
    assert sorted(r.target for r in regions) == ["default", "default", TGT, TGT]


def test_predicate_sees_types_and_running_twice_changes_nothing():
    seen = []

    def only_float(call):
        seen.append(call.args[0].checked_type.dtype)
        return call.args[0].checked_type.dtype == "float32"

    x = relay.var("x", shape=(4,), dtype="int32")
    func = relay.Function([x], relay.nn.relu(x))
    with temp_op_attr("nn.relu", KEY, only_float):
        once = AnnotateTarget(TGT)(relay.IRModule.from_expr(func))
        twice = AnnotateTarget(TGT)(once)
    assert seen and set(seen) == {"int32"}
    assert [r.target for r in _regions(once["main"])] == ["default"]
    assert structural_equal(once["main"], twice["main"])


def test_composite_function_goes_to_its_prefix_target():
    a, b = relay.var("a", shape=(3,)), relay.var("b", shape=(3,))
    p, q = relay.var("p", shape=(3,)), relay.var("q", shape=(3,))
    comp = relay.Function([p, q], relay.nn.relu(p + q)).with_attr("Composite",
                                                                  TGT + ".add_relu")
    out = AnnotateTarget([TGT])(relay.IRModule.from_expr(
        relay.Function([a, b], comp(a, b))))["main"]
    call = out.body.args[0]
    assert out.body.op.name == "annotation.compiler_end" and out.body.attrs.compiler == TGT
    assert [x.attrs.compiler for x in call.args] == [TGT, TGT]
    assert call.op.body.op.name == "nn.relu"  # the composite body is not annotated


def test_merge_joins_a_chain_into_one_region():
    x = relay.var("x", shape=(4,))
    func = relay.Function([x], relay.nn.relu(relay.nn.relu(relay.nn.relu(x))))
    with temp_op_attr("nn.relu", KEY, _yes):
        ann = AnnotateTarget(TGT)(relay.IRModule.from_expr(func))
    assert len(_regions(ann["main"])) == 3
    merged = InferType()(MergeCompilerRegions()(ann))["main"]
    x2 = relay.var("x", shape=(4,))
    want = relay.Function([x2], compiler_end(relay.nn.relu(relay.nn.relu(relay.nn.relu(
        compiler_begin(x2, TGT)))), TGT))
    want = InferType()(relay.IRModule.from_expr(want))["main"]
    assert structural_equal(merged, want), merged
    (region,) = _regions(merged)
    assert region.target == TGT and len(region.args) == 1 and len(region.rets) == 1


def test_merge_keeps_regions_apart_across_another_target():
    # relu -> exp (default) -> relu(+ first relu): merging the two relus would make the region
    # both feed and consume the exp region
    with temp_op_attr("nn.relu", KEY, _yes), temp_op_attr("add", KEY, _yes):
        ann = AnnotateTarget(TGT)(relay.IRModule.from_expr(_chain()))
    merged = InferType()(MergeCompilerRegions()(ann))["main"]
    assert structural_equal(_Strip().rewrite(merged), _Strip().rewrite(ann["main"]))
    regions = _regions(merged)
    targets = sorted(r.target for r in regions)
    assert targets == ["default", TGT, TGT]
    first = regions.get_region(merged.body.args[0].args[1])  # relu(x) feeds the final add
    relus = [n for n in first.nodes if isinstance(n, relay.Call) and n.op.name == "nn.relu"]
    assert len(relus) == 1


def test_region_set_errors():
    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayError, match="cannot find the region"):
        _regions(relay.Function([x], compiler_end(relay.nn.relu(x), TGT)))
    with pytest.raises(RelayError, match="closes a region of"):
        _regions(relay.Function([x], compiler_end(relay.nn.relu(compiler_begin(x, "a")), "b")))
    with pytest.raises(RelayError, match="non-empty"):
        AnnotateTarget([""])


def test_tvm_register_op_attr_on_a_relay_operator():
    key = "target.relay_tvm_test_hook"
    try:
        tvm.ir.register_op_attr("nn.relu", key, _yes)
        assert get_op_attr("nn.relu", key) is _yes
    finally:
        reset_op_attr("nn.relu", key)


def test_make_positional_constructor():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 1))
    made = relay.op._make.concatenate(relay.Tuple([x, y]), 1)
    assert structural_equal(made, relay.concatenate([x, y], axis=1))
    with pytest.raises(RelayError, match="takes 1 inputs"):
        relay.op._make.concatenate(relay.Tuple([x, y]), 1, 2)
    with pytest.raises(AttributeError):
        relay.op._make.no_such_op  # noqa: B018
