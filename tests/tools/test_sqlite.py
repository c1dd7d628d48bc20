"""`gpuprof export --format sqlite`: nsys-like tables, counts, string ids,
and a kernel <-> runtime join on correlationId (python's sqlite3 module)."""
import os
import sqlite3

import tt

with tt.tmpdir() as d:
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    db = os.path.join(d, "t.db")
    open(db, "w").write("stale")  # an existing file is replaced
    tt.gp("export", "--format", "sqlite", trace, "-o", db)
    c = sqlite3.connect(db)
    q = lambda sql: c.execute(sql).fetchall()
    tt.eq(q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), [(5,)], "kernels")
    tt.eq(q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), [(8,)], "runtime calls")
    tt.eq(q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER"), [(1,)], "driver calls")
    tt.eq(q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"), [(2,)], "memcpys")
    tt.eq(q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"), [(1,)], "memsets")
    tt.eq(q("SELECT eventType, count(*) FROM NVTX_EVENTS GROUP BY eventType"),
          [(34, 2), (59, 5), (60, 1)], "NVTX events by type (mark, push/pop, start/end)")
    tt.eq(q("SELECT name, smCount, computeMajor, computeMinor, totalMemory FROM TARGET_INFO_GPU"),
          [("NVIDIA H200", 132, 9, 0, 150000000000)], "GPU info")
    tt.eq(q("SELECT pid, name, host FROM PROCESSES"), [(1000, "python train.py", "testhost")], "process")
    tt.eq(q("SELECT s.value, t.tid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId ORDER BY t.tid"),
          [("main", 1000), ("worker", 1001)], "thread names")
    # kernel <-> runtime launch join: every runtime-launched kernel finds its call
    rows = q("""SELECT k.correlationId, sn.value, dn.value, rn.value, r.start, k.start
                FROM CUPTI_ACTIVITY_KIND_KERNEL k
                JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
                JOIN StringIds sn ON sn.id = k.shortName
                JOIN StringIds dn ON dn.id = k.demangledName
                JOIN StringIds rn ON rn.id = r.nameId
                ORDER BY k.correlationId""")
    tt.eq([(r[0], r[1], r[3]) for r in rows],
          [(2, "vecAdd", "cudaLaunchKernel"), (3, "my_plain_kernel", "cudaLaunchKernel"),
           (4, "vecAdd", "cudaLaunchKernel"), (7, "vecAdd", "cudaLaunchKernel")], "kernel/runtime join")
    tt.eq(rows[0][2], "vecAdd(float const*, float const*, float*, int)", "demangledName")
    tt.expect(all(r[4] < r[5] for r in rows), "launch before kernel")
    tt.eq(q("""SELECT k.correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL k
               JOIN CUPTI_ACTIVITY_KIND_DRIVER r USING (correlationId)"""), [(9,)], "driver launch join")
    tt.eq(q("SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), [(49000,)], "kernel time")
    tt.eq(q("SELECT copyKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start"),
          [(1, 1000000), (2, 3000000)], "memcpy kinds/bytes")
    tt.eq(q("""SELECT text, s.value FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.domainId
               WHERE eventType = 60"""), [("epoch", "mydomain")], "start/end range with domain")
    # globalTid = pid << 24 | tid
    tt.eq(q("SELECT DISTINCT globalTid >> 24, globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME"),
          [(1000, 1000)], "globalTid encoding")
    tt.eq(q("SELECT count(*) FROM COUNTERS"), [(2,)], "counters")
    # the memcpy kinds by CUpti_ActivityMemcpyKind value, as nsys names them
    kinds = ["Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host", "Array-to-Array",
             "Array-to-Device", "Device-to-Array", "Device-to-Device", "Host-to-Host", "Peer-to-Peer"]
    tt.eq(q("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER ORDER BY id"), list(enumerate(kinds)), "memcpy kinds")
    tt.eq(q("SELECT name FROM ENUM_CUDA_MEMCPY_OPER WHERE id IN (1, 2, 10) ORDER BY id"),
          [("HtoD",), ("DtoH",), ("PtoP",)], "memcpy kinds' short names")
    c.close()
tt.finish()
