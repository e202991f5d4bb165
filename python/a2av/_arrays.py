"""The caller's buffers and counts as the C API reads them, without copying data.

A collective call must not fail on one rank alone: its peers would wait for it. So when
an argument cannot be passed (not a buffer, too short, ...), the binding raises Rejected
internally, and the caller passes the library an argument that it refuses in its place
(a count of -1): the library then reports the error on every rank.
"""
import ctypes

import numpy as np


class Rejected(Exception):
    """An argument that the binding cannot hand to the library; the text says why."""


def as_array(buffer, name, writable=False):
    """buffer as a NumPy array on the same memory (counts are in elements of its flat view).

    buffer: a NumPy array or any object with the buffer protocol (bytes, array.array,
    memoryview, ...), C-contiguous: copying a strided one would defeat the point.
    """
    if isinstance(buffer, np.ndarray):
        array = buffer
    else:
        try:
            array = np.asarray(memoryview(buffer))
        except (TypeError, ValueError, RuntimeError) as error:  # not a buffer, or its format
            raise Rejected(f"{name}: {error}") from None
    if not array.flags.c_contiguous:
        raise Rejected(f"{name} is not contiguous (pass np.ascontiguousarray of it)")
    if writable and not array.flags.writeable:
        raise Rejected(f"{name} is read-only")
    return array


def address(array):
    """The address of an array's first byte."""
    if array.flags.writeable and array.nbytes:
        # A third of the time of __array_interface__, which matters for small messages.
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    return array.__array_interface__["data"][0]


def counts_array(values, size, name):
    """values (one count per rank) as the int64 array that the C API reads."""
    try:
        counts = np.asarray(values)
    except (TypeError, ValueError) as error:
        raise Rejected(f"{name}: {error}") from None
    if counts.dtype.kind not in "iu":
        raise Rejected(f"{name} must be integers, not {counts.dtype}")
    if counts.shape != (size,):
        raise Rejected(f"{name} has shape {counts.shape}, not one count for each of {size} ranks")
    return np.ascontiguousarray(counts, dtype=np.int64)


def refused_counts(size):
    """Counts that the library refuses on every rank (see the module's docstring)."""
    return np.full(size, -1, dtype=np.int64)


def displacements(counts):
    """Where each block starts when blocks of these sizes lie back to back."""
    starts = np.zeros(len(counts), dtype=np.intp)  # MPI_Aint
    np.cumsum(counts[:-1], out=starts[1:])
    return starts
