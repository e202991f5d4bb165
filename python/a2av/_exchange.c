/* a2av._exchange: the sparse exchange's per-call work in C, for python/a2av/_sparse.py.
 * Through ctypes, its foreign calls and argument arrays cost about 8 us per call, several
 * times the exchange itself for small messages. The arrays returned are built here too: in
 * Python (np.frombuffer, a slice per message, the list of pairs) they cost about 1.3 us per
 * call, more than the rest of the call. The communicator's handle (mpi4py's C API), NumPy
 * arrays' data and the error check are taken here too: each cost 0.05-0.1 us in Python, and
 * on an oversubscribed node every rank's microsecond is paid several times over. It reads
 * the caller's buffers where they lie, and the arrays returned lie in the library's receive
 * buffer: no copy either way. */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <a2av/a2av.h>
#include <mpi4py/mpi4py.h>
#include <numpy/arrayobject.h>
#if NPY_ABI_VERSION < 0x02000000 /* NumPy 2 hides the descriptor's fields behind this */
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#define PyDataType_ALIGNMENT(descr) ((descr)->alignment)
#endif

#include <stdint.h>
#include <string.h>

/* The arrays A2AV_Sparse_exchange reads, and what keeps the buffers valid meanwhile: a
 * reference to a NumPy array, or a buffer view of anything else; one allocation holds them
 * all. */
typedef struct {
  Py_ssize_t count;
  Py_buffer* views;   // of buffers other than NumPy arrays
  PyObject** arrays;  // NumPy arrays, held by reference
  MPI_Count* bytes;
  const void** buffers;
  int* destinations;
} Messages;

static int allocate(Messages* m) {
  const size_t n = m->count > 0 ? (size_t)m->count : 1;
  char* block = PyMem_Calloc(
      n, sizeof(Py_buffer) + sizeof(PyObject*) + sizeof(MPI_Count) + sizeof(void*) + sizeof(int));
  if (!block) return 0;
  m->views = (Py_buffer*)block;  // largest alignment first, int last
  m->arrays = (PyObject**)(m->views + n);
  m->bytes = (MPI_Count*)(m->arrays + n);
  m->buffers = (const void**)(m->bytes + n);
  m->destinations = (int*)(m->buffers + n);
  return 1;
}

static void release(Messages* m) {
  for (Py_ssize_t i = 0; m->views && i < m->count; ++i) {
    if (m->views[i].obj) PyBuffer_Release(&m->views[i]);
    Py_XDECREF(m->arrays[i]);
  }
  PyMem_Free(m->views);
}

/* A C-contiguous NumPy array read in place, without the buffer protocol's format and shape
 * (0.1 us a message). */
static int take_array(Messages* m, Py_ssize_t i, PyObject* buffer) {
  if (!PyArray_Check(buffer) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject*)buffer)) return 0;
  Py_INCREF(buffer);
  m->arrays[i] = buffer;
  m->buffers[i] = PyArray_DATA((PyArrayObject*)buffer);
  m->bytes[i] = PyArray_NBYTES((PyArrayObject*)buffer);
  return 1;
}

/* Message i, to `destination` from `buffer`: NULL, or why it cannot be passed. */
static const char* take(Messages* m, Py_ssize_t i, PyObject* destination, PyObject* buffer) {
  const long rank = PyLong_AsLong(destination);
  if (rank < 0 || rank > INT32_MAX) return "does not name a rank";
  m->destinations[i] = (int)rank;
  if (take_array(m, i, buffer)) return NULL;
  if (PyObject_GetBuffer(buffer, &m->views[i], PyBUF_C_CONTIGUOUS) != 0)
    return "is not a buffer, or not contiguous (pass np.ascontiguousarray of it)";
  m->buffers[i] = m->views[i].buf;
  m->bytes[i] = m->views[i].len;
  return NULL;
}

static const char* take_pair(Messages* m, Py_ssize_t i, PyObject* pair) {
  PyObject* items = PySequence_Fast(pair, "");
  if (!items) return "is not a (destination rank, buffer) pair";
  const char* problem =
      PySequence_Fast_GET_SIZE(items) != 2
          ? "is not a (destination rank, buffer) pair"
          : take(m, i, PySequence_Fast_GET_ITEM(items, 0), PySequence_Fast_GET_ITEM(items, 1));
  Py_DECREF(items);
  return problem;
}

/* A message that cannot be passed gets -1 bytes, which the library refuses on every rank (a
 * collective must not fail on one rank alone); *rejected says why, for the first one. */
static void reject(Messages* m, Py_ssize_t i, const char* problem, PyObject** rejected) {
  PyErr_Clear();
  m->bytes[i] = -1;
  if (*rejected == Py_None) {
    Py_DECREF(*rejected);
    *rejected = PyUnicode_FromFormat("message %zd %s", i, problem);
  }
}

/* Reads a dict destination -> buffer, or an iterable of (destination, buffer) pairs, from a
 * list of its own (a destination's __index__ could change the caller's). Returns 0, with an
 * exception set, if `messages` is neither. */
static int take_messages(Messages* m, PyObject* messages, PyObject** rejected) {
  PyObject* pairs = PyDict_Check(messages) ? PyDict_Items(messages) : PySequence_List(messages);
  if (!pairs) return 0;
  m->count = PyList_GET_SIZE(pairs);
  if (!allocate(m)) {
    Py_DECREF(pairs);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < m->count; ++i) {
    const char* problem = take_pair(m, i, PyList_GET_ITEM(pairs, i));
    if (problem) reject(m, i, problem, rejected);
  }
  Py_DECREF(pairs);
  return 1;
}

/* Owns what arrived: the arrays returned lie in its buffer, each holding a reference, and the
 * last one dropped frees it (A2AV_Sparse_free, which leaves the buffer to the thread's next
 * exchange). */
static void free_received(PyObject* capsule) {
  A2AV_Sparse received = PyCapsule_GetPointer(capsule, "a2av.received");
  A2AV_Sparse_free(&received);
}

/* The message that arrived from `source`, as an array of `dtype`: a view of the received
 * buffer (kept alive by `owner`), or a copy where the message is empty or not aligned for
 * `dtype` (messages lie back to back); NULL with ValueError if it is not a whole number of
 * items. */
static PyObject* message_array(int source, const void* data, MPI_Count bytes, PyArray_Descr* dtype,
                               PyObject* owner) {
  if (PyDataType_ELSIZE(dtype) == 0 || bytes % PyDataType_ELSIZE(dtype)) {
    PyErr_Format(PyExc_ValueError, "%lld bytes from rank %d are not a whole number of %S items",
                 (long long)bytes, source, (PyObject*)dtype);
    return NULL;
  }
  npy_intp items = (npy_intp)(bytes / PyDataType_ELSIZE(dtype));
  const int view = bytes > 0 && (uintptr_t)data % (uintptr_t)PyDataType_ALIGNMENT(dtype) == 0;
  Py_INCREF(dtype);  // PyArray_NewFromDescr steals a reference
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, dtype, 1, &items, NULL,
                                         view ? (void*)data : NULL, NPY_ARRAY_CARRAY, NULL);
  if (!array || !view) {
    if (array && bytes) memcpy(PyArray_DATA((PyArrayObject*)array), data, (size_t)bytes);
    return array;
  }
  Py_INCREF(owner);  // PyArray_SetBaseObject steals it
  if (PyArray_SetBaseObject((PyArrayObject*)array, owner) < 0) Py_CLEAR(array);
  return array;
}

/* What arrived, as a list of (source, array), one per message, in the library's order. */
static PyObject* arrays_out(A2AV_Sparse received, PyArray_Descr* dtype, PyObject* owner) {
  if (PyDataType_REFCHK(dtype))
    return PyErr_Format(PyExc_ValueError, "messages cannot be read as %S, which holds objects",
                        (PyObject*)dtype);
  int count = 0;
  A2AV_Sparse_count(received, &count);
  PyObject* list = PyList_New(count);
  for (int i = 0; list && i < count; ++i) {
    int source = 0;
    const void* data = NULL;
    MPI_Count bytes = 0;
    A2AV_Sparse_message(received, i, &source, &data, &bytes);
    PyObject* array = message_array(source, data, bytes, dtype, owner);
    PyObject* entry = array ? PyTuple_New(2) : NULL;
    PyObject* rank = entry ? PyLong_FromLong(source) : NULL;
    if (!rank) {
      Py_XDECREF(entry);
      Py_XDECREF(array);
      Py_CLEAR(list);
      break;
    }
    PyTuple_SET_ITEM(entry, 0, rank);
    PyTuple_SET_ITEM(entry, 1, array);
    PyList_SET_ITEM(list, i, entry);
  }
  return list;
}

/* The exchange, the GIL released while the library runs; the A2AV_ code. */
static int exchange(const Messages* m, MPI_Comm comm, const char* algorithm,
                    A2AV_Sparse* received) {
  int code = A2AV_SUCCESS;
  Py_BEGIN_ALLOW_THREADS;
  code = A2AV_Sparse_exchange((int)m->count, m->destinations, m->buffers, m->bytes, comm, algorithm,
                              received);
  Py_END_ALLOW_THREADS;
  return code;
}

/* The algorithm argument: NULL for None or "" (the library's default), else its UTF-8.
 * Returns 0, with an exception set, for anything but a str without NULs or None. */
static int take_algorithm(PyObject* algorithm, const char** text) {
  *text = NULL;
  if (algorithm == Py_None) return 1;
  if (!PyUnicode_Check(algorithm)) {
    PyErr_Format(PyExc_TypeError, "algorithm must be str or None, not %s",
                 Py_TYPE(algorithm)->tp_name);
    return 0;
  }
  Py_ssize_t length = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(algorithm, &length);
  if (!utf8) return 0;
  if (strlen(utf8) != (size_t)length) {
    PyErr_SetString(PyExc_ValueError, "embedded null character in algorithm");
    return 0;
  }
  *text = length ? utf8 : NULL;
  return 1;
}

/* The arrays of what arrived, as `dtype` (converted only now: the exchange must not fail on
 * one rank alone). Takes `received`: freed here, or once its arrays are. */
static PyObject* arrays_of(A2AV_Sparse received, PyObject* dtype) {
  if (!received) return PyList_New(0);
  PyObject* owner = PyCapsule_New(received, "a2av.received", free_received);
  if (!owner) {
    A2AV_Sparse_free(&received);
    return NULL;
  }
  PyArray_Descr* descr = NULL;
  PyObject* list =
      PyArray_DescrConverter(dtype, &descr) ? arrays_out(received, descr, owner) : NULL;
  Py_XDECREF(descr);
  Py_DECREF(owner);
  return list;
}

/* Raises a2av.Error for `code` (_last_call.check, which reads the library's report); NULL. */
static PyObject* raise_error(int code, PyObject* rejected) {
  PyObject* last_call = PyImport_ImportModule("a2av._last_call");
  PyObject* raised =
      last_call ? PyObject_CallMethod(last_call, "check", "iO", code, rejected) : NULL;
  Py_XDECREF(last_call);
  Py_XDECREF(raised);
  if (!PyErr_Occurred()) PyErr_Format(PyExc_SystemError, "a2av: code %d raised nothing", code);
  return NULL;
}

/* sparse(comm, messages, algorithm, dtype) -> the list of (source, array of dtype) that
 * arrived, or a2av.Error with the code the ranks agree on (and, if it was this rank's
 * messages that the binding refused, why). */
static PyObject* sparse(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  (void)module;
  const char* algorithm = NULL;
  if (nargs != 4) {
    PyErr_Format(PyExc_TypeError, "sparse() takes 4 arguments (%zd given)", nargs);
    return NULL;
  }
  MPI_Comm* comm = PyMPIComm_Get(args[0]);  // TypeError unless an mpi4py communicator
  if (!comm || !take_algorithm(args[2], &algorithm)) return NULL;
  Messages m = {0};
  PyObject* rejected = Py_None;
  Py_INCREF(rejected);
  if (!take_messages(&m, args[1], &rejected)) {
    Py_DECREF(rejected);
    return NULL;
  }
  A2AV_Sparse received = NULL;
  const int code = exchange(&m, *comm, algorithm, &received);
  release(&m);
  if (code != A2AV_SUCCESS) {
    raise_error(code, rejected);
    Py_DECREF(rejected);
    return NULL;
  }
  Py_DECREF(rejected);
  return arrays_of(received, args[3]);
}

static PyMethodDef methods[] = {
    {"sparse", (PyCFunction)(void (*)(void))sparse, METH_FASTCALL,
     "A2AV_Sparse_exchange on (destination, buffer) pairs, into NumPy arrays"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_exchange", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__exchange(void) {
  import_array();  // NumPy's C API, or ImportError
  if (import_mpi4py() < 0) return NULL;
  return PyModule_Create(&module);
}
