"""The dense exchanges, one block for every rank: alltoallv and exchange_inplace.

Blocks travel as bytes (MPI_BYTE, counts times the item size), so any NumPy dtype works;
as MPI requires matching types, all ranks must use the same dtype.
"""
import operator

import numpy as np

from ._arrays import (Rejected, address, as_array, counts_array, displacements,
                      refused_counts)
from ._last_call import check
from ._library import BYTE, INT64, comm_handle, lib


def _spec(algorithm):
    """The algorithm as the C API takes it: NULL means the library's own choice."""
    return algorithm.encode() if algorithm else None


def alltoallv(comm, sendbuf, sendcounts, recvcounts=None, algorithm=None):
    """Sends sendcounts[j] elements to each rank j and receives what each rank sends here.

    Args:
        comm: an mpi4py intracommunicator.
        sendbuf: a C-contiguous NumPy array or other buffer: the blocks for ranks 0, 1, ...
            back to back (a multidimensional array counts in elements of its flat view).
        sendcounts: one count per rank, in elements.
        recvcounts: one count per rank, if known; else the ranks exchange their counts
            first (an A2AV_Alltoall, which costs one more collective).
        algorithm: an A2AV_Alltoallv_with spec ("tuna:radix=4", docs/algorithms.md);
            None means A2AV_ALGORITHM if set, else the library's choice.

    Returns:
        (recvbuf, recvcounts): a new flat array of sendbuf's dtype, holding the blocks from
        ranks 0, 1, ... back to back, and the int64 array of their counts.

    Raises:
        Error: on every rank, with the code they agree on (docs/errors.md).
    """
    size = comm.Get_size()
    handle = comm_handle(comm)
    send, sendcounts, rejected = _send_side(sendbuf, sendcounts, size)
    if recvcounts is None:
        recvcounts = _exchange_counts(sendcounts, handle)
    else:
        try:
            recvcounts = counts_array(recvcounts, size, "recvcounts")
        except Rejected as error:
            recvcounts, rejected = refused_counts(size), rejected or str(error)
    recv = np.empty(recvcounts.clip(min=0).sum(), dtype=send.dtype)
    # Arrays whose addresses C reads are bound to names, so they live through the call.
    sendbytes, recvbytes = sendcounts * send.itemsize, recvcounts * send.itemsize
    sdispls, rdispls = displacements(sendbytes.clip(min=0)), displacements(recvbytes.clip(min=0))
    code = lib.A2AV_Alltoallv_with(_spec(algorithm), address(send), address(sendbytes),
                                   address(sdispls), BYTE, address(recv), address(recvbytes),
                                   address(rdispls), BYTE, handle)
    check(code, rejected)
    return recv, recvcounts


def _send_side(sendbuf, sendcounts, size):
    """(send array, counts, None), or stand-ins that the library refuses and the reason."""
    try:
        send = as_array(sendbuf, "sendbuf")
        counts = counts_array(sendcounts, size, "sendcounts")
        needed = counts.clip(min=0).sum()
        if needed > send.size:
            raise Rejected(f"sendcounts add up to {needed} elements; sendbuf holds {send.size}")
        return send, counts, None
    except Rejected as error:
        return np.empty(0, dtype=np.uint8), refused_counts(size), str(error)


def _exchange_counts(sendcounts, handle):
    """What each rank sends this one: an all-to-all of the counts, through a2av itself."""
    recvcounts = np.empty_like(sendcounts)
    check(lib.A2AV_Alltoall(address(sendcounts), 1, INT64, address(recvcounts), 1, INT64,
                            handle))
    return recvcounts


def exchange_inplace(comm, buf, sendcounts, capacity=None, algorithm=None):
    """Exchanges blocks within one buffer, with little memory besides (docs/memory.md).

    On entry buf holds the blocks for ranks 0, 1, ... back to back (sendcounts[j] elements
    for rank j); on return it begins with the blocks from ranks 0, 1, ... back to back.

    Args:
        comm: an mpi4py intracommunicator.
        buf: a writable C-contiguous NumPy array or other buffer.
        sendcounts: one count per rank, in elements.
        capacity: how many elements of buf the exchange may use (default: all); what this
            rank receives must fit in it.
        algorithm: "inplace_bitonic", "inplace_pairwise" or "inplace_auto", with
            parameters ("inplace_pairwise:chunk_bytes=65536"); None means inplace_auto.

    Returns:
        The int64 array of the counts received from each rank.

    Raises:
        Error: on every rank, with the code they agree on (ERR_CAPACITY when a rank's
            blocks do not fit).
    """
    size = comm.Get_size()
    try:
        array = as_array(buf, "buf", writable=True)
        counts = counts_array(sendcounts, size, "sendcounts")
        capacity = _capacity(capacity, array.size)
        rejected = None
    except Rejected as error:
        array, counts, capacity = np.empty(0, dtype=np.uint8), refused_counts(size), 0
        rejected = str(error)
    sendbytes, recvbytes = counts * array.itemsize, np.empty(size, dtype=np.int64)
    code = lib.A2AV_Exchange_inplace(address(array), capacity * array.itemsize,
                                     address(sendbytes), address(recvbytes), BYTE,
                                     comm_handle(comm), _spec(algorithm))
    check(code, rejected)
    return recvbytes // array.itemsize


def _capacity(capacity, available):
    """The capacity in elements: all of the buffer by default, never more."""
    if capacity is None:
        return available
    try:
        capacity = operator.index(capacity)
    except TypeError:
        raise Rejected(f"capacity must be an integer, not {type(capacity).__name__}") from None
    if capacity > available:
        raise Rejected(f"capacity {capacity} exceeds the {available} elements of buf")
    return capacity
