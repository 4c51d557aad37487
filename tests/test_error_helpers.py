"""relay_tvm.errors' message helpers: the nearest name of an unknown one, the dtype fix."""

import numpy as np
import pytest

from relay_tvm.errors import close_names, did_you_mean, no_implicit_cast


@pytest.mark.parametrize("name, choices, kw, tail", [
    ("dat", ["data", "bias"], {}, " (did you mean 'data'?)"),
    # case-only misspellings: difflib alone rates "X" against "x" at 0 and offered nothing
    ("X", ["x", "y"], {}, " (did you mean 'x'?)"),
    ("DATA", ["data", "bias"], {}, " (did you mean 'data'?)"),
    ("Relu", ["nn.relu", "relu", "negative"], {"show": str}, " (did you mean relu?)"),
    # a case-only match comes before a closer spelling of another case
    ("Data", ["dat", "data"], {}, " (did you mean 'data'?)"),
    ("zzz", ["data", "bias"], {}, ""),
    ("FoldConstnt", ["FoldConstant", "FoldScaleAxis"], {"n": 2, "cutoff": 0.85, "clause": True},
     "; did you mean 'FoldConstant'?"),
    ("mcup", ["mcpu", "mattr", "mtriple"], {"n": 3, "clause": True, "show": lambda c: f"-{c}"},
     "; did you mean -mcpu?"),
])
def test_did_you_mean(name, choices, kw, tail):
    assert did_you_mean(name, choices, **kw) == tail


def test_close_names_never_offers_the_name_itself_and_keeps_both_cases():
    assert close_names("x", ["x", "X"]) == ["X"]
    assert close_names("ab", ["AB", "Ab", "abc"], n=3) == ["AB", "Ab", "abc"]


def test_no_implicit_cast_names_the_dtype_and_how_to_convert():
    assert no_implicit_cast("float32", np.zeros(1)) == (
        " (no implicit cast; convert it with .astype('float32'))")
    import tvm

    assert no_implicit_cast("int8", tvm.runtime.tensor(np.zeros(1))) == (
        " (no implicit cast; convert it with .numpy().astype('int8'))")


def test_messages_a_fresh_user_trial_asked_for():
    """A Python number where a Relay expression belongs names relay.const; the VM says what it
    got for a tuple argument; a module of one input says "1 input"."""
    import tvm

    import relay_tvm as relay
    from relay_tvm.errors import InputError, RelayError
    from relay_tvm.runtime import GraphModule

    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayError, match=r"got float 1.0 \(relay.const\(value\) makes a "):
        relay.add(x, 1.0)
    t = relay.var("t", relay.TupleType([relay.TensorType((2,)), relay.TensorType((2,))]))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([t], relay.TupleGetItem(t, 0))),
                           "llvm")
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    with pytest.raises(InputError, match=r"%t\): expected a tuple of 2 values \(.*\), got a NumPy array"):
        vm.run(np.zeros(2, "float32"))
    with pytest.raises(InputError, match=r"got a tuple of 1$"):
        vm.run((np.zeros(2, "float32"),))
    m = GraphModule(relay.build(relay.IRModule.from_expr(relay.Function([x], x + x)),
                                "llvm")["default"](tvm.cpu()))
    with pytest.raises(InputError, match=r"the module has 1 input \['x'\]"):
        m.set_input(3, np.zeros(2, "float32"))
