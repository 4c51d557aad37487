"""reinterpret, cumsum/cumprod, meshgrid, scatter_elements, scatter_nd, adv_index,
unravel_index and sort against NumPy, through the interpreter and compiled."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import IncompleteType
from relay_tvm.op import OpPattern

RNG = np.random.default_rng(4)


@pytest.mark.parametrize(
    "src,dst", [("float32", "int32"), ("int32", "float32"), ("int16", "float16")]
)
def test_reinterpret(src, dst):
    a = RNG.uniform(-10, 10, (2, 3)).astype(src)
    x = relay.var("x", shape=(2, 3), dtype=src)
    check_op(relay.reinterpret(x, dst), [a], a.view(dst))


@pytest.mark.parametrize("name,fn,identity", [("cumsum", np.cumsum, 0), ("cumprod", np.cumprod, 1)])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_scan(name, fn, identity, axis, exclusive, dtype):
    a = (
        RNG.uniform(0.5, 1.5, (3, 4)) if dtype == "float32" else RNG.integers(-3, 4, (3, 4))
    ).astype(dtype)
    x = relay.var("x", shape=(3, 4), dtype=dtype)
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    exp = fn(flat, axis=ax).astype(dtype)
    if exclusive:
        exp = np.concatenate(
            [
                np.full_like(np.take(exp, [0], axis=ax), identity),
                np.take(exp, np.arange(exp.shape[ax] - 1), axis=ax),
            ],
            axis=ax,
        )
    check_op(getattr(relay, name)(x, axis, exclusive=exclusive), [a], exp, rtol=1e-5)


def test_cumsum_output_dtype():
    a = np.array([1, 2, 3], "int8")
    x = relay.var("x", shape=(3,), dtype="int8")
    check_op(relay.cumsum(x, 0, "int32"), [a], np.array([1, 3, 6], "int32"))


def test_scan_and_scatter_with_any_dims():
    """3-D data of three ``Any`` dimensions (the kernels index per dimension: the flat offsets
    of topi's kernels cost ~55 s of LLVM codegen there), run on the VM at several shapes,
    among them an empty scan axis and a length-1 one, against NumPy."""
    a_ = relay.Any()
    x = relay.var("x", shape=(a_, a_, a_))
    i = relay.var("i", shape=(a_, a_, a_), dtype="int32")
    u = relay.var("u", shape=(a_, a_, a_))
    f = relay.Function([x, i, u], relay.Tuple([
        relay.cumsum(x, 1, exclusive=True), relay.cumprod(x, -1),
        relay.scatter_elements(x, i, u, 1, "add")]))
    vm = relay.create_executor("vm", mod=relay.IRModule.from_expr(f), target="llvm").evaluate()
    for shape in ((2, 3, 4), (2, 0, 3), (3, 1, 2)):
        a = RNG.uniform(0.5, 1.5, shape).astype("float32")
        n = shape[1]
        ishape = (shape[0], min(n, 2), shape[2])
        idx = RNG.integers(-n, n, ishape).astype("int32") if n else np.zeros(ishape, "int32")
        upd = RNG.uniform(-1, 1, ishape).astype("float32")
        exp_sc = a.copy()
        for p in np.ndindex(*ishape):
            exp_sc[p[0], idx[p] % n, p[2]] += upd[p]
        excl = np.concatenate([np.zeros_like(a[:, :1]), np.cumsum(a, 1)[:, :-1]], 1)[:, :n]
        got = vm(a, idx, upd)
        np.testing.assert_allclose(got[0].numpy(), excl, rtol=1e-6)
        np.testing.assert_allclose(got[1].numpy(), np.cumprod(a, -1), rtol=1e-6)
        np.testing.assert_allclose(got[2].numpy(), exp_sc, rtol=1e-6)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    arrs = [
        np.arange(2, dtype="float32"),
        np.arange(3, dtype="float32") + 10,
        np.arange(4, dtype="float32"),
    ]
    vs = [relay.var(f"x{i}", shape=a.shape) for i, a in enumerate(arrs)]
    w = relay.meshgrid(vs, indexing)
    assert len(w) == 3
    check_op(w.astuple(), arrs, tuple(np.meshgrid(*arrs, indexing=indexing)))


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "min", "max"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements(reduction, axis):
    a = RNG.uniform(-1, 1, (3, 4)).astype("float32")
    shape = (2, 4) if axis == 0 else (3, 2)
    n = a.shape[axis]
    # distinct targets per line so 'update' is order independent
    idx = np.stack([RNG.permutation(n)[:2] for _ in range(4 if axis == 0 else 3)])
    idx = (idx.T if axis == 0 else idx).astype("int32")
    idx[0, 0] -= n  # one negative index
    upd = RNG.uniform(-1, 1, shape).astype("float32")
    exp = a.copy()
    ax = axis % 2
    for pos in np.ndindex(*shape):
        i = idx[pos] % n
        dst = (i, pos[1]) if ax == 0 else (pos[0], i)
        exp[dst] = {
            "update": upd[pos],
            "add": exp[dst] + upd[pos],
            "mul": exp[dst] * upd[pos],
            "min": min(exp[dst], upd[pos]),
            "max": max(exp[dst], upd[pos]),
        }[reduction]
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    u = relay.var("u", shape=upd.shape)
    check_op(relay.scatter_elements(x, i, u, axis, reduction), [a, idx, upd], exp)


@pytest.mark.parametrize("mode", ["update", "add"])
def test_scatter_nd(mode):
    a = RNG.uniform(-1, 1, (3, 4, 2)).astype("float32")
    idx = np.array([[0, 2], [1, 3]], "int32")  # M=2, Y=(2,)
    upd = RNG.uniform(-1, 1, (2, 2)).astype("float32")
    exp = a.copy()
    for y in range(2):
        dst = (idx[0, y], idx[1, y])
        exp[dst] = exp[dst] + upd[y] if mode == "add" else upd[y]
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    u = relay.var("u", shape=upd.shape)
    check_op(relay.scatter_nd(x, i, u, mode), [a, idx, upd], exp)


@pytest.mark.parametrize(
    "index_shapes",
    [[(2,)], [(2,), (2,)], [(2, 1), (3,)], [(2, 3), (1,), (3,)]],
)
def test_adv_index(index_shapes):
    a = RNG.uniform(size=(3, 4, 5)).astype("float32")
    idx = [RNG.integers(0, a.shape[k], s).astype("int32") for k, s in enumerate(index_shapes)]
    x = relay.var("x", shape=a.shape)
    ivs = [relay.var(f"i{k}", shape=s, dtype="int32") for k, s in enumerate(index_shapes)]
    check_op(relay.adv_index([x, *ivs]), [a, *idx], a[tuple(idx)])


@pytest.mark.parametrize("indices", [[0, 5, 11, 7], 9])
def test_unravel_index(indices):
    idx = np.array(indices, "int32")
    shape = np.array([3, 4], "int32")
    i = relay.var("i", shape=idx.shape, dtype="int32")
    s = relay.var("s", shape=(2,), dtype="int32")
    check_op(
        relay.unravel_index(i, s),
        [idx, shape],
        np.stack(np.unravel_index(idx, (3, 4))).astype("int32"),
    )


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("is_ascend", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_sort(axis, is_ascend, dtype):
    a = RNG.permutation(12).reshape(3, 4).astype(dtype)
    x = relay.var("x", shape=a.shape, dtype=dtype)
    exp = np.sort(a, axis=axis)
    if not is_ascend:
        exp = np.flip(exp, axis=axis)
    check_op(relay.sort(x, axis, is_ascend), [a], exp)


@pytest.mark.parametrize(
    "make,match",
    [
        (
            lambda: relay.reinterpret(relay.var("x", shape=(2,)), "int16"),
            r"reinterpret: data dtype float32 \(32 bits\) and dtype int16 \(16 bits\) differ",
        ),
        (lambda: relay.cumsum(relay.var("x", shape=(2,)), 1), r"cumsum: axis 1 is out of range"),
        (
            lambda: relay.meshgrid([relay.var("x", shape=(2, 2))]).astuple(),
            r"meshgrid: field 0 must be 0-d or 1-d, got shape \(2, 2\)",
        ),
        (
            lambda: relay.scatter_elements(
                relay.var("x", shape=(3, 4)),
                relay.var("i", shape=(2, 4), dtype="int32"),
                relay.var("u", shape=(2, 3)),
            ),
            r"scatter_elements: indices shape \(2, 4\) and updates shape \(2, 3\) must be equal",
        ),
        (
            lambda: relay.scatter_nd(
                relay.var("x", shape=(3, 4)),
                relay.var("i", shape=(1, 2), dtype="int32"),
                relay.var("u", shape=(2, 5)),
            ),
            r"scatter_nd: updates shape \(2, 5\) must be \(2, 4\)",
        ),
        (
            lambda: relay.adv_index(
                [
                    relay.var("x", shape=(3, 4)),
                    relay.var("i", shape=(2,), dtype="int32"),
                    relay.var("j", shape=(3,), dtype="int32"),
                ]
            ),
            r"adv_index index 1: shapes \(2,\) and \(3,\) do not broadcast",
        ),
        (
            lambda: relay.unravel_index(
                relay.var("i", shape=(2,)), relay.var("s", shape=(2,), dtype="int32")
            ),
            r"unravel_index: indices must have an integer dtype, got float32",
        ),
    ],
)
def test_type_errors(make, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make())


def test_relations_wait_and_patterns():
    op = relay.op.get("scatter_nd")
    assert op.type_rel([IncompleteType()] * 3, op.make_attrs()) is None
    for name, p in [
        ("cumsum", OpPattern.OPAQUE),
        ("scatter_elements", OpPattern.OPAQUE),
        ("scatter_nd", OpPattern.OPAQUE),
        ("adv_index", OpPattern.INJECTIVE),
        ("meshgrid", OpPattern.INJECTIVE),
        ("reinterpret", OpPattern.ELEMWISE),
        ("sort", OpPattern.OPAQUE),
        ("unravel_index", OpPattern.INJECTIVE),
    ]:
        assert relay.op.get(name).pattern == p


@pytest.mark.parametrize("k", [0, 1, -1, 3])
@pytest.mark.parametrize("upper", [True, False])
def test_trilu(k, upper):
    a = RNG.uniform(size=(2, 3, 4)).astype("float32")
    x = relay.var("x", shape=a.shape)
    exp = np.triu(a, k) if upper else np.tril(a, k)
    check_op(relay.trilu(x, k, upper), [a], exp)


@pytest.mark.parametrize(
    "equation,shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ii->i", [(3, 3)]),
        ("ij->ji", [(2, 3)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("i,j", [(2,), (3,)]),
        ("ij,ij->", [(2, 3), (2, 3)]),
    ],
)
def test_einsum(equation, shapes):
    arrs = [RNG.uniform(size=s).astype("float32") for s in shapes]
    vs = [relay.var(f"x{i}", shape=s) for i, s in enumerate(shapes)]
    check_op(relay.einsum(vs, equation), arrs, np.einsum(equation, *arrs), rtol=1e-5)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("seq_shape,val_shape", [((5,), (4,)), ((2, 5), (2, 3))])
def test_searchsorted(right, seq_shape, val_shape):
    seq = np.sort(RNG.integers(0, 6, seq_shape), axis=-1).astype("float32")
    vals = RNG.integers(-1, 7, val_shape).astype("float32")
    s = relay.var("s", shape=seq_shape)
    v = relay.var("v", shape=val_shape)
    side = "right" if right else "left"
    if len(seq_shape) == 1:
        exp = np.searchsorted(seq, vals, side=side)
    else:
        exp = np.stack([np.searchsorted(seq[i], vals[i], side=side) for i in range(seq_shape[0])])
    check_op(relay.searchsorted(s, v, right), [seq, vals], exp.astype("int32"))


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_logsumexp(axis, keepdims):
    a = RNG.uniform(-3, 3, (2, 3, 4)).astype("float32")
    x = relay.var("x", shape=a.shape)
    ax = axis if axis is None or isinstance(axis, tuple) else (axis,)
    exp = np.log(np.sum(np.exp(a.astype("float64")), axis=ax, keepdims=keepdims)).astype("float32")
    check_op(relay.logsumexp(x, axis, keepdims), [a], exp, rtol=1e-5)


@pytest.mark.parametrize(
    "make,match",
    [
        (
            lambda: relay.einsum(
                [relay.var("a", shape=(2, 3)), relay.var("b", shape=(4, 5))], "ij,jk->ik"
            ),
            r"einsum: index 'j' has size 3 and 4",
        ),
        (
            lambda: relay.einsum([relay.var("a", shape=(2, 3))], "ijk->i"),
            r"einsum: operand 0 has shape \(2, 3\) but subscripts 'ijk'",
        ),
        (lambda: relay.trilu(relay.var("a", shape=(3,)), 0), r"trilu: data must have rank >= 2"),
        (
            lambda: relay.searchsorted(relay.var("s", shape=(2, 5)), relay.var("v", shape=(3, 2))),
            r"searchsorted: sorted_sequence shape \(2, 5\) and values shape \(3, 2\) must agree",
        ),
    ],
)
def test_more_type_errors(make, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make())


def test_invert_permutation():
    p = np.array([3, 0, 4, 1, 2], "int32")
    x = relay.var("x", shape=(5,), dtype="int32")
    check_op(relay.invert_permutation(x), [p], np.argsort(p).astype("int32"))


@pytest.mark.parametrize(
    "shape,newshape,expected",
    # codes read from the right: (0, -1) on (2, 3, 4) copies 3 (the second code from the right
    # meets the second dimension from the right), and -1 takes 2 * 4
    [
        ((10, 5, 4), (-1, 0), (50, 4)),
        ((2, 3, 4), (0, -1), (3, 8)),
        ((2, 3, 4), (-1,), (24,)),
        ((6, 4), (-1, 2, 0), (3, 2, 4)),
    ],
)
def test_reverse_reshape(shape, newshape, expected):
    a = RNG.uniform(size=shape).astype("float32")
    x = relay.var("x", shape=shape)
    check_op(relay.reverse_reshape(x, newshape), [a], a.reshape(expected))
