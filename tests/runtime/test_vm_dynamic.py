"""Dynamic shapes on the VM: ``Any`` dimensions, the ``dyn.*`` operators (against NumPy),
DynamicToStatic, save/load of a dynamic executable in a new process, and relay.build's refusal."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import BuildError, InputError


def _vm(f):
    mod = relay.IRModule.from_expr(f) if isinstance(f, relay.Function) else f
    return relay.vm.VirtualMachine(relay.vm.compile(mod, target="llvm"), tvm.cpu())


def _np(v):
    return [x.numpy() for x in v] if isinstance(v, tuple) else v.numpy()


X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
A = relay.Any()


def test_dyn_reshape_against_numpy():
    x = relay.var("x", shape=(2, 3, 4))
    s = relay.var("s", shape=(2,), dtype="int64")
    call = relay.reshape(x, s)
    assert call.op.name == "dyn.reshape"
    vm = _vm(relay.Function([x, s], call))
    for shape, want in (([4, -1], (4, 6)), ([0, 12], (2, 12)), ([-1, 2], (12, 2))):
        np.testing.assert_array_equal(vm.run(X, np.array(shape)).numpy(), X.reshape(want))
    # a shape that does not keep the 24 elements, or two -1s: refused, as the interpreter does
    # (the VM repeated the data: a new user got a million elements out of [1000, 1000])
    from relay_tvm.errors import InputError

    for bad in ([4, 2], [1000, 1000], [-1, -1], [-2, -12]):
        with pytest.raises(InputError, match="dyn.reshape.*element count"):
            vm.run(X, np.array(bad))
        with pytest.raises(relay.TypeInferenceError, match="cannot reshape"):
            relay.create_executor("debug", mod=relay.IRModule.from_expr(
                relay.Function([x, s], call))).evaluate()(X, np.array(bad))


def test_dyn_broadcast_full_zeros_ones_tile():
    y = relay.var("y", shape=(3, 1))
    s = relay.var("s", shape=(3,), dtype="int32")
    yv = np.arange(3, dtype="float32").reshape(3, 1)
    vm = _vm(relay.Function([y, s], relay.broadcast_to(y, s)))
    np.testing.assert_array_equal(vm.run(yv, np.array([2, 3, 5], "int32")).numpy(),
                                  np.broadcast_to(yv, (2, 3, 5)))
    v = relay.var("v", shape=(), dtype="float32")
    vm = _vm(relay.Function([v, s], relay.Tuple([relay.full(v, s), relay.zeros(s, "float32"),
                                                 relay.ones(s, "int32")])))
    full, zeros, ones = _np(vm.run(np.array(2.5, "float32"), np.array([1, 2, 3], "int32")))
    np.testing.assert_array_equal(full, np.full((1, 2, 3), 2.5, "float32"))
    np.testing.assert_array_equal(zeros, np.zeros((1, 2, 3), "float32"))
    assert ones.dtype == np.int32 and ones.shape == (1, 2, 3) and (ones == 1).all()
    r = relay.var("r", shape=(3,), dtype="int64")
    vm = _vm(relay.Function([y, r], relay.tile(y, r)))
    np.testing.assert_array_equal(vm.run(yv, np.array([2, 1, 3])).numpy(), np.tile(yv, (2, 1, 3)))


def test_dyn_strided_slice_against_numpy():
    x = relay.var("x", shape=(2, 3, 4))
    b, e, st = (relay.var(n, shape=(3,), dtype="int64") for n in "bes")
    vm = _vm(relay.Function([x, b, e, st], relay.strided_slice(x, b, e, st)))
    cases = [((0, -1, 3), (2, -4, 0), (1, -1, -2)), ((1, 0, 1), (100, 3, 4), (1, 2, 2)),
             ((-5, 2, 0), (1, 2, -1), (1, 1, 1))]
    for bb, ee, ss in cases:
        want = X[tuple(slice(*t) for t in zip(bb, ee, ss))]
        got = vm.run(X, np.array(bb), np.array(ee), np.array(ss)).numpy()
        np.testing.assert_array_equal(got, want)


def test_dyn_topk_and_one_hot_against_numpy():
    z = relay.var("z", shape=(3, 6))
    k = relay.var("k", shape=(), dtype="int32")
    zv = np.random.default_rng(1).permutation(18).reshape(3, 6).astype("float32")
    vm = _vm(relay.Function([z, k], relay.topk(z, k, axis=1).astuple()))
    for kk in (1, 4):
        vals, idx = _np(vm.run(zv, np.array(kk, "int32")))
        order = np.argsort(-zv, axis=1)[:, :kk]
        np.testing.assert_array_equal(idx, order)
        np.testing.assert_array_equal(vals, np.take_along_axis(zv, order, 1))
    ind = relay.var("ind", shape=(4,), dtype="int32")
    d = relay.var("d", shape=(), dtype="int32")
    vm = _vm(relay.Function([ind, d], relay.one_hot(ind, relay.const(1.0), relay.const(0.0), d,
                                                    -1, "float32")))
    iv = np.array([0, 2, 1, 5], "int32")
    np.testing.assert_array_equal(vm.run(iv, np.array(3, "int32")).numpy(),
                                  (iv[:, None] == np.arange(3)).astype("float32"))


def test_any_batch_chain_one_executable():
    """Batch-wise kernels (dense, relu, softmax) and symbolic ones (a sum over the batch, a
    transpose) over one Any dimension; several batch sizes from one executable."""
    x = relay.var("x", shape=(relay.Any(), 8))
    w = relay.const(np.random.default_rng(2).standard_normal((5, 8)).astype("float32"))
    h = relay.nn.softmax(relay.nn.relu(relay.nn.dense(x, w)))
    out = relay.Tuple([h, relay.sum(h, axis=0), relay.transpose(h)])
    f = relay.Function([x], out)
    vm = _vm(f)
    ref = relay.create_executor("debug", relay.IRModule.from_expr(f)).evaluate()
    for n in (1, 3, 7):
        xv = np.random.default_rng(n).standard_normal((n, 8)).astype("float32")
        got = _np(vm.run(xv))
        for g, r in zip(got, _np(ref(xv))):
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
        e = np.maximum(xv @ w.data.numpy().T, 0)
        e = np.exp(e - e.max(1, keepdims=True))
        np.testing.assert_allclose(got[0], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(BuildError, match=r"got shape \(2, 7\), expected Tensor\[\(\?, 8\), float32\]"):
        vm.run(np.zeros((2, 7), "float32"))


def test_dynamic_chain_after_data_dependent_shape():
    """A kernel whose input shape comes from a shape function (dyn.reshape -> relu -> sum)."""
    x = relay.var("x", shape=(2, 3, 4))
    s = relay.var("s", shape=(2,), dtype="int64")
    y = relay.reshape(x, s)
    f = relay.Function([x, s], relay.Tuple([relay.nn.relu(y), relay.sum(y, axis=1)]))
    vm = _vm(f)
    for shape in ([3, 8], [12, 2]):
        r, sm = _np(vm.run(X, np.array(shape)))
        np.testing.assert_array_equal(r, np.maximum(X.reshape(shape), 0))
        np.testing.assert_allclose(sm, X.reshape(shape).sum(1), rtol=1e-5)


def test_dynamic_to_static_before_expected():
    x = relay.var("x", shape=(2, 3, 4))
    before = relay.Function([x], relay.op.dyn.reshape(
        x, relay.shape_of(relay.zeros((4, 6), "float32"), "int64")))
    expected = relay.Function([x], relay.reshape(x, (4, 6)))
    got = relay.transform.DynamicToStatic()(relay.IRModule.from_expr(before))
    want = relay.transform.InferType()(relay.IRModule.from_expr(expected))
    assert relay.analysis.structural_equal(got["main"], want["main"])
    y = relay.var("y", shape=(3, 1))
    before = relay.Function([y], relay.op.dyn.tile(
        relay.op.dyn.broadcast_to(y, relay.const(np.array([3, 2], "int64"))),
        relay.const(np.array([1, 2], "int64"))))
    expected = relay.Function([y], relay.tile(relay.broadcast_to(y, (3, 2)), (1, 2)))
    got = relay.transform.DynamicToStatic()(relay.IRModule.from_expr(before))
    want = relay.transform.InferType()(relay.IRModule.from_expr(expected))
    assert relay.analysis.structural_equal(got["main"], want["main"])


def test_build_rejects_dynamic_and_points_to_vm():
    x = relay.var("x", shape=(relay.Any(), 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with pytest.raises(BuildError, match="relay.vm.compile"):
        relay.build(mod, target="llvm")


def test_dynamic_executable_save_load_new_process(tmp_path):
    x = relay.var("x", shape=(relay.Any(), 4))
    s = relay.var("s", shape=(2,), dtype="int64")
    f = relay.Function([x, s], relay.reshape(relay.nn.relu(x) * relay.const(2.0), s))
    exe = relay.vm.compile(relay.IRModule.from_expr(f), target="llvm")
    code, lib = exe.save()
    (tmp_path / "code.bin").write_bytes(bytes(code))
    lib.export_library(str(tmp_path / "lib.so"))
    script = f"""
import numpy as np, tvm
import relay_tvm as relay
from relay_tvm.runtime.vm import Executable, VirtualMachine
code = open({str(tmp_path / 'code.bin')!r}, 'rb').read()
lib = tvm.runtime.load_module({str(tmp_path / 'lib.so')!r})
vm = VirtualMachine(Executable.load_exec(bytearray(code), lib), tvm.cpu())
for n, shape in ((3, [2, 6]), (5, [10, -1])):
    x = np.arange(n * 4, dtype='float32').reshape(n, 4) - 5
    got = vm.run(x, np.array(shape)).numpy()
    np.testing.assert_array_equal(got, (np.maximum(x, 0) * 2).reshape(shape))
print('OK')
"""
    env = dict(os.environ, PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0 and "OK" in res.stdout, res.stderr[-2000:]


@pytest.mark.slow
def test_resnet18_dynamic_batch_one_executable_equals_static_build():
    """ResNet-18 with batch Any compiled once; batch 1, 3 and 8 equal relay.build per batch."""
    from relay_tvm.runtime import GraphModule
    from relay_tvm.testing import resnet

    shape = (3, 32, 32)
    mod, params = resnet.get_workload(num_layers=18, batch_size=relay.Any(), image_shape=shape)
    exe = relay.vm.compile(mod, target="llvm", params=params)
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    for n in (1, 3, 8):
        smod, sparams = resnet.get_workload(num_layers=18, batch_size=n, image_shape=shape)
        g = GraphModule(relay.build(smod, target="llvm", params=sparams)["default"](tvm.cpu()))
        x = np.random.default_rng(n).standard_normal((n, *shape)).astype("float32")
        g.set_input("data", x)
        g.run()
        got = vm.run(x).numpy()
        assert got.shape == (n, 1000)
        np.testing.assert_allclose(got, g.get_output(0).numpy(), rtol=1e-5, atol=1e-6)


def test_any_vector_plus_static_vector_is_not_batch_wise():
    """Found by the random dynamic-shape programs: ``(?,) + (3,)`` is not a batch-wise kernel
    (the static operand is indexed along the dynamic axis); it ran the batch-1 kernel per row."""
    b = relay.var("b", shape=(3,))
    p = relay.var("p", shape=(relay.Any(),))
    f = relay.Function([b, p], relay.add(p, relay.add(relay.add(b, b), relay.tanh(b))))
    vm = _vm(f)
    bv = np.array([0.5, -1.5, 2.0], "float32")
    pv = np.array([1.0, 2.0, 3.0], "float32")
    np.testing.assert_allclose(vm.run(bv, pv).numpy(), pv + 2 * bv + np.tanh(bv), rtol=1e-6)


def test_any_against_static_broadcast_checks_the_size_at_run_time():
    """``(?,) + (3,)``: the Any size must be 3 or 1 at run time (Relay's / NumPy's rule: size 1
    broadcasts, the kernel then reads its element 0); another size is an InputError rather than
    a read out of bounds."""
    b = relay.var("b", shape=(3,))
    p = relay.var("p", shape=(relay.Any(),))
    vm = _vm(relay.Function([b, p], relay.add(p, relay.tanh(b))))
    bv = np.array([0.5, -1.5, 2.0], "float32")
    np.testing.assert_allclose(vm.run(bv, np.ones(3, "float32")).numpy(), 1 + np.tanh(bv),
                               rtol=1e-6)
    np.testing.assert_allclose(vm.run(bv, np.full(1, 2.0, "float32")).numpy(),
                               2 + np.tanh(bv), rtol=1e-6)
    with pytest.raises(InputError, match=r"dimension 0 must be 3 or 1"):
        vm.run(bv, np.ones(2, "float32"))


@pytest.mark.parametrize("op, np_op, dtype", [
    (relay.add, np.add, "float32"),
    (relay.maximum, np.maximum, "float32"),
    (relay.subtract, np.subtract, "int32"),
    (relay.floor_divide, np.floor_divide, "int32"),
    (relay.less, np.less, "float32"),
])
def test_size_one_any_dimensions_broadcast_as_numpy(op, np_op, dtype):
    """An ``Any`` dimension of size 1 at run time broadcasts against a static size or another
    ``Any`` dimension (tvm.relay 0.19's VM did; test_vm_serialization's test_dynamic_bcast),
    including against size 0."""
    rng = np.random.default_rng(3)

    def data(*shape):
        return (rng.uniform(1, 9, shape)).astype(dtype)

    cases = [((A, 2), (3, 2), (1, 2), (3, 2)),
             ((A, 2), (3, 2), (3, 2), (3, 2)),
             ((2, A), (2, A), (2, 1), (2, 4)),
             ((2, A), (2, A), (2, 4), (2, 1)),
             ((2, A), (2, A), (2, 1), (2, 0)),
             ((A, A), (3, 1), (1, 5), (3, 1))]
    for xs, ys, xshape, yshape in cases:
        x, y = relay.var("x", shape=xs, dtype=dtype), relay.var("y", shape=ys, dtype=dtype)
        vm = _vm(relay.Function([x, y], op(x, y)))
        xv, yv = data(*xshape), data(*yshape)
        np.testing.assert_array_equal(vm.run(xv, yv).numpy(), np_op(xv, yv))
    x, y = relay.var("x", shape=(2, A), dtype=dtype), relay.var("y", shape=(2, A), dtype=dtype)
    vm = _vm(relay.Function([x, y], op(x, y)))
    with pytest.raises(InputError, match="differs .* and neither is 1"):
        vm.run(data(2, 3), data(2, 4))


def test_where_broadcasts_size_one_any_dimensions():
    """``where`` of three (?, ?) operands, some of size 1 in a dimension at run time: the VM
    returned rows it never filled (4.6e-41 and such: the three-operand kernel indexed a size-1
    operand with the output's index; found by re-running 0.19's test_any_where). Against
    NumPy, and a pair that does not broadcast is refused."""
    rng = np.random.default_rng(4)
    c = relay.var("c", shape=(A, A), dtype="bool")
    x, y = relay.var("x", shape=(A, A)), relay.var("y", shape=(A, A))
    vm = _vm(relay.Function([c, x, y], relay.where(c, x, y)))
    for cs, xs, ys in [((3, 4), (3, 1), (1, 4)), ((3, 4), (3, 4), (1, 4)),
                       ((3, 4), (1, 4), (3, 4)), ((3, 1), (3, 4), (1, 4)),
                       ((1, 1), (3, 4), (3, 4)), ((3, 4), (3, 4), (3, 4))]:
        cv = rng.standard_normal(cs) > 0
        xv = rng.standard_normal(xs).astype("float32")
        yv = rng.standard_normal(ys).astype("float32")
        np.testing.assert_array_equal(vm.run(cv, xv, yv).numpy(), np.where(cv, xv, yv))
    with pytest.raises(InputError, match="neither is 1"):
        vm.run(np.ones((3, 4), bool), np.ones((3, 4), "float32"), np.ones((2, 4), "float32"))


def test_batch_loop_kernels_need_no_shape_function():
    """A batch-wise kernel of one dynamic input builds its output shape (n, 4) from that
    input's first dimension (match_shape / make_shape) instead of calling a compiled shape
    function; batch 2 and 5 from one executable equal NumPy."""
    x = relay.var("x", shape=(relay.Any(), 4))
    f = relay.Function([x], relay.nn.relu(relay.add(relay.tanh(x), relay.const(0.5))))
    exe = relay.vm.compile(relay.IRModule.from_expr(f), target="llvm")
    assert "shape_func" not in exe.bytecode and "vm.builtin.make_shape" in exe.bytecode
    assert [k.schedule_rule.endswith("+batch_loop") for k in exe.kernels.values()] == [True]
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    for n in (2, 5):
        a = np.random.default_rng(n).standard_normal((n, 4)).astype("float32")
        np.testing.assert_allclose(vm.run(a).numpy(), np.maximum(np.tanh(a) + 0.5, 0),
                                   rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("xn, yn", [(1, 5), (5, 1), (5, 5), (1, 1), (0, 1), (1, 0)])
def test_batch_loop_kernels_broadcast_a_batch_of_one(xn, yn):
    """Two operands of type (?, 4) whose batch sizes are 1 and 5 at run time broadcast as in
    NumPy (and the interpreter), through the batch-loop kernel (row 0 of the size-1 operand
    for every row); a new-user trial got an error naming the kernel's buffers ("p1_rows")
    where ``(?, ?)`` operands worked."""
    x = relay.var("x", shape=(relay.Any(), 4))
    y = relay.var("y", shape=(relay.Any(), 4))
    f = relay.Function([x, y], relay.multiply(relay.nn.relu(relay.add(relay.tanh(x), y)), y))
    mod = relay.IRModule.from_expr(f)
    exe = relay.vm.compile(mod, target="llvm")
    assert [k.schedule_rule.endswith("+batch_loop") for k in exe.kernels.values()] == [True]
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    rng = np.random.default_rng(xn * 10 + yn)
    a = rng.standard_normal((xn, 4)).astype("float32")
    b = rng.standard_normal((yn, 4)).astype("float32")
    want = np.maximum(np.tanh(a) + b, 0) * b
    got = vm.run(a, b).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    ref = relay.create_executor("debug", mod=mod).evaluate()(a, b).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


def test_batch_loop_conv_with_residual_broadcasts_a_batch_of_one():
    """conv2d + a residual add of dynamic batch (one batch-loop kernel with two dynamic inputs):
    a data batch of 1 against a residual batch of 3 gives the broadcast sum, as the
    interpreter does; batch 3 and 3 are unchanged."""
    rng = np.random.default_rng(4)
    d = relay.var("d", shape=(relay.Any(), 3, 6, 6))
    r = relay.var("r", shape=(relay.Any(), 4, 6, 6))
    w = relay.const(rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    f = relay.Function([d, r], relay.nn.relu(relay.nn.conv2d(d, w, padding=(1, 1)) + r))
    mod = relay.IRModule.from_expr(f)
    exe = relay.vm.compile(mod, target="llvm")
    assert [k.schedule_rule for k in exe.kernels.values()] == ["conv2d+batch_loop"]
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    ref = relay.create_executor("debug", mod=mod)
    rv = rng.standard_normal((3, 4, 6, 6)).astype("float32")
    for n in (1, 3):
        dv = rng.standard_normal((n, 3, 6, 6)).astype("float32")
        got = vm.run(dv, rv).numpy()
        assert got.shape == (3, 4, 6, 6)
        np.testing.assert_allclose(got, ref.evaluate()(dv, rv).numpy(), rtol=1e-4, atol=1e-4)


def test_batch_loop_kernels_refuse_batch_sizes_that_do_not_broadcast():
    """Batch sizes 3 and 5 of two (?, 4) operands: an InputError naming the operator, the
    operands' types and the sizes the function was called with, and what is supported
    (equal sizes or 1); never the kernel's buffer names."""
    x = relay.var("x", shape=(relay.Any(), 4))
    y = relay.var("y", shape=(relay.Any(), 4))
    vm = _vm(relay.Function([x, y], relay.add(x, y)))
    with pytest.raises(InputError) as info:
        vm.run(np.ones((3, 4), "float32"), np.ones((5, 4), "float32"))
    msg = str(info.value)
    assert msg.startswith("relay_tvm shape check: add (kernel tvmgen_vm_fused_add): the first "
                          "(Any) dimensions of its operands Tensor[(?, 4), float32], "
                          "Tensor[(?, 4), float32] must be equal or 1"), msg
    assert "x.shape[0]=3, y.shape[0]=5" in msg
    assert "_rows" not in msg and "p0" not in msg


def test_like_operators_of_two_dynamic_batches_keep_their_shape_rule():
    """``cast_like((1, 4), (5, 4))`` is (1, 4) (the output takes its data's shape, no
    broadcasting): such a kernel is not a broadcasting batch loop but the symbolic kernel."""
    x = relay.var("x", shape=(relay.Any(), 4))
    y = relay.var("y", shape=(relay.Any(), 4), dtype="int32")
    vm = _vm(relay.Function([x, y], relay.cast_like(relay.multiply(x, relay.const(3.0)), y)))
    a = np.array([[0.5, 1.0, -1.0, 2.0]], "float32")
    got = vm.run(a, np.zeros((5, 4), "int32")).numpy()
    np.testing.assert_array_equal(got, (a * 3).astype("int32"))


@pytest.mark.parametrize("name,make,ref,shape", [
    ("repeat axis 0", lambda x: relay.repeat(x, 3, 0), lambda v: np.repeat(v, 3, 0), (3, 4)),
    ("repeat axis -1 of a vector", lambda x: relay.repeat(x, 3, -1),
     lambda v: np.repeat(v, 3, -1), (3,)),
    ("repeat axis 1", lambda x: relay.repeat(x, 2, 1), lambda v: np.repeat(v, 2, 1), (3, 4)),
    ("tile rows", lambda x: relay.tile(x, (2, 1)), lambda v: np.tile(v, (2, 1)), (3, 4)),
    ("tile columns", lambda x: relay.tile(x, (3,)), lambda v: np.tile(v, (3,)), (3, 4)),
    ("tile new axis", lambda x: relay.tile(x, (2, 1, 1)), lambda v: np.tile(v, (2, 1, 1)),
     (3, 4)),
    ("triu of a matrix", lambda x: relay.trilu(x, relay.const(0), True), np.triu, (3, 4)),
    ("tril of a batch", lambda x: relay.trilu(x, relay.const(1), False),
     lambda v: np.tril(v, 1), (3, 2, 4)),
    # a per-channel operand along axis 0: one value per row, not per batch-1 kernel
    ("bias_add on axis 0", lambda x: relay.nn.bias_add(x, relay.const(np.array([1., 2., 3.],
                                                                             "float32")), 0),
     lambda v: v + np.array([1., 2., 3.], "float32")[:, None], (3, 4)),
    ("prelu on axis 0", lambda x: relay.nn.prelu(-x, relay.const(np.array([1., 2., 3.],
                                                                          "float32")), 0),
     lambda v: -v * np.array([1., 2., 3.], "float32")[:, None], (3, 4)),
    ("bias_add on axis 1 (batch-wise)",
     lambda x: relay.nn.bias_add(x, relay.const(np.arange(4, dtype="float32")), 1),
     lambda v: v + np.arange(4, dtype="float32"), (3, 4)),
])
def test_operators_that_mix_batch_rows_are_not_batch_wise(name, make, ref, shape):
    """repeat / tile along the dynamic first axis change its size, trilu's mask depends on the
    row: run as a batch loop of the batch-1 kernel they gave n rows instead of 3n and row 0's
    mask on every row (found running TVM 0.19's test_any: repeat of a (3,) Any vector gave
    (3,) instead of (9,)). Operators now declare whether they keep rows apart
    (``register_op(batch_rows=...)``); bias_add / prelu on axis 0 read one value per row."""
    x = relay.var("x", shape=(relay.Any(),) + shape[1:])
    v = np.arange(np.prod(shape), dtype="float32").reshape(shape) + 1
    got = _vm(relay.Function([x], make(x))).run(v).numpy()
    want = ref(v)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), ((0, 2), False), ((1, 2), True)])
def test_arg_reduction_over_several_any_axes(name, axis, keepdims):
    """argmax / argmin over several axes of Any size (the flattened index, as NumPy over the
    reduced axes moved last): the compute multiplied the sizes as Python ints, a BuildError
    (TVM 0.19's test_any)."""
    x = relay.var("x", shape=(relay.Any(), relay.Any(), 3))
    v = np.random.default_rng(7).standard_normal((2, 5, 3)).astype("float32")
    got = _vm(relay.Function([x], getattr(relay, name)(x, axis=axis, keepdims=keepdims)))
    got = got.run(v).numpy()
    axes = (0, 1, 2) if axis is None else axis
    rest = [i for i in range(3) if i not in axes]
    flat = v.transpose(rest + list(axes)).reshape([v.shape[i] for i in rest] + [-1])
    want = getattr(np, name)(flat, axis=-1)
    if keepdims:
        want = want.reshape([1 if i in axes else v.shape[i] for i in range(3)])
    np.testing.assert_array_equal(got, want)


def test_prelu_with_any_dimensions():
    """nn.prelu of Any-shaped data: topi's prelu asserted constant extents (a BuildError,
    TVM 0.19's test_any); now NumPy's values, and an alpha whose length is not the channel
    count is an InputError saying which two sizes differ."""
    x = relay.var("x", shape=(relay.Any(),) * 4)
    a = relay.var("a", shape=(relay.Any(),))
    vm = _vm(relay.Function([x, a], relay.nn.prelu(x, a)))
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((13, 11, 3, 1)).astype("float32")
    av = rng.uniform(0.1, 0.9, 11).astype("float32")
    np.testing.assert_allclose(vm.run(xv, av).numpy(),
                               np.where(xv > 0, xv, xv * av[None, :, None, None]), rtol=1e-6)
    with pytest.raises(InputError, match="nn.prelu: the length of alpha and the size of the "
                                         "data axis it runs along .* differ at run time"):
        vm.run(xv, np.ones(1, "float32"))


def test_get_valid_counts_of_any_anchors():
    """vision.get_valid_counts with an Any number of anchors (0 included): its kernel sized
    itself with int() of the shape, a BuildError in the VM (TVM 0.19's test_any)."""
    x = relay.var("x", shape=(1, relay.Any(), 5))
    vm = _vm(relay.Function([x], relay.vision.get_valid_counts(x, 0.5, 0, 0).astuple()))
    for n in (10, 0):
        d = np.random.default_rng(n).uniform(size=(1, n, 5)).astype("float32")
        keep = np.flatnonzero(d[0, :, 0] > 0.5)
        count, out, idx = (t.numpy() for t in vm.run(d))
        want_out = np.full_like(d, -1)
        want_out[0, :len(keep)] = d[0, keep]
        want_idx = np.full((1, n), -1, "int32")
        want_idx[0, :len(keep)] = keep
        np.testing.assert_array_equal(count, [len(keep)])
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(idx, want_idx)


def test_non_max_suppression_of_any_boxes():
    """vision.non_max_suppression with an Any number of boxes in the VM (a BuildError before,
    TVM 0.19's test_any). Rows are (class, score, corners); valid_count 4 over positions
    [0, 1, 3, 4] of ``indices``; top_k 2 keeps the two best scores, position 3 (0.9, original
    box 4) and position 0 (0.8, box 0), which do not overlap; force_suppress ignores classes."""
    x0 = relay.var("x0", relay.TensorType((1, relay.Any(), 6), "float32"))
    x1 = relay.var("x1", relay.TensorType((1,), "int32"))
    x2 = relay.var("x2", relay.TensorType((1, relay.Any()), "int32"))
    x3 = relay.var("x3", relay.TensorType((), "int32"))
    z = relay.vision.non_max_suppression(x0, x1, x2, x3, iou_threshold=0.5, force_suppress=True,
                                         top_k=2, return_indices=True, invalid_to_bottom=False)
    vm = _vm(relay.Function([x0, x1, x2, x3], z.astuple()))
    d = np.array([[[0, 0.8, 1, 20, 25, 45], [1, 0.7, 30, 60, 50, 80], [0, 0.4, 4, 21, 19, 40],
                   [2, 0.9, 35, 61, 52, 79], [1, 0.5, 100, 60, 70, 110]]], "float32")
    idx, count = vm.run(d, np.array([4], "int32"), np.array([[0, 1, 3, 4, -1]], "int32"),
                        np.array(-1, "int32"))
    np.testing.assert_array_equal(idx.numpy(), [[4, 0, -1, -1, -1]])
    np.testing.assert_array_equal(count.numpy(), [[2]])
    idx, count = vm.run(np.zeros((1, 0, 6), "float32"), np.array([0], "int32"),
                        np.zeros((1, 0), "int32"), np.array(-1, "int32"))
    assert idx.numpy().shape == (1, 0)
    np.testing.assert_array_equal(count.numpy(), [[0]])


def test_dense_of_any_width_checks_the_reduction_axis_at_run_time():
    """nn.dense of data with an Any last axis and a (3, 4) weight: the widths may agree, so it
    types (Relay's AssertEQ); the kernel gives NumPy's product at width 4 and an InputError
    naming the reduction axis at width 5 instead of reading past the weight."""
    x = relay.var("x", shape=(2, relay.Any()))
    w = relay.var("w", shape=(3, 4))
    vm = _vm(relay.Function([x, w], relay.nn.dense(x, w)))
    rng = np.random.default_rng(11)
    xv = rng.standard_normal((2, 4)).astype("float32")
    wv = rng.standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(vm.run(xv, wv).numpy(), xv @ wv.T, rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="nn.dense: data and weight on the reduction axis "
                                         "differ at run time") as err:
        vm.run(np.ones((2, 5), "float32"), wv)
    # the message gives the size the run had (the kernel's check cannot print values)
    assert "x.shape[1]=5" in str(err.value)


def test_conv2d_of_any_channels_checks_them_at_run_time_with_the_expected_count():
    """conv2d of data with Any channels and a (2, 4, 3, 3) weight: NumPy's values at 4
    channels; at 5 an InputError giving the 4 expected and the 5 given (fresh-user trial: the
    message gave neither)."""
    x = relay.var("x", shape=(1, relay.Any(), 5, 5))
    w = relay.var("w", shape=(2, 4, 3, 3))
    vm = _vm(relay.Function([x, w], relay.nn.conv2d(x, w, channels=2, kernel_size=(3, 3))))
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((1, 4, 5, 5)).astype("float32")
    wv = rng.standard_normal((2, 4, 3, 3)).astype("float32")
    ref = np.zeros((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            ref += np.einsum("nchw,oc->nohw", xv[:, :, i:i + 3, j:j + 3], wv[:, :, i, j])
    np.testing.assert_allclose(vm.run(xv, wv).numpy(), ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(InputError, match=r"weight input channels x groups \(4 x 1 = 4\)") as err:
        vm.run(np.ones((1, 5, 5, 5), "float32"), wv)
    assert "x.shape[1]=5" in str(err.value)


def test_strided_slice_lists_beside_a_computed_end():
    """tvm.relay 0.19 took ``strided_slice(x, [0], relay.shape_of(s))``: lists or ints beside a
    Relay expression became constants; relay_tvm refused the list ("Call argument 0: expected a
    Relay expression"; TVM v0.19's test_dynamic_to_static_dynamic_rank). A single stride is
    the first axis's, the others 1, as for static slices."""
    d = relay.var("d", relay.TensorType((5, 6), "float32"))
    e = relay.var("e", relay.TensorType((2,), "int64"))
    x = np.arange(30, dtype="float32").reshape(5, 6)
    for body, args, want in (
        (relay.strided_slice(d, [1, 0], e), (np.array([4, 3], "int64"),), x[1:4, 0:3]),
        (relay.strided_slice(d, e, [5, 6], 2), (np.array([1, 1], "int64"),), x[1:5:2, 1:6]),
        (relay.strided_slice(d, e, [5, 6], [2, 3]), (np.array([0, 2], "int64"),), x[0:5:2, 2:6:3]),
    ):
        mod = relay.IRModule.from_expr(relay.Function([d, e], body))
        for kind in ("debug", "vm"):
            got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(x, *args)
            np.testing.assert_array_equal(got.numpy(), want)
    static = relay.create_executor("debug").evaluate(
        relay.Function([d], relay.strided_slice(d, [1, 1], [5, 6], 2)))(x)
    np.testing.assert_array_equal(static.numpy(), x[1:5:2, 1:6])


# ---- shape rules over Any dimensions that 0.19 had shape functions for (user trial) ----------


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("rank", [1, 2])
def test_scans_over_the_flattened_data_of_any_dims(name, rank):
    x = relay.var("x", shape=(A,) * rank)
    vm = _vm(relay.Function([x], getattr(relay, name)(x)))
    rng = np.random.default_rng(3)
    for shape in [(5,), (1,), (7,)] if rank == 1 else [(2, 3), (4, 1), (1, 5)]:
        xv = rng.uniform(0.5, 1.5, shape).astype("float32")
        got = vm.run(xv).numpy()
        np.testing.assert_allclose(got, getattr(np, name)(xv.reshape(-1)), rtol=1e-6)


def test_broadcast_to_like_of_any_dims():
    y, x = relay.var("y", shape=(1, A)), relay.var("x", shape=(A, A))
    vm = _vm(relay.Function([y, x], relay.broadcast_to_like(y, x)))
    for yshape, xshape in [((1, 4), (3, 4)), ((1, 1), (2, 5)), ((1, 3), (1, 3))]:
        yv = np.arange(np.prod(yshape), dtype="float32").reshape(yshape)
        got = vm.run(yv, np.zeros(xshape, "float32")).numpy()
        np.testing.assert_array_equal(got, np.broadcast_to(yv, xshape))
    with pytest.raises(InputError, match="broadcast_to_like"):
        vm.run(np.ones((1, 3), "float32"), np.zeros((2, 4), "float32"))


def test_broadcast_of_an_any_vector_to_a_static_or_any_shape():
    """A (?,) data broadcast to (2, 4, 3), or like a (?, ?, 3) tensor, was refused at type
    inference (fresh-user trial); NumPy and 0.19 broadcast it, the kernel checking the size at
    run time."""
    a = relay.Any()
    x = relay.var("x", shape=(a,))
    y = relay.var("y", shape=(a, a, 3))
    like = relay.create_executor("vm", mod=tvm.IRModule.from_expr(
        relay.Function([x, y], relay.broadcast_to_like(x, y))), target="llvm").evaluate()
    to = relay.create_executor("vm", mod=tvm.IRModule.from_expr(
        relay.Function([x], relay.broadcast_to(x, (2, 4, 3)))), target="llvm").evaluate()
    zeros = np.zeros((2, 4, 3), "float32")
    for xv in (np.arange(3, dtype="float32"), np.array([5.0], "float32")):
        want = np.broadcast_to(xv, (2, 4, 3))
        np.testing.assert_array_equal(like(xv, zeros).numpy(), want)
        np.testing.assert_array_equal(to(xv).numpy(), want)
    bad = np.arange(2, dtype="float32")
    with pytest.raises(InputError, match=r"broadcast_to_like: data dimension 0 must be 1 or "
                                         r"the target's"):
        like(bad, zeros)
    with pytest.raises(InputError, match=r"dimension 2 must be 3 or 1"):
        to(bad)
