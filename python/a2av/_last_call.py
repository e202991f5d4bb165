"""What the library reports about the calling thread's last call: errors, algorithm, memory."""
from ._library import lib

# The C API's return codes (include/a2av/a2av.h).
SUCCESS = 0
ERR_ARG = 1        # bad local argument: negative count, buffer too small, ...
ERR_COUNTS = 2     # send and receive counts disagree across ranks
ERR_ALGORITHM = 3  # unknown algorithm name, parameter or value
ERR_CAPACITY = 4   # in-place buffer or memory budget too small
ERR_DATATYPE = 5   # unusable datatype
ERR_MPI = 6        # an MPI call failed


def _text(value):
    return value.decode(errors="replace") if value else ""


def error_string(code):
    """A short description of an error code ("A2AV_ERR_COUNTS: ...")."""
    return _text(lib.A2AV_Error_string(code))


class Error(Exception):
    """An a2av call failed.

    Attributes:
        code: one of the ERR_* codes; the ranks of a collective call agree on it
            (docs/errors.md), except under the "vendor" algorithm, as in MPI.
        message: what went wrong, as this rank saw it.
    """

    __module__ = "a2av"  # where users find it, and what tracebacks show

    def __init__(self, code, message):
        self.code = code
        self.message = message
        super().__init__(f"{error_string(code)}: {message}" if message else error_string(code))


def check(code, rejected=None):
    """Raises Error for a non-zero return code.

    rejected: why the binding itself refused this rank's arguments, if it did; that is the
    message then, rather than the library's report of the argument put in their place.
    """
    if code != SUCCESS:
        raise Error(code, rejected or _text(lib.A2AV_Last_error_message()))


def last_algorithm():
    """The algorithm that ran in this thread's last a2av call, parameters resolved."""
    return _text(lib.A2AV_Last_algorithm())


def last_peak_bytes():
    """The peak temporary bytes that this thread's last a2av call allocated."""
    return lib.A2AV_Last_peak_bytes()
