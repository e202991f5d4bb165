"""a2av for mpi4py programs: fast MPI_Alltoallv and friends on NumPy arrays.

    from mpi4py import MPI
    import a2av

    recv, recvcounts = a2av.alltoallv(MPI.COMM_WORLD, send, sendcounts)
    received = a2av.sparse_exchange(MPI.COMM_WORLD, {right: halo})  # [(source, array)]

Importing it initializes MPI through mpi4py (if not already done) and loads liba2av from
the same install; both must use the same MPI library. See docs/python.md.
"""
from ._config import VERSION as __version__
from ._dense import alltoallv, exchange_inplace
from ._last_call import (ERR_ALGORITHM, ERR_ARG, ERR_CAPACITY, ERR_COUNTS, ERR_DATATYPE,
                         ERR_MPI, SUCCESS, Error, error_string, last_algorithm,
                         last_peak_bytes)
from ._sparse import sparse_exchange

__all__ = [
    "__version__", "alltoallv", "sparse_exchange", "exchange_inplace", "last_algorithm",
    "last_peak_bytes", "Error", "error_string", "SUCCESS", "ERR_ARG", "ERR_COUNTS",
    "ERR_ALGORITHM", "ERR_CAPACITY", "ERR_DATATYPE", "ERR_MPI",
]
