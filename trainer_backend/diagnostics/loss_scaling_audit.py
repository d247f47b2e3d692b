"""Does a custom `train_step` scale its loss under mixed_float16?

Under mixed_float16, `compile()` wraps the optimizer in a LossScaleOptimizer
whose `apply_gradients` divides the gradients by the loss scale (32768 at
first). Keras' own train_step multiplies the loss by that scale
(`optimizer.scale_loss`); a train_step override that does not ends up
dividing unscaled gradients by 32768 and silently fails to learn (measured:
0.47 accuracy against 0.97 in float32 on the same data).

How it is decided: by running the user's `train_step` once, eagerly, on one
real batch, with a spy on `model.optimizer.scale_loss` — the step scaled its
loss if and only if the spy was called. Running the code answers what reading
it cannot (a helper method, a base class, a conditional). If the step cannot
run outside `model.fit` (it raised), the source of the method is searched for
`scale_loss` / `LossScaleOptimizer` instead, and the finding says so.
The probe trains the audit's own throw-away model one step; nothing else is touched.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from tfturbo.findings import CUSTOM_LOOP_NO_LOSS_SCALING, Finding

SCALING_WORDS = ("scale_loss", "LossScaleOptimizer", "get_scaled_loss")

FIX = """with tf.GradientTape() as tape:
    y_pred = self(x, training=True)
    loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
    scaled_loss = self.optimizer.scale_loss(loss)   # multiply by the dynamic loss scale
grads = tape.gradient(scaled_loss, self.trainable_variables)
self.optimizer.apply_gradients(zip(grads, self.trainable_variables))  # un-scales, skips non-finite steps
# or train in mixed_bfloat16, which needs no loss scaling: tfturbo run ... --policy mixed_bfloat16"""


def custom_train_step(model: Any) -> Callable | None:
    """The user's train_step override, or None when the model uses Keras' own."""
    import keras

    method = type(model).train_step
    return None if method is keras.Model.train_step else method


def _where(method: Callable) -> str:
    name = getattr(method, "__qualname__", "train_step")
    try:
        file = inspect.getsourcefile(method)
        line = inspect.getsourcelines(method)[1]
    except (OSError, TypeError):
        return name
    return f"{name} ({file}:{line})"


def _source_scales(method: Callable) -> bool | None:
    try:
        source = inspect.getsource(method)
    except (OSError, TypeError):
        return None
    return any(word in source for word in SCALING_WORDS)


def _run_with_spy(model: Any, batch: Any) -> bool:
    """Run one eager train_step; True if it called optimizer.scale_loss. Raises what the step raises."""
    optimizer = model.optimizer
    original = optimizer.scale_loss
    calls = []

    def spy(loss):
        calls.append(1)
        return original(loss)

    optimizer.scale_loss = spy
    try:
        model.train_step(batch)
    finally:
        del optimizer.scale_loss  # the class method shows through again
    return bool(calls)


def custom_loop_findings(model: Any, policy: str, batch: Any) -> list[Finding]:
    """CUSTOM_LOOP_NO_LOSS_SCALING for a train_step override under mixed_float16 that never scales."""
    method = custom_train_step(model)
    if policy != "mixed_float16" or method is None or model.optimizer is None:
        return []
    how = "ran one train_step with a spy on optimizer.scale_loss"
    try:
        scaled: bool | None = _run_with_spy(model, batch)
    except Exception as exc:  # noqa: BLE001 - the user's step may need model.fit's tf.function; read its source instead
        scaled = _source_scales(method)
        how = (f"train_step could not run outside fit ({type(exc).__name__}); "
               f"searched its source for {', '.join(SCALING_WORDS)}")
        if scaled is None:
            return []
    if scaled:
        return []
    where = _where(method)
    return [Finding(
        CUSTOM_LOOP_NO_LOSS_SCALING,
        f"{where} overrides train_step under mixed_float16 but never scales the loss: the "
        "LossScaleOptimizer divides gradients by the loss scale (32768) that was never applied, "
        "so the model barely learns",
        fix=FIX, where=where, data={"method": how})]
