"""profile.json (tfturbo.profile): the categories, the document's round trip and tolerance, two profiles
compared, and the findings they raise (tfturbo.profile_findings)."""

from __future__ import annotations

import json

import pytest

from tfturbo import findings as fc
from tfturbo import profile as prof
from tfturbo.profile_findings import compare_findings, run_findings


@pytest.mark.parametrize("op_type, name, category", [
    ("_MklMatMul", "StatefulPartitionedCall/functional_1/dense_1/Tensordot/MatMul", prof.MATMUL),
    ("_MklNativeFusedMatMul", "sequential_1/dense_1/Relu", prof.MATMUL),
    ("Conv2DBackpropFilter", "gradient_tape/conv2d/Conv2D/Conv2DBackpropFilter", prof.MATMUL),
    ("_MklEinsum", "functional_1/multi_head_attention_1/einsum/Einsum", prof.ATTENTION),
    ("_MklSoftmax", "functional_1/multi_head_attention_1/Softmax", prof.ATTENTION),
    ("_MklBatchMatMulV2", "functional_1/multi_head_attention_1/query_1/MatMul", prof.MATMUL),  # a projection
    ("Mul", "gradient_tape/functional_1/layer_normalization_1/mul", prof.NORMALIZATION),
    ("FusedBatchNormV3", "model/bn/FusedBatchNormV3", prof.NORMALIZATION),
    ("Cast", "functional_1/dense_1/Cast", prof.CASTS),
    ("Dataset", "Iterator::Root::Prefetch", prof.INPUT),
    ("Transpose", "functional_1/x/transpose", prof.DATA_MOVEMENT),
    ("AddV2", "functional_1/add", prof.ELEMENTWISE),
    ("AssignSubVariableOp", "adam/AssignSubVariableOp", prof.OTHER),
    # issue 42: the time of XLA's compiled clusters is the step's compute, never input or "other"
    ("_XlaRun", "cluster_0/_XlaRun", prof.XLA_CLUSTERS),
    ("_XlaCompile", "cluster_0/_XlaCompile", prof.XLA_CLUSTERS),
    ("XlaLaunch", "StatefulPartitionedCall/XlaLaunch", prof.XLA_CLUSTERS),
    ("XlaLaunchV2", "one_step_on_data/XlaLaunchV2", prof.XLA_CLUSTERS),
])
def test_categories_a_user_understands(op_type, name, category):
    assert prof.categorize(op_type, name) == category


@pytest.mark.parametrize("hlo, category", [
    ("dot.3", prof.MATMUL), ("MatMul_1.26", prof.MATMUL), ("convolution.2", prof.MATMUL),
    ("transpose_copy_fusion.8", prof.DATA_MOVEMENT), ("convert_bitcast_fusion", prof.CASTS),
    ("subtract_exponential_fusion.1", prof.ELEMENTWISE), ("Iterator::Root::Prefetch", prof.INPUT),
])
def test_xla_hlo_op_categories(hlo, category):
    assert prof.categorize(hlo, hlo, prof.SOURCE_XLA_TRACE) == category


def profile(cats: dict[str, float], **kw) -> prof.Profile:
    rows = [(t, n, ms * 1000 * 10, 10, kw.pop(f"sixteen_{c}", None))
            for c, ms in cats.items() for t, n in [_EXAMPLE[c]]]
    return prof.build(rows, 10, prof.SOURCE_OP_STATS, **kw)


_EXAMPLE = {prof.MATMUL: ("MatMul", "functional_1/dense_1/MatMul"),
            prof.ATTENTION: ("Einsum", "functional_1/multi_head_attention_1/einsum/Einsum"),
            prof.NORMALIZATION: ("Mul", "functional_1/layer_normalization_1/mul"),
            prof.ELEMENTWISE: ("AddV2", "functional_1/add"), prof.CASTS: ("Cast", "functional_1/Cast"),
            prof.INPUT: ("Dataset", "Iterator::Root")}


def test_document_round_trips_through_the_run_directory(tmp_path):
    doc = profile({prof.MATMUL: 6.0, prof.ELEMENTWISE: 3.0, prof.CASTS: 1.0}, wall_ms_per_step=8.0)
    doc.save(tmp_path)
    again = prof.Profile.load(tmp_path)
    assert again.to_dict() == doc.to_dict()
    assert again.share(prof.MATMUL) == pytest.approx(0.6)
    assert again.headline() == "matmul/conv 60%, elementwise 30%, casts 10%"


def test_missing_corrupt_and_foreign_files_are_not_available(tmp_path):
    assert "no profile" in prof.Profile.load(tmp_path).reason
    (tmp_path / prof.FILE).write_text("{not json")
    corrupt = prof.Profile.load(tmp_path)
    assert not corrupt.available and "corrupt" in corrupt.reason
    (tmp_path / prof.FILE).write_text(json.dumps({"hello": 1}))
    assert not prof.Profile.load(tmp_path).available
    assert prof.Profile.load(tmp_path).headline().startswith("not available: ")


def test_a_newer_major_format_is_not_available_with_the_fix_and_an_older_one_is_read():
    d = profile({prof.MATMUL: 2.0}).to_dict()
    newer = prof.Profile.from_dict({**d, "v": prof.VERSION + 1})
    assert not newer.available and "newer tfturbo" in newer.reason and "upgrade tfturbo" in newer.reason
    assert prof.Profile.from_dict({k: v for k, v in d.items() if k != "v"}).available


def test_wrong_values_are_dropped_with_a_problem():
    d = profile({prof.MATMUL: 2.0}).to_dict()
    d["categories"]["bogus"] = 1.0
    d["categories"][prof.CASTS] = "lots"
    d["top_ops"].append({"type": "x"})
    d["sixteen_bit"] = "yes"
    doc = prof.Profile.from_dict(d)
    assert doc.available and set(doc.categories) == set(prof.CATEGORIES) - {prof.CASTS}
    assert len(doc.problems) == 2
    assert not doc.sixteen_bit["available"]


def test_change_per_category_adds_up_and_reads_as_a_sentence():
    base = profile({prof.MATMUL: 10.0, prof.ELEMENTWISE: 5.0, prof.CASTS: 0.05})
    run = profile({prof.MATMUL: 5.5, prof.ELEMENTWISE: 5.0, prof.CASTS: 1.0})
    change = prof.compare(base, run)
    assert sum(change.points(c) for c in change.changes) == pytest.approx(
        100 * (run.op_ms_per_step - base.op_ms_per_step) / base.op_ms_per_step)
    assert change.sentence() == "matmul/conv −45%, casts +6% of step"
    assert prof.compare(base, prof.Profile.unavailable("x")) is None


def test_matmul_mostly_float32_under_16bit_is_a_finding_and_clean_16bit_is_not():
    planted = profile({prof.MATMUL: 8.0, prof.ATTENTION: 1.0}, sixteen_matmul_conv=False,
                      sixteen_attention=True)
    planted.sixteen_bit = prof.sixteen_bit_from_ops(
        [("MatMul", "model/wide/MatMul", 8.0, 1, False), ("Einsum", "model/attention/einsum/Einsum", 1.0, 1, True)],
        prof.SOURCE_OP_STATS, "test")
    found = run_findings(planted, {"policy": "mixed_bfloat16"})
    assert fc.codes_of(found) == [fc.MATMUL_NOT_16BIT]
    assert "11%" in found[0].message and "model/wide/MatMul" in found[0].message
    assert run_findings(planted, {"policy": "float32"}) == []  # float32 is what was asked for
    clean = profile({prof.MATMUL: 8.0})
    clean.sixteen_bit = prof.sixteen_bit_from_ops([("MatMul", "m/d/MatMul", 8.0, 1, True)], prof.SOURCE_OP_STATS, "t")
    assert run_findings(clean, {"policy": "mixed_bfloat16"}) == []


def test_casts_share_threshold():
    assert fc.codes_of(run_findings(profile({prof.MATMUL: 8.5, prof.CASTS: 1.5}), {})) == [fc.CASTS_HEAVY]
    assert run_findings(profile({prof.MATMUL: 9.5, prof.CASTS: 0.5}), {}) == []


@pytest.mark.parametrize("host_ms, severity", [(0.2, None), (0.5, fc.INFO), (2.0, fc.WARNING)])
def test_host_overhead_bands_of_the_step(host_ms, severity):
    doc = profile({prof.MATMUL: 8.0})
    doc.step_breakdown = {"available": True, "step_ms": 10.0,
                          "ms": {"host_compute": host_ms / 2, "kernel_launch": host_ms / 2}}
    found = run_findings(doc, {})
    assert [f.severity for f in found] == ([severity] if severity else [])
    if severity:
        assert "steps_per_execution" in found[0].fix


def test_a_category_that_got_slower_under_16bit_names_its_layers():
    base = profile({prof.MATMUL: 10.0, prof.NORMALIZATION: 2.0})
    run = profile({prof.MATMUL: 5.0, prof.NORMALIZATION: 3.5})
    found = compare_findings(base, run, {"policy": "float32"}, {"policy": "mixed_bfloat16"})
    assert fc.codes_of(found) == [fc.OP_SLOWER]
    assert "normalization got slower under 16-bit" in found[0].message
    assert 'model.get_layer("layer_normalization").dtype_policy = keras.DTypePolicy("float32")' in found[0].fix
    assert compare_findings(base, run, {"policy": "float32"}, {"policy": "float32", "batch_size": 128}) == []
    small = profile({prof.MATMUL: 10.0, prof.NORMALIZATION: 2.2})
    assert compare_findings(base, small, {"policy": "float32"}, {"policy": "mixed_bfloat16"}) == []


def test_an_xla_run_against_one_without_xla_compares_its_totals_not_its_categories():
    """Issue 22 walk: "Where the time goes" under XLA read "−100% / +1473%": XLA fuses ops into clusters (the
    elementwise work inside a matmul's fusion leaves its category), so per-category changes across XLA and no XLA
    are not comparable. The totals are; each run's categories stay its own."""
    base = profile({prof.MATMUL: 5.0, prof.ATTENTION: 5.0, prof.NORMALIZATION: 2.0, prof.ELEMENTWISE: 2.0})
    xla = prof.build([("dot_add_fusion.1", "dot_add_fusion.1", 9.0e4, 10, None),
                      ("add_rsqrt_fusion", "add_rsqrt_fusion", 3.5e4, 10, None)], 10, prof.SOURCE_XLA_TRACE)
    assert xla.xla_compiled and not base.xla_compiled
    change = prof.compare(base, xla)
    assert not change.comparable and change.changes == [] and change.note == prof.NOT_COMPARABLE_NOTE
    assert change.sentence() == "op time 14.00 → 12.50 ms per step (−11%)"
    assert compare_findings(base, xla, {"jit_compile": False}, {"jit_compile": True}) == []
    # auto-clustering's launches in the op stats are XLA too: against an XLA trace, folded categories compare
    clustered = prof.build([("_XlaRun", "cluster_0/_XlaRun", 8.0e4, 10, None), ("MatMul", "dense/MatMul", 1.0e4, 10, None)],
                           10, prof.SOURCE_OP_STATS)
    assert clustered.xla_compiled and prof.compare(clustered, xla).comparable


def test_auto_clusterings_compiled_time_is_compute_not_input():
    """Issue 42: under XLA, compiled-cluster time read as "input 97%". The cluster launches are compute; the input
    share is the tf.data ops' alone."""
    doc = prof.build([("_XlaRun", "cluster_0/_XlaRun", 9.0e4, 10, None),
                      ("_XlaCompile", "cluster_0/_XlaCompile", 0.5e4, 10, None),
                      ("Dataset", "Iterator::Root::Prefetch", 0.5e4, 10, None)], 10, prof.SOURCE_OP_STATS)
    assert doc.share(prof.XLA_CLUSTERS) == pytest.approx(0.95) and doc.share(prof.INPUT) == pytest.approx(0.05)
    assert doc.ranked_categories()[0][0] == prof.XLA_CLUSTERS


def test_op_slower_is_never_raised_on_the_input_pipelines_ops():
    """Issue 42: OP_SLOWER on tf.data internals under XLA. Neither lever changes the input pipeline's ops (they
    run on tf.data's own threads); a compute category that got slower still raises it."""
    base = profile({prof.MATMUL: 10.0, prof.ELEMENTWISE: 4.0, prof.INPUT: 1.0})
    run = profile({prof.MATMUL: 10.0, prof.ELEMENTWISE: 4.0, prof.INPUT: 8.0})
    assert compare_findings(base, run, {"policy": "float32"}, {"policy": "mixed_bfloat16"}) == []
    slower = profile({prof.MATMUL: 10.0, prof.ELEMENTWISE: 9.0, prof.INPUT: 8.0})
    [found] = compare_findings(base, slower, {"policy": "float32"}, {"policy": "mixed_bfloat16"})
    assert found.data["category"] == prof.ELEMENTWISE
