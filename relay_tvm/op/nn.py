"""Neural-network operators (tvm.relay.op.nn): the ``nn.*`` namespace.

The operators are defined by family, each module holding constructor, attributes, type relation,
NumPy reference kernel, TE compute and fusion pattern:

- :mod:`.nn_dense`: ``dense``, ``matmul``, ``batch_matmul``; :mod:`.nn_bitserial`:
  ``bitserial_dense``;
- :mod:`.nn_conv`: ``conv1d/2d/3d`` and ``conv1d/2d/3d_transpose``;
- :mod:`.nn_activation`: ``relu``, ``leaky_relu``, ``prelu``, ``softmax``, ``log_softmax``,
  ``bias_add``, ``dropout``;
- :mod:`.nn_norm`: ``batch_norm``, ``layer_norm``, ``instance_norm``, ``group_norm``, ``lrn``,
  ``l2_normalize``;
- :mod:`.nn_pool`: max/avg pooling in 1-D, 2-D and 3-D, global and adaptive pooling;
- :mod:`.nn_shape`: ``pad``, ``batch_flatten``, ``depth_to_space``, ``space_to_depth``,
  ``upsampling``;
- :mod:`.nn_spatial`: ``mirror_pad``, ``dilate``, ``space_to_batch_nd``, ``batch_to_space_nd``,
  ``upsampling3d``;
- :mod:`.nn_loss`: ``cross_entropy``, ``cross_entropy_with_logits``, ``nll_loss``;
- :mod:`.nn_grad`: gradient rules of the nn operators, ``max_pool2d_grad``, ``avg_pool2d_grad``.

``relay.nn.<name>`` is importable from here, as in tvm.relay.
"""

from __future__ import annotations

from ..ir.expr import Constant  # noqa: F401  (0.19's relay.nn namespace exposed it)
from . import (
    nn_activation,
    nn_bitserial,
    nn_conv,
    nn_dense,
    nn_grad,  # noqa: E402  (gradient rules and pooling gradients)
    nn_loss,
    nn_norm,
    nn_pool,
    nn_shape,
    nn_spatial,
    nn_vision,  # noqa: E402  (deformable_conv2d, correlation)
    nn_winograd,  # noqa: E402  (Winograd convolution)
)
from ._nn_common import TupleWrapper, pad_before_after
from .nn_activation import *  # noqa: F401,F403
from .nn_bitserial import *  # noqa: F401,F403
from .nn_contrib import contrib_conv2d_nchwc, contrib_depthwise_conv2d_nchwc  # noqa: F401
from .nn_conv import *  # noqa: F401,F403
from .nn_conv_grad import conv2d_backward_weight  # noqa: F401
from .nn_dense import *  # noqa: F401,F403
from .nn_dense_pack import contrib_dense_pack  # noqa: F401
from .nn_fifo import fifo_buffer  # noqa: F401
from .nn_grad import *  # noqa: F401,F403
from .nn_loss import *  # noqa: F401,F403
from .nn_norm import *  # noqa: F401,F403
from .nn_pool import *  # noqa: F401,F403
from .nn_shape import *  # noqa: F401,F403
from .nn_sparse import sparse_dense  # noqa: F401
from .nn_spatial import *  # noqa: F401,F403
from .nn_vision import *  # noqa: F401,F403
from .nn_winograd import *  # noqa: F401,F403


def pad4(padding, op_name="nn.conv2d"):
    """Relay's 2-D padding rules as ``(top, left, bottom, right)``: 1 value for all sides, 2 for
    (top/bottom, left/right), 4 as given."""
    before, after = pad_before_after(padding, 2, op_name)
    return before + after


__all__ = [
    *nn_dense.__all__,
    *nn_bitserial.__all__,
    *nn_conv.__all__,
    *nn_activation.__all__,
    *nn_norm.__all__,
    *nn_pool.__all__,
    *nn_shape.__all__,
    *nn_spatial.__all__,
    *nn_loss.__all__,
    *nn_grad.__all__,
    *nn_winograd.__all__,
    *nn_vision.__all__,
    "pad4",
    "TupleWrapper",
]
