"""Loading ``msgwire._core`` raises glibc's threshold for serving large blocks with ``mmap``
(``rust/python/src/alloc.rs``): a buffer of a few MiB freed and made again is the same memory,
not new pages faulted in one by one (a large response read paid ~420 faults a call before).

Checked in a fresh interpreter: the page faults of making, touching and freeing three 1 MiB
buffers, as a call on a large body does, the third time. glibc raises its thresholds by itself
once a mapped block is freed, to that block's size for mapping and twice that for trimming the
heap's top: three freed MiB are more, so without msgwire each round gives them back to the
system and faults every page again (768), with it none."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

ROUNDS = """
import resource, sys
if sys.argv[1] == "import":
    import msgwire._core  # noqa: F401 - `import msgwire` alone loads it at the first call that needs it
faults = []
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    buffers = [bytearray(1 << 20) for _ in range(3)]  # a call's transient buffers
    for buffer in buffers:
        buffer[::4096] = b"x" * len(buffer[::4096])  # every page touched
    del buffers, buffer
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(faults[-1])
"""


def _faults(mode: str) -> int:
    run = subprocess.run([sys.executable, "-c", ROUNDS, mode], capture_output=True, text=True, check=True, timeout=120)
    return int(run.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mmap threshold")
def test_a_large_buffer_made_again_reuses_its_memory_once_msgwire_is_loaded() -> None:
    """The core is loaded by the first call that reads or writes bytes (``import msgwire`` alone
    loads none of its modules), before any large buffer of that call is made."""
    assert _faults("bare") >= 512, "the premise: without msgwire, glibc gives the memory back each time"
    assert _faults("import") < 16
