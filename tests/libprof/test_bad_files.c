/* Golden bad inputs: each tests/data/bad/NAME.gpuprof must produce exactly
 * the verdict in NAME.expected (open error or integrity summary). */
#include <dirent.h>
#include "tl.h"

int main(void)
{
	const char *dir = "tests/data/bad";
	DIR *d = opendir(dir);
	if (!d) {
		printf("skip: %s not found (run from the repo root)\n", dir);
		return 77;
	}
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		size_t L = strlen(e->d_name);
		if (L < 9 || strcmp(e->d_name + L - 8, ".gpuprof")) continue;
		char p[600], x[600], msg[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		snprintf(x, sizeof(x), "%s/%.*s.expected", dir, (int)(L - 8), e->d_name);
		size_t elen;
		uint8_t *exp = tl_slurp(x, &elen);
		CHECK(exp != NULL, "%s missing", x);
		if (!exp) continue;
		while (elen && (exp[elen - 1] == '\n' || exp[elen - 1] == '\r')) elen--;
		exp[elen] = 0;
		uint64_t nrec;
		tl_describe(p, msg, sizeof(msg), &nrec);
		CHECK(!strcmp(msg, (char *)exp), "%s:\n   got:      %s\n   expected: %s", e->d_name, msg, (char *)exp);
		printf("%-32s %s\n", e->d_name, msg);
		free(exp);
		n++;
	}
	closedir(d);
	CHECK(n >= 10, "only %d golden files", n);
	if (tl_failures) return 1;
	printf("%d golden bad inputs give their expected messages\n", n);
	return 0;
}
