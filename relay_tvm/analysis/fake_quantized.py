"""``list_fake_quantized_op_freqs`` (tvm.relay 0.19's ``relay.analysis`` analysis).

A fake-quantized region is what :mod:`relay_tvm.transform.fake_quantization_to_integer` would
convert: the float operators between ``qnn.dequantize`` inputs and a ``qnn.quantize``. The
analysis counts, by operator name, the operators inside every region that the pass accepts
(a region holding an operator the pass cannot convert is not counted); dequantize and quantize
themselves are not counted. It needs no type inference.
"""

from __future__ import annotations


def list_fake_quantized_op_freqs(mod) -> dict:
    """``{operator name: number of calls}`` over the fake-quantized regions of ``mod``.

    Args:
        mod: an ``IRModule`` (typed or not); every function is searched.

    Returns:
        a dict from operator name (``"nn.conv2d"``) to its count; a node reachable from two
        regions counts once per region, as in 0.19.
    """
    from ..ir.expr import Call
    from ..ir.functor import post_order
    from ..transform.fake_quantization_to_integer import _FQ2I, _name, _NotConvertible

    finder = _FQ2I(hard_fail=False)
    freqs: dict = {}
    for _, func in mod.functions.items():
        for node in post_order(func):
            if _name(node) != "qnn.quantize":
                continue
            try:
                region = finder._region(node.args[0])
            except _NotConvertible:
                continue
            for n in region:
                name = _name(n)
                if type(n) is Call and name is not None and name != "qnn.dequantize":
                    freqs[name] = freqs.get(name, 0) + 1
    return freqs


__all__ = ["list_fake_quantized_op_freqs"]
