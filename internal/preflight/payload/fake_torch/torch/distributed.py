"""torch.distributed for the fake torch, through a file-backed store."""

import hashlib
import json
import os
import pickle
import time

from . import _hooks

_state = {}
# Collectives the current stream was told to wait for (Work.wait).
_stream_waits = []


class TCPStore:
    """Keys are files in $FAKE_TORCH_DIR, whatever the address."""

    def __init__(self, host_name=None, port=None, world_size=None, is_master=False, timeout=None, **_):
        self.dir = os.environ["FAKE_TORCH_DIR"]
        self.timeout = timeout.total_seconds() if timeout is not None else 300.0

    def _path(self, key):
        return os.path.join(self.dir, hashlib.sha1(key.encode()).hexdigest())

    def set(self, key, value):
        if isinstance(value, str):
            value = value.encode()
        path = self._path(key)
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(value)
        os.replace(tmp, path)

    def check(self, keys):
        return all(os.path.exists(self._path(k)) for k in keys)

    def get(self, key):
        deadline = time.monotonic() + self.timeout
        while not self.check([key]):
            if time.monotonic() > deadline:
                raise RuntimeError("timed out waiting for key %r" % key)
            time.sleep(0.001)
        with open(self._path(key), "rb") as f:
            return f.read()


def _wait(done):
    while not done():
        time.sleep(0.001)


def _meet(tag, payload):
    """Every rank of the world publishes payload under tag; returns all of
    them, in rank order, once every rank has."""
    st, me, world = _state["store"], _state["rank"], _state["world"]
    st.set("fake/%s/%d" % (tag, me), payload)
    keys = ["fake/%s/%d" % (tag, r) for r in range(world)]
    _wait(lambda: st.check(keys))
    return [st.get(k) for k in keys]


class GroupMember:
    NON_GROUP_MEMBER = object()


class _Group:
    def __init__(self, ranks, comm, name):
        self.ranks = ranks  # what torch's bookkeeping says
        self.comm = comm  # who really shares the communicator
        self.name = name
        self.ops = 0


def init_process_group(backend, timeout=None, device_id=None):
    _hooks.maybe_hang("init")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    _state.update(rank=rank, world=world, store=TCPStore(), eager=device_id is not None, calls=0, gathers=0)
    if _state["eager"]:
        _meet("init", b"")  # the world's communicator is made at once


def new_group(ranks=None, **_):
    ranks = sorted(ranks)
    me = _state["rank"]
    call = _state["calls"]
    _state["calls"] += 1
    color = ",".join(str(r) for r in ranks)
    if not _state["eager"]:
        if me not in ranks:
            return GroupMember.NON_GROUP_MEMBER
        return _Group(ranks, ranks, "group%d" % call)
    colors = [c.decode() for c in _meet("split/%d" % call, color if me in ranks else "")]
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    comm = [r for r, c in enumerate(colors) if c == color]
    return _Group(ranks, comm, "split%d/%s" % (call, color))


def get_process_group_ranks(group):
    return list(group.ranks)


class _Work:
    def __init__(self, group, key, tensor):
        self.group, self.key, self.tensor, self.done = group, key, tensor, False

    def is_completed(self):
        if not self.done:
            st = _state["store"]
            keys = [self.key + str(r) for r in self.group.comm]
            if not st.check(keys):
                return False
            parts = [json.loads(st.get(k)) for k in keys]
            self.tensor.data[:] = [sum(col) for col in zip(*parts)]
            self.done = True
        return True

    def wait(self):
        _stream_waits.append(self)


def all_reduce(tensor, group=None, async_op=False):
    seq = group.ops
    group.ops += 1
    key = "fake/ar/%s/%d/" % (group.name, seq)
    _state["store"].set(key + str(_state["rank"]), json.dumps(tensor.data))
    work = _Work(group, key, tensor)
    if not async_op:
        _wait(work.is_completed)
        return None
    return work


def all_gather_object(out, obj):
    seq = _state["gathers"]
    _state["gathers"] += 1
    for r, b in enumerate(_meet("gather/%d" % seq, pickle.dumps(obj))):
        out[r] = pickle.loads(b)


def destroy_process_group():
    pass
