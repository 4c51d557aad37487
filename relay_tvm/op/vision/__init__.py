"""Vision operators (tvm.relay.vision, also ``relay.op.vision``): SSD's multibox operators,
box selection (get_valid_counts, non_max_suppression, all_class_non_max_suppression),
R-CNN's roi_align, roi_pool and proposal, and YOLO's reorg."""

from . import all_class_nms, multibox, nms, rcnn  # noqa: F401  (registers the operators)
from .all_class_nms import *  # noqa: F401,F403
from .multibox import *  # noqa: F401,F403
from .nms import *  # noqa: F401,F403
from .rcnn import *  # noqa: F401,F403

__all__ = [*all_class_nms.__all__, *multibox.__all__, *nms.__all__, *rcnn.__all__]
