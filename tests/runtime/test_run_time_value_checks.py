"""Operator arguments whose values are known only at run time (slice strides, indices, target
shapes given as tensors): compiled code checks them and raises ``InputError`` naming the
operator, as the interpreter refuses them, instead of a SIGFPE, a read out of bounds or garbage
(all found by a new user)."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import InputError, TypeInferenceError


def _run(executor, params, body, *args):
    mod = tvm.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor(executor, mod=mod, target="llvm").evaluate()(*args)


def _f32(*shape):
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_dyn_strided_slice_zero_stride(executor):
    x = relay.var("x", shape=(4, 6))
    s = relay.var("s", shape=(2,), dtype="int64")
    begin = relay.const(np.array([0, 5], "int64"))
    end = relay.const(np.array([4, -7], "int64"))
    body = relay.strided_slice(x, begin, end, s)
    xv = _f32(4, 6)
    good = _run(executor, [x, s], body, xv, np.array([2, -2], "int64"))
    np.testing.assert_array_equal(good.numpy(), xv[0:4:2, 5::-2])
    for bad in ([0, 1], [1, 0]):
        with pytest.raises(InputError, match="strided_slice.*stride"):
            _run(executor, [x, s], body, xv, np.array(bad, "int64"))


@pytest.mark.parametrize("executor,opt_level",
                         [("debug", 3), ("graph", 0), ("graph", 3), ("vm", 0), ("vm", 3)])
def test_gather_nd_index_out_of_range(executor, opt_level):
    x = relay.var("x", shape=(2, 3, 4))
    i = relay.var("i", shape=(2, 3), dtype="int32")
    body = relay.add(relay.gather_nd(x, i), relay.const(1.0))  # fused with what follows
    xv = _f32(2, 3, 4)
    with relay.transform.PassContext(opt_level=opt_level):
        good = np.array([[0, 1, -2], [2, -1, 0]], "int32")  # negative: from the end, as NumPy
        res = _run(executor, [x, i], body, xv, good)
        np.testing.assert_array_equal(res.numpy(), xv[tuple(good)] + 1)
        for bad in ([[0, 50000000, 1], [0, 0, 0]], [[0, 1, 0], [0, -4, 0]], [[-3, 0, 0], [0] * 3]):
            with pytest.raises(InputError, match="gather_nd.*out of range"):
                _run(executor, [x, i], body, xv, np.array(bad, "int32"))


def test_gather_nd_batch_dims_checks_each_axis():
    x = relay.var("x", shape=(2, 5, 3))
    i = relay.var("i", shape=(1, 2), dtype="int64")
    body = relay.gather_nd(x, i, batch_dims=1)
    xv = _f32(2, 5, 3)
    for executor in ("debug", "vm"):
        res = _run(executor, [x, i], body, xv, np.array([[4, -5]], "int64"))
        np.testing.assert_array_equal(res.numpy(), np.stack([xv[0, 4], xv[1, 0]]))
        with pytest.raises(InputError, match="gather_nd"):
            _run(executor, [x, i], body, xv, np.array([[5, 0]], "int64"))


@pytest.mark.parametrize("executor", ["debug", "vm"])
@pytest.mark.parametrize("xshape", [(2, 3), (relay.Any(), 3)], ids=["static", "any"])
def test_dyn_broadcast_to_checks_compatibility(executor, xshape):
    x = relay.var("x", shape=xshape)
    s = relay.var("s", shape=(3,), dtype="int64")
    body = relay.broadcast_to(x, s)
    for xv, good in ((_f32(2, 3), [4, 2, 3]), (_f32(1, 3), [2, 5, 3])):
        if xv.shape[0] == 1 and xshape[0] == 2:
            continue  # the static program's x has 2 rows
        res = _run(executor, [x, s], body, xv, np.array(good, "int64"))
        np.testing.assert_array_equal(res.numpy(), np.broadcast_to(xv, good))
    for bad in ([1, 4, 3], [1, 2, 1], [2, 3, 3]):
        with pytest.raises(InputError, match="broadcast_to"):
            _run(executor, [x, s], body, _f32(2, 3), np.array(bad, "int64"))


def test_dyn_broadcast_to_rejects_a_shorter_shape():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(1,), dtype="int64")
    with pytest.raises(TypeInferenceError, match="broadcast_to.*fewer"):
        relay.transform.InferType()(tvm.IRModule.from_expr(
            relay.Function([x, s], relay.broadcast_to(x, s))))


@pytest.mark.parametrize("executor,opt_level", [("debug", 3), ("graph", 0), ("vm", 3)])
def test_take_fast_and_gather_index_out_of_range(executor, opt_level):
    x = relay.var("x", shape=(3, 4))
    i = relay.var("i", shape=(2, 4), dtype="int32")
    take = relay.take(x, i, axis=0, mode="fast")
    gather = relay.gather(x, 0, i)
    xv = _f32(3, 4)
    good = np.array([[0, 2, -1, -3], [1, 1, 0, 2]], "int32")
    with relay.transform.PassContext(opt_level=opt_level):
        np.testing.assert_array_equal(_run(executor, [x, i], take, xv, good).numpy(),
                                      np.take(xv, good, axis=0))
        np.testing.assert_array_equal(_run(executor, [x, i], gather, xv, good).numpy(),
                                      np.take_along_axis(xv, good.astype("int64"), 0))
        for bad in ([[0, 3, 0, 0], [0] * 4], [[0] * 4, [0, 0, -4, 50000000]]):
            for name, body in (("take", take), ("gather", gather)):
                # the range with the axis's size (compiled kernels said only "[-n, n) on the
                # indexed axis of size n", and called it a shape check: fresh-user trial)
                with pytest.raises(InputError, match=rf"{name}.*out of range.*valid: \[-3, 3\) "
                                                     r"on (axis 0|the indexed axis)") as err:
                    _run(executor, [x, i], body, xv, np.array(bad, "int32"))
                assert "shape check" not in str(err.value)


@pytest.mark.parametrize("executor", ["debug", "graph", "vm"])
def test_scatter_nd_and_adv_index_out_of_range(executor):
    x = relay.var("x", shape=(2, 3))
    i = relay.var("i", shape=(1, 2), dtype="int64")
    u = relay.var("u", shape=(2, 3))
    j = relay.var("j", shape=(2,), dtype="int64")
    xv, uv = _f32(2, 3), _f32(2, 3) + 10
    scatter = _run(executor, [x, i, u], relay.scatter_nd(x, i, u, "update"), xv,
                   np.array([[1, -2]], "int64"), uv).numpy()
    want = xv.copy()
    want[1], want[0] = uv[0], uv[1]
    np.testing.assert_array_equal(scatter, want)
    adv = _run(executor, [x, j], relay.adv_index([x, j]), xv, np.array([1, -1], "int64"))
    np.testing.assert_array_equal(adv.numpy(), xv[[1, -1]])
    with pytest.raises(InputError, match="scatter_nd.*out of range"):
        _run(executor, [x, i, u], relay.scatter_nd(x, i, u, "update"), xv,
             np.array([[0, 50000000]], "int64"), uv)
    with pytest.raises(InputError, match="adv_index.*out of range"):
        _run(executor, [x, j], relay.adv_index([x, j]), xv, np.array([0, -3], "int64"))


@pytest.mark.parametrize("executor,axis", [("debug", 1), ("graph", 1), ("vm", 1),
                                           ("graph", 0), ("vm", -2)])
def test_scatter_elements_index_out_of_range(executor, axis):
    """Compiled scatter_elements dropped an index past the axis (7 on an axis of 5) silently;
    it now raises as the interpreter does. Negative indices count from the end (ONNX)."""
    x = relay.var("x", shape=(4, 5))
    i = relay.var("i", shape=(2, 3), dtype="int64")
    u = relay.var("u", shape=(2, 3))
    body = relay.scatter_elements(x, i, u, axis, "update")
    xv, uv = _f32(4, 5), _f32(2, 3) + 100
    n = xv.shape[axis]
    good = np.array([[0, -1, 2], [-n, 1, n - 1]], "int64")  # distinct targets per line
    want = xv.copy()
    ax = axis % 2
    for (r, c), v in np.ndenumerate(good):
        want[(v, c) if ax == 0 else (r, v)] = uv[r, c]
    np.testing.assert_array_equal(_run(executor, [x, i, u], body, xv, good, uv).numpy(), want)
    for bad in ([[0, 1, 7], [0, 1, 2]], [[0, 1, 2], [-n - 1, 0, 0]], [[n, 0, 0], [0, 0, 0]]):
        with pytest.raises(InputError, match="scatter_elements.*out of range"):
            _run(executor, [x, i, u], body, xv, np.array(bad, "int64"), uv)


def test_segment_sum_of_a_segment_id_out_of_range_raises():
    """segment_sum is scatter_elements(add) underneath: an id past num_segments was dropped
    by the compiled code; now both executors refuse it."""
    d = relay.var("d", shape=(4, 2))
    s = relay.var("s", shape=(4,), dtype="int32")
    body = relay.op.segment_sum(d, s, num_segments=3)
    dv = _f32(4, 2)
    for executor in ("debug", "graph"):
        res = _run(executor, [d, s], body, dv, np.array([2, 0, 2, 1], "int32")).numpy()
        np.testing.assert_array_equal(res, np.stack([dv[1], dv[3], dv[0] + dv[2]]))
        with pytest.raises(InputError, match="scatter_elements.*out of range"):
            _run(executor, [d, s], body, dv, np.array([0, 3, 1, 1], "int32"))


@pytest.mark.parametrize("op", ["gather", "gather_nd", "scatter_nd", "scatter_elements"])
def test_index_checks_stay_loops(op):
    """The index checks are loops in the compiled code, not one assert per index element
    (TVM's UnrollLoop unrolled loops of asserts whole: a 300 x 400 gather took 89 s to
    build), and still catch a bad index in the last element."""
    from tvm import tirx

    from relay_tvm.backend.target import make_target

    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(300, 50))
    if op == "gather":
        idx = rng.integers(0, 50, (300, 40)).astype("int64")
        i = relay.var("i", shape=idx.shape, dtype="int64")
        y = relay.gather(x, 1, i)
    elif op == "gather_nd":
        idx = rng.integers(0, 50, (2, 1200)).astype("int64")
        i = relay.var("i", shape=idx.shape, dtype="int64")
        y = relay.gather_nd(x, i)
    elif op == "scatter_nd":
        idx = rng.integers(0, 50, (2, 1200)).astype("int64")
        i = relay.var("i", shape=idx.shape, dtype="int64")
        y = relay.scatter_nd(x, i, relay.ones((1200,), "float32"), "add")
    else:
        idx = rng.integers(0, 50, (300, 40)).astype("int64")
        i = relay.var("i", shape=idx.shape, dtype="int64")
        y = relay.scatter_elements(x, i, relay.ones((300, 40), "float32"), 1, "add")
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(relay.Function([x, i], y)), target="llvm")
    tgt = make_target("llvm")
    mod = tirx.transform.BindTarget(tgt.with_host(tgt))(lib.ir_mod)
    pipe, _, _ = tirx.get_tir_pipeline("s_tir")
    text = "\n".join(f.script() for f in pipe(mod).functions.values())
    assert 0 < text.count("relay_tvm index check") < 10, text.count("relay_tvm index check")
    bad = idx.copy()
    bad.flat[-1] = 50 if op in ("gather", "scatter_elements") else 300
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", rng.standard_normal((300, 50)).astype("float32"))
    gm.set_input("i", bad)
    with pytest.raises(InputError, match="out of range"):
        gm.run()


def test_gather_of_any_dims_checks_the_other_axes_at_run_time():
    """Indices longer than the data on an axis other than the gather axis are refused at type
    inference when static; with Any dimensions the VM kernel read past the data (garbage rows;
    fresh-user trial) and now refuses them at run time."""
    a = relay.Any()
    d = relay.var("d", shape=(a, 3, a))
    i = relay.var("i", shape=(a, a, a), dtype="int32")
    mod = tvm.IRModule.from_expr(relay.Function([d, i], relay.gather(d, 1, i)))
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    dv = np.arange(24, dtype="float32").reshape(2, 3, 4)
    iv = np.array([[[2, 0, 1, 1]], [[0, 0, 2, 1]]], "int32")
    np.testing.assert_array_equal(run(dv, iv).numpy(), np.take_along_axis(dv, iv, 1))
    with pytest.raises(InputError, match="gather: indices exceed the data on axis 0, which is "
                                         "not the gather axis 1"):
        run(dv, np.zeros((5, 1, 9), "int32"))


@pytest.mark.parametrize("executor,opt_level", [("graph", 0), ("graph", 3), ("vm", 3)])
def test_compiled_index_checks_name_the_value_and_its_position(executor, opt_level):
    # the kernels' checks said only that some index was out of range (a constant assert
    # message); the interpreter named the value: now the compiled ones name it and where it is
    x = relay.var("x", shape=(3, 4))
    i = relay.var("i", shape=(2, 4), dtype="int32")
    j = relay.var("j", shape=(2, 2), dtype="int64")
    xv = _f32(3, 4)
    cases = [
        (relay.take(x, i, axis=0, mode="fast"), i, [[0, 3, 0, 0], [0] * 4],
         r"take: .*: got 3 at position \(0, 1\) of the indices, outside \[-3, 3\)"),
        (relay.gather(x, 0, i), i, [[0] * 4, [0, 0, -4, 50000000]],
         r"gather: .*: got -4 at position \(1, 2\) of the indices, outside \[-3, 3\)"),
        # gather_nd: the bound is the size of the axis each row of the indices addresses
        (relay.gather_nd(x, j), j, [[0, 2], [1, 4]],
         r"gather_nd: .*: got 4 at position \(1, 1\) of the indices, outside \[-4, 4\)"),
    ]
    with relay.transform.PassContext(opt_level=opt_level):
        for body, var, bad, pattern in cases:
            with pytest.raises(InputError, match=pattern):
                _run(executor, [x, var], body, xv, np.array(bad, var.type_annotation.dtype))
