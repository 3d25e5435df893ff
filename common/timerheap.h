/* timerheap — a binary min-heap of deadlines whose nodes live inside the
 * caller's own structs (intrusive), each knowing its place, so that
 * re-arming or cancelling one is O(log n) with no search. One thread owns
 * a heap; nothing here locks or allocates but the array of pointers. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct timerheap_node {
	uint64_t at; /* the deadline, in the owner's clock */
	size_t idx;  /* place in the heap, 1-based; 0 when not armed */
};

struct timerheap {
	struct timerheap_node **v; /* v[1..n] */
	size_t n, cap;
	size_t max; /* most nodes armed at once (0: no limit) */
};

/* The struct that holds node as its member named member. */
#define timerheap_owner(node, type, member) ((type *)((char *)(node) - offsetof(type, member)))

/* Arms t at at, or moves it there when armed. 0, or -ENOMEM (t is left
 * as it was: unarmed, or armed at its old deadline). */
int timerheap_set(struct timerheap *h, struct timerheap_node *t, uint64_t at);
/* Disarms t; nothing when it is not armed. */
void timerheap_cancel(struct timerheap *h, struct timerheap_node *t);
/* The earliest armed node, or NULL. */
struct timerheap_node *timerheap_top(const struct timerheap *h);
/* Frees the array; the nodes are the caller's. The heap is empty after. */
void timerheap_free(struct timerheap *h);
