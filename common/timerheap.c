/* timerheap — see timerheap.h.
 *
 * DESIGN: the classic array heap, 1-based so that a node's parent is
 * i / 2 and its children 2i and 2i + 1; every swap writes both nodes'
 * idx, which is what makes cancel and re-arm O(log n). The array grows
 * by doubling from 256 and is never shrunk (a controller's timers come
 * back). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "common/timerheap.h"

static void swap(struct timerheap *h, size_t a, size_t b)
{
	struct timerheap_node *t = h->v[a];
	h->v[a] = h->v[b];
	h->v[b] = t;
	h->v[a]->idx = a;
	h->v[b]->idx = b;
}

static void up(struct timerheap *h, size_t i)
{
	while (i > 1 && h->v[i / 2]->at > h->v[i]->at) {
		swap(h, i, i / 2);
		i /= 2;
	}
}

static void down(struct timerheap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i, m = i;
		if (l <= h->n && h->v[l]->at < h->v[m]->at)
			m = l;
		if (l + 1 <= h->n && h->v[l + 1]->at < h->v[m]->at)
			m = l + 1;
		if (m == i)
			return;
		swap(h, i, m);
		i = m;
	}
}

int timerheap_set(struct timerheap *h, struct timerheap_node *t, uint64_t at)
{
	if (t->idx) {
		t->at = at;
		up(h, t->idx);
		down(h, t->idx);
		return 0;
	}
	if (h->max && h->n >= h->max)
		return -ENOMEM;
	if (h->n + 1 >= h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct timerheap_node **v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	t->at = at;
	t->idx = ++h->n;
	h->v[t->idx] = t;
	up(h, t->idx);
	return 0;
}

void timerheap_cancel(struct timerheap *h, struct timerheap_node *t)
{
	size_t i = t->idx;
	if (!i)
		return;
	if (i != h->n) {
		swap(h, i, h->n);
		h->n--;
		up(h, i);
		down(h, i);
	} else {
		h->n--;
	}
	t->idx = 0;
}

struct timerheap_node *timerheap_top(const struct timerheap *h)
{
	return h->n ? h->v[1] : NULL;
}

void timerheap_free(struct timerheap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
