"""liba2av, loaded with ctypes from the install this package belongs to.

The package lies in <prefix>/lib/python3/dist-packages/a2av and finds the library through
the relative path that CMake wrote into _config.py, so a moved prefix still works. The
signatures below follow include/a2av/a2av.h.
"""
import ctypes
import os

from mpi4py import MPI

from . import _config

# MPI_Count is a 64-bit integer; MPI_Aint is as wide as a pointer.
Count = ctypes.c_int64
Aint = ctypes.c_ssize_t


def _handle_type(mpi_class):
    """The C type of an MPI handle: a pointer under Open MPI, an int under MPICH."""
    size = MPI._sizeof(mpi_class)
    for ctype in (ctypes.c_void_p, ctypes.c_int):
        if ctypes.sizeof(ctype) == size:
            return ctype
    raise ImportError(f"a2av: MPI handles of {size} bytes are not supported")


Comm = _handle_type(MPI.Comm)
Datatype = _handle_type(MPI.Datatype)
BYTE = MPI._handleof(MPI.BYTE)
INT64 = MPI._handleof(MPI.INT64_T)


def comm_handle(comm):
    """The C handle (MPI_Comm) of an mpi4py communicator."""
    return MPI._handleof(comm)


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.normpath(os.path.join(here, _config.LIBRARY_DIR, _config.LIBRARY_NAME))
    try:
        return ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(f"a2av: cannot load its library: {error}") from error


def _check_same_mpi(library):
    """Raises ImportError unless liba2av calls the MPI library that mpi4py uses.

    mpi4py's handles mean nothing to another MPI library. Asked through liba2av's handle,
    the dynamic linker answers with the MPI library that liba2av itself was linked to; two
    different libraries in one process report different version strings.
    """
    text = ctypes.create_string_buffer(8192)  # MPI_MAX_LIBRARY_VERSION_STRING is smaller
    length = ctypes.c_int()
    library.MPI_Get_library_version(text, ctypes.byref(length))
    theirs = text.value.decode(errors="replace").strip()
    # Open MPI counts the terminating NUL in the length, and mpi4py keeps it.
    ours = MPI.Get_library_version().rstrip("\x00").strip()
    if theirs != ours:
        raise ImportError(
            "a2av: liba2av and mpi4py use different MPI libraries; build a2av with the MPI "
            f"that mpi4py was built for.\n  liba2av: {theirs.splitlines()[0]}\n"
            f"  mpi4py:  {ours.splitlines()[0]}")


_c_int, _void_p, _char_p = ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
# name: (result type, argument types). Arrays and buffers are passed as addresses (c_void_p).
# The sparse exchange is called from C (_exchange.c), not from here.
_SIGNATURES = {
    "A2AV_Alltoall": (_c_int, [_void_p, _c_int, Datatype, _void_p, _c_int, Datatype, Comm]),
    "A2AV_Alltoallv_with": (_c_int, [_char_p, _void_p, _void_p, _void_p, Datatype,
                                     _void_p, _void_p, _void_p, Datatype, Comm]),
    "A2AV_Exchange_inplace": (_c_int, [_void_p, Count, _void_p, _void_p, Datatype, Comm,
                                       _char_p]),
    "A2AV_Error_string": (_char_p, [_c_int]),
    "A2AV_Last_error_message": (_char_p, []),
    "A2AV_Last_peak_bytes": (Count, []),
    "A2AV_Last_algorithm": (_char_p, []),
}


def _declare(library):
    for name, (result, arguments) in _SIGNATURES.items():
        function = getattr(library, name)
        function.restype = result
        function.argtypes = arguments


lib = _load()
_check_same_mpi(lib)
_declare(lib)
