"""AlterOpLayout keeps NCHW{c}c across pooling and channel concatenation: the pools run on the
blocked tensors, concatenations join them on the outer channel axis, and the transforms
between blocked convolutions cancel (or become one direct NCHW{a}c -> NCHW{b}c transform).
Each rewrite is checked against the reference interpreter on the unrewritten program; the
Gluon networks compiled at opt level 3 against opt level 0."""

import numpy as np
import pytest
from pass_util import assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform

RNG = np.random.default_rng(3)


def conv(x, cin, cout, k=3, pad=1):
    w = relay.const(RNG.normal(size=(cout, cin, k, k)).astype("float32") / (cin * k * k))
    return relay.nn.relu(relay.nn.conv2d(x, w, padding=(pad, pad)))


def ops_of(func):
    """``(op name, layout attr or None)`` of every call, in post order."""
    out = []

    def visit(n):
        if isinstance(n, relay.Call):
            a = n.attrs
            lay = None
            if n.op.name == "layout_transform":
                lay = (a.src_layout, a.dst_layout)
            elif a is not None and "layout" in a:
                lay = a.layout
            out.append((n.op.name, lay))

    relay.analysis.post_order_visit(func, visit)
    return out


def altered(f):
    return run_opt_pass(f, [transform.AlterOpLayout(), transform.FoldConstant()])


POOLS = {
    "max": lambda y: relay.nn.max_pool2d(y, 3, 2, padding=1, ceil_mode=True),
    "avg_cip": lambda y: relay.nn.avg_pool2d(y, 3, 2, padding=(1, 0, 1, 1),
                                             count_include_pad=True),
    "avg": lambda y: relay.nn.avg_pool2d(y, (2, 3), 1, padding=1, ceil_mode=True),
    "global_avg": relay.nn.global_avg_pool2d,
    "global_max": relay.nn.global_max_pool2d,
    "adaptive_avg": lambda y: relay.nn.adaptive_avg_pool2d(y, (3, 2)),
    "adaptive_max": lambda y: relay.nn.adaptive_max_pool2d(y, (2, 3)),
}


@pytest.mark.parametrize("kind", sorted(POOLS))
def test_pool_between_blocked_convs_keeps_the_block(kind):
    x = relay.var("x", shape=(1, 8, 9, 11))
    y = POOLS[kind](conv(x, 8, 16))
    f = relay.Function([x], conv(y, 16, 32, k=1, pad=0))
    after = altered(f)
    names = [n for n, _ in ops_of(after)]
    pool = next(o for o in ops_of(after) if "pool" in o[0])
    assert pool[1] == "NCHW16c"
    # only the input's and the output's transforms remain
    assert names.count("layout_transform") == 2
    assert names[0] == names[-1] == "layout_transform"
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)


def test_pool_of_an_nchw_tensor_is_left_alone():
    x = relay.var("x", shape=(1, 8, 9, 11))
    f = relay.Function([x], relay.nn.max_pool2d(relay.nn.relu(conv(x, 8, 8)) + x, 2))
    after = altered(f)
    pool = next(o for o in ops_of(after) if "pool" in o[0])
    assert pool[1] == "NCHW16c" or pool[1] == "NCHW8c"
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)
    z = relay.var("z", shape=(1, 8, 9, 11))
    plain = relay.Function([z], relay.nn.max_pool2d(relay.nn.relu(z), 2))
    assert [o[1] for o in ops_of(altered(plain)) if "pool" in o[0]] == ["NCHW"]


def test_concat_of_same_blocks_is_a_blocked_concat():
    x = relay.var("x", shape=(1, 8, 7, 7))
    sq = conv(x, 8, 16, k=1, pad=0)
    cat = relay.concatenate([conv(sq, 16, 32, k=1, pad=0), conv(sq, 16, 16)], axis=1)
    f = relay.Function([x], conv(cat, 48, 16))
    after = altered(f)
    ops = ops_of(after)
    assert [n for n, _ in ops].count("layout_transform") == 2
    assert ("concatenate", None) in ops
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)


def test_concat_of_mixed_blocks_reblocks_to_the_gcd_and_composes_transforms():
    # blocks 16 (32 channels) and 8 (24 channels) -> concatenated in NCHW8c; the next conv wants
    # NCHW8c for its 56 input channels: no NCHW round trip anywhere
    x = relay.var("x", shape=(1, 8, 6, 6))
    cat = relay.concatenate([conv(x, 8, 32), relay.nn.max_pool2d(conv(x, 8, 24), 3, 1, padding=1)],
                            axis=-3)
    y = conv(cat, 56, 16)
    f = relay.Function([x], y)
    after = altered(f)
    lts = [lay for n, lay in ops_of(after) if n == "layout_transform"]
    assert lts == [("NCHW", "NCHW8c"), ("NCHW16c", "NCHW8c"), ("NCHW16c", "NCHW")]
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)
    # 8-blocked 24 + 40 channels = 64: the next conv wants NCHW16c, one direct transform
    cat2 = relay.concatenate([conv(x, 8, 24), conv(x, 8, 40)], axis=1)
    f2 = relay.Function([x], conv(cat2, 64, 16))
    after2 = altered(f2)
    lts2 = [lay for n, lay in ops_of(after2) if n == "layout_transform"]
    assert lts2 == [("NCHW", "NCHW8c"), ("NCHW8c", "NCHW16c"), ("NCHW16c", "NCHW")]
    assert_same_result(f2, after2, atol=1e-4, rtol=1e-4)


def test_concat_boundaries():
    x = relay.var("x", shape=(1, 8, 6, 6))
    z = relay.var("z", shape=(1, 8, 6, 6))
    a = conv(x, 8, 16)
    # an NCHW operand, a spatial axis, blocks whose gcd is below 4: stay NCHW concatenations
    for cat in (relay.concatenate([a, z], axis=1), relay.concatenate([a, a], axis=2),
                relay.concatenate([a, conv(x, 8, 3)], axis=1)):
        f = relay.Function([x, z], relay.nn.relu(cat))
        after = altered(f)
        ops = ops_of(after)
        i = [n for n, _ in ops].index("concatenate")
        assert ops[i - 1][0] == "layout_transform" and ops[i - 1][1][1] == "NCHW"
        assert_same_result(f, after, atol=1e-4, rtol=1e-4)


# ---- whole networks ---------------------------------------------------------------------------


def _gluon(name, size):
    pytest.importorskip("mxnet", reason="MXNet builds the Gluon model-zoo networks")
    from relay_tvm.testing.gluon import random_zoo_model

    net, x = random_zoo_model(name, (1, 3, size, size))
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    return mod, params, x


def _run(mod, params, x, opt_level):
    import tvm

    from relay_tvm.runtime import GraphModule

    with transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target="llvm", params=params)
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("data", x)
    gm.run()
    return gm.get_output(0).numpy()


def _transforms(mod):
    from relay_tvm.transform._rewrite import post_order

    return [n.attrs for n in post_order(mod["main"], enter_primitive=True)
            if isinstance(n, relay.Call) and isinstance(n.op, relay.op.Op)
            and n.op.name == "layout_transform"]


@pytest.mark.mxnet
def test_resnet18_has_no_transform_between_stem_and_blocks():
    mod, params, x = _gluon("resnet18_v1", 64)
    with transform.PassContext(opt_level=3):
        opt, _ = relay.optimize(mod, target="llvm", params=params)
    # the input's NCHW -> NCHW{3}c and the classifier's after the global pool; nothing else
    lts = sorted((a.src_layout, a.dst_layout) for a in _transforms(opt))
    assert lts == [("NCHW", "NCHW3c"), ("NCHW16c", "NCHW")]
    text = opt.astext()
    assert 'nn.max_pool2d(' in text and 'layout="NCHW16c"' in text
    want = _run(mod, params, x, 0)
    got = _run(mod, params, x, 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.mxnet
@pytest.mark.slow
@pytest.mark.parametrize("name,size", [
    ("squeezenet1.0", 224),
    pytest.param("inceptionv3", 299, marks=pytest.mark.sweep),  # ~3 minutes of compiling
])
def test_concat_networks_opt3_equal_opt0(name, size):
    # SqueezeNet's classifier pools 13x13 and InceptionV3's 8x8: the smallest inputs they take
    mod, params, x = _gluon(name, size)
    with transform.PassContext(opt_level=3):
        opt, _ = relay.optimize(mod, target="llvm", params=params)
    assert len(_transforms(opt)) == 2
    want = _run(mod, params, x, 0)
    got = _run(mod, params, x, 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
