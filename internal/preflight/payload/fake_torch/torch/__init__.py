"""A stand-in for the few torch APIs preflight.py uses, so that its
distributed path runs on CPU in tests: one process per rank on this
machine, a store backed by files in $FAKE_TORCH_DIR, and collectives
through that store.

It models who meets whom, not speed. With a bound device (eager init)
new_group is a split over the world, as ncclCommSplit is: every rank takes
part in every call, and the ranks that passed the same rank list in the
same call share a communicator, whatever the others passed. Without one,
groups are named by their creation count, as torch names them.

Hooks: FAKE_TORCH_HANG=WHERE:RANK makes that rank block forever in WHERE
(set_device, init); FAKE_TORCH_UUID gives every rank the same GPU UUID.
"""

from . import cuda, distributed  # noqa: F401

__version__ = "0.0+fake"
int32, float32 = "int32", "float32"


class device:
    def __init__(self, type, index=None):
        self.type, self.index = type, index

    def __repr__(self):
        return "device(type=%r, index=%r)" % (self.type, self.index)


class Tensor:
    def __init__(self, data):
        self.data = list(data)

    def __setitem__(self, i, v):
        self.data[i] = v

    def cpu(self):
        return Tensor(self.data)

    def tolist(self):
        return list(self.data)


def zeros(n, dtype=None, device=None):
    return Tensor([0] * n)


def ones(n, dtype=None, device=None):
    return Tensor([1] * n)
