import os
import sys

# MXNet's oneDNN deconvolution rejects some target_shape/adj cases that its reference kernel
# computes; the reference is what the importer must match.
os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
sys.path.insert(0, os.path.dirname(__file__))
