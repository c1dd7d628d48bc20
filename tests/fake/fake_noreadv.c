/* fake_noreadv.c — preloaded after the shim: process_vm_readv refused, as a
 * seccomp profile or a ptrace policy may do (EPERM), so the shim's checked
 * reads of Python frames go through their pipe fallback
 * (shim/features/gps_stacks_py.c safe_read). */
#include <errno.h>
#include <sys/types.h>
#include <sys/uio.h>

__attribute__((visibility("default"))) ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt, const struct iovec *remote,
			 unsigned long riovcnt, unsigned long flags)
{
	(void)pid, (void)local, (void)liovcnt, (void)remote, (void)riovcnt, (void)flags;
	errno = EPERM;
	return -1;
}
