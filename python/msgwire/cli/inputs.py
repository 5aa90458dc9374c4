"""What the commands read and write: a file or ``-`` (standard input / output), and the usage
errors they raise (exit code 2) when an argument cannot be acted on."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import MsgwireError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (nor pathlib): `msgwire --help` reads this
if TYPE_CHECKING:
    from typing import BinaryIO

CHUNK_SIZE = 64 * 1024  # what `parse` reads at a time: a 100 MB recording is never held whole


class UsageError(MsgwireError):
    """An argument the command cannot act on (a missing file, a dialect it cannot tell): exit 2."""


class NotReadable(MsgwireError):
    """An input that is not what the command reads (a file that is no audit trail): exit 1,
    said as it is, without the name of the error that found it."""


@contextmanager
def open_input(name: str) -> Iterator[BinaryIO]:
    """The binary stream of a path, or standard input for ``-``."""
    if name == "-":
        yield sys.stdin.buffer
        return
    if os.path.isdir(name):
        raise UsageError(f"{name} is a directory, not a recording")
    try:
        file = open(name, "rb")  # noqa: SIM115 - closed by the `with` below, after the yield
    except FileNotFoundError:
        raise UsageError(f"no such file: {name}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}") from None
    with file:
        yield file


def read_chunks(source: BinaryIO, size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Chunks of at most ``size`` bytes as they arrive: ``read1`` hands over what a pipe holds
    now instead of waiting for ``size`` bytes, so ``curl ... | msgwire parse -`` renders live."""
    read = getattr(source, "read1", source.read)
    while chunk := read(size):
        yield chunk


def read_all(name: str) -> bytes:
    with open_input(name) as source:
        return source.read()


def write_output(data: bytes, name: str | None) -> None:
    """``data`` to the file ``name``, or to standard output."""
    if name is None or name == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        with open(name, "wb") as file:
            file.write(data)
    except OSError as exc:
        raise UsageError(f"cannot write {name}: {exc.strerror}") from None
