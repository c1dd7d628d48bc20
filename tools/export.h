/* export.h — the export formats; each returns a gpuprof exit code. */
#ifndef GPUPROF_TOOL_EXPORT_H
#define GPUPROF_TOOL_EXPORT_H

int export_perfetto(const char *in, const char *out, int strict);
int export_sqlite(const char *in, const char *out, int strict);

#endif
