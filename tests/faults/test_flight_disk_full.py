"""The flight recorder's capture meets a full disk (docs/FLIGHT.md).
An armed job (2 s of history) writes its captures into a 64 KiB tmpfs that a
filler file has all but filled (needs mount(2): root or CAP_SYS_ADMIN;
skipped otherwise).  `gpuprof trigger --wait` is told the capture failed and
why; the job says it once (one gpuprof: line naming the file and ENOSPC),
removes the partial file, refuses a second trigger (one line each side:
captures are off in that process), and runs on: exit 0, its stdout, no
foreign stderr, nothing of ours left in the tmpfs or the control directory."""
import os
import subprocess
import time

import fl

WORKLOAD = os.path.join(fl.B, "tests", "fake", "workload")
STEPS = 900

with fl.TmpDir() as d:
    ctl = os.path.join(d, "ctl")
    os.mkdir(ctl, 0o700)
    mnt = os.path.join(d, "mnt")
    os.mkdir(mnt)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt], capture_output=True, text=True)
    if m.returncode != 0:
        fl.skip(f"cannot mount a 64 KiB tmpfs ({m.stderr.strip()})")
    try:
        with open(os.path.join(mnt, "filler"), "wb") as f:
            try:
                f.write(b"\0" * (60 << 10))
            except OSError:
                pass
        env = fl.traced_env(os.path.join(mnt, "t-%p.gpuprof"), GPUPROF_FLIGHT_RECORDER="2s",
                            GPUPROF_CONTROL_DIR=ctl, GPUPROF_FLUSH_MS=100)
        tenv = fl.base_env()
        tenv["GPUPROF_CONTROL_DIR"] = ctl
        with open(os.path.join(d, "out"), "w+") as o, open(os.path.join(d, "err"), "w+") as e:
            p = fl.spawn([WORKLOAD, "steps", str(STEPS), "5"], env, stdout=o, stderr=e)
            reg = os.path.join(ctl, "%d.proc" % p.pid)
            end = time.time() + 20 * fl.SLOW
            step = -1
            while time.time() < end and step < 300 and p.poll() is None:
                try:
                    step = int(dict(l.split("=", 1) for l in open(reg).read().splitlines()[1:] if "=" in l)["step"])
                except (OSError, KeyError, ValueError):
                    pass
                time.sleep(0.02)
            fl.check(step >= 300, f"the job never registered step 300 (last {step})")
            t1 = subprocess.run([fl.GPUPROF, "trigger", "--steps", "3", "--wait", str(p.pid)], env=tenv,
                                capture_output=True, text=True, timeout=60 * fl.SLOW)
            fl.check(t1.returncode == 2 and t1.stderr.count("\n") == 1 and
                     f"pid {p.pid}: failed: capture 1: cannot write " in t1.stderr and
                     "No space left on device" in t1.stderr,
                     f"first trigger: {t1.returncode} {t1.stdout!r} {t1.stderr!r}")
            t2 = subprocess.run([fl.GPUPROF, "trigger", str(p.pid)], env=tenv, capture_output=True, text=True,
                                timeout=60 * fl.SLOW)
            fl.check(t2.returncode == 2 and "refused: captures are off in this process" in t2.stderr,
                     f"second trigger: {t2.returncode} {t2.stdout!r} {t2.stderr!r}")
            st, to = fl.wait_status(p, 60 * fl.SLOW)
            o.seek(0)
            e.seek(0)
            res = fl.Result(st, o.read(), e.read(), to)
        fl.check(res.desc() == "exit 0", f"job: {res.desc()}")
        fl.check(res.out == "steps %d\n" % STEPS, f"job stdout {res.out!r}")
        fl.check(res.foreign_lines() == [], f"foreign stderr {res.foreign_lines()}")
        gp = res.gp_lines()
        full = [l for l in gp if "cannot write" in l]
        fl.check(len(full) == 1 and "No space left on device; partial file removed, no more captures" in full[0]
                 and mnt in full[0], f"job's lines {gp}")
        fl.check(len([l for l in gp if "refused: captures are off" in l]) == 1, f"job's lines {gp}")
        fl.check(sorted(os.listdir(mnt)) == ["filler"], f"left in the full file system: {os.listdir(mnt)}")
        fl.check(os.listdir(ctl) == [], f"left in the control directory: {os.listdir(ctl)}")
        print(f"disk full at capture: {t1.stderr.strip()}; job: {full}")
    finally:
        subprocess.run(["umount", mnt])
fl.finish()
