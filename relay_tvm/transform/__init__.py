"""Passes over Relay modules (tvm.relay.transform)."""

from . import fake_quantization_to_integer  # noqa: F401  (0.19's module name)
from .annotate_spans import AnnotateSpans  # noqa: F401
from .annotate_target import AnnotateTarget  # noqa: F401
from .canonicalize import CanonicalizeCast, CanonicalizeOps  # noqa: F401
from .change_batch import ChangeBatch  # noqa: F401
from .combine_parallel import (  # noqa: F401
    BatchingOps,
    CombineParallelBatchMatmul,
    CombineParallelConv2D,
    CombineParallelDense,
)
from .convert_layout import LayoutConfig  # noqa: F401
from .cse import EliminateCommonSubexpr  # noqa: F401
from .dead_code import DeadCodeElimination  # noqa: F401
from .defunctionalization import Defunctionalization  # noqa: F401
from .defuse_ops import DefuseOps  # noqa: F401
from .div_to_mul import DivToMul  # noqa: F401
from .dynamic_to_static import DynamicToStatic  # noqa: F401
from .fake_quantization_to_integer import FakeQuantizationToInteger  # noqa: F401
from .fast_math import FastMath  # noqa: F401
from .flatten_atrous_conv import FlattenAtrousConv  # noqa: F401
from .fold_constant import FoldConstant, FoldConstantExpr  # noqa: F401
from .fold_explicit_padding import FoldExplicitPadding  # noqa: F401
from .fold_scale_axis import (  # noqa: F401
    BackwardFoldScaleAxis,
    FoldScaleAxis,
    ForwardFoldScaleAxis,
)
from .fuse_ops import FuseOps  # noqa: F401
from .gradient import FirstOrderGradient, gradient  # noqa: F401
from .infer_type import InferType, InferTypeLocal  # noqa: F401
from .lambda_lift import (  # noqa: F401
    EtaExpand,
    Inline,
    InlineGlobals,
    LambdaLift,
    RemoveUnusedFunctions,
)
from .layout import AlterOpLayout, ConvertLayout  # noqa: F401
from .lazy_gradient_init import LazyGradientInit  # noqa: F401
from .legalize import Legalize  # noqa: F401
from .merge_compiler_regions import MergeCompilerRegions  # noqa: F401
from .merge_composite import MergeComposite  # noqa: F401
from .mixed_precision import ToMixedPrecision  # noqa: F401
from .normal_forms import (  # noqa: F401
    ToANormalForm,
    ToANormalFormExpr,
    ToBasicBlockNormalForm,
    ToGraphNormalForm,
)
from .partial_eval import PartialEvaluate  # noqa: F401
from .partition_graph import ManifestAlloc, PartitionGraph  # noqa: F401
from .pass_infra import (  # noqa: F401
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassTimingInstrument,
    Sequential,
    build_config,
    function_pass,
    get_pass,
    list_passes,
    module_pass,
    register_pass,
)
from .pipeline import default_pipeline  # noqa: F401
from .recast import recast  # noqa: F401
from .simplify_expr import SimplifyExpr  # noqa: F401
from .simplify_fc_transpose import SimplifyFCTranspose  # noqa: F401
from .simplify_inference import SimplifyInference  # noqa: F401
from .span_check import SpanCheck  # noqa: F401
from .split_args import SplitArgs  # noqa: F401
from .to_cps import ToCPS, UnCPS, to_cps, un_cps  # noqa: F401

# The pass registry (pass_infra.get_pass): every pass of this package under its Relay name.
for _factory in (
    AlterOpLayout, AnnotateSpans, BackwardFoldScaleAxis, CanonicalizeOps,
    CombineParallelBatchMatmul, CombineParallelConv2D, CombineParallelDense, ConvertLayout, DeadCodeElimination, EliminateCommonSubexpr, EtaExpand,
    FastMath, FirstOrderGradient, FoldConstant, FoldScaleAxis, ForwardFoldScaleAxis, FuseOps,
    Inline, InlineGlobals, InferType, LambdaLift, LazyGradientInit, Legalize, MergeComposite,
    PartialEvaluate, RemoveUnusedFunctions, SimplifyExpr, SimplifyInference, SpanCheck,
    ToANormalForm, ToBasicBlockNormalForm, ToGraphNormalForm, ToMixedPrecision,
    FakeQuantizationToInteger, DynamicToStatic, ToCPS, UnCPS, AnnotateTarget,
    MergeCompilerRegions, SimplifyFCTranspose, DefuseOps, CanonicalizeCast, FlattenAtrousConv,
    FoldExplicitPadding, SplitArgs, PartitionGraph,
):
    register_pass(_factory.__name__, _factory)
del _factory


# tvm.relay 0.19 passes relay_tvm does not provide -> why (and what to use instead); asking
# for one is a NotProvidedError (an AttributeError: hasattr stays False)
from ..errors import not_provided_getattr  # noqa: E402

_MEMORY = ("relay_tvm has no Relay memory dialect: its graph and VM code generators plan, "
           "allocate and free memory themselves (relay_tvm.backend.memory_plan, vm_codegen)")
_COLLAGE = ("it belongs to Collage / BYOC outlining, which relay_tvm does not provide "
            "(partition for an external compiler with AnnotateTarget, MergeCompilerRegions and "
            "PartitionGraph)")
NOT_PROVIDED = {
    "PlanDevices": "heterogeneous execution (on_device / device_copy) is not provided: a build "
                   "runs every kernel on its one target (and the host)",
    "DenseToSparse": "use relay.nn.sparse_dense on weights in BSR form (relay.nn.sparse_dense("
                     "x, (data, indices, indptr))) instead of the weight-pruning rewrite of "
                     "data_dep_optimization.bsr_dense",
    "Conv2dToSparse": "sparse convolutions (nn.sparse_conv2d) are not provided",
    "FlexibleShapeDispatch": "the VM runs Any dimensions directly (kernels with symbolic sizes "
                             "and shape functions): compile the Any-shaped module with "
                             "relay.vm.compile, no dispatch to static buckets is needed",
    "ManifestLifetimes": _MEMORY,
    "RemoveStandaloneReshapes": _MEMORY + " (a reshape of a value is a view there already)",
    "AnnotateUsedMemory": _MEMORY,
    "AnnotateMemoryScope": _MEMORY,
    "SimplifyExprPostAlterOp": "its rewrites (identities, reshape chains, casts, clips) are "
                               "a subset of SimplifyExpr's: run relay.transform.SimplifyExpr()",
    "CollagePartition": _COLLAGE,
    "CapturePostDfsIndexInSpans": _COLLAGE,
    "InlineCompilerFunctionsBoundTo": _COLLAGE,
    "OutlineCompilerFunctionsWithExistingGlobalSymbols": _COLLAGE,
    "MarkCompilerFunctionsAsExtern": _COLLAGE,
}

NOT_PROVIDED = {name: f"relay.transform.{name} (tvm.relay 0.19) is not provided: {why}"
                for name, why in NOT_PROVIDED.items()}
__getattr__ = not_provided_getattr(__name__, NOT_PROVIDED)
