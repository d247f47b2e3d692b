"""Stands in for a backend that TensorFlow crashes after running out of memory.

TensorFlow's oneDNN CPU kernels log the failed allocation and then die on
SIGSEGV instead of raising ResourceExhaustedError (tfturbo/crash.py). This
script does exactly that, deterministically and without TensorFlow: it speaks
the protocol up to the first training step, writes TensorFlow's two log lines
to stderr, and kills itself with SIGSEGV. Any arguments are accepted.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tfturbo import protocol

LOG = (
    "W0000 00:00:1796039942.119828   24274 bfc_allocator.cc:502] Allocator (mklcpu) ran out of memory trying to "
    "allocate 64.00GiB (rounded to 68719476736)requested by op StatefulPartitionedCall/sequential_1/dense_1/Relu\n"
    "W0000 00:00:1796039942.120100   24274 op_kernel.cc:1858] OP_REQUIRES failed at mkl_util.h:848 : "
    "RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[1048576,16384] and type float on "
    "/job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu\n"
)

if __name__ == "__main__":
    writer = protocol.EventWriter("oom", [sys.stdout])
    writer.emit(protocol.HELLO, command="run", versions={}, devices=[], pid=os.getpid())
    writer.emit(protocol.PHASE, phase=protocol.WARMUP, step=1, detail="tracing and compiling")
    sys.stderr.write(LOG)
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
