/* a2av._exchange: the sparse exchange's per-call work in C, for python/a2av/_sparse.py.
 * Through ctypes, its foreign calls and argument arrays cost about 8 us per call, several
 * times the exchange itself for small messages; here they cost about 1 us. It reads the
 * caller's buffers where they lie and copies what arrives once, into one bytearray. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <a2av/a2av.h>

#include <stdint.h>
#include <string.h>

/* The arrays A2AV_Sparse_exchange reads, and the buffer views that keep them valid. */
typedef struct {
  Py_ssize_t count;
  int* destinations;
  const void** buffers;
  MPI_Count* bytes;
  Py_buffer* views;
} Messages;

static void release(Messages* m) {
  for (Py_ssize_t i = 0; m->views && i < m->count; ++i)
    if (m->views[i].obj) PyBuffer_Release(&m->views[i]);
  PyMem_Free(m->destinations);
  PyMem_Free(m->buffers);
  PyMem_Free(m->bytes);
  PyMem_Free(m->views);
}

/* Message i from a (destination, buffer) pair: NULL, or why it cannot be passed. */
static const char* take_pair(Messages* m, Py_ssize_t i, PyObject* pair) {
  PyObject* items = PySequence_Fast(pair, "");
  if (!items) return "is not a (destination rank, buffer) pair";
  const char* problem = NULL;
  if (PySequence_Fast_GET_SIZE(items) != 2) {
    problem = "is not a (destination rank, buffer) pair";
  } else {
    const long destination = PyLong_AsLong(PySequence_Fast_GET_ITEM(items, 0));
    if (destination < 0 || destination > INT32_MAX) {
      problem = "does not name a rank";
    } else if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(items, 1), &m->views[i],
                                  PyBUF_C_CONTIGUOUS) != 0) {
      problem = "is not a buffer, or not contiguous (pass np.ascontiguousarray of it)";
    } else {
      m->destinations[i] = (int)destination;
      m->buffers[i] = m->views[i].buf;
      m->bytes[i] = m->views[i].len;
    }
  }
  Py_DECREF(items);
  return problem;
}

/* Reads every pair. A pair it cannot pass gets -1 bytes, which the library refuses on every
 * rank (a collective must not fail on one rank alone); *rejected says why. */
static int take_messages(Messages* m, PyObject* pairs, PyObject** rejected) {
  const Py_ssize_t n = m->count > 0 ? m->count : 1;
  m->destinations = PyMem_Calloc(n, sizeof(int));
  m->buffers = PyMem_Calloc(n, sizeof(void*));
  m->bytes = PyMem_Calloc(n, sizeof(MPI_Count));
  m->views = PyMem_Calloc(n, sizeof(Py_buffer));
  if (!m->destinations || !m->buffers || !m->bytes || !m->views) return 0;
  for (Py_ssize_t i = 0; i < m->count; ++i) {
    const char* problem = take_pair(m, i, PyList_GET_ITEM(pairs, i));
    if (!problem) continue;
    PyErr_Clear();
    m->bytes[i] = -1;
    if (*rejected == Py_None) {
      Py_DECREF(*rejected);
      *rejected = PyUnicode_FromFormat("message %zd %s", i, problem);
    }
  }
  return 1;
}

/* What arrived: one bytearray holding every message back to back, in source order, and a
 * list of (source, offset, bytes) for each. */
static PyObject* copy_out(A2AV_Sparse received) {
  int count = 0, source = 0;
  const void* data = NULL;
  MPI_Count bytes = 0, total = 0;
  A2AV_Sparse_count(received, &count);
  for (int i = 0; i < count; ++i) {
    A2AV_Sparse_message(received, i, &source, &data, &bytes);
    total += bytes;
  }
  PyObject* storage = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)total);
  PyObject* entries = PyList_New(count);
  if (!storage || !entries) goto fail;
  MPI_Count offset = 0;
  for (int i = 0; i < count; ++i) {
    A2AV_Sparse_message(received, i, &source, &data, &bytes);
    if (bytes) memcpy(PyByteArray_AS_STRING(storage) + offset, data, (size_t)bytes);
    PyObject* entry = Py_BuildValue("iLL", source, (long long)offset, (long long)bytes);
    if (!entry) goto fail;
    PyList_SET_ITEM(entries, i, entry);
    offset += bytes;
  }
  return Py_BuildValue("NN", storage, entries);
fail:
  Py_XDECREF(storage);
  Py_XDECREF(entries);
  return NULL;
}

/* sparse(comm_handle, pairs, algorithm) -> (code, rejected, storage, entries): code is the
 * A2AV_ code; rejected None or why this rank's arguments were refused; storage and entries
 * (see copy_out) None unless code is A2AV_SUCCESS. */
static PyObject* sparse(PyObject* module, PyObject* args) {
  (void)module;
  unsigned long long handle = 0;
  PyObject* pairs = NULL;
  const char* algorithm = NULL;
  if (!PyArg_ParseTuple(args, "KO!z", &handle, &PyList_Type, &pairs, &algorithm)) return NULL;
  Messages m = {.count = PyList_GET_SIZE(pairs)};
  PyObject* rejected = Py_None;
  Py_INCREF(rejected);
  if (!take_messages(&m, pairs, &rejected)) {
    release(&m);
    Py_XDECREF(rejected);
    return PyErr_NoMemory();
  }
  A2AV_Sparse received = NULL;
  int code = A2AV_SUCCESS;
  Py_BEGIN_ALLOW_THREADS;
  code = A2AV_Sparse_exchange((int)m.count, m.destinations, m.buffers, m.bytes,
                              (MPI_Comm)(intptr_t)handle, algorithm, &received);
  Py_END_ALLOW_THREADS;
  release(&m);
  if (code != A2AV_SUCCESS) return Py_BuildValue("iNOO", code, rejected, Py_None, Py_None);
  PyObject* arrived = copy_out(received);
  A2AV_Sparse_free(&received);
  if (!arrived) {
    Py_XDECREF(rejected);
    return NULL;
  }
  PyObject* result = Py_BuildValue("iNOO", code, rejected, PyTuple_GET_ITEM(arrived, 0),
                                   PyTuple_GET_ITEM(arrived, 1));
  Py_DECREF(arrived);
  return result;
}

static PyMethodDef methods[] = {
    {"sparse", sparse, METH_VARARGS, "A2AV_Sparse_exchange on (destination, buffer) pairs"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_exchange", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__exchange(void) {
  return PyModule_Create(&module);
}
