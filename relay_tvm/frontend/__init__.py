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
}


def __getattr__(name):
    if name in _MISSING:
        from ..errors import UnsupportedFrontendError

        fmt, instead = _MISSING[name]
        raise UnsupportedFrontendError(
            f"relay.frontend.{name}: relay_tvm has only the MXNet (from_mxnet) and NNVM "
            f"(from_nnvm) frontends, not tvm.relay 0.19's {fmt} one; export the model to MXNet "
            f"(-symbol.json + .params) for from_mxnet, or {instead}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
