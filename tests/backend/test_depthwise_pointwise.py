"""A depthwise convolution merged into the 1x1 convolution after it (FuseOps on CPU targets,
``transform/fuse_depthwise.py``; schedule ``cpu_nchwc.schedule_depthwise_pointwise``): which
pairs merge, and the merged kernel's values against NumPy (float64 reference)."""

import numpy as np
import pytest
from backend_util import rand

import relay_tvm as relay
from relay_tvm.backend.build_module import optimize_module
from relay_tvm.backend.schedule import cpu
from relay_tvm.transform._rewrite import is_primitive, post_order

DW = "nn.contrib_depthwise_conv2d_NCHWc"
PW = "nn.contrib_conv2d_NCHWc"


def _block(n, c, h, w, s, o, residual=False, dw_tail=True, pw_kernel=1, pw_stride=1):
    """NCHW depthwise 3x3 (stride ``s``, pad 1) [+ bias, ReLU] -> conv ``pw_kernel`` x
    ``pw_kernel`` (``o`` channels) + bias [+ the input] -> ReLU, weights bound as params."""
    x = relay.var("x", shape=(n, c, h, w))
    wd, bd = relay.var("wd", shape=(c, 1, 3, 3)), relay.var("bd", shape=(c,))
    wp, bp = relay.var("wp", shape=(o, c, pw_kernel, pw_kernel)), relay.var("bp", shape=(o,))
    y = relay.nn.conv2d(x, wd, strides=(s, s), padding=(1, 1), groups=c, channels=c,
                        kernel_size=(3, 3))
    if dw_tail:
        y = relay.nn.relu(relay.nn.bias_add(y, bd))
    pad = pw_kernel // 2
    y = relay.nn.bias_add(relay.nn.conv2d(y, wp, strides=(pw_stride, pw_stride),
                                          padding=(pad, pad), channels=o,
                                          kernel_size=(pw_kernel, pw_kernel)), bp)
    if residual:
        y = relay.add(y, x)
    y = relay.nn.relu(y)
    params = {"wd": rand((c, 1, 3, 3), seed=1), "bd": rand((c,), seed=2),
              "wp": rand((o, c, pw_kernel, pw_kernel), seed=3) / np.sqrt(c),
              "bp": rand((o,), seed=4)}
    if not dw_tail:
        del params["bd"]
        f = relay.Function([x, wd, wp, bp], y)
    else:
        f = relay.Function([x, wd, bd, wp, bp], y)
    return relay.IRModule.from_expr(f), params


def _np_block(x, p, s, residual=False, dw_tail=True):
    n, c, h, w = x.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (h - 1) // s + 1, (w - 1) // s + 1
    d = np.zeros((n, c, oh, ow))
    for i in range(3):
        for j in range(3):
            d += xp[:, :, i:i + s * oh:s, j:j + s * ow:s] * p["wd"][None, :, 0, i, j, None, None]
    if dw_tail:
        d = np.maximum(d + p["bd"][None, :, None, None], 0)
    y = np.einsum("nchw,oc->nohw", d, p["wp"][:, :, 0, 0].astype("float64"))
    y += p["bp"][None, :, None, None]
    if residual:
        y += x
    return np.maximum(y, 0)


def _kernels(mod, params, target="llvm", config=None):
    """The operator names of each primitive function ``build`` would compile."""
    with relay.transform.PassContext(opt_level=3, config=config or {}):
        opt = optimize_module(mod, target, params)
    fns = [n for n in post_order(opt["main"].body) if is_primitive(n)]
    return [[c.op.name for c in post_order(f.body) if isinstance(c, relay.Call)] for f in fns]


def _merged(kernels) -> int:
    return sum(1 for k in kernels if DW in k and PW in k)


CASES = [  # n, c, h, w, s, o, residual, dw_tail
    (1, 32, 16, 16, 1, 48, False, True),
    (1, 24, 17, 19, 2, 40, False, True),  # odd plane, stride 2: tail tiles, 9 x 10 output
    (2, 16, 12, 10, 1, 16, False, True),  # a batch of two
    (1, 32, 14, 14, 1, 32, True, True),  # MobileNetV2's projection + residual add
    (1, 32, 14, 14, 1, 64, False, False),  # no bias / activation between the convolutions
    (1, 64, 14, 14, 1, 64, False, True),  # AVX2 code: 14 = 5 + 5 + 4 (tail) positions
]


# every case as host code, two as AVX2 code too (8-lane blocks, other tiles)
@pytest.mark.parametrize("case, mcpu", [(c, None) for c in CASES]
                         + [(c, "haswell") for c in CASES[1::4]])
def test_merged_kernel_matches_numpy(case, mcpu):
    n, c, h, w, s, o, residual, dw_tail = case
    target = "llvm" if mcpu is None else f"llvm -mcpu={mcpu}"
    mod, params = _block(n, c, h, w, s, o, residual, dw_tail)
    assert _merged(_kernels(mod, params, target)) == 1
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    rules = {v.name: v.schedule_rule for v in lib.kernels.values() if v.anchor == DW}
    assert list(rules.values()) == ["depthwise_conv2d_NCHWc"], rules  # not the generic one
    import tvm

    x = rand((n, c, h, w), seed=7)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), _np_block(x, params, s, residual,
                                                                   dw_tail),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("knobs", [
    {"dwb": 2, "cg": 2, "rows": 2, "wb": 3},
    {"dwb": 16, "cg": 1, "rows": 1, "wb": 5},
    {"kc": 1},
])
def test_merged_kernel_knobs_change_the_schedule_not_the_result(knobs):
    mod, params = _block(1, 32, 16, 16, 1, 64)
    x = rand((1, 32, 16, 16), seed=8)
    with cpu.override_knobs(knobs), relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
        got = relay.create_executor("graph", mod, target="llvm", params=params).evaluate()(
            x).numpy()
    (k,) = [v for v in lib.kernels.values() if v.anchor == DW]
    assert k.schedule_rule == "depthwise_conv2d_NCHWc"
    np.testing.assert_allclose(got, _np_block(x, params, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("why, kwargs, shape", [
    ("1x1 with stride 2", {"pw_stride": 2}, (1, 16, 16, 16)),
    ("3x3 after the depthwise layer", {"pw_kernel": 3}, (1, 16, 16, 16)),
    ("a plane of 7 rows", {}, (1, 16, 7, 7)),
])
def test_pairs_that_keep_two_kernels(why, kwargs, shape):
    n, c, h, w = shape
    mod, params = _block(n, c, h, w, 1, 32, **kwargs)
    ks = _kernels(mod, params)
    assert _merged(ks) == 0, why
    assert sum(DW in k for k in ks) == 1 and sum(PW in k for k in ks) == 1


def test_depthwise_output_used_twice_is_not_merged():
    mod, params = _block(1, 16, 16, 16, 1, 16)
    main = mod["main"]
    dw_relu = main.body.args[0].args[0].args[0]  # relu(conv(relu(bias_add(dw)), ...) + b)
    assert dw_relu.op.name == "nn.relu"
    f = relay.Function(main.params, relay.Tuple([main.body, dw_relu]))
    assert _merged(_kernels(relay.IRModule.from_expr(f), params)) == 0


def test_config_and_gpu_targets_keep_two_kernels():
    mod, params = _block(1, 16, 16, 16, 1, 32)
    assert _merged(_kernels(mod, params)) == 1
    assert _merged(_kernels(mod, params, config={"relay.FuseOps.depthwise_pointwise":
                                                 False})) == 0
    # the NCHWc pair written by hand, fused under a CUDA target: left as two kernels
    import tvm

    x = relay.var("x", shape=(1, 2, 16, 16, 8))
    wd = relay.const(rand((2, 1, 3, 3, 1, 8)))
    wp = relay.const(rand((4, 2, 1, 1, 8, 8)))
    y = relay.nn.contrib_depthwise_conv2d_nchwc(x, wd, padding=(1, 1), groups=16, channels=16,
                                                kernel_size=(3, 3), data_layout="NCHW8c",
                                                kernel_layout="OIHW1i8o")
    y = relay.nn.contrib_conv2d_nchwc(y, wp, channels=32, kernel_size=(1, 1),
                                      data_layout="NCHW8c", kernel_layout="OIHW8i8o")
    m = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))

    def fused(target):
        with tvm.target.Target(target), relay.transform.PassContext(opt_level=3):
            out = relay.transform.FuseOps()(m)
        fns = [n for n in post_order(out["main"].body) if is_primitive(n)]
        return [[c.op.name for c in post_order(f.body) if isinstance(c, relay.Call)]
                for f in fns]

    assert _merged(fused("llvm")) == 1
    assert _merged(fused("cuda")) == 0


def test_merged_kernel_is_one_tuning_task_whose_space_has_both_parts_knobs():
    from relay_tvm import tune
    from relay_tvm.backend.target import make_target
    from relay_tvm.tune.space import knob_space

    mod, params = _block(1, 32, 16, 16, 1, 64)
    with relay.transform.PassContext(opt_level=3):
        tasks = tune.extract_tasks(mod, "llvm", params)
    (task,) = [t for t in tasks if t.anchor == DW]
    rule, space = knob_space(task, make_target("llvm"))
    assert rule == "depthwise_conv2d_NCHWc"
    cands = {n: c for n, c, _ in space}
    assert {"dwb", "cg", "rows", "wb"} <= set(cands)
    assert "rmajor" not in cands and cands["rfirst"] == [0]  # rows in parallel, one pass
    assert not [t for t in tasks if t.anchor == PW]  # no task of its own


def test_vm_runs_the_merged_kernel():
    mod, params = _block(1, 24, 17, 19, 2, 40)
    x = rand((1, 24, 17, 19), seed=9)
    with relay.transform.PassContext(opt_level=3):
        exe = relay.vm.compile(mod, target="llvm", params=params)
        got = relay.create_executor("vm", mod, target="llvm", params=params).evaluate()(x)
    anchors = sorted(k.anchor for k in exe.kernels.values())
    assert anchors == ["layout_transform", "layout_transform", DW]  # one conv kernel
    np.testing.assert_allclose(got.numpy(), _np_block(x, params, 2), rtol=1e-4, atol=1e-4)
