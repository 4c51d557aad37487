"""``tvm.contrib.relay_viz`` (tvm.relay 0.19's graph visualizer) is not provided: importing it
raises :class:`~relay_tvm.errors.NotProvidedError` naming what to use instead (TVM's own
ImportError said only that the name is missing from ``tvm.contrib``)."""

from ..errors import NotProvidedError

raise NotProvidedError(
    "tvm.contrib.relay_viz (RelayVisualizer, its terminal and Graphviz plotters) is not "
    "provided by relay_tvm; print the module's text form (print(mod), "
    "mod.astext(show_meta_data=False)) or walk its nodes with "
    "relay.analysis.post_order_visit(mod['main'], fn) instead")
