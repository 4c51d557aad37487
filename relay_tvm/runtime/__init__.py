"""Running Relay programs: the reference interpreter, executors, and (from the backend) the
compiled graph module and VM."""

from . import graph_executor  # noqa: F401
from .executor import Executor, bind_params_by_name, create_executor  # noqa: F401
from .graph_executor import GraphModule, create, load_module  # noqa: F401
from .interpreter import Closure, ConstructorValue, Interpreter, RefValue  # noqa: F401
