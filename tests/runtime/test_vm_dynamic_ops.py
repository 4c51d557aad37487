"""dyn.image.resize2d, dyn.nn.pad, dyn.nn.upsampling and argwhere on the VM: against NumPy, the
interpreter and the static operators; one executable at two sizes; relay's dispatch to them;
DynamicToStatic before/expected; errors for bad inputs at inference and at run time;
relay.build's refusal."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import BuildError, InputError, TypeInferenceError


def _mod(f):
    return relay.IRModule.from_expr(f)


def _vm(f):
    return relay.vm.VirtualMachine(relay.vm.compile(_mod(f), target="llvm"), tvm.cpu())


def _interp(f):
    return relay.create_executor("debug", _mod(f)).evaluate()


def _i(v, dtype="int64"):
    return np.array(v, dtype)


def _infer(expr):
    return relay.transform.InferType()(_mod(relay.Function(relay.analysis.free_vars(expr),
                                                           expr)))["main"].body.checked_type


RNG = np.random.default_rng(0)


# ---- dispatch ----------------------------------------------------------------------------------


def test_relay_constructors_dispatch_on_a_computed_argument():
    x = relay.var("x", shape=(1, 3, 4, 5))
    s = relay.var("s", shape=(2,), dtype="int32")
    w = relay.var("w", shape=(4, 2), dtype="int64")
    h = relay.var("h", shape=(), dtype="float32")
    assert relay.image.resize2d(x, s).op.name == "dyn.image.resize2d"
    assert relay.image.resize2d(x, relay.const(_i([6, 7]))).op.name == "image.resize2d"
    assert relay.nn.pad(x, w).op.name == "dyn.nn.pad"
    assert relay.nn.pad(x, relay.const(_i([[0, 0]] * 4))).op.name == "nn.pad"
    assert relay.nn.upsampling(x, h, 2.0).op.name == "dyn.nn.upsampling"
    assert relay.nn.upsampling(x, relay.const(2.0), 3).op.name == "nn.upsampling"
    a = relay.Any()
    assert _infer(relay.image.resize2d(x, s)) == relay.TensorType((1, 3, a, a), "float32")
    assert _infer(relay.image.resize2d(relay.var("y", shape=(2, 4, 5, 3)), s, layout="NHWC",
                                       out_dtype="float16")) == \
        relay.TensorType((2, a, a, 3), "float16")
    assert _infer(relay.nn.pad(x, w)) == relay.TensorType((a, a, a, a), "float32")
    assert _infer(relay.nn.upsampling(x, h, 2.0)) == relay.TensorType((1, 3, a, a), "float32")
    assert _infer(relay.argwhere(x)) == relay.TensorType((a, 4), "int32")


def test_text_format_round_trip():
    x = relay.var("x", shape=(relay.Any(), 3, 4, 5))
    s = relay.var("s", shape=(2,), dtype="int64")
    w = relay.var("w", shape=(4, 2), dtype="int64")
    h = relay.var("h", shape=(), dtype="float32")
    f = relay.Function([x, s, w, h], relay.Tuple([
        relay.image.resize2d(x, s, method="cubic", cubic_alpha=-0.75),
        relay.nn.pad(x, w, h, "edge"), relay.nn.upsampling(x, h, 2.0, align_corners=True),
        relay.argwhere(x)]))
    mod = relay.transform.InferType()(_mod(f))
    back = relay.transform.InferType()(relay.parse(mod.astext(show_meta_data=True)))
    assert relay.analysis.structural_equal(back["main"], mod["main"])


# ---- dyn.image.resize2d ------------------------------------------------------------------------


def test_dyn_resize2d_one_executable_two_sizes_equals_static_and_interpreter():
    """NCHW data of Any batch: VM == interpreter == the static image.resize2d built per size."""
    from relay_tvm.runtime import GraphModule

    x = relay.var("x", shape=(relay.Any(), 2, 5, 6))
    s = relay.var("s", shape=(2,), dtype="int64")
    for method, mode in (("linear", "half_pixel"), ("cubic", "align_corners")):
        f = relay.Function([x, s], relay.image.resize2d(x, s, method=method,
                                                        coordinate_transformation_mode=mode))
        vm, ref = _vm(f), _interp(f)
        for n, size in ((1, (9, 4)), (3, (2, 11))):
            xv = RNG.standard_normal((n, 2, 5, 6)).astype("float32")
            got = vm.run(xv, _i(size)).numpy()
            assert got.shape == (n, 2, *size)
            np.testing.assert_allclose(got, ref(xv, _i(size)).numpy(), rtol=1e-5, atol=1e-5)
            xs = relay.var("x", shape=(n, 2, 5, 6))
            static = relay.Function([xs], relay.image.resize2d(
                xs, size, method=method, coordinate_transformation_mode=mode))
            g = GraphModule(relay.build(_mod(static), target="llvm")["default"](tvm.cpu()))
            g.set_input("x", xv)
            g.run()
            np.testing.assert_allclose(got, g.get_output(0).numpy(), rtol=1e-5, atol=1e-5)


def test_dyn_resize2d_nearest_nhwc_against_numpy():
    """nearest_neighbor, asymmetric: output pixel i reads input floor(i * in / out)."""
    x = relay.var("x", shape=(1, 4, 6, 3))
    s = relay.var("s", shape=(2,), dtype="int32")
    f = relay.Function([x, s], relay.image.resize2d(
        x, s, layout="NHWC", method="nearest_neighbor",
        coordinate_transformation_mode="asymmetric", rounding_method="floor"))
    vm, ref = _vm(f), _interp(f)
    xv = RNG.standard_normal((1, 4, 6, 3)).astype("float32")
    for oh, ow in ((8, 3), (3, 13)):
        rows = np.floor(np.arange(oh) * 4 / oh + 1e-5).astype(int)
        cols = np.floor(np.arange(ow) * 6 / ow + 1e-5).astype(int)
        want = xv[:, rows][:, :, cols]
        np.testing.assert_array_equal(vm.run(xv, _i([oh, ow], "int32")).numpy(), want)
        np.testing.assert_array_equal(ref(xv, _i([oh, ow], "int32")).numpy(), want)


def test_dyn_resize2d_float_size_must_be_whole():
    """tvm.relay 0.19 took a float32 size tensor; whole values work, others are refused (not
    truncated), on the VM, the interpreter and by DynamicToStatic."""
    x = relay.var("x", shape=(1, 1, 2, 3))
    s = relay.var("s", shape=(2,), dtype="float32")
    f = relay.Function([x, s], relay.image.resize2d(x, s, method="nearest_neighbor"))
    vm, ref = _vm(f), _interp(f)
    xv = np.arange(6, dtype="float32").reshape(1, 1, 2, 3)
    want = _interp(relay.Function([x], relay.image.resize2d(x, (4, 3),
                                                            method="nearest_neighbor")))(xv)
    np.testing.assert_array_equal(vm.run(xv, _i([4, 3], "float32")).numpy(), want.numpy())
    with pytest.raises(InputError, match="dyn.image.resize2d .*whole numbers >= 1"):
        vm.run(xv, _i([4.5, 3], "float32"))
    with pytest.raises(InputError, match="whole numbers"):
        ref(xv, _i([4.5, 3], "float32"))
    half = relay.Function([x], relay.image.resize2d(x, relay.add(
        relay.const(_i([4.5, 3], "float32")), relay.const(np.float32(0)))))
    got = relay.transform.DynamicToStatic()(_mod(half))
    assert got["main"].body.op.name == "dyn.image.resize2d"


# ---- dyn.nn.pad --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_dyn_pad_against_numpy_two_sizes(mode):
    x = relay.var("x", shape=(relay.Any(), 4))
    w = relay.var("w", shape=(2, 2), dtype="int32")
    v = relay.var("v", shape=(), dtype="float32")
    f = relay.Function([x, w, v], relay.nn.pad(x, w, v, mode))
    vm, ref = _vm(f), _interp(f)
    for n, widths in ((5, [[2, 1], [0, 3]]), (2, [[0, 0], [1, 2]])):
        xv = RNG.standard_normal((n, 4)).astype("float32")
        kw = {"constant_values": -7.5} if mode == "constant" else {}
        want = np.pad(xv, widths, mode=mode, **kw)
        args = (xv, _i(widths, "int32"), np.array(-7.5, "float32"))
        np.testing.assert_array_equal(vm.run(*args).numpy(), want)
        np.testing.assert_array_equal(ref(*args).numpy(), want)


def test_dyn_pad_float64_vm_as_tvm019_runs_it():
    """tvm.relay 0.19's way (its dyn level-2 test): pad_value var, int64 widths, create_executor
    per enabled target, then clearing te_compiler's engine (an empty one here)."""
    from relay_tvm.testing import enabled_targets

    x = relay.var("x", shape=(2, 7), dtype="float64")
    w = relay.var("w", shape=(2, 2), dtype="int64")
    v = relay.var("v", shape=(), dtype="float64")
    f = relay.Function([x, w, v], relay.nn.pad(x, w, v))
    xv = RNG.standard_normal((2, 7))
    for target, dev in enabled_targets():
        run = relay.create_executor("vm", mod=_mod(f), device=dev, target=target).evaluate()
        got = run(xv, _i([[1, 4], [2, 2]]), np.array(4.0)).numpy()
        np.testing.assert_array_equal(got, np.pad(xv, [[1, 4], [2, 2]], constant_values=4.0))
        relay.backend.te_compiler.get().clear()
    assert relay.backend.te_compiler.get().items() == []


def test_dyn_pad_int_data_and_rank_3_with_create_executor_vm():
    x = relay.var("x", shape=(2, 3, 2), dtype="int32")
    w = relay.var("w", shape=(3, 2), dtype="int64")
    f = relay.Function([x, w], relay.op.dyn.nn.pad(x, w, 5))
    run = relay.create_executor("vm", mod=_mod(f), target="llvm").evaluate()
    xv = np.arange(12, dtype="int32").reshape(2, 3, 2)
    for widths in ([[1, 0], [0, 2], [3, 1]], [[0, 0], [4, 0], [0, 0]]):
        np.testing.assert_array_equal(run(xv, _i(widths)).numpy(),
                                      np.pad(xv, widths, constant_values=5))


# ---- dyn.nn.upsampling -------------------------------------------------------------------------


def test_dyn_upsampling_nearest_against_numpy_repeat():
    """Integer scales with nearest_neighbor repeat each pixel (np.repeat); 1.5 picks
    floor(i / 1.5)."""
    x = relay.var("x", shape=(2, 3, 4, 5))
    sh = relay.var("sh", shape=(), dtype="float32")
    sw = relay.var("sw", shape=(), dtype="float64")
    f = relay.Function([x, sh, sw], relay.nn.upsampling(x, sh, sw))
    vm, ref = _vm(f), _interp(f)
    xv = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    want = np.repeat(np.repeat(xv, 2, axis=2), 3, axis=3)
    args = (xv, np.array(2, "float32"), np.array(3, "float64"))
    np.testing.assert_array_equal(vm.run(*args).numpy(), want)
    np.testing.assert_array_equal(ref(*args).numpy(), want)
    rows = np.floor(np.arange(6) * 4 / 6 + 1e-5).astype(int)  # round(4 * 1.5) = 6 rows
    got = vm.run(xv, np.array(1.5, "float32"), np.array(1.0, "float64")).numpy()
    np.testing.assert_array_equal(got, xv[:, :, rows])


def test_dyn_upsampling_bilinear_nhwc_equals_static():
    x = relay.var("x", shape=(1, 5, 4, 2))
    sh = relay.var("sh", shape=(), dtype="float32")
    f = relay.Function([x, sh], relay.nn.upsampling(x, sh, 2.5, layout="NHWC",
                                                     method="bilinear", align_corners=True))
    vm = _vm(f)
    xv = RNG.standard_normal((1, 5, 4, 2)).astype("float32")
    for scale in (2.0, 0.75):  # exact in float32: round(5 * 0.75) = 4
        static = relay.Function([x], relay.nn.upsampling(x, scale, 2.5, layout="NHWC",
                                                         method="bilinear", align_corners=True))
        want = _interp(static)(xv).numpy()
        got = vm.run(xv, np.array(scale, "float32")).numpy()
        assert got.shape == want.shape == (1, int(np.floor(5 * scale + 0.5)), 10, 2)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_dyn_upsampling3d_against_numpy_and_static():
    x = relay.var("x", shape=(relay.Any(), 2, 2, 3, 2))
    sd = relay.var("sd", shape=(), dtype="float32")
    f = relay.Function([x, sd], relay.nn.upsampling3d(
        x, sd, 2.0, 1.0, coordinate_transformation_mode="asymmetric"))
    assert f.body.op.name == "dyn.nn.upsampling3d"
    vm, ref = _vm(f), _interp(f)
    for n, scale in ((1, 2.0), (3, 3.0)):
        xv = RNG.standard_normal((n, 2, 2, 3, 2)).astype("float32")
        want = np.repeat(np.repeat(xv, int(scale), axis=2), 2, axis=3)  # nearest, asymmetric
        np.testing.assert_array_equal(vm.run(xv, np.array(scale, "float32")).numpy(), want)
        np.testing.assert_array_equal(ref(xv, np.array(scale, "float32")).numpy(), want)
    lin = relay.Function([x, sd], relay.nn.upsampling3d(x, sd, 1.5, 2.0, layout="NCDHW",
                                                        method="trilinear"))
    xv = RNG.standard_normal((1, 2, 2, 3, 2)).astype("float32")
    got = _vm(lin).run(xv, np.array(2.5, "float32")).numpy()
    want = _interp(relay.Function([x], relay.nn.upsampling3d(x, 2.5, 1.5, 2.0,
                                                             method="trilinear")))(xv).numpy()
    assert got.shape == want.shape == (1, 2, 5, 5, 4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---- argwhere ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
def test_argwhere_against_numpy_two_sizes(dtype):
    x = relay.var("x", shape=(relay.Any(), 3, 2), dtype=dtype)
    f = relay.Function([x], relay.argwhere(x))
    vm, ref = _vm(f), _interp(f)
    for n in (4, 1, 0):
        xv = (RNG.integers(0, 3, size=(n, 3, 2)) * (RNG.random((n, 3, 2)) < 0.5)).astype(dtype)
        got = vm.run(xv).numpy()
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.argwhere(xv))
        np.testing.assert_array_equal(ref(xv).numpy(), np.argwhere(xv))


def test_argwhere_counts_nan_and_negative_zero_is_zero():
    x = relay.var("x", shape=(5,), dtype="float32")
    xv = np.array([np.nan, -0.0, 0.0, 1e-30, -np.inf], "float32")
    got = _vm(relay.Function([x], relay.argwhere(x))).run(xv).numpy()
    np.testing.assert_array_equal(got, np.argwhere(xv))
    assert got.ravel().tolist() == [0, 3, 4]


def test_argwhere_output_feeds_a_dynamic_chain():
    """argwhere's rows gather the nonzero values: x[argwhere(x)] == x[x != 0]."""
    x = relay.var("x", shape=(relay.Any(),), dtype="float32")
    idx = relay.argwhere(x)
    f = relay.Function([x], relay.gather_nd(x, relay.transpose(idx)))
    vm = _vm(f)
    for n in (7, 3):
        xv = np.where(RNG.random(n) < 0.5, 0, RNG.standard_normal(n)).astype("float32")
        np.testing.assert_array_equal(vm.run(xv).numpy(), xv[xv != 0])


# ---- dyn.expand_dims, dyn.squeeze -------------------------------------------------------------


def test_dyn_expand_dims_and_squeeze_against_numpy():
    x = relay.var("x", shape=(relay.Any(), 1, 3))
    a = relay.var("a", shape=(), dtype="int32")
    axes = relay.var("axes", shape=(1,), dtype="int64")
    f = relay.Function([x, a, axes], relay.Tuple([relay.expand_dims(x, a, 2),
                                                  relay.squeeze(x, axes)]))
    assert [c.op.name for c in f.body.fields] == ["dyn.expand_dims", "dyn.squeeze"]
    vm, ref = _vm(f), _interp(f)
    for n, axis, sq in ((2, 0, [1]), (4, -1, [-2]), (1, 3, [0]), (1, -4, [1])):
        xv = RNG.standard_normal((n, 1, 3)).astype("float32")
        start = axis + 4 if axis < 0 else axis
        want = (np.expand_dims(xv, (start, start + 1)), np.squeeze(xv, tuple(sq)))
        for run in (vm.run, ref):
            got = run(xv, np.array(axis, "int32"), _i(sq))
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g.numpy(), w)
    for axis, sq, msg in ((5, [1], "axis 5 is out of range"), (0, [2], "are not all 1"),
                          (0, [7], "out of range for rank 3")):
        args = (np.ones((2, 1, 3), "float32"), np.array(axis, "int32"), _i(sq))
        with pytest.raises(InputError, match=r"dyn\.(expand_dims|squeeze) .*out of range"):
            vm.run(*args)
        with pytest.raises(InputError, match=msg):
            ref(*args)
    y = relay.var("y", shape=(1, 1, 2))
    with pytest.raises(InputError, match="repeat an axis"):
        _interp(relay.Function([y, axes], relay.squeeze(y, relay.concatenate(
            [axes, axes], 0))))(np.ones((1, 1, 2), "float32"), _i([0]))
    with pytest.raises(TypeInferenceError, match=r"dyn.squeeze: axes has 2 entries; expected 1 "
                                                 r"to 1"):
        _infer(relay.squeeze(relay.var("z", shape=(1, 1)), relay.var("b", shape=(2,),
                                                                      dtype="int32")))


def test_gradients_of_dyn_reshape_squeeze_expand_dims_by_finite_differences():
    """The gradient of each (with respect to data; the shape/axis argument gets zeros) against
    finite differences of the interpreter's result, as tvm.relay 0.19's dyn test checks it."""
    from relay_tvm.testing import check_grad, run_infer_type

    x = relay.var("x", shape=(2, 1, 3))
    xv = RNG.standard_normal((2, 1, 3)).astype("float32")
    for make, arg in ((relay.reshape, _i([3, 2])), (relay.squeeze, _i([1])),
                      (relay.expand_dims, np.array(-1, "int32"))):
        v = relay.var("v", shape=arg.shape, dtype=str(arg.dtype))
        f = run_infer_type(relay.Function([x, v], make(x, v)))
        assert f.body.op.name.startswith("dyn.")
        check_grad(f, inputs=[xv, arg], test_inputs=[xv], eps=1e-3)


# ---- DynamicToStatic ---------------------------------------------------------------------------


def test_dynamic_to_static_before_expected():
    x = relay.var("x", shape=(1, 2, 4, 5))

    def c(v, dtype):
        return relay.const(np.array(v, dtype))

    before = relay.Function([x], relay.Tuple([
        relay.op.dyn.image.resize2d(x, relay.shape_of(relay.zeros((6, 3), "float32")),
                                    c([0.0] * 4, "float32"), method="nearest_neighbor"),
        relay.op.dyn.nn.pad(x, relay.add(c([[0, 0], [1, 1], [2, 0], [0, 3]], "int32"),
                                         c(0, "int32")), c(1.5, "float32"), "edge"),
        relay.op.dyn.nn.upsampling(x, c(2.0, "float64"), c(1.5, "float32"), method="bilinear",
                                   align_corners=True),
        relay.op.dyn.nn.upsampling3d(relay.expand_dims(x, 2), c(3.0, "float32"),
                                     c(1.0, "float64"), c(0.5, "float32")),
        relay.op.dyn.expand_dims(x, c(-1, "int32"), 2),
        relay.op.dyn.squeeze(x, c([0], "int64"))]))
    expected = relay.Function([x], relay.Tuple([
        relay.image.resize2d(x, (6, 3), method="nearest_neighbor"),
        relay.nn.pad(x, ((0, 0), (1, 1), (2, 0), (0, 3)), relay.const(np.array(1.5, "float32")),
                     "edge"),
        relay.nn.upsampling(x, 2.0, 1.5, method="bilinear", align_corners=True),
        relay.nn.upsampling3d(relay.expand_dims(x, 2), 3.0, 1.0, 0.5),
        relay.expand_dims(x, -1, 2), relay.squeeze(x, [0])]))
    got = relay.transform.DynamicToStatic()(_mod(before))
    want = relay.transform.InferType()(_mod(expected))
    assert relay.analysis.structural_equal(got["main"], want["main"])
    xv = RNG.standard_normal((1, 2, 4, 5)).astype("float32")
    for g, b in zip(relay.create_executor("debug", got).evaluate()(xv), _interp(before)(xv)):
        np.testing.assert_allclose(g.numpy(), b.numpy(), rtol=1e-6)


def test_dynamic_to_static_leaves_computed_arguments():
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(2, 2), dtype="int32")
    f = relay.Function([x, w], relay.Tuple([relay.nn.pad(x, w), relay.argwhere(x)]))
    got = relay.transform.DynamicToStatic()(_mod(f))
    want = relay.transform.InferType()(_mod(f))
    assert relay.analysis.structural_equal(got["main"], want["main"])


# ---- errors ------------------------------------------------------------------------------------


def test_type_errors_name_the_argument():
    x = relay.var("x", shape=(1, 3, 4, 5))
    cases = [
        (relay.image.resize2d(x, relay.var("s", shape=(1, 2), dtype="int64")),
         r"dyn.image.resize2d: size must be a 1-D tensor of 2 values .*got shape \(1, 2\)"),
        (relay.image.resize2d(x, relay.var("s", shape=(3,), dtype="int64")),
         r"size must be a 1-D tensor of 2 values"),
        (relay.image.resize2d(x, relay.var("s", shape=(2,), dtype="bool")),
         r"size must have an integer or float dtype, got bool"),
        (relay.image.resize2d(relay.var("y", shape=(3, 4, 5)), relay.var("s", shape=(2,),
                                                                         dtype="int32")),
         r"dyn.image.resize2d: data must be 4-d NCHW"),
        (relay.nn.pad(x, relay.var("w", shape=(3, 2), dtype="int32")),
         r"dyn.nn.pad: pad_width must be of shape \(4, 2\) .*got shape \(3, 2\)"),
        (relay.nn.pad(x, relay.var("w", shape=(8,), dtype="int32")),
         r"pad_width must be of shape \(4, 2\)"),
        (relay.nn.pad(x, relay.var("w", shape=(4, 2), dtype="float32")),
         r"pad_width must have an integer dtype"),
        (relay.nn.pad(x, relay.var("w", shape=(4, 2), dtype="int32"), pad_mode="wrap"),
         r"pad_mode 'wrap'"),
        (relay.nn.upsampling(x, relay.var("h", shape=(1,), dtype="float32")),
         r"dyn.nn.upsampling: scale_h must be a scalar, got shape \(1,\)"),
        (relay.nn.upsampling(x, relay.var("h", shape=(), dtype="int32")),
         r"scale_h must have a float dtype"),
        (relay.nn.upsampling3d(x, relay.var("d", shape=(), dtype="float32")),
         r"dyn.nn.upsampling3d: data must be 5-d NCDHW"),
        (relay.nn.upsampling(x, relay.var("h", shape=(), dtype="float32"), method="cubic"),
         r"dyn.nn.upsampling: method 'cubic'"),
        (relay.argwhere(relay.var("z", shape=(), dtype="bool")),
         r"argwhere: condition must have rank >= 1"),
    ]
    for expr, msg in cases:
        with pytest.raises(TypeInferenceError, match=msg):
            _infer(expr)


def test_bad_values_at_run_time_raise_input_error():
    """A size <= 0, a negative pad width, a reflect width past the axis, a scale <= 0: the VM's
    shape function refuses them (before allocating) and so does the interpreter."""
    x = relay.var("x", shape=(1, 1, 3, 4))
    s = relay.var("s", shape=(2,), dtype="int64")
    w = relay.var("w", shape=(4, 2), dtype="int64")
    h = relay.var("h", shape=(), dtype="float32")
    f = relay.Function([x, s, w, h], relay.Tuple([
        relay.image.resize2d(x, s), relay.nn.pad(x, w, pad_mode="reflect"),
        relay.nn.upsampling(x, h, 1.0)]))
    vm, ref = _vm(f), _interp(f)
    xv = np.ones((1, 1, 3, 4), "float32")
    good = (_i([2, 2]), _i([[0, 0]] * 4), np.array(2.0, "float32"))
    assert [o.shape for o in vm.run(xv, *good)] == [(1, 1, 2, 2), (1, 1, 3, 4), (1, 1, 6, 4)]
    bad = [
        (0, _i([-2, 3]), "dyn.image.resize2d", "size must be positive", "whole numbers >= 1"),
        (0, _i([3, 0]), "dyn.image.resize2d", "size must be positive", "whole numbers >= 1"),
        (1, _i([[0, 0], [0, 0], [0, -1], [0, 0]]), "dyn.nn.pad", "negative width on axis 2",
         "pad width .* is negative"),
        (1, _i([[0, 0], [0, 0], [3, 0], [0, 0]]), "dyn.nn.pad", "reflect padding of 3",
         "in mode 'reflect' each width must also be smaller than its axis"),
        (2, np.array(-1.0, "float32"), "dyn.nn.upsampling", "scales must be positive",
         r"must be > 0 and large enough"),
        (2, np.array(0.1, "float32"), "dyn.nn.upsampling", "empty output",
         r"must be > 0 and large enough"),
    ]
    for k, value, op, ref_msg, vm_msg in bad:
        args = list(good)
        args[k] = value
        with pytest.raises(InputError, match=rf"{op} .*{vm_msg}"):
            vm.run(xv, *args)
        with pytest.raises(InputError, match=ref_msg):
            ref(xv, *args)


def test_negative_dyn_zeros_shape_is_input_error_not_bad_alloc():
    s = relay.var("s", shape=(2,), dtype="int64")
    vm = _vm(relay.Function([s], relay.zeros(s, "float32")))
    assert vm.run(_i([2, 3])).shape == (2, 3)
    with pytest.raises(InputError, match=r"dyn.zeros .*valid shape for output 0 \(dimension 0\)"):
        vm.run(_i([-2, 3]))


def test_build_rejects_them_and_points_to_vm():
    """Static inputs, a data-dependent result: refused by name (was a TypeError in memory
    planning), also when the dynamic value only feeds another operator."""
    x = relay.var("x", shape=(1, 3, 4, 5))
    for expr, op in (
            (relay.image.resize2d(x, relay.var("s", shape=(2,), dtype="int64")),
             "dyn.image.resize2d"),
            (relay.nn.pad(x, relay.var("w", shape=(4, 2), dtype="int64")), "dyn.nn.pad"),
            (relay.nn.upsampling(x, relay.var("h", shape=(), dtype="float32")),
             "dyn.nn.upsampling"),
            (relay.argwhere(x), "argwhere"),
            (relay.sum(relay.argwhere(x)), "argwhere"),
            (relay.reshape(x, relay.var("n", shape=(2,), dtype="int64")), "dyn.reshape")):
        f = relay.Function(relay.analysis.free_vars(expr), expr)
        with pytest.raises(BuildError, match=rf"result of {op}: .*relay.vm.compile"):
            relay.build(_mod(f), target="llvm")
