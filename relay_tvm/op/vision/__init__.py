"""Vision operators (tvm.relay.vision, also ``relay.op.vision``): SSD's multibox operators,
box selection (get_valid_counts, non_max_suppression, all_class_non_max_suppression),
R-CNN's roi_align, roi_pool and proposal, and YOLO's reorg."""

from . import all_class_nms, multibox, nms, rcnn  # noqa: F401  (registers the operators)
from . import proposal as _proposal  # noqa: E402
from .all_class_nms import *  # noqa: F401,F403,E402
from .multibox import *  # noqa: F401,F403,E402
from .nms import *  # noqa: F401,F403,E402
from .proposal import proposal  # noqa: F401,E402
from .rcnn import *  # noqa: F401,F403,E402

__all__ = [*all_class_nms.__all__, *multibox.__all__, *nms.__all__, *_proposal.__all__,
           *rcnn.__all__]
