"""``TempOpAttr`` (tvm.relay.testing.temp_op_attr): an operator attribute (e.g. an
``"FTVMAlterOpLayout"`` hook) set inside a ``with`` block only. See
:mod:`relay_tvm.op.op_attrs`."""

from ..op.op_attrs import TempOpAttr, temp_op_attr  # noqa: F401

__all__ = ["TempOpAttr", "temp_op_attr"]
