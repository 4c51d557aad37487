"""``tvm.relay.transform.infer_layout_utils`` (0.19): the result type of an operator's
``FInferCorrectLayout`` function.

relay_tvm's AlterOpLayout and ConvertLayout carry layouts through operators with their own
rules (see :mod:`relay_tvm.transform.layout`), not through per-operator FInferCorrectLayout
functions, so :func:`relay_tvm.op.op.register_infer_correct_layout` refuses a hook rather than
keep one that no pass would call. The class is here so that 0.19 code naming it imports.
"""

from __future__ import annotations


class InferCorrectLayoutOutput:
    """What an FInferCorrectLayout function returns (tvm.relay 0.19).

    Args:
        input_layouts: one layout (a string such as ``"NCHW"``, or ``""`` for any) per input.
        output_layouts: one layout per output.
        new_attrs: the operator's attributes in the new layouts.
    """

    def __init__(self, input_layouts, output_layouts, new_attrs):
        self.input_layouts = [str(x) for x in input_layouts]
        self.output_layouts = [str(x) for x in output_layouts]
        self.new_attrs = new_attrs

    def __repr__(self):
        return (f"InferCorrectLayoutOutput(input_layouts={self.input_layouts}, "
                f"output_layouts={self.output_layouts})")


__all__ = ["InferCorrectLayoutOutput"]
