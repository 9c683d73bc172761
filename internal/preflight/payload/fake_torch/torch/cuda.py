"""torch.cuda for the fake torch: devices, names and timing events."""

import os
import socket
import time
import types

from . import _hooks

nccl = types.SimpleNamespace(version=lambda: (2, 0, 0))


def is_available():
    return True


def device_count():
    return int(os.environ.get("FAKE_TORCH_GPUS", os.environ.get("LOCAL_WORLD_SIZE", "1")))


def set_device(index):
    _hooks.maybe_hang("set_device")


def get_device_name(index):
    return "Fake GPU"


def get_device_properties(index):
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    physical = visible.split(",")[index] if visible else str(index)
    uuid = os.environ.get("FAKE_TORCH_UUID") or "GPU-%s-%s" % (socket.gethostname(), physical)
    return types.SimpleNamespace(uuid=uuid, name="Fake GPU")


class Event:
    """Marks the moment every collective the stream was told to wait for
    has ended; the fake blocks the host for it, which is no matter here."""

    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        from .distributed import _stream_waits, _wait

        _wait(lambda: all(w.is_completed() for w in _stream_waits))
        del _stream_waits[:]
        self.t = time.monotonic()

    def query(self):
        return self.t is not None

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3
