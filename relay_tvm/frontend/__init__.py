"""Frontends: MXNet (Symbol, Gluon, exported files without MXNet) and legacy NNVM graphs."""

from .mxnet import from_mxnet  # noqa: F401
from .mxnet_params import load_ndarray_file, save_ndarray_file  # noqa: F401
from .nnvm import from_nnvm  # noqa: F401

__all__ = ["from_mxnet", "from_nnvm", "load_ndarray_file", "save_ndarray_file"]
