"""Autotuning with ``tvm.s_tir.meta_schedule`` (tvm.relay 0.19's ``relay_integration`` names).

::

    import relay_tvm as relay
    from relay_tvm import tune

    db = tune.tune_relay(mod, params, "llvm", "tuning/", max_trials_global=200)
    lib = tune.compile_relay(db, mod, "llvm", params)        # or relay.build(..., database=db)
    with db, relay.transform.PassContext(opt_level=3,
                                         config={"relay.backend.use_meta_schedule": True}):
        lib = relay.build(mod, "llvm", params=params)         # tvm.relay 0.19's idiom

Measurement is local (:func:`~relay_tvm.tune.measure.make_runner`) or over TVM RPC
(``runner=tune.RPCSettings("127.0.0.1", 9190, "key")``); ``relay-tvm tune`` is the command.
"""

from .measure import RPCSettings, check_rpc
from .progress import print_progress
from .report import DatabaseReport, database_report
from .tuner import compile_relay, extract_tasks, request_stop, tune_relay
from .workdir import load_database

__all__ = ["extract_tasks", "tune_relay", "compile_relay", "load_database", "RPCSettings",
           "request_stop", "check_rpc", "print_progress", "database_report", "DatabaseReport"]
