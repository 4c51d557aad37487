"""Analyses over Relay programs (tvm.relay.analysis)."""

from ..ir.functor import post_order_visit  # noqa: F401
from . import _ffi_api  # noqa: F401  (0.19's type solver test harness)
from .annotated_regions import AnnotatedRegion, AnnotatedRegionSet  # noqa: F401
from .basic_block import check_basic_block_normal_form  # noqa: F401
from .calibration import get_calibration_data  # noqa: F401
from .call_graph import CallGraph  # noqa: F401
from .dtypes import all_dtypes, check_constant  # noqa: F401
from .fake_quantized import list_fake_quantized_op_freqs  # noqa: F401
from .fc_transpose import search_fc_transpose  # noqa: F401,E402
from .free import (  # noqa: F401
    all_type_vars,
    all_vars,
    bound_type_vars,
    bound_vars,
    free_type_vars,
    free_vars,
)
from .kinds_and_ops import (  # noqa: F401,E402
    check_kind,
    extract_intermdeiate_expr,
    extract_intermediate_expr,
    list_op_freqs,
)
from .match_exhaustion import unmatched_cases  # noqa: F401
from .model_stats import (  # noqa: F401,E402
    Feature,
    count_layers,
    detect_feature,
    extract_fused_functions,
    get_total_mac_number,
)
from .structural import (  # noqa: F401
    assert_graph_equal,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from .well_formed import check_well_formed, well_formed  # noqa: F401
