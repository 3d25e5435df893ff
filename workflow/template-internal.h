/* template-internal — the template language's tree, shared by the parser
 * (template-parse.c), the evaluator (template-exec.c) and its functions
 * (template-funcs.c). Only workflow/ and the tests include it. */
#pragma once

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "workflow/workflow.h"

#define TP_MAX_VARS 1024       /* variables live at once */
#define TP_MAX_DECL 2          /* $i, $v := in range */
#define TP_MAX_FIELDS 64       /* .a.b.c... in one chain */
#define TP_MAX_NESTED_VALUE 64 /* depth when a value is printed */

/* Every node and string of a parsed template lives in one arena, freed at
 * once. */
struct tp_chunk;
struct tp_arena {
	struct tp_chunk *head;
};

enum tn_kind {
	TN_LIST,
	TN_TEXT,
	TN_ACTION,
	TN_IF,
	TN_RANGE,
	TN_WITH,
	TN_BREAK,
	TN_CONTINUE,
	TN_PIPE,
	TN_CMD,
	TN_DOT,
	TN_NIL,
	TN_BOOL,
	TN_NUMBER,
	TN_STRING,
	TN_FIELD,
	TN_VAR,
	TN_FUNC,
	TN_CHAIN,
	TN_MAX
};

struct tn {
	enum tn_kind kind;
	size_t line, col;
	struct tn *next;             /* the next sibling: list item, command, operand */
	struct tn *first;            /* LIST: items; PIPE: commands; CMD: operands */
	struct tn *pipe;             /* ACTION, IF, RANGE, WITH: the pipeline; CHAIN: its operand */
	struct tn *list, *else_list; /* IF, RANGE, WITH */
	const char *str;             /* TEXT, STRING: the bytes; VAR, FUNC: the name */
	size_t len;
	const char **fields; /* FIELD, VAR, CHAIN: the names after the dots */
	size_t nfields;
	const char *decl[TP_MAX_DECL]; /* PIPE: the variables declared or assigned */
	size_t ndecl;
	bool assign; /* PIPE: "=" rather than ":=" */
	bool is_int; /* NUMBER */
	int64_t i;
	double f;
	bool b; /* BOOL */
};

/* The lexer's tokens (template-lex.c). */
enum tp_tk {
	TK_TEXT,
	TK_LEFT,
	TK_RIGHT,
	TK_IDENT,
	TK_FIELD,
	TK_VAR,
	TK_DOT,
	TK_NUMBER,
	TK_STRING,
	TK_RAW,
	TK_CHAR,
	TK_BOOL,
	TK_NIL,
	TK_PIPE,
	TK_LPAREN,
	TK_RPAREN,
	TK_DECLARE,
	TK_ASSIGN,
	TK_COMMA,
	TK_EOF,
};

struct tp_tok {
	enum tp_tk t;
	const char *s;
	size_t n;
	size_t line, col;
	bool space_before;
};

/* Lexes src into a malloc'ed array of tokens ending with TK_EOF (the
 * caller frees it; the tokens point into src). Returns 0, or -EINVAL or
 * -ENOMEM with *err filled. */
int tp_lex(const char *src, size_t len, struct tp_tok **ret, size_t *ret_n,
	   struct wf_tmpl_error *err);

/* n zeroed bytes from arena a, aligned for any type, owned by the arena
 * (freed with it); NULL when memory runs out. */
void *tp_alloc(struct tp_arena *a, size_t n);
/* Frees every allocation of a; a is empty and reusable after. Accepts
 * NULL. */
void tp_arena_free(struct tp_arena *a);

/* Parses src into a TN_LIST in arena a. Returns 0, or -EINVAL/-E2BIG/
 * -ENOMEM with *err filled. */
int tp_parse(const char *src, size_t len, struct tp_arena *a, struct tn **ret,
	     struct wf_tmpl_error *err);

/* Fills err with "template: LINE:COL: message". Returns -EINVAL. */
int tp_fail(struct wf_tmpl_error *err, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The functions (template-funcs.c). */
enum tp_builtin {
	TB_NONE,
	TB_AND,
	TB_OR,
	TB_NOT,
	TB_OTHER,
};
/* Whether name is a function; *ret_builtin says which of the evaluator's
 * own (and/or, evaluated lazily) it is. */
bool tp_func_exists(const char *name, enum tp_builtin *ret_builtin);
/* Calls function name with nargs values (borrowed). On success returns 0
 * and *ret is a new reference; on failure returns a negative errno and
 * writes a message (without position) into msg. */
int tp_func_call(const char *name, json_t **args, size_t nargs, json_t **ret, char *msg,
		 size_t msgsize);

/* Go's truth: false, 0, nil, "" and empty collections are false. */
bool tp_truth(const json_t *v);
/* Appends v as Go's fmt %v prints it (maps as map[k:v] with sorted keys,
 * arrays as [a b], nil as <nil>, float64 the shortest 'g' form). */
int tp_print_value(struct buf *out, const json_t *v, int depth);
/* The Go type name of v, for messages ("string", "float64", ...). */
const char *tp_type_name(const json_t *v);
/* The keys of object o, sorted as Go sorts map keys (bytewise), in a
 * malloc'ed array (the caller frees it, not the keys, which o owns), their
 * count in *ret_n; NULL when memory runs out. */
const char **tp_sorted_keys(const json_t *o, size_t *ret_n);
/* Appends s (n bytes) quoted as Go's strconv.Quote does. */
int tp_quote(struct buf *b, const char *s, size_t n);
/* Go's fmt.Sprintf over json values, with the verbs %v %s %d %q %x %X %f
 * %t %%. */
int tp_sprintf(struct buf *out, const char *fmt, size_t fmtlen, json_t **args, size_t nargs);
