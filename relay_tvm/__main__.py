"""``python -m relay_tvm ...``: the ``relay-tvm`` command line (:mod:`relay_tvm.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
