/* gps_py_layout.h — where CPython 3.11, 3.12 and 3.13 (release builds: no
 * Py_DEBUG / Py_TRACE_REFS) keep what gps_stacks_py.c reads.  Constants, so
 * the shim needs no Python headers; tests/shim/test_py_offsets.sh compiles
 * tests/shim/py_offsets.c against the real headers and compares. */
#ifndef GPS_PY_LAYOUT_H
#define GPS_PY_LAYOUT_H
#include <stddef.h>

/* Offsets (bytes) in CPython release builds (no Py_DEBUG / Py_TRACE_REFS). */
struct py_layout {
	int minor;
	int direct_frame;        /* 3.13: ts_cframe is PyThreadState.current_frame itself */
	size_t ts_cframe;        /* PyThreadState.cframe            (cpython/pystate.h) */
	size_t cf_current;       /* _PyCFrame.current_frame         (cpython/pystate.h) */
	size_t f_code;           /* _PyInterpreterFrame.f_code (3.13: f_executable, a code object or None) */
	size_t f_previous;       /* _PyInterpreterFrame.previous */
	size_t f_prev_instr;     /* _PyInterpreterFrame.prev_instr (3.13: instr_ptr; the same use) */
	size_t f_owner;          /* _PyInterpreterFrame.owner (char) */
	int owner_cstack;        /* FRAME_OWNED_BY_CSTACK, -1: none in this version */
	size_t co_filename;      /* PyCodeObject.co_filename        (cpython/code.h) */
	size_t co_qualname;      /* PyCodeObject.co_qualname */
	size_t co_firsttraceable;/* PyCodeObject._co_firsttraceable (int) */
	size_t co_code;          /* PyCodeObject.co_code_adaptive */
	size_t co_argcount;      /* PyCodeObject.co_argcount (int) */
	size_t co_firstlineno;   /* PyCodeObject.co_firstlineno (int; warnings only) */
	size_t co_names;         /* PyCodeObject.co_localsplusnames (a tuple; [0] the first argument) */
	size_t co_name;          /* PyCodeObject.co_name */
	size_t ascii_size;       /* sizeof(PyASCIIObject): compact ASCII data follow (cpython/unicodeobject.h) */
	size_t utf8;             /* PyCompactUnicodeObject.utf8 (utf8_length just before) */
};
#define PY_OB_TYPE 8             /* PyObject.ob_type */
#define PY_F_LOCALSPLUS 72       /* _PyInterpreterFrame.localsplus, 3.11 to 3.13 */
#define PY_TUPLE_ITEM 24         /* PyTupleObject.ob_item */
#define PY_CELL_REF 16           /* PyCellObject.ob_ref */
#define PY_TP_NAME 24            /* PyTypeObject.tp_name (const char *) */
#define PY_TP_FLAGS 168          /* PyTypeObject.tp_flags (unsigned long) */
#define PY_TPFLAGS_TYPE_SUBCLASS (1ul << 31) /* Py_TPFLAGS_TYPE_SUBCLASS: the object is a type */
#define PY_STR_LENGTH 16         /* PyASCIIObject.length */
#define PY_STR_STATE 32          /* PyASCIIObject.state: bit 5 compact, bit 6 ascii */
#define PY_STATE_COMPACT 0x20u
#define PY_STATE_ASCII 0x40u
#define PY_OWNED_BY_GENERATOR 1  /* FRAME_OWNED_BY_GENERATOR, 3.11 to 3.13 */

__attribute__((unused)) static const struct py_layout py311 = {
	.minor = 11, .ts_cframe = 56, .cf_current = 8, .f_code = 32, .f_previous = 48,
	.f_prev_instr = 56, .f_owner = 69, .owner_cstack = -1, .co_filename = 112,
	.co_qualname = 128, .co_firsttraceable = 168, .co_code = 184, .co_argcount = 56, .co_firstlineno = 72, .co_names = 96,
	.co_name = 120, .ascii_size = 48, .utf8 = 56,
};
__attribute__((unused)) static const struct py_layout py312 = {
	.minor = 12, .ts_cframe = 56, .cf_current = 0, .f_code = 0, .f_previous = 8,
	.f_prev_instr = 56, .f_owner = 70, .owner_cstack = 3, .co_filename = 112,
	.co_qualname = 128, .co_firsttraceable = 176, .co_code = 192, .co_argcount = 52, .co_firstlineno = 68, .co_names = 96,
	.co_name = 120, .ascii_size = 40, .utf8 = 48,
};
__attribute__((unused)) static const struct py_layout py313 = {
	.minor = 13, .direct_frame = 1, .ts_cframe = 72, .cf_current = 0, .f_code = 0, .f_previous = 8,
	.f_prev_instr = 56, .f_owner = 70, .owner_cstack = 3, .co_filename = 112,
	.co_qualname = 128, .co_firsttraceable = 184, .co_code = 200, .co_argcount = 52, .co_firstlineno = 68, .co_names = 96,
	.co_name = 120, .ascii_size = 40, .utf8 = 48,
};

#endif
