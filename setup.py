"""relay_tvm: Relay, the functional IR for machine learning, on Apache TVM 0.27."""

from setuptools import find_packages, setup

setup(
    name="relay_tvm",
    version="0.1.0",
    description="Relay (Roesch et al. 2018) as a Python package on Apache TVM",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["relay_tvm", "relay_tvm.*"]),
    python_requires=">=3.10",  # dataclass(slots=True)
    install_requires=[
        "apache-tvm==0.27.0.post1",
        # ffi 0.1.15 makes TVM 0.27's meta_schedule segfault (ToJSONGraph); keep 0.1.14.post1.
        "apache-tvm-ffi==0.1.14.post1",
        "numpy>=1.23,<2.0",
        "tqdm",
        # autotuning (relay_tvm.tune): meta_schedule's runners, RPC tracker and cost model
        "cloudpickle",
        "psutil",
        "tornado",
        "xgboost",
    ],
    extras_require={
        # MXNet 1.9.1 is the reference for imported models; it needs numpy < 1.24.
        # onnx < 1.15 for mx.onnx.export_model (benchmarks/bench_mxnet.py's ONNX peers).
        "mxnet": ["mxnet==1.9.1", "numpy==1.23.5", "onnx==1.14.1"],
        # relay_tvm.visualize / relay-tvm show --graph render with Graphviz's `dot` program
        # (apt-get install graphviz); the package drives it (without it, dot is run directly).
        # MXNet 1.9.1 pins graphviz < 0.9 (and installs it), so no newer one is asked for.
        "viz": ["graphviz>=0.8.1"],
        "test": ["pytest>=7", "hypothesis>=6", "ruff"],
    },
    entry_points={"console_scripts": ["relay-tvm=relay_tvm.cli:main"]},
)
