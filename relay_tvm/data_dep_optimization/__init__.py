"""Optimizations that change parameter values too (tvm.relay 0.19's
``relay.data_dep_optimization``): :mod:`.simplify_fc_transpose`. The block-sparse conversions
(``bsr_dense``, ``bsr_conv2d``) are not provided; the operator they produced,
``relay.nn.sparse_dense`` (CSR and BSR), is, so a sparse layer can be written with it directly.
Reading either name raises :class:`~relay_tvm.errors.NotProvidedError` saying so."""

from ..errors import not_provided_getattr
from . import simplify_fc_transpose  # noqa: F401

_NOT_PROVIDED = {
    "bsr_dense": "relay.data_dep_optimization.bsr_dense (rewriting nn.dense with sparse "
                 "weights into nn.sparse_dense) is not provided by relay_tvm; build the sparse "
                 "layer with relay.nn.sparse_dense(x, (data, indices, indptr)) from the "
                 "weight's BSR fields (scipy.sparse.bsr_matrix(w, blocksize)) instead",
    "bsr_conv2d": "relay.data_dep_optimization.bsr_conv2d is not provided by relay_tvm (it has "
                  "no sparse convolution); keep nn.conv2d with dense weights",
}

__getattr__ = not_provided_getattr(__name__, _NOT_PROVIDED)
