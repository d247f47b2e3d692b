"""Knowledge distillation as the Keras 3 example writes it (keras.io/examples/vision/knowledge_distillation),
on small synthetic data: the teacher trains with one fit(), then a Distiller whose loss lives in its own
compute_loss (its compile() takes no loss=) trains the student with a second fit()."""

import keras
import numpy as np
from keras import ops


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer, metrics=metrics)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
        teacher_pred = self.teacher(x, training=False)
        student_loss = self.student_loss_fn(y, y_pred)
        distillation_loss = self.distillation_loss_fn(
            ops.softmax(teacher_pred / self.temperature, axis=1),
            ops.softmax(y_pred / self.temperature, axis=1),
        ) * (self.temperature**2)
        return self.alpha * student_loss + (1 - self.alpha) * distillation_loss

    def call(self, x):
        return self.student(x)


rng = np.random.default_rng(0)
x_train = rng.normal(size=(512, 32)).astype("float32")
y_train = (x_train[:, :10].argmax(axis=1)).astype("int64")
x_test, y_test = x_train[:128], y_train[:128]

teacher = keras.Sequential([keras.Input((32,)), keras.layers.Dense(256, activation="relu"),
                            keras.layers.Dense(10)], name="teacher")
student = keras.Sequential([keras.Input((32,)), keras.layers.Dense(16, activation="relu"),
                            keras.layers.Dense(10)], name="student")

teacher.compile(optimizer=keras.optimizers.Adam(),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=[keras.metrics.SparseCategoricalAccuracy()])
teacher.fit(x_train, y_train, epochs=2, batch_size=32)
teacher.evaluate(x_test, y_test)

distiller = Distiller(student=student, teacher=teacher)
distiller.compile(optimizer=keras.optimizers.Adam(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()],
                  student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  distillation_loss_fn=keras.losses.KLDivergence(),
                  alpha=0.1, temperature=10)
distiller.fit(x_train, y_train, epochs=2, batch_size=32, validation_data=(x_test, y_test))
distiller.evaluate(x_test, y_test)
