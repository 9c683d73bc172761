import os
import time


def maybe_hang(where):
    """Block forever when FAKE_TORCH_HANG names this place and this rank."""
    if os.environ.get("FAKE_TORCH_HANG") == "%s:%s" % (where, os.environ.get("RANK")):
        while True:
            time.sleep(1)
