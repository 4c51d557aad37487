"""Frontends: MXNet (Symbol, Gluon, exported files without MXNet) and legacy NNVM graphs."""

from .mxnet import from_mxnet  # noqa: F401
from .mxnet_params import load_ndarray_file, save_ndarray_file  # noqa: F401
from .nnvm import from_nnvm  # noqa: F401

__all__ = ["from_mxnet", "from_nnvm", "load_ndarray_file", "save_ndarray_file"]

# tvm.relay 0.19's other frontends: named so that a 0.19 script gets a clear error instead of a
# bare AttributeError. Values: the model format, and where the model can go instead.
_ONNX = "export it to ONNX for TVM Relax's tvm.relax.frontend.onnx.from_onnx"
_MISSING = {
    "from_onnx": ("ONNX", "use TVM Relax's tvm.relax.frontend.onnx.from_onnx"),
    "from_pytorch": ("PyTorch", "use TVM Relax's tvm.relax.frontend.torch "
                                "(from_exported_program, from_fx)"),
    "from_tflite": ("TFLite", "use TVM Relax's tvm.relax.frontend.tflite.from_tflite"),
    "from_tensorflow": ("TensorFlow", _ONNX),
    "from_keras": ("Keras", _ONNX),
    "from_caffe2": ("Caffe2", _ONNX),
    "from_coreml": ("Core ML", _ONNX),
    "from_darknet": ("Darknet", _ONNX),
    "from_paddle": ("PaddlePaddle", _ONNX),
    "from_oneflow": ("OneFlow", _ONNX),
    "from_caffe": ("Caffe", _ONNX),
}

#: tvm.relay 0.19's frontend modules relay_tvm lacks -> the function each one held; importing
#: ``tvm.relay.frontend.onnx`` (or ``relay_tvm.frontend.onnx``) raises
#: :class:`~relay_tvm.errors.ModuleNotProvidedError` with :func:`missing_module_message`.
MISSING_MODULES = {
    "onnx": "from_onnx",
    "pytorch": "from_pytorch",
    "pytorch_utils": "from_pytorch",
    "qnn_torch": "from_pytorch",
    "tensorflow": "from_tensorflow",
    "tensorflow_ops": "from_tensorflow",
    "tensorflow_parser": "from_tensorflow",
    "tensorflow2": "from_tensorflow",
    "tensorflow2_ops": "from_tensorflow",
    "tflite": "from_tflite",
    "tflite_flexbuffer": "from_tflite",
    "keras": "from_keras",
    "caffe": "from_caffe",
    "caffe2": "from_caffe2",
    "coreml": "from_coreml",
    "darknet": "from_darknet",
    "paddlepaddle": "from_paddle",
    "oneflow": "from_oneflow",
}


def _missing_message(what: str, func: str) -> str:
    fmt, instead = _MISSING[func]
    return (f"{what}: relay_tvm has only the MXNet (from_mxnet) and NNVM (from_nnvm) "
            f"frontends, not tvm.relay 0.19's {fmt} one; export the model to MXNet "
            f"(-symbol.json + .params) for from_mxnet, or {instead}")


def missing_module_message(fullname: str, name: str) -> str | None:
    """The message for importing ``fullname``, the 0.19 frontend module ``name`` (``"onnx"``)
    that relay_tvm lacks; ``None`` when ``name`` is no such module.

    ``from tvm.relay.frontend import from_onnx`` asks for a submodule ``from_onnx`` once the
    attribute is missing (Python turns the attribute's error into "cannot import name"): a
    missing frontend function gets its own message here too."""
    if name in _MISSING:
        return _missing_message(f"relay.frontend.{name}", name)
    func = MISSING_MODULES.get(name)
    return None if func is None else _missing_message(f"import {fullname} ({func})", func)


def __getattr__(name):
    if name in _MISSING:
        from ..errors import UnsupportedFrontendError

        raise UnsupportedFrontendError(_missing_message(f"relay.frontend.{name}", name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
