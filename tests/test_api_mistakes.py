"""Python-API mistakes a new user made (trial of 2026-12-07): each was silently cast, ignored,
wrong in some executors, or an error from deep inside TVM; each is now one relay_tvm error at
the call that made the mistake, or the value 0.19 gave."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import AttributeSchemaError, ConversionError, InputError, RelayError


def test_const_of_a_tvm_tensor_keeps_its_dtype():
    # float64 became float32 (0.1 changed); NumPy arrays keep Relay's int64/float64 default
    c = relay.const(tvm.runtime.tensor(np.array([0.1])))
    assert c.data.dtype == "float64" and c.data.numpy()[0] == 0.1
    assert relay.const(np.array([0.1])).data.dtype == "float32"
    assert relay.const(tvm.runtime.tensor(np.array([3], "int64"))).data.dtype == "int64"


def test_const_of_a_misspelled_dtype():
    with pytest.raises(RelayError, match="const: dtype 'flot32' is not a dtype"):
        relay.const(1, "flot32")
    assert relay.const(1, "float").data.dtype == "float64"  # NumPy's "float", as in 0.19


@pytest.mark.parametrize("kind", ["graph", "vm", "debug"])
def test_unravel_index_out_of_range_is_refused_by_every_executor(kind):
    # the graph executor and the VM returned [[0], [1]] for index 7 of shape (2, 3)
    i = relay.var("i", shape=(2,), dtype="int32")
    mod = relay.IRModule.from_expr(
        relay.Function([i], relay.unravel_index(i, relay.const(np.array([2, 3], "int32")))))
    run = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    np.testing.assert_array_equal(run(np.array([5, 0], "int32")).numpy(),
                                  np.stack(np.unravel_index([5, 0], (2, 3))))
    for bad in (7, -1, 6):
        with pytest.raises(InputError, match="unravel_index: .*out of range"):
            run(np.array([1, bad], "int32"))


def test_unravel_index_of_constants_out_of_range():
    # constant folding raised NumPy's ValueError
    f = relay.Function([], relay.unravel_index(relay.const(np.array([7], "int32")),
                                               relay.const(np.array([2, 3], "int32"))))
    with pytest.raises(InputError, match=r"index 7 is out of range for shape \(2, 3\)"):
        relay.build(relay.IRModule.from_expr(f), target="llvm")


@pytest.mark.parametrize("kind", ["graph", "vm", "debug"])
def test_topk_with_k_below_minus_one_selects_all(kind):
    # k < 1 is "all" (0.19); compiled kernels failed at run time with vector::reserve
    v = relay.var("v", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([v], relay.topk(v, -2, ret_type="values")))
    x = np.array([[1, 3, 2], [6, 5, 4]], "float32")
    got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(x).numpy()
    np.testing.assert_array_equal(got, -np.sort(-x, axis=1))


def test_none_for_an_attribute_with_a_default():
    v = relay.var("v", shape=(2,))
    with pytest.raises(AttributeSchemaError, match=r"nn.leaky_relu: alpha: expected float, got "
                       r"None \(leave it out for the default, 0.25\)"):
        relay.nn.leaky_relu(v, alpha=None)
    relay.sum(v, axis=None)  # None is an attribute's value where it is its default


def test_sequential_of_things_that_are_not_passes():
    with pytest.raises(RelayError, match=r"passes\[1\] is str 'FoldConstant', not a pass"):
        relay.transform.Sequential([relay.transform.InferType(), "FoldConstant"])
    with pytest.raises(RelayError, match=r"call it: InferType\(\)"):
        tvm.transform.Sequential([relay.transform.InferType])
    with pytest.raises(RelayError, match=r"passes\[0\] is int 42"):
        tvm.transform.Sequential([42])


@pytest.mark.parametrize("target, error, match", [
    ({"foo": "llvm"}, InputError, "'foo' is not a device"),
    ({"cuda": "llvm"}, InputError, "a llvm target does not run on device 'cuda'"),
    ({"cpu": "llvm", "cuda": "cuda"}, relay.errors.BuildError, "heterogeneous"),
])
def test_device_target_dict_keys_are_checked(target, error, match):
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], x + x))
    with pytest.raises(error, match=match):
        relay.build(mod, target=target)
    with pytest.raises(error, match=match):
        relay.vm.compile(mod, target=target)


def test_device_target_dict_builds_the_target():
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], x + x))
    for target in ({"cpu": "llvm"}, {1: "llvm"}, {tvm.cpu(0): "llvm"}):
        gm = relay.runtime.GraphModule(relay.build(mod, target=target)["default"](tvm.cpu(0)))
        gm.set_input("x", np.array([1, 2], "float32"))
        gm.run()
        np.testing.assert_array_equal(gm.get_output(0).numpy(), [2, 4])
    # relay.vm.compile took no {device: target} dict at all
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target={"cpu": "llvm"}), tvm.cpu())
    np.testing.assert_array_equal(vm.invoke("main", np.array([1, 2], "float32")).numpy(), [2, 4])


def test_params_given_as_target_host():
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], x + x))
    with pytest.raises(InputError, match="relay.build's third positional argument is "
                       "target_host"):
        relay.build(mod, "llvm", {"w": np.ones((3, 3))})


@pytest.mark.parametrize("cfg", [None, "pooled", "naive", "by-device"])
def test_vm_memory_cfg(cfg):
    x = relay.var("x", shape=(2,))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], x * x)), target="llvm")
    if cfg == "by-device":
        cfg = {tvm.cpu(0): "naive"}
    vm = relay.vm.VirtualMachine(exe, tvm.cpu(), memory_cfg=cfg)  # 0.19's keyword
    np.testing.assert_array_equal(vm.invoke("main", np.array([3, 4], "float32")).numpy(), [9, 16])


def test_vm_memory_cfg_refused():
    x = relay.var("x", shape=(2,))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], x * x)), target="llvm")
    with pytest.raises(InputError, match="memory_cfg 'fancy'"):
        relay.vm.VirtualMachine(exe, tvm.cpu(), memory_cfg="fancy")
    with pytest.raises(InputError, match="has no entry for the VM's device"):
        relay.vm.VirtualMachine(exe, tvm.cpu(), memory_cfg={tvm.cuda(0): "naive"})


def test_mutator_returning_none_is_named():
    from relay_tvm.expr_functor import ExprMutator

    class DropRelu(ExprMutator):
        def visit_call(self, c):
            return None if c.op.name == "nn.relu" else super().visit_call(c)

    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayError, match="DropRelu.visit_call returned None for a Call of "
                       "nn.relu"):
        DropRelu().visit(relay.add(relay.nn.relu(x), x))


def test_shape_given_as_a_string():
    with pytest.raises(RelayError, match="expected a tuple of dimensions, got the string '2,3'"):
        relay.var("a", shape="2,3")


def test_mxnet_dtype_for_a_parameter_of_another_dtype():
    mx = pytest.importorskip("mxnet")
    y = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    args = {"fc_weight": mx.nd.ones((3, 5)), "fc_bias": mx.nd.zeros(3)}
    with pytest.raises(ConversionError, match=r"dtype=\{'fc_weight': 'float16'\} names a "
                       r"parameter whose array is float32"):
        relay.frontend.from_mxnet(y, shape={"data": (1, 5)}, arg_params=args,
                                  dtype={"data": "float32", "fc_weight": "float16"})


def test_mxnet_missing_input_shape_hint_names_the_data_input():
    mx = pytest.importorskip("mxnet")
    y = mx.sym.var("data") + mx.sym.FullyConnected(mx.sym.var("data2"), num_hidden=2, name="c")
    with pytest.raises(ConversionError, match=r"pass shape=\{'data2': \(\.\.\.\)\}"):
        relay.frontend.from_mxnet(y, shape={"data": (1, 2)})


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_create_executor_refuses_a_misspelt_param(kind):
    # fresh-user trial: the graph and VM executors dropped it silently (and the interpreter
    # warned), so the weight stayed an input of main: "no value for ['fc1_weight']"
    x, w = relay.var("data", shape=(2,)), relay.var("fc1_weight", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], x * w))
    with pytest.raises(InputError, match=r"create_executor: params \['fc1_weigth'\] are not "
                                         r"parameters of main \(did you mean 'fc1_weight'\?\)"):
        relay.create_executor(kind, mod=mod, params={"fc1_weigth": np.ones(2, "float32")})\
            .evaluate()(np.ones(2, "float32"))
    run = relay.create_executor(kind, mod=mod, params={"fc1_weight": np.full(2, 3, "float32")})
    np.testing.assert_array_equal(run.evaluate()(np.ones(2, "float32")).numpy(), [3.0, 3.0])


def test_a_misspelt_operator_name_gets_the_closest_one():
    # fresh-user trial: is_op("nn.reluu") said only that it is not registered
    from relay_tvm.dataflow_pattern import is_op

    with pytest.raises(RelayError, match=r"operator 'nn\.reluu' is not registered \(did you "
                                         r"mean 'nn\.relu'\?\)"):
        is_op("nn.reluu")
    with pytest.raises(RelayError, match=r"operator 'zzzz_qq' is not registered$"):
        relay.op.get("zzzz_qq")
