"""``tvm.relay.transform.infer_layout_utils`` (0.19): the result type of an operator's
``FInferCorrectLayout`` function.

ConvertLayout (:mod:`relay_tvm.transform.convert_layout`) calls a function registered with
:func:`relay_tvm.op.op.register_infer_correct_layout` before its built-in rule for the
operator, and so does AlterOpLayout where users' FTVMAlterOpLayout hooks change layouts (its
built-in x86 blocking keeps rules of its own).
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
        # None (tvm.tir.layout("")) is an undefined layout: the rule cannot say
        self.input_layouts = [None if x is None else str(x) for x in input_layouts]
        self.output_layouts = [None if x is None else str(x) for x in output_layouts]
        self.new_attrs = new_attrs

    def __repr__(self):
        return (f"InferCorrectLayoutOutput(input_layouts={self.input_layouts}, "
                f"output_layouts={self.output_layouts})")


__all__ = ["InferCorrectLayoutOutput"]
