"""An input shape missing its batch axis: the error names the weight the graph disagrees with
and points at the input shape given as the likely cause (from a new-user trial)."""

import numpy as np
import pytest

import relay_tvm as relay

mx = pytest.importorskip("mxnet")


def test_missing_batch_axis_points_at_the_input_shape():
    d = mx.sym.var("data")
    y = mx.sym.Convolution(d, num_filter=16, kernel=(3, 3), name="conv0")
    y = mx.sym.Convolution(y, num_filter=8, kernel=(3, 3), name="conv1")
    args, _, _ = y.infer_shape(data=(1, 3, 16, 16))
    params = {n: mx.nd.array(np.ones(s, "float32"))
              for n, s in zip(y.list_arguments(), args) if n != "data"}
    mod, _ = relay.frontend.from_mxnet(y, shape={"data": (1, 3, 16, 16)}, arg_params=params)
    assert tuple(mod["main"].body.checked_type.shape) == (1, 8, 12, 12)
    with pytest.raises(relay.errors.ConversionError,
                       match=r"(?s)'conv0_weight'.*has shape \(16, 3, 3, 3\).*hint: .*"
                             r"shape=\{'data': \(3, 16, 16\)\}.*missing batch axis"):
        relay.frontend.from_mxnet(y, shape={"data": (3, 16, 16)}, arg_params=params)
