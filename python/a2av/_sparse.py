"""The sparse exchange: messages to a few ranks, sources unknown to the receivers."""
import ctypes
import operator

import numpy as np

from ._arrays import Rejected, address, as_array
from ._last_call import check
from ._library import Count, comm_handle, lib


def sparse_exchange(comm, messages, algorithm=None, dtype=np.uint8):
    """Sends each message to its destination and returns the messages sent to this rank.

    The library reads the messages where they lie (no packing copy); the one copy is into
    the arrays returned.

    Args:
        comm: an mpi4py intracommunicator.
        messages: (destination, buffer) pairs, or a dict destination -> buffer; each buffer
            a C-contiguous NumPy array or other buffer. Several messages to one rank arrive
            in the order given; a rank may send to itself.
        algorithm: "nbx", "grid", "dense", "shared_memory" or "auto" (docs/algorithms.md);
            None means A2AV_SPARSE_ALGORITHM if set, else auto.
        dtype: the dtype of the arrays returned (default: bytes, np.uint8). Each message
            received must be a whole number of its items.

    Returns:
        A list of (source, array), one per message received, ordered by source.

    Raises:
        Error: on every rank, with the code they agree on (ERR_ARG for a destination out
            of range, for instance).
    """
    pairs = list(messages.items() if isinstance(messages, dict) else messages)
    count = len(pairs)
    destinations = (ctypes.c_int * count)()
    buffers = (ctypes.c_void_p * count)()
    sizes = (Count * count)()
    arrays, rejected = [], None  # arrays: the caller's memory, alive through the call
    for i, pair in enumerate(pairs):
        try:
            destination, array = _message(pair, i)
        except Rejected as error:
            sizes[i] = -1  # refused by the library on every rank (see _arrays)
            rejected = rejected or str(error)
            continue
        arrays.append(array)
        destinations[i], buffers[i], sizes[i] = destination, address(array), array.nbytes
    received = ctypes.c_void_p()
    check(lib.A2AV_Sparse_exchange(count, destinations, buffers, sizes, comm_handle(comm),
                                   algorithm.encode() if algorithm else None,
                                   ctypes.byref(received)), rejected)
    try:
        return _copy_out(received, np.dtype(dtype))
    finally:
        lib.A2AV_Sparse_free(ctypes.byref(received))


def _message(pair, index):
    """(destination, array) of message `index`."""
    try:
        destination, buffer = pair
        destination = operator.index(destination)
    except (TypeError, ValueError):
        raise Rejected(f"message {index} is not a (destination rank, buffer) pair") from None
    if not 0 <= destination < 2**31:  # the library checks the rank; this, that it fits an int
        raise Rejected(f"message {index}: {destination} is not a rank")
    return destination, as_array(buffer, f"message {index}")


def _copy_out(received, dtype):
    """The received messages, copied into one new array and returned as slices of it."""
    count = ctypes.c_int()
    check(lib.A2AV_Sparse_count(received, ctypes.byref(count)))
    source, data, size = ctypes.c_int(), ctypes.c_void_p(), Count()
    outputs = ctypes.byref(source), ctypes.byref(data), ctypes.byref(size)
    messages = []
    for i in range(count.value):
        check(lib.A2AV_Sparse_message(received, i, *outputs))
        if size.value % dtype.itemsize:
            raise ValueError(f"{size.value} bytes from rank {source.value} are not a whole "
                             f"number of {dtype} items")
        messages.append((source.value, data.value, size.value))
    item = dtype.itemsize
    storage = np.empty(sum(size for _, _, size in messages) // item, dtype=dtype)
    base, first, result = address(storage), 0, []
    for source, data, size in messages:
        if size:
            ctypes.memmove(base + first * item, data, size)
        result.append((source, storage[first:first + size // item]))
        first += size // item
    return result
