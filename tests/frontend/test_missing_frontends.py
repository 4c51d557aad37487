"""tvm.relay 0.19's frontends that relay_tvm lacks (ONNX, PyTorch, ...): a clear relay_tvm error
saying which frontends exist and where to go instead (from a new-user trial: a bare
AttributeError)."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError, UnsupportedFrontendError

MISSING = ["from_onnx", "from_pytorch", "from_tensorflow", "from_tflite", "from_keras",
           "from_caffe2", "from_coreml", "from_darknet", "from_paddle", "from_oneflow"]


@pytest.mark.parametrize("name", MISSING)
def test_a_missing_frontend_says_which_exist(name):
    with pytest.raises(UnsupportedFrontendError,
                       match=rf"relay\.frontend\.{name}: relay_tvm has only the MXNet "
                             rf"\(from_mxnet\) and NNVM \(from_nnvm\) frontends.*"
                             rf"export the model to MXNet.*tvm\.relax\.frontend\.") as e:
        getattr(relay.frontend, name)
    assert isinstance(e.value, RelayError)


def test_relax_suggestions_name_modules_that_exist():
    import importlib.util

    for name, module in [("from_onnx", "tvm.relax.frontend.onnx"),
                         ("from_pytorch", "tvm.relax.frontend.torch"),
                         ("from_tflite", "tvm.relax.frontend.tflite"),
                         ("from_keras", "tvm.relax.frontend.onnx")]:
        with pytest.raises(UnsupportedFrontendError,
                           match=rf"(use|ONNX for) TVM Relax's {module}\b"):
            getattr(relay.frontend, name)
        # the module is there (importing it may need torch / tflite, which need not be)
        assert importlib.util.find_spec(module) is not None


def test_keras_message_reads():
    with pytest.raises(UnsupportedFrontendError, match=r"from_mxnet, or export it to ONNX for "
                                                       r"TVM Relax's tvm\.relax\.frontend\.onnx"):
        _ = relay.frontend.from_keras


def test_feature_detection_and_other_names_stay_attribute_errors():
    # hasattr / getattr with a default keep working (the error is also an AttributeError)
    assert not hasattr(relay.frontend, "from_onnx")
    assert getattr(relay.frontend, "from_pytorch", None) is None
    with pytest.raises(AttributeError, match="has no attribute 'from_nothing'") as e:
        relay.frontend.from_nothing  # noqa: B018
    assert not isinstance(e.value, RelayError)
    assert relay.frontend.from_mxnet is not None and relay.frontend.from_nnvm is not None
