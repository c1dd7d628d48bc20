/* hostlink.c — see hostlink.h. */
#include "analysis/gpu/hostlink.h"

#include <string.h>

/* Pinned copies reach 50 GB/s on PCIe Gen5 x16 (examples/vector_add-h200.gpuprof:
 * pinned host-to-device copies at 50 GB/s on an H200), 79 % of the link's
 * 63 GB/s per direction; the older generations are given the same share of
 * theirs (Gen4 x16: 31.5 GB/s, Gen3 x16: 15.75 GB/s). */
#define GEN5_GBPS 50.0
#define GEN4_GBPS 25.0
#define GEN3_GBPS 12.5

/* A model name is one word of the device name ("H100" in "NVIDIA H100 80GB
 * HBM3", "A100" in "NVIDIA A100-SXM4-80GB", "4090" in "NVIDIA GeForce RTX
 * 4090"); each card's own PCIe generation at x16 (its datasheet). */
static const struct { const char *model; double gbps; const char *link; } models[] = {
	{"GH200", 0, "NVLink-C2C"}, {"GB200", 0, "NVLink-C2C"},
	{"H100", GEN5_GBPS, "PCIe Gen5 x16"}, {"H200", GEN5_GBPS, "PCIe Gen5 x16"},
	{"H800", GEN5_GBPS, "PCIe Gen5 x16"}, {"H20", GEN5_GBPS, "PCIe Gen5 x16"},
	{"B200", GEN5_GBPS, "PCIe Gen5 x16"}, {"B100", GEN5_GBPS, "PCIe Gen5 x16"},
	{"5090", GEN5_GBPS, "PCIe Gen5 x16"}, {"5080", GEN5_GBPS, "PCIe Gen5 x16"},
	{"A100", GEN4_GBPS, "PCIe Gen4 x16"}, {"A800", GEN4_GBPS, "PCIe Gen4 x16"},
	{"A40", GEN4_GBPS, "PCIe Gen4 x16"}, {"A30", GEN4_GBPS, "PCIe Gen4 x16"},
	{"A10", GEN4_GBPS, "PCIe Gen4 x16"}, {"A6000", GEN4_GBPS, "PCIe Gen4 x16"},
	{"L40", GEN4_GBPS, "PCIe Gen4 x16"}, {"L40S", GEN4_GBPS, "PCIe Gen4 x16"},
	{"L4", GEN4_GBPS, "PCIe Gen4 x16"}, {"L20", GEN4_GBPS, "PCIe Gen4 x16"},
	{"4090", GEN4_GBPS, "PCIe Gen4 x16"}, {"3090", GEN4_GBPS, "PCIe Gen4 x16"},
	{"V100", GEN3_GBPS, "PCIe Gen3 x16"}, {"T4", GEN3_GBPS, "PCIe Gen3 x16"},
	{"P100", GEN3_GBPS, "PCIe Gen3 x16"},
};

struct hostlink hostlink_of(const char *name)
{
	struct hostlink none = {0, NULL};
	if (!name) return none;
	for (const char *w = name; *w;) {
		size_t n = strcspn(w, " -_");
		for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
			if (n == strlen(models[i].model) && !strncmp(w, models[i].model, n))
				return (struct hostlink){models[i].gbps, models[i].link};
		w += n;
		w += strspn(w, " -_");
	}
	return none;
}
