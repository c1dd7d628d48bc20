/* fake_api.h — the test-only interface between the fake libcudart (which
 * plays the CUDA runtime+driver) and the fake libcupti (which plays CUPTI).
 * The fake cudart finds these with dlsym on an RTLD_NOLOAD handle of
 * libcupti.so.13: like the real driver, it only reports to a CUPTI that some
 * tool has loaded. */
#ifndef FAKE_API_H
#define FAKE_API_H
#include <stddef.h>
#include <stdint.h>

struct fake_cupti_call {
	int domain;            /* CUpti_CallbackDomain */
	uint32_t cbid;
	const char *func;      /* functionName as CUPTI gives it */
	const char *symbol;    /* symbolName (kernel launches) */
	const void *params;
	int ret;               /* return value, read by the tool at exit */
	/* filled by the fake CUPTI */
	uint32_t correlation_id;
	uint64_t correlation_data;
	uint64_t start;
	uint32_t tid;
};

typedef void (*fake_cupti_call_fn)(struct fake_cupti_call *c);
typedef void (*fake_cupti_resource_fn)(uint32_t cbid);
typedef void (*fake_cupti_push_fn)(const void *record, size_t size);
typedef uint64_t (*fake_cupti_now_fn)(void);

/* The UUID the fakes give the GPU NVML numbers i (fake_nvml.c prints it as
 * "GPU-fa4e0000-0000-4000-8000-0000000000ii"; fake_cudart.c puts it in the
 * DEVICE records of the CUDA devices FAKE_CUDA_UUID_ORDER maps to it). */
static inline void fake_gpu_uuid(unsigned i, unsigned char out[16])
{
	static const unsigned char base[16] = {0xfa, 0x4e, 0, 0, 0, 0, 0x40, 0, 0x80};
	for (int k = 0; k < 16; k++)
		out[k] = base[k];
	out[15] = (unsigned char)i;
}

/* A CUDA graph, graph node or executable graph of the fake libcudart:
 * its CUgraph / CUgraphNode / CUgraphExec handles point to one, and the fake
 * CUPTI's cuptiGetGraphId / cuptiGetGraphNodeId read the id there. */
struct fake_graph_obj { uint64_t id; };

/* exported by the fake libcupti */
/* a graph resource callback (CUPTI_CBID_RESOURCE_GRAPH*): graph_data is
 * the CUpti_GraphData the callback gets as resourceDescriptor */
void fake_cupti_resource_graph(uint32_t cbid, const void *graph_data);
void fake_cupti_call_enter(struct fake_cupti_call *c);
void fake_cupti_call_exit(struct fake_cupti_call *c);
void fake_cupti_resource(uint32_t cbid);
void fake_cupti_push_record(const void *record, size_t size);
uint64_t fake_cupti_now(void);

/* exported by the fake libcudart for the workload */
void fakeRegisterKernel(const void *func, const char *name);
int fakeLaunchFromNativeThread(const void *func, int n);

#endif
