"""FLOPs of the training step that really runs, against hand counts (trainer_backend/step_flops.py).

Hand counts are of the step TensorFlow runs: forward, then for each layer the weight gradient and, except
for the layer that reads the model's input (no gradient is taken for data), the input gradient — two FLOPs
per multiply-add. A recurrent layer's matmuls run once per time step, forward and backward.
"""

from __future__ import annotations

import pytest

B = 16


def _count(model, x_shape, y_shape, x_dtype="float32"):
    import tensorflow as tf

    from trainer_backend.step_flops import count_train_step

    spec = (tf.TensorSpec((None, *x_shape), x_dtype), tf.TensorSpec((None, *y_shape)))
    return count_train_step(model, spec, B)


def _close(counted, hand):
    assert counted is not None and abs(counted / hand - 1) < 0.10, (counted, hand)


def _rnn_hand(gates: int, steps: int, features: int, units: int, directions: int = 1) -> float:
    """Per step and direction: the input and recurrent matmuls forward, their weight gradients, and the
    recurrent input's gradient (the sequence's own gradient is never taken); then a Dense(1) head."""
    per_step = 2 * B * gates * units * (features + units) + 2 * B * gates * units * (features + 2 * units)
    return steps * directions * per_step + 6 * B * units * directions


@pytest.fixture(scope="module")
def keras():
    import keras

    return keras


def _compiled(keras, model, loss="mse"):
    model.compile(optimizer="adam", loss=loss)
    return model


def test_dense_and_conv2d_match_their_hand_counts(keras):
    layers = keras.layers
    d, h, c = 64, 128, 10
    dense = _compiled(keras, keras.Sequential([keras.Input((d,)), layers.Dense(h, activation="relu"), layers.Dense(c)]))
    _close(_count(dense, (d,), (c,)).flops, 4 * B * d * h + 6 * B * h * c)
    conv = _compiled(keras, keras.Sequential([keras.Input((16, 16, 3)), layers.Conv2D(8, 3, padding="same"),
                                              layers.Conv2D(16, 3, padding="same"), layers.GlobalAveragePooling2D(),
                                              layers.Dense(10)]))
    first, second = 2 * B * 16 * 16 * 8 * 27, 2 * B * 16 * 16 * 16 * 9 * 8
    counted = _count(conv, (16, 16, 3), (10,))
    _close(counted.flops, 2 * first + 3 * second + 6 * B * 16 * 10)
    assert {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"} <= set(counted.by_op)


def test_transposed_and_depthwise_convolutions_are_counted(keras):
    layers = keras.layers
    model = _compiled(keras, keras.Sequential([
        keras.Input((8, 8, 4)), layers.Conv2DTranspose(8, 3, strides=2, padding="same"),
        layers.DepthwiseConv2D(3, padding="same"), layers.GlobalAveragePooling2D(), layers.Dense(1)]))
    transpose = 2 * B * 8 * 8 * 4 * 9 * 8  # every input pixel × tap × output channel
    depthwise = 2 * B * 16 * 16 * 8 * 9
    _close(_count(model, (8, 8, 4), (1,)).flops, 2 * transpose + 3 * depthwise + 6 * B * 8)


def test_lstm_gru_and_bidirectional_are_counted_per_time_step(keras):
    """One model with the three side by side (one trace per length keeps the test quick); the old count was
    the same at both lengths."""
    layers = keras.layers
    features, units = 8, 16
    counts = {}
    for steps in (8, 32):
        inputs = keras.Input((steps, features))
        joined = layers.Concatenate()([layers.LSTM(units)(inputs), layers.GRU(units)(inputs),
                                       layers.Bidirectional(layers.LSTM(units))(inputs)])
        model = _compiled(keras, keras.Model(inputs, layers.Dense(1)(joined)))
        counts[steps] = _count(model, (steps, features), (1,)).flops
        head = 6 * B * 4 * units  # Dense(1) over the 4 × units joined
        hand = sum(_rnn_hand(gates, steps, features, units, directions) - 6 * B * units * directions
                   for gates, directions in ((4, 1), (3, 1), (4, 2))) + head
        _close(counts[steps], hand)
    assert counts[32] / counts[8] == pytest.approx(4, rel=0.02)


def test_multi_head_attention_counts_its_own_einsums(keras):
    steps, width, heads, key_dim = 32, 32, 4, 8
    inputs = keras.Input((steps, width))
    attended = keras.layers.MultiHeadAttention(heads, key_dim)(inputs, inputs)
    model = _compiled(keras, keras.Model(inputs, keras.layers.Dense(1)(
        keras.layers.GlobalAveragePooling1D()(attended))))
    inner = heads * key_dim
    qkv = 3 * 2 * B * steps * width * inner  # read the model's input: no input gradient
    out = 2 * B * steps * inner * width
    attention = 2 * (2 * B * heads * steps * steps * key_dim)  # QKᵀ and the weights times V
    counted = _count(model, (steps, width), (1,))
    _close(counted.flops, 2 * qkv + 3 * out + 3 * attention + 6 * B * width)
    assert counted.by_op.get("BatchMatMulV2", 0) + counted.by_op.get("Einsum", 0) > 3 * attention


def test_an_embedding_lookup_costs_no_matmul(keras):
    vocab, width, classes = 500, 16, 10
    model = _compiled(keras, keras.Sequential([
        keras.Input((12,), dtype="int32"), keras.layers.Embedding(vocab, width),
        keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(classes)]))
    _close(_count(model, (12,), (classes,), "int32").flops, 6 * B * width * classes)


def test_a_functional_model_with_dict_inputs_and_two_weighted_outputs(keras):
    layers = keras.layers
    image, tabular = keras.Input((8, 8, 2), name="image"), keras.Input((6,), name="tabular")
    seen = layers.GlobalAveragePooling2D()(layers.Conv2D(4, 3, padding="same")(image))
    joined = layers.Concatenate()([seen, layers.Dense(12)(tabular)])
    hidden = layers.Dense(16, activation="relu")(joined)
    model = keras.Model({"image": image, "tabular": tabular},
                        {"label": layers.Dense(3, name="label")(hidden), "value": layers.Dense(1, name="value")(hidden)})
    model.compile(optimizer="adam", loss={"label": keras.losses.CategoricalCrossentropy(from_logits=True),
                                          "value": "mse"}, loss_weights={"label": 1.0, "value": 0.2})
    import tensorflow as tf

    from trainer_backend.step_flops import count_train_step

    spec = ({"image": tf.TensorSpec((None, 8, 8, 2)), "tabular": tf.TensorSpec((None, 6))},
            {"label": tf.TensorSpec((None, 3)), "value": tf.TensorSpec((None, 1))})
    conv, tab = 2 * B * 8 * 8 * 4 * 18, 2 * B * 6 * 12
    hidden_mm, heads = 2 * B * 16 * 16, 2 * B * 16 * 4
    _close(count_train_step(model, spec, B).flops, 2 * conv + 2 * tab + 3 * hidden_mm + 3 * heads)


def test_keras_scan_and_fori_loop_bodies_are_counted_per_iteration(keras):
    import keras as k

    class Recurrence(k.layers.Layer):
        def __init__(self, reverse=False):
            super().__init__()
            self.reverse = reverse

        def build(self, shape):
            self.w = self.add_weight((shape[-1], shape[-1]))

        def call(self, x):
            def step(carry, xt):
                carry = k.ops.tanh(k.ops.matmul(carry, self.w) + xt)
                return carry, carry

            xs = k.ops.transpose(x, (1, 0, 2))
            return k.ops.scan(step, k.ops.zeros_like(xs[0]), xs, reverse=self.reverse)[0]

    class Repeat(k.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight((shape[-1], shape[-1]))

        def call(self, x):
            return k.ops.fori_loop(0, 5, lambda i, h: k.ops.tanh(k.ops.matmul(h, self.w)), x)

    steps, width = 6, 8
    inputs = k.Input((steps, width))
    x = k.layers.Dense(width)(inputs)
    forward, backward = Recurrence()(x), Recurrence(reverse=True)(x)
    joined = k.layers.Concatenate()([backward, Repeat()(forward)])
    model = _compiled(keras, k.Model(inputs, k.layers.Dense(1)(joined)))
    matmul = 2 * B * width * width  # one multiply of a carry by a square weight
    hand = 2 * steps * matmul + 2 * steps * 3 * matmul + 5 * 3 * matmul + 6 * B * 2 * width
    _close(_count(model, (steps, width), (1,)).flops, hand)


def test_a_loop_of_unknown_length_gives_no_count_and_says_why(keras):
    import tensorflow as tf

    class UntilSmall(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight((shape[-1], shape[-1]))

        def call(self, x):
            return tf.while_loop(lambda h: tf.reduce_sum(h) > 0.0, lambda h: tf.tanh(h @ self.w) - 1.0, [x],
                                 maximum_iterations=7)[0]

    model = _compiled(keras, keras.Sequential([keras.Input((8,)), keras.layers.Dense(8), UntilSmall(),
                                               keras.layers.Dense(1)]))
    counted = _count(model, (8,), (1,))
    assert counted.flops is None and "no length known before it runs" in counted.unknown


def test_sequences_of_varying_length_give_no_count_and_say_why(keras):
    model = _compiled(keras, keras.Sequential([keras.Input((None, 4)), keras.layers.LSTM(8), keras.layers.Dense(1)]))
    counted = _count(model, (None, 4), (1,))
    assert counted.flops is None and counted.unknown.startswith("the training data's shapes vary from batch to batch")


def test_mfu_is_not_known_with_the_reason_when_the_flops_are_not():
    from trainer_backend.ceiling import utilization

    out = utilization(None, 50.0, {"float32": 1e11}, "float32",
                      flops_unknown="the loop 'rnn/while' has no length known")
    assert out["mfu"] is None and out["mfu_unknown"] == ("the step's FLOPs are not known: the loop 'rnn/while' "
                                                         "has no length known")
    assert utilization(1e9, 50.0, {"float32": 1e11}, "float32")["mfu_unknown"] is None
