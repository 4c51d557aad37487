"""``relay.analysis.search_fc_transpose`` (tvm.relay 0.19's name): the analysis half of
:mod:`relay_tvm.transform.simplify_fc_transpose`, which defines it next to the rewrite it
guides; this module sits with ``transform`` in the layers (as ``model_stats`` does)."""

from ..transform.simplify_fc_transpose import search_fc_transpose

__all__ = ["search_fc_transpose"]
