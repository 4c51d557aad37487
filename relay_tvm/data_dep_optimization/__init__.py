"""Optimizations that change parameter values too (tvm.relay 0.19's
``relay.data_dep_optimization``): :mod:`.simplify_fc_transpose`. The block-sparse conversions
(``bsr_dense``, ``bsr_conv2d``) are not provided: TVM 0.27 has no sparse kernels
(``tvm.topi.sparse``)."""

from . import simplify_fc_transpose  # noqa: F401
