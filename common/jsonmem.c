/* jsonmem — the nodes of short-lived JSON trees taken from blocks, not
 * malloc.
 *
 * DESIGN: at start the process reserves a range of address space (no
 * memory, PROT_NONE) and makes it usable 2 MiB at a time as blocks are
 * first needed. jansson's free() hook tells a node cut from a block from a
 * malloc()ed one by its address alone: inside the range or not. So malloc()
 * stays the allocator of everything else, and a tree may hold both kinds.
 *
 * A block of 64 KiB starts with a count of the nodes cut from it and not
 * yet freed. The thread cutting from a block (its owner) counts its cuts
 * in a thread-local variable, not in the block, and holds instead a bias
 * of 2^40 in the block's count: a free on any thread is one atomic
 * decrement, which cannot reach zero while the bias is held. The owner
 * trades the bias for its count when it moves to a new block (or exits);
 * the free, or that trade, that brings the count to zero gives the block
 * back. Blocks given back are reused last-in first-out; past 64 MiB of
 * them, the pages of each further one are returned to the kernel first.
 *
 * Allocations of over 4 KiB (a user-data string) go to malloc(), as do
 * all allocations when the range cannot be reserved, when IRONBELL_JSONMEM
 * is "off", in builds with AddressSanitizer or ThreadSanitizer (so
 * that they see every node as malloc()'s), and in the Kea hook
 * (JSONMEM_OFF, see dhcp/kea/hook.mk). */
#include "config.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/jsonmem.h"

#if defined(JSONMEM_OFF)
/* set by the build (the Kea hook) */
#elif UINTPTR_MAX <= 0xffffffffu
#define JSONMEM_OFF 1 /* no room for the range */
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define JSONMEM_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define JSONMEM_OFF 1
#endif
#endif

#define BLOCK JSONMEM_BLOCK
#define RANGE ((uintptr_t)1 << 32) /* address space: 65,536 blocks */
#define GROW ((size_t)2 << 20)  /* made usable this much at a time */
#define BIG ((size_t)4096)      /* larger allocations from malloc() */
#define ALIGN ((size_t)16)      /* as malloc()'s */
#define BIAS ((long long)1 << 40) /* the owner's hold on its block */
#define WARM_MAX 1024           /* blocks kept with their pages (64 MiB) */

struct block {
	atomic_llong refs;
	struct block *next; /* on a free list */
};
#define HEAD ((sizeof(struct block) + ALIGN - 1) & ~(ALIGN - 1))

/* Set once, before main(), and only read after. */
static char *lo, *hi;
static pthread_key_t key;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* Guarded by mu. */
static char *top;           /* the next block never used */
static char *usable;        /* end of the part made readable and writable */
static struct block *warm;  /* given back, pages kept */
static struct block *cold;  /* given back, pages returned */
static size_t n_warm, n_cold, n_blocks;
/* No block to take: the range used up, or mprotect() refused. Set under
 * mu, cleared when a block is given back; read without it, so that
 * allocations then go to malloc() without taking mu each time. */
static atomic_bool spent;

static atomic_size_t n_big;

static __thread struct {
	struct block *b; /* owned */
	char *p, *end;   /* what is left of it */
	long long cuts;  /* cut from b, not yet in its count */
	int depth;       /* of jsonmem_begin() */
	bool keyed;      /* thread_gone() will run at exit */
} t;

/* Under mu. */
static void push(struct block **list, size_t *n, struct block *b)
{
	b->next = *list;
	*list = b;
	(*n)++;
}

static void give_back(struct block *b)
{
	pthread_mutex_lock(&mu);
	atomic_store_explicit(&spent, false, memory_order_relaxed);
	if (n_warm < WARM_MAX) {
		push(&warm, &n_warm, b);
		pthread_mutex_unlock(&mu);
		return;
	}
	pthread_mutex_unlock(&mu);
	bool returned = madvise(b, BLOCK, MADV_DONTNEED) == 0; /* outside the lock */
	pthread_mutex_lock(&mu);
	if (returned)
		push(&cold, &n_cold, b);
	else
		push(&warm, &n_warm, b);
	pthread_mutex_unlock(&mu);
}

static void leave_block(void)
{
	struct block *b = t.b;
	if (!b)
		return;
	long long d = t.cuts - BIAS;
	t.b = NULL;
	t.p = t.end = NULL;
	t.cuts = 0;
	if (atomic_fetch_add_explicit(&b->refs, d, memory_order_acq_rel) + d == 0)
		give_back(b);
}

static void thread_gone(void *unused)
{
	(void)unused;
	leave_block();
	t.keyed = false; /* a later destructor's decode keys it again */
}

static struct block *new_block(void)
{
	struct block *b = NULL;
	pthread_mutex_lock(&mu);
	if (warm) {
		b = warm;
		warm = b->next;
		n_warm--;
	} else if (cold) {
		b = cold;
		cold = b->next;
		n_cold--;
	} else if (top < hi) {
		if (top == usable) {
			size_t g = (size_t)(hi - usable) < GROW ? (size_t)(hi - usable) : GROW;
			if (mprotect(usable, g, PROT_READ | PROT_WRITE) == 0)
				usable += g;
		}
		if (top < usable) {
			b = (struct block *)(void *)top;
			top += BLOCK;
			n_blocks++;
		}
	}
	if (!b)
		atomic_store_explicit(&spent, true, memory_order_relaxed);
	pthread_mutex_unlock(&mu);
	return b;
}

static bool take_block(void)
{
	if (atomic_load_explicit(&spent, memory_order_relaxed))
		return false;
	leave_block();
	if (!t.keyed) {
		if (pthread_setspecific(key, &t) != 0)
			return false;
		t.keyed = true;
	}
	struct block *b = new_block();
	if (!b)
		return false;
	atomic_store_explicit(&b->refs, BIAS, memory_order_relaxed);
	t.b = b;
	t.p = (char *)b + HEAD;
	t.end = (char *)b + BLOCK;
	return true;
}

static void *jm_malloc(size_t n)
{
	if (t.depth > 0) {
		if (n > BIG) {
			atomic_fetch_add_explicit(&n_big, 1, memory_order_relaxed);
			return malloc(n);
		}
		size_t need = n ? (n + ALIGN - 1) & ~(ALIGN - 1) : ALIGN;
		if ((size_t)(t.end - t.p) < need && !take_block())
			return malloc(n);
		void *p = t.p;
		t.p += need;
		t.cuts++;
		return p;
	}
	return malloc(n);
}

static void jm_free(void *p)
{
	uintptr_t c = (uintptr_t)p;
	if (c >= (uintptr_t)lo && c < (uintptr_t)hi) {
		struct block *b = (struct block *)(c & ~(uintptr_t)(BLOCK - 1));
		if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
			give_back(b);
		return;
	}
	free(p);
}

__attribute__((constructor)) static void jsonmem_start(void)
{
#ifdef JSONMEM_OFF
	return;
#endif
	const char *e = getenv("IRONBELL_JSONMEM");
	if (e && strcmp(e, "off") == 0)
		return;
	void *m = mmap(NULL, RANGE + BLOCK, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return;
	if (pthread_key_create(&key, thread_gone) != 0) {
		munmap(m, RANGE + BLOCK);
		return;
	}
	lo = (char *)(((uintptr_t)m + BLOCK - 1) & ~(uintptr_t)(BLOCK - 1));
	hi = lo + RANGE;
	top = usable = lo;
	json_set_alloc_funcs(jm_malloc, jm_free);
}

void jsonmem_begin(void)
{
	t.depth++;
}

void jsonmem_end(void)
{
	if (t.depth > 0)
		t.depth--;
}

bool jsonmem_enabled(void)
{
	return lo != NULL;
}

bool jsonmem_owns(const void *p)
{
	uintptr_t c = (uintptr_t)p;
	return c >= (uintptr_t)lo && c < (uintptr_t)hi;
}

void jsonmem_stats(struct jsonmem_stats *st)
{
	pthread_mutex_lock(&mu);
	st->blocks = n_blocks;
	st->blocks_free = n_warm + n_cold;
	st->blocks_cold = n_cold;
	pthread_mutex_unlock(&mu);
	st->big = atomic_load_explicit(&n_big, memory_order_relaxed);
}
