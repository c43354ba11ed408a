/* jsonmem.h - jansson's allocations, watched.
 *
 * jansson 2.14 does not report every allocation that fails: its parser
 * may return a value with a byte of a string left out ("quantization_cnfig"
 * for "quantization_config", measured by failing one allocation), or
 * lose a string's closing quote and read and write past its buffer (a
 * heap overflow: test_jsonmem.c, found by int-failalloc), and
 * json_dumps() a text with a key missing.  Read as they are, a config
 * short of memory would say something else (a weight dequantized with
 * other blocks, or not at all).  So stfs counts, per thread, the
 * allocations jansson asked for and did not get, and every use of
 * jansson whose result matters (a parse, an object built and dumped)
 * compares the count before and after: a change means out of memory,
 * whatever jansson returned.  And a failed allocation is handed a block
 * malloc'd beforehand (a pool of 256 KiB, filled again once allocations
 * succeed), so that jansson itself never meets NULL while the pool
 * lasts: no overflow, no byte left out.
 */
#ifndef STFS_JSONMEM_H
#define STFS_JSONMEM_H

#include <stddef.h>

/* Make jansson allocate through the counting function (the front ends,
 * first thing in main(); without it nothing is counted). */
void jsonmem_watch(void);

/* The allocator under the counting one: malloc, or f (tests: one that
 * fails when told; NULL: malloc again). */
void jsonmem_set_malloc(void *(*f)(size_t));

/* Allocations jansson did not get on this thread so far. */
unsigned long jsonmem_failures(void);

#endif
