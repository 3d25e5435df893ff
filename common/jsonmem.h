/* jsonmem — the nodes of short-lived JSON trees taken from blocks, not
 * malloc.
 *
 * A fleet's Hardware decodes into a jansson tree of a few hundred nodes,
 * each its own malloc() and, later, its own free(). In the daemon, with a
 * fleet's answers kept beside the trees, those calls meet cold caches and
 * the decode costs three times what it does in a loop. Between
 * jsonmem_begin() and jsonmem_end(), jansson's allocations on this thread
 * are cut one after the other from 64 KiB blocks instead; a block goes
 * back for reuse once every node cut from it is freed, by whichever
 * thread frees it, and its thread has moved on to another block or
 * exited (so a thread that decodes no more keeps one block). Outside, and on any other thread, jansson allocates with
 * malloc() as before: the two kinds of node mix in one tree freely.
 *
 * For trees that are freed soon (an answer's Hardware, a listing's
 * objects read one by one): one node kept for long keeps its whole block.
 * Objects a cache holds for the daemon's life stay malloc()'s. Nothing
 * between the two calls may hand jansson's memory to free() itself:
 * json_dumps()'s string, cut from a block, is not malloc()'s.
 *
 * jsonmem installs itself as jansson's allocator when the program starts
 * (json_set_alloc_funcs()). It stays out where it cannot reserve its
 * address range, with IRONBELL_JSONMEM=off in the environment, where the
 * build defines JSONMEM_OFF (the Kea hook), on 32-bit machines, and in
 * builds with AddressSanitizer or ThreadSanitizer, so that the sanitizer
 * still sees every node and every leak. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define JSONMEM_BLOCK ((size_t)64 * 1024)

/* jansson's allocations on this thread are cut from blocks until the
 * matching jsonmem_end(). Nests. */
void jsonmem_begin(void);
void jsonmem_end(void);

/* Whether blocks are in use in this process. */
bool jsonmem_enabled(void);

/* Whether p was cut from a block (for tests). */
bool jsonmem_owns(const void *p);

struct jsonmem_stats {
	size_t blocks;      /* taken from the address range, ever */
	size_t blocks_free; /* given back, waiting for reuse */
	size_t blocks_cold; /* of those, their pages returned to the kernel */
	size_t big;         /* allocations over 4 KiB, while begun: malloc()'s */
};
void jsonmem_stats(struct jsonmem_stats *st);
