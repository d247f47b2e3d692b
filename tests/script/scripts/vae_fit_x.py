"""A variational autoencoder as keras-io writes it ("Variational AutoEncoder"): a Sampling layer that adds
keras.random.normal noise, encoder and decoder models, a subclassed VAE with its own train_step, trained with
fit(x) -- no labels. `--validation` passes validation_data=x_val to fit() (the VAE then has a test_step)."""
import argparse

import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

parser = argparse.ArgumentParser()
parser.add_argument("--validation", action="store_true")
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


latent_dim = 2
encoder_inputs = keras.Input(shape=(16,))
x = layers.Dense(16, activation="relu")(encoder_inputs)
z_mean = layers.Dense(latent_dim, name="z_mean")(x)
z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")

latent_inputs = keras.Input(shape=(latent_dim,))
x = layers.Dense(16, activation="relu")(latent_inputs)
decoder_outputs = layers.Dense(16, activation="sigmoid")(x)
decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

    def vae_losses(self, data):
        z_mean, z_log_var, z = self.encoder(data)
        reconstruction = self.decoder(z)
        reconstruction_loss = ops.mean(ops.sum(keras.losses.binary_crossentropy(
            ops.expand_dims(data, -1), ops.expand_dims(reconstruction, -1)), axis=1))
        kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
        kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
        return reconstruction_loss + kl_loss, reconstruction_loss, kl_loss

    def _track(self, total, reconstruction, kl):
        self.total_loss_tracker.update_state(total)
        self.reconstruction_loss_tracker.update_state(reconstruction)
        self.kl_loss_tracker.update_state(kl)
        return {"loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result()}

    def train_step(self, data):
        with tf.GradientTape() as tape:
            total, reconstruction, kl = self.vae_losses(data)
        grads = tape.gradient(total, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        return self._track(total, reconstruction, kl)

    def test_step(self, data):
        return self._track(*self.vae_losses(data))


rng = np.random.default_rng(0)
digits = (rng.random((640, 16)) < rng.random((1, 16))).astype("float32")
vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam())
if args.validation:
    vae.fit(digits[:512], epochs=args.epochs, batch_size=32, validation_data=(digits[512:],))
else:
    vae.fit(digits, epochs=args.epochs, batch_size=32)
vae.save("vae.keras")  # never reached under tfturbo
