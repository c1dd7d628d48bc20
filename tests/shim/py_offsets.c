/* py_offsets.c — the CPython layout gps_stacks_py.c reads without headers
 * (shim/features/gps_py_layout.h) against the real headers of one CPython: every
 * offset by offsetof, and the str state bits by setting the bitfields.
 * Built by test_py_offsets.sh with that Python's include directory. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <stdio.h>
#include <string.h>

#include "features/gps_py_layout.h"

static int bad;
#define EQ(what, got, want)                                                              \
	do {                                                                             \
		if ((size_t)(got) != (size_t)(want)) {                                   \
			printf("FAIL 3.%d %s: shim has %zu, headers say %zu\n", PY_MINOR_VERSION, \
			       what, (size_t)(got), (size_t)(want));                     \
			bad = 1;                                                         \
		}                                                                        \
	} while (0)

int main(void)
{
#if PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11
	const struct py_layout *L = &py311;
	EQ("owner_cstack", L->owner_cstack, -1); /* 3.11 has no C-stack frames */
#elif PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 12
	const struct py_layout *L = &py312;
	EQ("owner_cstack", L->owner_cstack, FRAME_OWNED_BY_CSTACK);
#elif PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 13
	const struct py_layout *L = &py313;
	EQ("owner_cstack", L->owner_cstack, FRAME_OWNED_BY_CSTACK);
#endif
#if PY_MAJOR_VERSION == 3 && (PY_MINOR_VERSION >= 11 && PY_MINOR_VERSION <= 13)
	EQ("minor", L->minor, PY_MINOR_VERSION);
#if PY_MINOR_VERSION <= 12
	EQ("direct_frame", L->direct_frame, 0);
	EQ("PyThreadState.cframe", L->ts_cframe, offsetof(PyThreadState, cframe));
	EQ("_PyCFrame.current_frame", L->cf_current, offsetof(_PyCFrame, current_frame));
	EQ("_PyInterpreterFrame.f_code", L->f_code, offsetof(_PyInterpreterFrame, f_code));
	EQ("_PyInterpreterFrame.prev_instr", L->f_prev_instr, offsetof(_PyInterpreterFrame, prev_instr));
#else
	EQ("direct_frame", L->direct_frame, 1);
	EQ("PyThreadState.current_frame", L->ts_cframe, offsetof(PyThreadState, current_frame));
	EQ("_PyInterpreterFrame.f_executable", L->f_code, offsetof(_PyInterpreterFrame, f_executable));
	EQ("_PyInterpreterFrame.instr_ptr", L->f_prev_instr, offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	EQ("_PyInterpreterFrame.previous", L->f_previous, offsetof(_PyInterpreterFrame, previous));
	EQ("_PyInterpreterFrame.owner", L->f_owner, offsetof(_PyInterpreterFrame, owner));
	EQ("FRAME_OWNED_BY_GENERATOR", PY_OWNED_BY_GENERATOR, FRAME_OWNED_BY_GENERATOR);
	EQ("PyCodeObject.co_filename", L->co_filename, offsetof(PyCodeObject, co_filename));
	EQ("PyCodeObject.co_qualname", L->co_qualname, offsetof(PyCodeObject, co_qualname));
	EQ("PyCodeObject._co_firsttraceable", L->co_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
	EQ("PyCodeObject.co_code_adaptive", L->co_code, offsetof(PyCodeObject, co_code_adaptive));
	EQ("PyCodeObject.co_argcount", L->co_argcount, offsetof(PyCodeObject, co_argcount));
	EQ("PyCodeObject.co_localsplusnames", L->co_names, offsetof(PyCodeObject, co_localsplusnames));
	EQ("PyCodeObject.co_name", L->co_name, offsetof(PyCodeObject, co_name));
	EQ("_PyInterpreterFrame.localsplus", PY_F_LOCALSPLUS, offsetof(_PyInterpreterFrame, localsplus));
	EQ("PyTupleObject.ob_item", PY_TUPLE_ITEM, offsetof(PyTupleObject, ob_item));
	EQ("PyCellObject.ob_ref", PY_CELL_REF, offsetof(PyCellObject, ob_ref));
	EQ("PyTypeObject.tp_name", PY_TP_NAME, offsetof(PyTypeObject, tp_name));
	EQ("PyTypeObject.tp_flags", PY_TP_FLAGS, offsetof(PyTypeObject, tp_flags));
	EQ("Py_TPFLAGS_TYPE_SUBCLASS", PY_TPFLAGS_TYPE_SUBCLASS, Py_TPFLAGS_TYPE_SUBCLASS);
	EQ("sizeof(PyASCIIObject)", L->ascii_size, sizeof(PyASCIIObject));
	EQ("PyCompactUnicodeObject.utf8", L->utf8, offsetof(PyCompactUnicodeObject, utf8));
	EQ("PyCompactUnicodeObject.utf8_length", L->utf8 - 8, offsetof(PyCompactUnicodeObject, utf8_length));
	EQ("PyObject.ob_type", PY_OB_TYPE, offsetof(PyObject, ob_type));
	EQ("PyASCIIObject.length", PY_STR_LENGTH, offsetof(PyASCIIObject, length));
	EQ("PyASCIIObject.state", PY_STR_STATE, offsetof(PyASCIIObject, state));
	EQ("sizeof(_Py_CODEUNIT)", 2, sizeof(_Py_CODEUNIT));
	PyASCIIObject o;
	unsigned w;
	memset(&o, 0, sizeof o);
	o.state.compact = 1;
	memcpy(&w, &o.state, sizeof w);
	EQ("state.compact bit", PY_STATE_COMPACT, w);
	memset(&o, 0, sizeof o);
	o.state.ascii = 1;
	memcpy(&w, &o.state, sizeof w);
	EQ("state.ascii bit", PY_STATE_ASCII, w);
	if (!bad)
		printf("CPython 3.%d: every offset the shim reads matches the headers\n", PY_MINOR_VERSION);
	return bad;
#else
	printf("skip: CPython %d.%d headers; the shim reads 3.11 to 3.13\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	return 77;
#endif
}
