"""The sparse exchange: messages to a few ranks, sources unknown to the receivers."""
import numpy as np

from . import _exchange


def sparse_exchange(comm, messages, algorithm=None, dtype=np.uint8):
    """Sends each message to its destination and returns the messages sent to this rank.

    The library reads the messages where they lie (no packing copy), and the arrays returned
    lie where the messages arrived (no copy either). The per-call work is in C (_exchange.c),
    the arrays built and errors raised there too: through ctypes, or in Python, it cost
    several times the exchange of small messages.

    Args:
        comm: an mpi4py intracommunicator.
        messages: (destination, buffer) pairs (a list, tuple or other iterable of them), or
            a dict destination -> buffer; each buffer a C-contiguous NumPy array or other
            buffer. Several messages to one rank arrive in the order given; a rank may send
            to itself.
        algorithm: "nbx", "grid", "dense", "shared_memory" or "auto" (docs/algorithms.md);
            None means A2AV_SPARSE_ALGORITHM if set, else auto.
        dtype: the dtype of the arrays returned (default: bytes, np.uint8). Each message
            received must be a whole number of its items.

    Returns:
        A list of (source, array), one per message received, ordered by source: each array
        one-dimensional (unless dtype has a shape), writable, a view of the exchange's
        receive buffer, which lives until the last array of the exchange is dropped.

    Raises:
        Error: on every rank, with the code they agree on (ERR_ARG for a destination out
            of range, for instance).
        ValueError: after a successful exchange, if a message received is not a whole number
            of dtype's items, or dtype holds Python objects.
    """
    return _exchange.sparse(comm, messages, algorithm, dtype)
