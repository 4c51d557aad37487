"""Kernels compiled with ``Any`` dimensions check at run time what their operator's type rule
required of those dimensions: inputs that disagree are an ``InputError`` naming the operator,
never a read past a buffer's end or a dropped row (all found by a new user: the VM returned
garbage where the interpreter refused the same inputs)."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import InputError

A = relay.Any()


def _vm(params, body):
    mod = tvm.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_reshape_checks_element_count():
    d = relay.var("d", shape=(A, 4))
    f = _vm([d], relay.reshape(d, (2, 0, 2)))
    x = _f32(4, 4)
    np.testing.assert_array_equal(f(x).numpy(), x.reshape(2, 4, 2))
    with pytest.raises(InputError, match="reshape.*element count"):
        f(_f32(2, 4))  # 8 elements into (2, 4, 2): 16


def test_reshape_inferred_dim_checks_divisibility():
    d = relay.var("d", shape=(A, 4))
    f = _vm([d], relay.reshape(d, (3, -1)))
    x = _f32(6, 4)
    np.testing.assert_array_equal(f(x).numpy(), x.reshape(3, -1))
    with pytest.raises(InputError, match="reshape"):
        f(_f32(2, 4))  # 8 elements do not make 3 rows


def test_concatenate_checks_the_other_axes():
    e, g = relay.var("e", shape=(A, A)), relay.var("g", shape=(A, A))
    f0 = _vm([e, g], relay.concatenate([e, g], 0))
    a, b = _f32(2, 4), _f32(3, 4, seed=1)
    np.testing.assert_array_equal(f0(a, b).numpy(), np.concatenate([a, b], 0))
    with pytest.raises(InputError, match="concatenate.*axis 1"):
        f0(a, _f32(3, 2))
    f1 = _vm([e, g], relay.concatenate([e, g], 1))
    with pytest.raises(InputError, match="concatenate.*axis 0"):
        f1(a, _f32(3, 2))


def test_stack_checks_every_axis():
    e, g = relay.var("e", shape=(A, A)), relay.var("g", shape=(A, A))
    f = _vm([e, g], relay.stack([e, g], 0))
    a, b = _f32(2, 3), _f32(2, 3, seed=1)
    np.testing.assert_array_equal(f(a, b).numpy(), np.stack([a, b]))
    with pytest.raises(InputError, match="stack"):
        f(a, _f32(2, 4))


def test_batch_matmul_checks_batches():
    x, y = relay.var("x", shape=(A, 2, 3)), relay.var("y", shape=(A, 4, 3))
    f = _vm([x, y], relay.nn.batch_matmul(x, y))
    a1, b3 = _f32(1, 2, 3), _f32(3, 4, 3, seed=1)
    want = np.einsum("bmk,bnk->bmn", np.broadcast_to(a1, (3, 2, 3)), b3)
    np.testing.assert_allclose(f(a1, b3).numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="batch sizes"):
        f(_f32(2, 2, 3), b3)


def test_dense_with_any_reduction_axis():
    d, w = relay.var("d", shape=(2, A)), relay.var("w", shape=(3, A))
    f = _vm([d, w], relay.nn.dense(d, w))
    a, b = _f32(2, 5), _f32(3, 5, seed=1)
    np.testing.assert_allclose(f(a, b).numpy(), a @ b.T, rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="nn.dense"):
        f(a, _f32(3, 4))


def test_squeeze_checks_size_one():
    e = relay.var("e", shape=(A, A))
    f = _vm([e], relay.squeeze(e, axis=[0]))
    x = _f32(1, 4)
    np.testing.assert_array_equal(f(x).numpy(), x[0])
    with pytest.raises(InputError, match="squeeze.*size 1"):
        f(_f32(2, 4))


def test_reshape_like_checks_element_count():
    d, e = relay.var("d", shape=(A, 4)), relay.var("e", shape=(A, A))
    f = _vm([d, e], relay.reshape_like(d, e))
    x = _f32(2, 4)
    np.testing.assert_array_equal(f(x, _f32(4, 2)).numpy(), x.reshape(4, 2))
    with pytest.raises(InputError, match="reshape_like.*element count"):
        f(x, _f32(3, 3))


def test_broadcast_mismatch_is_input_error():
    e, g = relay.var("e", shape=(A, A)), relay.var("g", shape=(A, A))
    f = _vm([e, g], e * g)
    a, b = _f32(2, 4), _f32(2, 4, seed=1)
    np.testing.assert_array_equal(f(a, b).numpy(), a * b)
    c = _f32(1, 4, seed=2)  # size 1 broadcasts (NumPy's rule)
    np.testing.assert_array_equal(f(a, c).numpy(), a * c)
    with pytest.raises(InputError, match="multiply"):
        f(a, _f32(3, 4))


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_float_operands_with_integer_out_dtype_agree(kind):
    """topi casts each operand to ``out_dtype`` before multiplying; the reference kernels the
    interpreter runs do the same (they cast the product: 1.7 * 1.5 -> 2, the kernels 1)."""
    x, w = relay.var("x", shape=(1, 2)), relay.var("w", shape=(1, 2))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w, out_dtype="int32")))
    run = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    a = np.array([[1.7, -2.6]], "float32")
    b = np.array([[1.5, 3.9]], "float32")
    want = a.astype("int32") @ b.astype("int32").T  # 1*1 + (-2)*3
    assert want[0, 0] == -5
    np.testing.assert_array_equal(run(a, b).numpy(), want)


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_conv_float_operands_with_integer_out_dtype(kind):
    x = relay.var("x", shape=(1, 1, 3, 3))
    w = relay.var("w", shape=(2, 1, 2, 2))
    body = relay.nn.conv2d(x, w, kernel_size=(2, 2), channels=2, out_dtype="int32")
    mod = tvm.IRModule.from_expr(relay.Function([x, w], body))
    run = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    a = (_f32(1, 1, 3, 3) * 3).astype("float32")
    b = (_f32(2, 1, 2, 2, seed=1) * 3).astype("float32")
    ai, bi = a.astype("int32"), b.astype("int32")
    want = np.zeros((1, 2, 2, 2), "int32")
    for o in range(2):
        for i in range(2):
            for j in range(2):
                want[0, o, i, j] = (ai[0, 0, i:i + 2, j:j + 2] * bi[o, 0]).sum()
    np.testing.assert_array_equal(run(a, b).numpy(), want)


@pytest.mark.parametrize("name", ["mean", "variance", "std"])
def test_mean_like_reductions_over_any_dims(name):
    """mean / variance / std divide by an element count that is symbolic here (the TE compute
    took int() of it: a BuildError)."""
    x = relay.var("x", shape=(A, 4, 5, 6))
    axis = {"mean": 0, "variance": [0, 2], "std": 1}[name]
    f = _vm([x], getattr(relay, name)(x, axis=axis))
    a = _f32(3, 4, 5, 6)
    ref = {"mean": a.mean(0), "variance": a.var((0, 2)), "std": a.std(1)}[name]
    np.testing.assert_allclose(f(a).numpy(), ref, rtol=1e-5, atol=1e-6)


_SLICES = [  # (begin, end, strides, axes, slice_mode)
    ([0, 1], [2, 3], None, None, "end"),
    ([1], [-1], None, None, "end"),
    ([-2], [100], None, None, "end"),
    ([5], [1], [-2], None, "end"),
    ([-1], [-100], [-1], None, "end"),
    ([0, 3], [4, 0], [1, -1], [1, 2], "end"),
    ([-3], [2], None, None, "size"),
    ([-2], [2], None, None, "size"),
    ([1], [-1], None, None, "size"),
    ([2, 0], [3, 2], [2], None, "end"),
]


@pytest.mark.parametrize("case", range(len(_SLICES)))
def test_strided_slice_of_any_dims_equals_numpy(case):
    """A static slice of an ``Any`` dimension: Python's slice rules on the run-time size
    (negative bounds, clamping, negative strides, slice_mode="size")."""
    begin, end, strides, axes, mode = _SLICES[case]
    x = relay.var("x", shape=(A, 4, A))
    f = _vm([x], relay.strided_slice(x, begin, end, strides, axes=axes, slice_mode=mode))
    for n in (1, 3, 7):
        a = _f32(n, 4, n + 2, seed=n)
        ndim = a.ndim
        ax = axes if axes is not None else list(range(len(begin)))
        st = strides if strides is not None else [1]
        # fewer strides than axes: the others step by 1 (0.19's StridedSliceRel, see
        # relay_tvm.op.indexing)
        st = list(st) + [1] * (len(ax) - len(st))
        idx = [slice(None)] * ndim
        for k, axis in enumerate(ax):
            b, e, s = begin[k], end[k], st[k]
            if mode == "size":
                start = b + a.shape[axis] if b < 0 else b
                idx[axis] = slice(start, None if e < 0 else start + e)
            else:
                idx[axis] = slice(b, e, s)
        np.testing.assert_array_equal(f(a).numpy(), a[tuple(idx)])


@pytest.mark.parametrize("ios", [[1], [1, 3], 2])
def test_split_of_an_any_axis(ios):
    x = relay.var("x", shape=(A, 3))
    f = _vm([x], relay.split(x, ios, axis=0).astuple())
    for n in (4, 6):
        a = _f32(n, 3, seed=n)
        got = f(a)
        want = np.split(a, ios, axis=0)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(InputError, match="split"):
        f(_f32(1, 3))  # 1 row: an index out of range / not 2 equal sections


def test_row_by_row_kernel_mismatch_names_the_operator_and_the_sizes():
    # from a new-user trial: the message named only TVM's buffers of the kernel
    # ("p1_rows.shape[0] differs from p0_rows.shape[0]"); sizes 2 and 4 do not broadcast
    a, b = relay.var("a", shape=(A, 3)), relay.var("b", shape=(A, 3))
    mod = tvm.IRModule.from_expr(relay.Function([a, b], a + b))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, "llvm"), tvm.cpu())
    x, y = _f32(2, 3), _f32(4, 3, seed=1)
    with pytest.raises(InputError, match=r"^relay_tvm shape check: add \(kernel "
                                         r"tvmgen_vm_fused_add\): the first \(Any\) dimensions "
                                         r".* must be equal or 1 .*called with: "
                                         r"a\.shape\[0\]=2, b\.shape\[0\]=4$"):
        vm.run(x, y)
    vm.set_input("main", x, y)  # the inputs set beforehand: the same message
    with pytest.raises(InputError, match=r"a\.shape\[0\]=2, b\.shape\[0\]=4"):
        vm.invoke("main")
