/* libFuzzer harness for the reader: the input bytes become a file (memfd),
 * which is opened and read completely in file order and in time order, with
 * string/source lookups and the integrity summary.  `make fuzz-smoke`. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gp_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("gpfuzz", MFD_CLOEXEC);
	if (fd < 0) return 0;
	if (size && write(fd, data, size) != (ssize_t)size) { close(fd); return 0; }
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	gp_reader *r;
	if (gp_reader_open(path, &r) == 0) {
		const gp_record *rec;
		volatile uint64_t sink = 0;
		while (gp_reader_next(r, &rec) == 1) {
			sink += gp_record_time(rec);
			if (rec->type == GP_REC_API) { const char *s = gp_reader_string(r, rec->u.api.name_id); if (s) sink += (uint8_t)s[0]; }
			if (rec->type == GP_REC_STACK) for (uint32_t i = 0; i < rec->u.stack.nframes; i++) sink += rec->u.stack.frames[i];
			if (rec->type == GP_REC_STRING && rec->u.string.len) sink += (uint8_t)rec->u.string.str[rec->u.string.len - 1];
		}
		while (gp_reader_next_ordered(r, &rec) == 1) sink += gp_record_time(rec) + rec->source_id;
		gp_reader_load_meta(r);
		gp_reader_source(r, 1);
		char buf[512];
		gp_reader_describe_integrity(r, buf, sizeof(buf));
		gp_reader_rewind(r);
		if (gp_reader_next(r, &rec) == 1) sink += rec->type;
		gp_reader_close(r);
	} else {
		(void)gp_reader_errmsg(NULL);
	}
	close(fd);
	return 0;
}
