/* jsonmem.h - jansson's allocations, watched.
 *
 * jansson 2.14 does not report every allocation that fails: its parser
 * may return a value with a byte of a string left out ("quantization_cnfig"
 * for "quantization_config", measured by failing one allocation), and
 * json_dumps() a text with a key missing.  Read as they are, a config
 * short of memory would say something else (a weight dequantized with
 * other blocks, or not at all).  So stfs counts, per thread, the
 * allocations jansson asked for and did not get, and every use of
 * jansson whose result matters (a parse, an object built and dumped)
 * compares the count before and after: a change means out of memory,
 * whatever jansson returned.
 */
#ifndef STFS_JSONMEM_H
#define STFS_JSONMEM_H

/* Make jansson allocate through the counting function (the front ends,
 * first thing in main(); without it nothing is counted). */
void jsonmem_watch(void);

/* Allocations jansson did not get on this thread so far. */
unsigned long jsonmem_failures(void);

#endif
