"""XLA's rules per device on the simulated accelerator: cuDNN RNNs refuse it on a GPU (and the advice says
use_cudnn=False), auto-clustering's CPU flag only on a CPU, a TPU always compiles."""

from __future__ import annotations

import os

from tfturbo import findings as fc
from tfturbo.run_summary import RunSummary
from tfturbo.settings import XLA_CPU_AUTOCLUSTERING_FLAG, RunSettings


def _lstm_model():
    import keras

    inputs = keras.Input((12, 8))
    x = keras.layers.LSTM(16)(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2)(x))
    model.compile(optimizer="adam", loss="mse")
    return model


def test_a_cudnn_lstm_on_a_gpu_refuses_xla_and_the_advice_is_use_cudnn_false(accelerator):
    """Keras sets supports_jit=False on an LSTM once a GPU is listed (keras/src/layers/rnn/lstm.py). Before: the
    XLA_NOT_ACTIVE fix told the user to move text preprocessing into tf.data."""
    from trainer_backend.detectors.xla import jit_support_findings

    accelerator("GPU")
    model = _lstm_model()
    assert not model.layers[1].supports_jit  # Keras' own decision, on the simulated GPU
    (finding,) = jit_support_findings(model)
    assert finding.code == fc.XLA_NOT_ACTIVE
    assert "use_cudnn=False" in finding.fix and "text preprocessing" not in finding.fix
    assert "uses cuDNN" in finding.message


def test_the_xla_rung_that_did_not_take_effect_says_use_cudnn_false(accelerator):
    from tfturbo.tune.levers.xla import LEVER
    from trainer_backend.detectors.xla import jit_support_findings

    accelerator("GPU")
    finding = jit_support_findings(_lstm_model())[0].to_dict()
    why = LEVER.not_in_effect(RunSummary.from_dict({"settings": {"jit_compile": True}, "xla_active": False,
                                                    "findings": [finding]}))
    assert "what would enable it: use_cudnn=False on the LSTM/GRU layers" in why


def test_on_a_cpu_the_lstm_compiles_with_xla():
    model = _lstm_model()
    assert model.layers[1].supports_jit


def _run_args(*extra):
    from tfturbo.cli_args import build_backend_parser, parse_args

    return parse_args(build_backend_parser("trainer_backend"), ["run", "builtin:mlp", "--out", "x", *extra])


def test_auto_clustering_adds_the_cpu_flag_only_on_a_cpu(accelerator, monkeypatch):
    """Before: every auto-clustering run added --tf_xla_cpu_global_jit, on a GPU too (where it makes XLA compile
    the host's ops)."""
    from trainer_backend.__main__ import process_flags

    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    process_flags(_run_args("--xla-autoclustering"))
    assert XLA_CPU_AUTOCLUSTERING_FLAG in os.environ["TF_XLA_FLAGS"]  # this CPU
    monkeypatch.delenv("TF_XLA_FLAGS")
    accelerator("GPU")
    process_flags(_run_args("--xla-autoclustering"))
    assert XLA_CPU_AUTOCLUSTERING_FLAG not in os.environ.get("TF_XLA_FLAGS", "")


def test_the_recommended_auto_clustering_code_has_the_cpu_flag_only_for_a_cpu():
    from tfturbo.patch.document import ChangesPatch
    from tfturbo.tune.code_changes import recommended_patch

    base = RunSettings("builtin:mlp")
    rec = base.with_(xla_autoclustering=True)

    def code(device: str) -> str:
        return ChangesPatch(rec.label(), recommended_patch("builtin:mlp", rec, base, [], RunSummary(device=device))).text()

    on_gpu = code("GPU: NVIDIA A100-SXM4-80GB (compute capability 8.0)")
    on_cpu = code("CPU: AMD EPYC (2 cores)")
    assert XLA_CPU_AUTOCLUSTERING_FLAG not in on_gpu and '+tf.config.optimizer.set_jit("autoclustering")' in on_gpu
    assert XLA_CPU_AUTOCLUSTERING_FLAG in on_cpu and "+import os" in on_cpu


def test_a_tpu_has_no_xla_rung_and_its_runs_say_xla(accelerator):
    """A TPU compiles every step with XLA. Before: the XLA rung measured jit_compile=True against a "no XLA"
    baseline that does not exist there, and the runs were labelled and recorded without XLA."""
    from tfturbo.tune.levers.autoclustering import LEVER as AUTO
    from tfturbo.tune.levers.xla import LEVER as XLA
    from tfturbo.environment import Environment
    from tfturbo.tune.policy import StudyDecisions
    from tfturbo.tune.study import Rung
    from trainer_backend.commands.run import PreparedRun

    env = {"devices": [{"type": "CPU"}, {"type": "TPU", "name": "TPU:0"}]}
    policy = StudyDecisions([], ["mixed_bfloat16"], "", accelerator=Environment.from_dict(env).accelerator)
    settings = RunSettings("builtin:mlp", strategy="tpu", batch_size=128)
    policy.set_baseline(Rung(name="01-baseline", kind="baseline", settings=settings))
    (candidate,) = XLA.candidates(policy)
    assert candidate.skipped_reason and "a TPU always compiles" in str(candidate.skipped_reason)
    assert AUTO.candidates(policy) == []
    assert settings.label() == "float32 + XLA, batch 128"
    assert PreparedRun(settings, None, None, None, None, None).xla_active() is True
