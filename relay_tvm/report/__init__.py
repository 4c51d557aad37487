"""Reports on Relay programs for people: graph pictures (:func:`visualize`) and model
statistics (:func:`model_stats`). Built on the passes and the backend; imported by the CLI."""

from .graph import render_dot, to_dot, visualize
from .stats import ModelStats, model_stats

__all__ = ["visualize", "to_dot", "render_dot", "model_stats", "ModelStats"]
