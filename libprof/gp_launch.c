/* gp_launch.c — see gp_launch.h.  The launch calls by (callback id, kind,
 * CUPTI name), sorted by id, per domain.  Ids and names are those of the
 * CUPTI_RUNTIME_TRACE_CBID_<name> / CUPTI_DRIVER_TRACE_CBID_<name> enums in
 * CUPTI 13.0's cupti_runtime_cbid.h / cupti_driver_cbid.h; the names are
 * there to be checked against them (tests/tools/test_gp_launch.c). */
#include "gp_launch.h"

#include <stddef.h>

#include "gp_trace.h"

#define GP_RUNTIME_LAUNCHES(X) \
	X(13, KERNEL, cudaLaunch_v3020) \
	X(31, MEMCPY, cudaMemcpy_v3020) \
	X(32, MEMCPY, cudaMemcpy2D_v3020) \
	X(33, MEMCPY, cudaMemcpyToArray_v3020) \
	X(34, MEMCPY, cudaMemcpy2DToArray_v3020) \
	X(35, MEMCPY, cudaMemcpyFromArray_v3020) \
	X(36, MEMCPY, cudaMemcpy2DFromArray_v3020) \
	X(37, MEMCPY, cudaMemcpyArrayToArray_v3020) \
	X(38, MEMCPY, cudaMemcpy2DArrayToArray_v3020) \
	X(39, MEMCPY, cudaMemcpyToSymbol_v3020) \
	X(40, MEMCPY, cudaMemcpyFromSymbol_v3020) \
	X(41, MEMCPY, cudaMemcpyAsync_v3020) \
	X(42, MEMCPY, cudaMemcpyToArrayAsync_v3020) \
	X(43, MEMCPY, cudaMemcpyFromArrayAsync_v3020) \
	X(44, MEMCPY, cudaMemcpy2DAsync_v3020) \
	X(45, MEMCPY, cudaMemcpy2DToArrayAsync_v3020) \
	X(46, MEMCPY, cudaMemcpy2DFromArrayAsync_v3020) \
	X(47, MEMCPY, cudaMemcpyToSymbolAsync_v3020) \
	X(48, MEMCPY, cudaMemcpyFromSymbolAsync_v3020) \
	X(49, MEMSET, cudaMemset_v3020) \
	X(50, MEMSET, cudaMemset2D_v3020) \
	X(51, MEMSET, cudaMemsetAsync_v3020) \
	X(52, MEMSET, cudaMemset2DAsync_v3020) \
	X(142, MEMSET, cudaMemset3D_v3020) \
	X(143, MEMSET, cudaMemset3DAsync_v3020) \
	X(144, MEMCPY, cudaMemcpy3D_v3020) \
	X(145, MEMCPY, cudaMemcpy3DAsync_v3020) \
	X(160, MEMCPY, cudaMemcpyPeer_v4000) \
	X(161, MEMCPY, cudaMemcpyPeerAsync_v4000) \
	X(162, MEMCPY, cudaMemcpy3DPeer_v4000) \
	X(163, MEMCPY, cudaMemcpy3DPeerAsync_v4000) \
	X(211, KERNEL, cudaLaunchKernel_v7000) \
	X(213, KERNEL, cudaLaunch_ptsz_v7000) \
	X(214, KERNEL, cudaLaunchKernel_ptsz_v7000) \
	X(215, MEMCPY, cudaMemcpy_ptds_v7000) \
	X(216, MEMCPY, cudaMemcpy2D_ptds_v7000) \
	X(217, MEMCPY, cudaMemcpyToArray_ptds_v7000) \
	X(218, MEMCPY, cudaMemcpy2DToArray_ptds_v7000) \
	X(219, MEMCPY, cudaMemcpyFromArray_ptds_v7000) \
	X(220, MEMCPY, cudaMemcpy2DFromArray_ptds_v7000) \
	X(221, MEMCPY, cudaMemcpyArrayToArray_ptds_v7000) \
	X(222, MEMCPY, cudaMemcpy2DArrayToArray_ptds_v7000) \
	X(223, MEMCPY, cudaMemcpyToSymbol_ptds_v7000) \
	X(224, MEMCPY, cudaMemcpyFromSymbol_ptds_v7000) \
	X(225, MEMCPY, cudaMemcpyAsync_ptsz_v7000) \
	X(226, MEMCPY, cudaMemcpyToArrayAsync_ptsz_v7000) \
	X(227, MEMCPY, cudaMemcpyFromArrayAsync_ptsz_v7000) \
	X(228, MEMCPY, cudaMemcpy2DAsync_ptsz_v7000) \
	X(229, MEMCPY, cudaMemcpy2DToArrayAsync_ptsz_v7000) \
	X(230, MEMCPY, cudaMemcpy2DFromArrayAsync_ptsz_v7000) \
	X(231, MEMCPY, cudaMemcpyToSymbolAsync_ptsz_v7000) \
	X(232, MEMCPY, cudaMemcpyFromSymbolAsync_ptsz_v7000) \
	X(233, MEMSET, cudaMemset_ptds_v7000) \
	X(234, MEMSET, cudaMemset2D_ptds_v7000) \
	X(235, MEMSET, cudaMemsetAsync_ptsz_v7000) \
	X(236, MEMSET, cudaMemset2DAsync_ptsz_v7000) \
	X(243, MEMSET, cudaMemset3D_ptds_v7000) \
	X(244, MEMSET, cudaMemset3DAsync_ptsz_v7000) \
	X(245, MEMCPY, cudaMemcpy3D_ptds_v7000) \
	X(246, MEMCPY, cudaMemcpy3DAsync_ptsz_v7000) \
	X(249, MEMCPY, cudaMemcpy3DPeer_ptds_v7000) \
	X(250, MEMCPY, cudaMemcpy3DPeerAsync_ptsz_v7000) \
	X(269, KERNEL, cudaLaunchCooperativeKernel_v9000) \
	X(270, KERNEL, cudaLaunchCooperativeKernel_ptsz_v9000) \
	X(272, KERNEL, cudaLaunchCooperativeKernelMultiDevice_v9000) \
	X(311, GRAPH, cudaGraphLaunch_v10000) \
	X(312, GRAPH, cudaGraphLaunch_ptsz_v10000) \
	X(430, KERNEL, cudaLaunchKernelExC_v11060) \
	X(431, KERNEL, cudaLaunchKernelExC_ptsz_v11060) \
	X(482, MEMCPY, cudaMemcpyBatchAsync_v12080) \
	X(483, MEMCPY, cudaMemcpyBatchAsync_ptsz_v12080) \
	X(484, MEMCPY, cudaMemcpy3DBatchAsync_v12080) \
	X(485, MEMCPY, cudaMemcpy3DBatchAsync_ptsz_v12080) \
	X(505, KERNEL, __cudaLaunchKernel_v13000) \
	X(506, KERNEL, __cudaLaunchKernel_ptsz_v13000) \
	X(509, MEMCPY, cudaMemcpyBatchAsync_v13000) \
	X(510, MEMCPY, cudaMemcpyBatchAsync_ptsz_v13000) \
	X(511, MEMCPY, cudaMemcpy3DBatchAsync_v13000) \
	X(512, MEMCPY, cudaMemcpy3DBatchAsync_ptsz_v13000)

#define GP_DRIVER_LAUNCHES(X) \
	X(43, MEMCPY, cuMemcpyHtoD) \
	X(45, MEMCPY, cuMemcpyDtoH) \
	X(47, MEMCPY, cuMemcpyDtoD) \
	X(49, MEMCPY, cuMemcpyDtoA) \
	X(51, MEMCPY, cuMemcpyAtoD) \
	X(53, MEMCPY, cuMemcpyHtoA) \
	X(54, MEMCPY, cuMemcpyAtoH) \
	X(55, MEMCPY, cuMemcpyAtoA) \
	X(56, MEMCPY, cuMemcpy2D) \
	X(57, MEMCPY, cuMemcpy2DUnaligned) \
	X(58, MEMCPY, cuMemcpy3D) \
	X(60, MEMCPY, cuMemcpyHtoDAsync) \
	X(62, MEMCPY, cuMemcpyDtoHAsync) \
	X(64, MEMCPY, cuMemcpyDtoDAsync) \
	X(66, MEMCPY, cuMemcpyHtoAAsync) \
	X(67, MEMCPY, cuMemcpyAtoHAsync) \
	X(68, MEMCPY, cuMemcpy2DAsync) \
	X(69, MEMCPY, cuMemcpy3DAsync) \
	X(71, MEMSET, cuMemsetD8) \
	X(73, MEMSET, cuMemsetD16) \
	X(75, MEMSET, cuMemsetD32) \
	X(77, MEMSET, cuMemsetD2D8) \
	X(79, MEMSET, cuMemsetD2D16) \
	X(81, MEMSET, cuMemsetD2D32) \
	X(115, KERNEL, cuLaunch) \
	X(116, KERNEL, cuLaunchGrid) \
	X(117, KERNEL, cuLaunchGridAsync) \
	X(216, MEMSET, cuMemsetD8Async) \
	X(218, MEMSET, cuMemsetD16Async) \
	X(220, MEMSET, cuMemsetD32Async) \
	X(222, MEMSET, cuMemsetD2D8Async) \
	X(224, MEMSET, cuMemsetD2D16Async) \
	X(226, MEMSET, cuMemsetD2D32Async) \
	X(248, MEMCPY, cuMemcpy_v2) \
	X(249, MEMSET, cuMemsetD8_v2) \
	X(250, MEMSET, cuMemsetD16_v2) \
	X(251, MEMSET, cuMemsetD32_v2) \
	X(252, MEMSET, cuMemsetD2D8_v2) \
	X(253, MEMSET, cuMemsetD2D16_v2) \
	X(254, MEMSET, cuMemsetD2D32_v2) \
	X(276, MEMCPY, cuMemcpyHtoD_v2) \
	X(277, MEMCPY, cuMemcpyHtoDAsync_v2) \
	X(278, MEMCPY, cuMemcpyDtoH_v2) \
	X(279, MEMCPY, cuMemcpyDtoHAsync_v2) \
	X(280, MEMCPY, cuMemcpyDtoD_v2) \
	X(281, MEMCPY, cuMemcpyDtoDAsync_v2) \
	X(282, MEMCPY, cuMemcpyAtoH_v2) \
	X(283, MEMCPY, cuMemcpyAtoHAsync_v2) \
	X(284, MEMCPY, cuMemcpyAtoD_v2) \
	X(285, MEMCPY, cuMemcpyDtoA_v2) \
	X(286, MEMCPY, cuMemcpyAtoA_v2) \
	X(287, MEMCPY, cuMemcpy2D_v2) \
	X(288, MEMCPY, cuMemcpy2DUnaligned_v2) \
	X(289, MEMCPY, cuMemcpy2DAsync_v2) \
	X(290, MEMCPY, cuMemcpy3D_v2) \
	X(291, MEMCPY, cuMemcpy3DAsync_v2) \
	X(292, MEMCPY, cuMemcpyHtoA_v2) \
	X(293, MEMCPY, cuMemcpyHtoAAsync_v2) \
	X(305, MEMCPY, cuMemcpy) \
	X(306, MEMCPY, cuMemcpyAsync) \
	X(307, KERNEL, cuLaunchKernel) \
	X(318, MEMCPY, cuMemcpyPeer) \
	X(319, MEMCPY, cuMemcpyPeerAsync) \
	X(320, MEMCPY, cuMemcpy3DPeer) \
	X(321, MEMCPY, cuMemcpy3DPeerAsync) \
	X(397, MEMCPY, cuMemcpyHtoD_v2_ptds) \
	X(398, MEMCPY, cuMemcpyDtoH_v2_ptds) \
	X(399, MEMCPY, cuMemcpyDtoD_v2_ptds) \
	X(400, MEMCPY, cuMemcpyDtoA_v2_ptds) \
	X(401, MEMCPY, cuMemcpyAtoD_v2_ptds) \
	X(402, MEMCPY, cuMemcpyHtoA_v2_ptds) \
	X(403, MEMCPY, cuMemcpyAtoH_v2_ptds) \
	X(404, MEMCPY, cuMemcpyAtoA_v2_ptds) \
	X(405, MEMCPY, cuMemcpy2D_v2_ptds) \
	X(406, MEMCPY, cuMemcpy2DUnaligned_v2_ptds) \
	X(407, MEMCPY, cuMemcpy3D_v2_ptds) \
	X(408, MEMCPY, cuMemcpy_ptds) \
	X(409, MEMCPY, cuMemcpyPeer_ptds) \
	X(410, MEMCPY, cuMemcpy3DPeer_ptds) \
	X(411, MEMSET, cuMemsetD8_v2_ptds) \
	X(412, MEMSET, cuMemsetD16_v2_ptds) \
	X(413, MEMSET, cuMemsetD32_v2_ptds) \
	X(414, MEMSET, cuMemsetD2D8_v2_ptds) \
	X(415, MEMSET, cuMemsetD2D16_v2_ptds) \
	X(416, MEMSET, cuMemsetD2D32_v2_ptds) \
	X(418, MEMCPY, cuMemcpyAsync_ptsz) \
	X(419, MEMCPY, cuMemcpyHtoAAsync_v2_ptsz) \
	X(420, MEMCPY, cuMemcpyAtoHAsync_v2_ptsz) \
	X(421, MEMCPY, cuMemcpyHtoDAsync_v2_ptsz) \
	X(422, MEMCPY, cuMemcpyDtoHAsync_v2_ptsz) \
	X(423, MEMCPY, cuMemcpyDtoDAsync_v2_ptsz) \
	X(424, MEMCPY, cuMemcpy2DAsync_v2_ptsz) \
	X(425, MEMCPY, cuMemcpy3DAsync_v2_ptsz) \
	X(426, MEMCPY, cuMemcpyPeerAsync_ptsz) \
	X(427, MEMCPY, cuMemcpy3DPeerAsync_ptsz) \
	X(428, MEMSET, cuMemsetD8Async_ptsz) \
	X(429, MEMSET, cuMemsetD16Async_ptsz) \
	X(430, MEMSET, cuMemsetD32Async_ptsz) \
	X(431, MEMSET, cuMemsetD2D8Async_ptsz) \
	X(432, MEMSET, cuMemsetD2D16Async_ptsz) \
	X(433, MEMSET, cuMemsetD2D32Async_ptsz) \
	X(442, KERNEL, cuLaunchKernel_ptsz) \
	X(477, KERNEL, cuLaunchCooperativeKernel) \
	X(478, KERNEL, cuLaunchCooperativeKernel_ptsz) \
	X(480, KERNEL, cuLaunchCooperativeKernelMultiDevice) \
	X(514, GRAPH, cuGraphLaunch) \
	X(515, GRAPH, cuGraphLaunch_ptsz) \
	X(652, KERNEL, cuLaunchKernelEx) \
	X(653, KERNEL, cuLaunchKernelEx_ptsz) \
	X(776, MEMCPY, cuMemcpyBatchAsync) \
	X(777, MEMCPY, cuMemcpyBatchAsync_ptsz) \
	X(778, MEMCPY, cuMemcpy3DBatchAsync) \
	X(779, MEMCPY, cuMemcpy3DBatchAsync_ptsz) \
	X(796, MEMCPY, cuMemcpyBatchAsync_v2) \
	X(797, MEMCPY, cuMemcpyBatchAsync_v2_ptsz) \
	X(798, MEMCPY, cuMemcpy3DBatchAsync_v2) \
	X(799, MEMCPY, cuMemcpy3DBatchAsync_v2_ptsz)

struct launch_id {
	uint16_t cbid;
	uint8_t kind;
	const char *name;
};

#define ENTRY(cbid, kind, name) { cbid, GP_LAUNCH_##kind, #name },
static const struct launch_id runtime_ids[] = { GP_RUNTIME_LAUNCHES(ENTRY) };
static const struct launch_id driver_ids[] = { GP_DRIVER_LAUNCHES(ENTRY) };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct launch_id *find(uint32_t domain, uint32_t cbid)
{
	const struct launch_id *v;
	size_t n;
	if (domain == GP_API_RUNTIME) {
		v = runtime_ids;
		n = COUNT(runtime_ids);
	} else if (domain == GP_API_DRIVER) {
		v = driver_ids;
		n = COUNT(driver_ids);
	} else return NULL;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].cbid < cbid) lo = mid + 1;
		else hi = mid;
	}
	return lo < n && v[lo].cbid == cbid ? &v[lo] : NULL;
}

/* The kinds by id, made from the same lists at compile time (an id not
 * listed: 0, GP_LAUNCH_NONE): the tools ask for every API record, each
 * join of a `stats` slice once more, so a lookup, not a search. */
#define KIND_AT(cbid, kind, name) [cbid] = GP_LAUNCH_##kind,
static const uint8_t runtime_kinds[] = { GP_RUNTIME_LAUNCHES(KIND_AT) };
static const uint8_t driver_kinds[] = { GP_DRIVER_LAUNCHES(KIND_AT) };

enum gp_launch_kind gp_launch_kind(uint32_t domain, uint32_t cbid)
{
	if (domain == GP_API_RUNTIME) return cbid < COUNT(runtime_kinds) ? runtime_kinds[cbid] : GP_LAUNCH_NONE;
	if (domain == GP_API_DRIVER) return cbid < COUNT(driver_kinds) ? driver_kinds[cbid] : GP_LAUNCH_NONE;
	return GP_LAUNCH_NONE;
}

const char *gp_launch_name(uint32_t domain, uint32_t cbid)
{
	const struct launch_id *l = find(domain, cbid);
	return l ? l->name : NULL;
}
