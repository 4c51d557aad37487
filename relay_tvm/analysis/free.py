"""Variable analyses (free, bound and all variables, free type variables): defined in
:mod:`relay_tvm.ir.free`, which the IR itself needs, and exported here under the names of
``tvm.relay.analysis``."""

from ..ir.free import (  # noqa: F401
    all_type_vars,
    all_vars,
    bound_type_vars,
    bound_vars,
    free_type_vars,
    free_vars,
)
