"""The optimizers a training step really applies, found on the model (trainer_backend/optimizer_code.py)."""

from __future__ import annotations

import pytest

B, Z, D = 8, 4, 6


@pytest.fixture(scope="module")
def gan_class():
    import keras
    import tensorflow as tf

    class GAN(keras.Model):
        """keras-io's shape: its own compile() calls super().compile() with no optimizer, then keeps two."""

        def __init__(self):
            super().__init__()
            self.generator = keras.Sequential([keras.Input((Z,)), keras.layers.Dense(D)])
            self.discriminator = keras.Sequential([keras.Input((D,)), keras.layers.Dense(1)])

        def compile(self, d_optimizer, g_optimizer, loss_fn):
            super().compile()
            self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

        def call(self, x):
            return self.discriminator(x)

        def train_step(self, real):
            n = tf.shape(real)[0]
            with tf.GradientTape() as tape:
                fake = self.generator(tf.random.normal((n, Z)))
                d_loss = self.loss_fn(tf.zeros((n, 1)), self.discriminator(fake)) + \
                    self.loss_fn(tf.ones((n, 1)), self.discriminator(real))
            grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
            with tf.GradientTape() as tape:
                g_loss = self.loss_fn(tf.ones((n, 1)), self.discriminator(self.generator(tf.random.normal((n, Z)))))
            grads = tape.gradient(g_loss, self.generator.trainable_weights)
            self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
            return {"d_loss": d_loss, "g_loss": g_loss}

    return GAN


def _found_and_used(model, spec):
    from trainer_backend.optimizer_code import find_optimizers
    from trainer_backend.step_flops import trace_train_step

    found = find_optimizers(model)
    step = trace_train_step(model, spec, B)
    return found, found.used_by(step.captured()).summary_fields(), step


def test_a_gan_records_both_of_its_optimizers_with_their_rates_and_not_keras_placeholder(gan_class):
    import keras
    import tensorflow as tf

    from trainer_backend.optimizer_code import recording_compile

    with recording_compile():
        gan = gan_class()
        gan.compile(keras.optimizers.Adam(1e-4), keras.optimizers.Adam(2e-4),
                    keras.losses.BinaryCrossentropy(from_logits=True))
    assert type(gan.optimizer).__name__ == "RMSprop"  # what Keras set, and what was recorded before
    found, fields, step = _found_and_used(gan, tf.TensorSpec((None, D)))
    assert [(r["attribute"], r["class"], r["learning_rate"]) for r in fields["optimizers"]] == \
        [("d_optimizer", "Adam", pytest.approx(1e-4)), ("g_optimizer", "Adam", pytest.approx(2e-4))]
    assert fields["optimizer"] is None and fields["optimizer_not_found"] is None  # two: none is "the" optimizer
    # the step's FLOPs hold both models' forward and backward passes
    generator, discriminator = 2 * B * Z * D, 2 * B * D
    d_step = generator + 2 * discriminator + 2 * discriminator  # the fake and real passes, their weight gradients
    g_step = generator + discriminator + discriminator + generator  # through the discriminator to the generator
    assert step.flops().flops == pytest.approx(d_step + g_step, rel=0.10)


def test_a_step_that_applies_no_optimizer_found_says_so_instead_of_naming_the_placeholder(gan_class):
    import keras
    import tensorflow as tf

    from trainer_backend.optimizer_code import recording_compile

    outside = keras.optimizers.SGD(0.01)

    class Outside(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(x) - y))
            outside.apply_gradients(zip(tape.gradient(loss, self.trainable_weights), self.trainable_weights))
            return {"loss": loss}

    with recording_compile():
        model = Outside()
        model.compile()
    model(tf.zeros((1, D)))
    _, fields, _ = _found_and_used(model, (tf.TensorSpec((None, D)), tf.TensorSpec((None, 1))))
    assert fields["optimizers"] == [] and fields["optimizer"] is None
    assert fields["optimizer_not_found"] == ("no optimizer found on the model: its compile() got none, and its "
                                             "training step never applies the RMSprop Keras then sets")


def test_a_plain_model_keeps_its_one_optimizer_in_both_shapes_and_a_schedule_says_what_it_is():
    import keras
    import tensorflow as tf

    from trainer_backend.optimizer_code import recording_compile

    schedule = keras.optimizers.schedules.CosineDecay(3e-4, decay_steps=100)
    with recording_compile():
        model = keras.Sequential([keras.Input((D,)), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(schedule), loss="mse")
    _, fields, _ = _found_and_used(model, (tf.TensorSpec((None, D)), tf.TensorSpec((None, 1))))
    [record] = fields["optimizers"]
    assert record["attribute"] == "optimizer" and record["learning_rate"]["schedule"] == "CosineDecay"
    assert record["learning_rate"]["config"]["initial_learning_rate"] == pytest.approx(3e-4)
    assert fields["optimizer"]["schedule"] == "CosineDecay"  # the older shape, as the snippet reads it
    assert fields["optimizer"]["learning_rate"] == pytest.approx(3e-4)
