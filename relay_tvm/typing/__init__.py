"""Type inference: unification, type relations and the inferencer."""

from .infer import InferTypeLocal, TypeInferencer, TypeSolver, infer_expr, infer_module  # noqa: F401
