"""tvm.relay 0.19's frontends that relay_tvm lacks (ONNX, PyTorch, ...): a clear relay_tvm error
saying which frontends exist and where to go instead (from a new-user trial: a bare
AttributeError)."""

import re

import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError, UnsupportedFrontendError

MISSING = ["from_onnx", "from_pytorch", "from_tensorflow", "from_tflite", "from_keras",
           "from_caffe2", "from_coreml", "from_darknet", "from_paddle", "from_oneflow",
           "from_caffe"]


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


@pytest.mark.parametrize("module, func, fmt", [
    ("onnx", "from_onnx", "ONNX"), ("pytorch", "from_pytorch", "PyTorch"),
    ("tensorflow2", "from_tensorflow", "TensorFlow"), ("paddlepaddle", "from_paddle",
                                                      "PaddlePaddle"), ("caffe", "from_caffe",
                                                                        "Caffe")])
def test_importing_a_missing_frontend_module_says_which_exist(module, func, fmt):
    """A new-user trial: ``import tvm.relay.frontend.onnx`` said only "No module named
    'tvm.relay.frontend.onnx'"."""
    import importlib
    import sys

    from relay_tvm.errors import ModuleNotProvidedError

    name = f"tvm.relay.frontend.{module}"
    with pytest.raises(ModuleNotProvidedError,
                       match=rf"^import {re.escape(name)} \({func}\): relay_tvm has only the "
                             rf"MXNet \(from_mxnet\) and NNVM \(from_nnvm\) frontends, not "
                             rf"tvm\.relay 0\.19's {fmt} one; export the model to MXNet") as e:
        importlib.import_module(name)
    assert isinstance(e.value, ImportError) and isinstance(e.value, RelayError)
    assert name not in sys.modules
    # relay_tvm's own name for the module: named by its 0.19 path too
    with pytest.raises(ModuleNotProvidedError, match=rf"^import {re.escape(name)} "):
        importlib.import_module(f"relay_tvm.frontend.{module}")


def test_from_import_of_a_missing_frontend_function_keeps_its_message():
    # Python turned the attribute's error into "cannot import name 'from_onnx'"
    from relay_tvm.errors import ModuleNotProvidedError

    with pytest.raises(ModuleNotProvidedError, match=r"^relay\.frontend\.from_onnx: relay_tvm "
                                                     r"has only the MXNet"):
        from tvm.relay.frontend import from_onnx  # noqa: F401
    with pytest.raises(ImportError, match="cannot import name 'from_nothing'") as e:
        from tvm.relay.frontend import from_nothing  # noqa: F401
    assert not isinstance(e.value, RelayError)
    from tvm.relay.frontend import from_mxnet, mxnet  # noqa: F401  (what exists still imports)


def test_from_import_of_a_missing_frontend_module_names_the_module_as_typed():
    """A new-user trial: ``from tvm.relay.frontend import onnx`` named
    ``relay_tvm.frontend.onnx`` (the import system joins "onnx" to the package's real name);
    the message names the 0.19 path."""
    from relay_tvm.errors import ModuleNotProvidedError

    with pytest.raises(ModuleNotProvidedError,
                       match=r"^import tvm\.relay\.frontend\.onnx \(from_onnx\): relay_tvm has"):
        from tvm.relay.frontend import onnx  # noqa: F401
    with pytest.raises(ModuleNotProvidedError,
                       match=r"^import tvm\.relay\.frontend\.pytorch \(from_pytorch\): "):
        from tvm.relay.frontend import pytorch as torch_frontend  # noqa: F401
    # the same module under relay_tvm's own name: named by its 0.19 path too
    with pytest.raises(ModuleNotProvidedError, match=r"^import tvm\.relay\.frontend\.onnx "):
        from relay_tvm.frontend import onnx  # noqa: F401,F811
