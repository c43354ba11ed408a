/* addrspace.h - the front ends' address space, sized to what they use.
 * Not a library's business: stfs and stfs-inspect call it first thing in
 * main(), before any thread exists.
 *
 * Users run stfs under `ulimit -v` (HPC schedulers, systemd's
 * MemoryMax, small pods), which counts address space reserved, not
 * memory used.  glibc's defaults reserve far more than stfs touches: 8 MiB
 * of stack per thread (the deepest stfs thread touches 36 KiB: a TLS
 * handshake) and, for threads that allocate, a malloc arena of 64 MiB each
 * (up to 8 per core).  An idle mount reserved 248 MB for 4.5 MB resident,
 * and under `ulimit -v 262144` a busy one died when libfuse could not
 * allocate a new worker's read buffer.
 */
#ifndef STFS_ADDRSPACE_H
#define STFS_ADDRSPACE_H

/* Stack of every thread created from now on (libfuse's workers, the
 * offload pool, HTTP workers and spool writers, parallel batches,
 * libcurl's resolver): 512 KiB, 14 times the deepest measured (a pickle
 * nested to the depth limit walks 70 KiB at open).  Sanitizers' frames
 * are several times larger: 2 MiB there. */
#if defined(__SANITIZE_ADDRESS__)
#define ADDRSPACE_STACK (2u << 20)
#else
#define ADDRSPACE_STACK (512u << 10)
#endif

/* The default thread stack (ADDRSPACE_STACK) and one malloc arena for
 * all threads (glibc's per-thread cache still serves small blocks
 * without the lock).  What it cannot set stays glibc's default. */
void addrspace_setup(void);

#endif
