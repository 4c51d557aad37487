#!/bin/sh
# Run TVM v0.19.0's tests/python/relay against relay_tvm, one file a process; prints
# passed/collected per file and the total. Usage:
#   tools/run_tvm019_relay_tests.sh PATH_TO_TVM_V0.19_CHECKOUT_OR_GIT_DIR [--files GLOB...] [--json OUT]
# Not run in CI: it needs TVM's v0.19.0 sources.
set -e
cd "$(dirname "$0")/.."
exec python tools/relay019_tests.py "$@"
