"""The pass registry (name -> factory) and the one default pass order that ``build`` and
``default_pipeline`` share."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.transform import pass_infra, pipeline


def test_every_exported_pass_is_registered_under_its_name():
    for name in ("InferType", "FoldConstant", "FuseOps", "SimplifyInference", "AlterOpLayout",
                 "DeadCodeElimination", "LambdaLift", "ToANormalForm"):
        factory = relay.transform.get_pass(name)
        assert factory is getattr(relay.transform, name)
        assert factory().name == name


def test_unknown_pass_names_the_known_ones():
    with pytest.raises(relay.RelayError, match="unknown pass 'NoSuchPass'.*FoldConstant"):
        relay.transform.get_pass("NoSuchPass")


def test_a_second_factory_under_a_taken_name_is_refused():
    with pytest.raises(relay.RelayError, match="already registered"):
        relay.transform.register_pass("FoldConstant", lambda: None)


def test_default_pipeline_runs_the_default_order_then_infer_type():
    # the qnn lowering runs first (only on modules with qnn operators), then Relay's order
    seq = relay.transform.default_pipeline()
    assert isinstance(seq.passes[0], pipeline._QnnFirst)
    assert [p.info.name for p in seq.passes[1:]] == [*pipeline.DEFAULT_PASS_ORDER, "InferType"]
    no_fuse = relay.transform.default_pipeline(fuse=False)
    assert "FuseOps" not in [p.info.name for p in no_fuse.passes[1:]]


def test_required_passes_come_from_the_registry():
    assert isinstance(pass_infra._required_pass("InferType"), pass_infra.Pass)
    with pytest.raises(relay.RelayError, match="unknown pass"):
        pass_infra._required_pass("NotAPass")


def test_build_folds_what_the_default_pipeline_folds():
    # FoldConstant (in the default order) turns the constant subexpression into one constant:
    # optimize's result then has no call of add outside the fused main.
    x = relay.var("x", shape=(2,))
    c = relay.add(relay.const(np.array([1.0, 2.0], "float32")), relay.const(1.0))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, c)))
    with relay.transform.PassContext(opt_level=3):
        opt, _ = relay.backend.optimize(mod)
    calls = []
    relay.analysis.post_order_visit(
        opt["main"], lambda e: calls.append(e) if isinstance(e, relay.Call)
        and isinstance(e.op, relay.op.Op) else None)
    names = sorted(c.op.name for c in calls)
    assert names == ["multiply"], names


def test_a_misspelt_disabled_or_required_pass_is_warned_about():
    # disabled_pass=["FoldConstnt"] was ignored silently (fresh-user trial); a name close to a
    # pass of relay_tvm's is a typo, other unknown names may be the user's own passes
    with pytest.warns(UserWarning, match="no pass is named 'FoldConstnt'; did you mean "
                                         "'FoldConstant'"):
        relay.transform.PassContext(opt_level=3, disabled_pass=["FoldConstnt"])
    with pytest.warns(UserWarning, match="'AlterOpLayot'"):
        relay.transform.PassContext(opt_level=3, required_pass=["AlterOpLayot"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        relay.transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout", "MyOwnPass"])
