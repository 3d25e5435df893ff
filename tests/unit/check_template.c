/* check_template — the Go text/template renderer (workflow/): tables of
 * template and data to the output Go's text/template gives (with
 * Option("missingkey=error") and Tinkerbell's functions), the errors with
 * their line and column, the caps, the template data made from a
 * Hardware, and the playground's Ubuntu template rendered for a real
 * Hardware, x86 and arm. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "tests/unit/unit.h"
#include "workflow/workflow.h"

/* The data of most cases. */
static const char *const data_json =
	"{\"s\":\"Hello\", \"n\":3, \"f\":2.5, \"big\":1000000.0, \"t\":true, \"z\":0, \"e\":\"\","
	" \"nil\":null, \"l\":[\"a\",\"b\",\"c\"], \"el\":[], \"m\":{\"b\":2,\"a\":1},"
	" \"nested\":{\"x\":{\"y\":{\"z\":\"deep\"}}}, \"objs\":[{\"name\":\"one\"},{\"name\":\"two\"}],"
	" \"mask\":\"255.255.240.0\", \"csv\":\"a,b,c\", \"yaml\":\"a: 1\\nb: [x, z]\\n\","
	" \"mixed\":[1,\"x\",null,true]}";

struct good {
	const char *tmpl, *out;
};

static const struct good goods[] = {
	/* text, actions, trim markers, comments */
	{ "plain text", "plain text" },
	{ "", "" },
	{ "a {{ .s }} b", "a Hello b" },
	{ "a  {{- .s -}}  b", "aHellob" },
	{ "a\n\t {{- .s }}\n", "aHello\n" },
	{ "{{ .s -}}\n\n  x", "Hellox" },
	{ "{{-3}}", "-3" },
	{ "a {{/* a comment */}} b", "a  b" },
	{ "a {{- /* trimmed */ -}} b", "ab" },
	{ "{{/* multi\nline */}}x", "x" },
	{ "{{ \"{{\" }}", "{{" },
	/* fields and chains */
	{ "{{ .nested.x.y.z }}", "deep" },
	{ "{{ .n }} {{ .f }} {{ .big }} {{ .t }} {{ .nil }}", "3 2.5 1e+06 true <no value>" },
	{ "{{ .l }} {{ .m }} {{ .el }}", "[a b c] map[a:1 b:2] []" },
	{ "{{ .mixed }}", "[1 x <nil> true]" },
	{ "{{ (index .objs 1).name }}", "two" },
	{ "{{ with .nested }}{{ .x.y.z }}{{ end }}", "deep" },
	{ "{{ $.s }}", "Hello" },
	/* variables */
	{ "{{ $x := .s }}{{ $x }}", "Hello" },
	{ "{{ $x := 1 }}{{ $x = 2 }}{{ $x }}", "2" },
	{ "{{ $x := 1 }}{{ if true }}{{ $x = 3 }}{{ end }}{{ $x }}", "3" },
	{ "{{ $o := index .objs 0 }}{{ $o.name }}", "one" },
	{ "{{ with $x := .s }}{{ $x }}{{ . }}{{ end }}", "HelloHello" },
	/* literals */
	{ "{{ \"a\\tb\\n\\x41\\u00e9\\\\\\\"\" }}", "a\tb\nA\xc3\xa9\\\"" },
	{ "{{ `raw \\n {{` }}", "raw \\n {{" },
	{ "{{ 42 }} {{ -7 }} {{ 0x1F }} {{ 1.5 }} {{ 1e3 }} {{ 'a' }}", "42 -7 31 1.5 1000 97" },
	{ "{{ true }} {{ false }}", "true false" },
	{ "{{ print nil }}", "<nil>" },
	/* pipelines and parentheses */
	{ "{{ .s | lower | upper }}", "HELLO" },
	{ "{{ .s | printf \"%s!\" }}", "Hello!" },
	{ "{{ len (index .l 0) }}", "1" },
	{ "{{ (printf \"%s-%s\" .s \"x\") | len }}", "7" },
	/* if / else if / else */
	{ "{{ if .t }}yes{{ end }}", "yes" },
	{ "{{ if .z }}yes{{ else }}no{{ end }}", "no" },
	{ "{{ if .e }}a{{ else if .nil }}b{{ else if .l }}c{{ else }}d{{ end }}", "c" },
	{ "{{ if .el }}a{{ else if .m }}b{{ end }}", "b" },
	{ "{{ if and .t .n }}a{{ end }}{{ if or .z .e }}b{{ else }}c{{ end }}", "ac" },
	{ "{{ and 1 0 2 }} {{ or 0 \"\" \"x\" }} {{ and 1 2 }} {{ or 0 false }}", "0 x 2 false" },
	{ "{{ not .t }} {{ not .e }}", "false true" },
	/* and/or do not evaluate past the deciding operand */
	{ "{{ or .t .missing }}", "true" },
	{ "{{ and .z .missing }}", "0" },
	/* range */
	{ "{{ range .l }}<{{ . }}>{{ end }}", "<a><b><c>" },
	{ "{{ range $i, $v := .l }}{{ $i }}={{ $v }} {{ end }}", "0=a 1=b 2=c " },
	{ "{{ range $v := .l }}{{ $v }}{{ end }}", "abc" },
	{ "{{ range $k, $v := .m }}{{ $k }}:{{ $v }};{{ end }}", "a:1;b:2;" },
	{ "{{ range .el }}x{{ else }}empty{{ end }}", "empty" },
	{ "{{ range .nil }}x{{ else }}nil{{ end }}", "nil" },
	{ "{{ range .objs }}{{ .name }},{{ end }}", "one,two," },
	{ "{{ range .l }}{{ if eq . \"b\" }}{{ break }}{{ end }}{{ . }}{{ end }}", "a" },
	{ "{{ range .l }}{{ if eq . \"b\" }}{{ continue }}{{ end }}{{ . }}{{ end }}", "ac" },
	{ "{{ range 3 }}{{ . }}{{ end }}", "012" },
	{ "{{ range .l }}{{ $.s }}{{ end }}", "HelloHelloHello" },
	/* with */
	{ "{{ with .e }}x{{ else }}empty{{ end }}", "empty" },
	{ "{{ with .e }}x{{ else with .s }}{{ . }}{{ end }}", "Hello" },
	/* comparisons */
	{ "{{ eq .n 3 }} {{ eq .s \"Hello\" }} {{ eq .n 1 2 3 }} {{ ne .n 3 }}",
	  "true true true false" },
	{ "{{ lt 1 2 }} {{ le 2 2 }} {{ gt .f 2 }} {{ ge \"b\" \"a\" }} {{ lt \"a\" \"a\" }}",
	  "true true true true false" },
	{ "{{ eq .nil nil }} {{ eq .t true }}", "true true" },
	/* len, index */
	{ "{{ len .l }} {{ len .m }} {{ len .s }} {{ len .el }}", "3 2 5 0" },
	{ "{{ index .l 2 }} {{ index .m \"b\" }} {{ index .nested \"x\" \"y\" \"z\" }}",
	  "c 2 deep" },
	{ "{{ index .m \"nope\" }}", "<no value>" },
	{ "{{ index .objs 0 \"name\" }}", "one" },
	/* print, printf, println */
	{ "{{ print 1 2 \"a\" \"b\" 3 }}", "1 2ab3" },
	{ "{{ println 1 \"a\" }}", "1 a\n" },
	{ "{{ printf \"%d|%5d|%-4d|%05d|%x|%X|%s|%q|%v|%t|%%\" 7 7 7 7 255 255 \"s\" \"q\\\"\" .l true }}",
	  "7|    7|7   |00007|ff|FF|s|\"q\\\"\"|[a b c]|true|%" },
	{ "{{ printf \"%x\" \"hi\" }} {{ printf \"%.2f\" .f }} {{ printf \"%v\" .m }}",
	  "6869 2.50 map[a:1 b:2]" },
	{ "{{ printf \"%d\" \"x\" }}", "%!d(string=x)" },
	{ "{{ printf \"%s %s\" \"a\" }}", "a %!s(MISSING)" },
	{ "{{ printf \"%s\" \"a\" 5 }}", "a%!(EXTRA int=5)" },
	/* Tinkerbell's functions */
	{ "{{ formatPartition \"/dev/sda\" 1 }}", "/dev/sda1" },
	{ "{{ formatPartition \"/dev/nvme0n1\" 2 }}", "/dev/nvme0n1p2" },
	{ "{{ formatPartition \"/dev/mmcblk0\" 1 }}", "/dev/mmcblk0p1" },
	{ "{{ formatPartition \"/dev/md0\" 1 }} {{ formatPartition \"/dev/vdb\" 2 }}",
	  "/dev/md0p1 /dev/vdb2" },
	{ "{{ if eq (netmaskToPrefixLength \"255.255.255.128\") \"25\" }}25{{ end }}", "25" },
	{ "{{ netmaskToPrefixLength \"::ffff:255.255.0.0\" }}", "16" },
	{ "{{ (fromYaml \"a: 1000000\").a }} {{ fromYaml \"[1, x]\" }} {{ fromYaml \"7\" }}",
	  "1e+06 [1 x] 7" },
	{ "{{ \"a: 1000000\" | fromYaml | toYaml }} {{ toYaml 2.5 }}", "a: 1000000 2.5" },
	/* a float beyond int64 stays a float (no undefined conversion) */
	{ "{{ toYaml 5.11e29 }}", "5.11e+29" },
	{ "{{ formatPartition \"/dev/disk/by-id/wwn-0x5000\" 3 }}",
	  "/dev/disk/by-id/wwn-0x5000-part3" },
	{ "{{ netmaskToPrefixLength \"255.255.255.0\" }} {{ netmaskToPrefixLength .mask }}"
	  " {{ netmaskToPrefixLength \"255.0.255.0\" }} {{ netmaskToPrefixLength \"0.0.0.0\" }}",
	  "24 20 0 0" },
	{ "{{ toYaml .m }}", "a: 1\nb: 2" },
	{ "{{ toYaml .l }}", "- a\n- b\n- c" },
	{ "{{ (fromYaml .yaml).b }} {{ (fromYaml .yaml).a }}", "[x z] 1" },
	{ "{{ .yaml | fromYaml | toYaml }}", "a: 1\nb:\n- x\n- z" },
	/* Sprig */
	{ "{{ lower \"AbC\" }} {{ upper \"aBc\" }} {{ trim \"  x y \\n\" }}", "abc ABC x y" },
	{ "{{ trimPrefix \"He\" .s }} {{ trimSuffix \"lo\" .s }} {{ trimPrefix \"x\" .s }}",
	  "llo Hel Hello" },
	{ "{{ replace \"l\" \"L\" .s }} {{ .s | replace \"H\" \"J\" }}", "HeLLo Jello" },
	{ "{{ replace \"\" \"-\" \"ab\" }}", "-a-b-" },
	{ "{{ contains \"ell\" .s }} {{ contains \"x\" .s }} {{ .s | contains \"H\" }}",
	  "true false true" },
	{ "{{ hasPrefix \"He\" .s }} {{ hasSuffix \"lo\" .s }} {{ hasSuffix \"He\" .s }}",
	  "true true false" },
	{ "{{ default \"d\" .e }} {{ default \"d\" .s }} {{ .z | default 9 }} {{ default \"d\" .nil }}"
	  " {{ default \"d\" .el }} {{ default \"d\" false }}",
	  "d Hello 9 d d d" },
	{ "{{ quote .s }} {{ quote \"a\\\"b\" 1 }} {{ .n | quote }} {{ quote .nil }}",
	  "\"Hello\" \"a\\\"b\" \"1\" \"3\" " },
	{ "{{ regexMatch \"a(arch|rm)\" \"aarch64\" }} {{ regexMatch \"a(arch|rm)\" \"x86_64\" }}"
	  " {{ regexMatch \"^[0-9]+$\" \"123\" }} {{ regexMatch \"(\" \"x\" }}",
	  "true false true false" },
	/* a back-reference is not RE2: no match, as an invalid pattern */
	{ "{{ regexMatch \"(a)\\\\1\" \"aa\" }} {{ regexMatch \"a\\\\.b\" \"a.b\" }}",
	  "false true" },
	{ "{{ join \",\" .l }} {{ join \"-\" .mixed }} {{ join \",\" .s }}",
	  "a,b,c 1-x-true Hello" },
	{ "{{ split \",\" .csv }} {{ (split \",\" .csv)._1 }} {{ split \",\" \"\" }}",
	  "map[_0:a _1:b _2:c] b map[_0:]" },
	{ "{{ indent 2 \"a\\nb\" }}|{{ nindent 2 \"a\" }}", "  a\n  b|\n  a" },
	{ "{{ replace \"\" \"-\" \"h\xc3\xa9\" }} {{ split \"\" \"h\xc3\xa9\" }}",
	  "-h-\xc3\xa9- map[_0:h _1:\xc3\xa9]" },
	{ "{{ empty .e }} {{ empty .l }} {{ coalesce .e .z .s }} {{ coalesce .e }}",
	  "true false Hello <no value>" },
	{ "{{ ternary \"y\" \"n\" .t }} {{ .z | eq 1 | ternary 1 2 }}", "y 2" },
	{ "{{ toString .n }}{{ toString .l }} {{ squote .s 1 }} {{ hasKey .m \"a\" }} {{ hasKey .m \"x\" }}",
	  "3[a b c] 'Hello' '1' true false" },
	{ "{{ splitList \",\" .csv }} {{ index (splitList \",\" .csv) 2 }}", "[a b c] c" },
	{ "{{ b64enc \"tink\" }} {{ b64enc \"ab\" }} {{ b64dec \"dGluaw==\" }} {{ b64dec \"YW\\nI=\" }}",
	  "dGluaw== YWI= tink ab" },
	{ "{{ b64dec \"dG*u\" }}", "illegal base64 data at input byte 2" },
};

struct bad {
	const char *tmpl;
	const char *message; /* the whole message, position first */
	int error;
};

static const struct bad bads[] = {
	{ "{{ foo 1 }}", "template: 1:4: function \"foo\" not defined", -EINVAL },
	{ "line 1\nline 2 {{ .s }} {{ bar }}", "template: 2:20: function \"bar\" not defined",
	  -EINVAL },
	{ "\n\n  {{ .missing }}", "template: 3:6: map has no entry for key \"missing\"", -EINVAL },
	{ "{{ .nested.x.nope }}", "template: 1:4: map has no entry for key \"nope\"", -EINVAL },
	{ "{{ .s.x }}", "template: 1:4: can't evaluate field x in type string", -EINVAL },
	{ "{{ .nil.x }}", "template: 1:4: nil pointer evaluating interface {}.x", -EINVAL },
	{ "{{ $y }}", "template: 1:4: undefined variable \"$y\"", -EINVAL },
	{ "{{ $y = 1 }}", "template: 1:4: undefined variable \"$y\"", -EINVAL },
	{ "{{ if true }}{{ $z := 1 }}{{ end }}{{ $z }}",
	  "template: 1:39: undefined variable \"$z\"", -EINVAL },
	{ "{{ b64dec \"/w==\" }}", "template: 1:4: error calling b64dec: result is not UTF-8 text",
	  -EINVAL },
	{ "{{ ternary 1 2 \"x\" }}",
	  "template: 1:4: error calling ternary: wrong type for value; expected bool; got string",
	  -EINVAL },
	{ "{{ lower 5 }}",
	  "template: 1:4: error calling lower: wrong type for value; expected string; got int",
	  -EINVAL },
	{ "{{ formatPartition \"/dev/sda\" \"1\" }}",
	  "template: 1:4: error calling formatPartition: wrong type for value; expected int; got string",
	  -EINVAL },
	{ "{{ index .l 5 }}", "template: 1:4: error calling index: index out of range: 5",
	  -EINVAL },
	{ "{{ index .s \"x\" }}",
	  "template: 1:4: error calling index: cannot index string with type string", -EINVAL },
	{ "{{ len 3 }}", "template: 1:4: error calling len: len of type int", -EINVAL },
	{ "{{ lt .l 1 }}",
	  "template: 1:4: error calling lt: invalid type for comparison: []interface {}", -EINVAL },
	{ "{{ eq .s 1 }}", "template: 1:4: error calling eq: incompatible types for comparison",
	  -EINVAL },
	{ "{{ netmaskToPrefixLength \"x\" }}",
	  "template: 1:4: error calling netmaskToPrefixLength: invalid netmask format: x",
	  -EINVAL },
	{ "{{ fromYaml \"a: [\" }}", NULL, -EINVAL },
	{ "{{ fromYaml \"\" }}",
	  "template: 1:4: error calling fromYaml: fromYaml: empty YAML input", -EINVAL },
	{ "{{ netmaskToPrefixLength \"ffff::\" }}",
	  "template: 1:4: error calling netmaskToPrefixLength: netmask must be IPv4: ffff::",
	  -EINVAL },
	{ "{{ .s 1 }}", "template: 1:7: s is not a method but has arguments", -EINVAL },
	{ "{{ \"x\" 1 }}", "template: 1:8: can't give argument to non-function", -EINVAL },
	{ "{{ nil }}", "template: 1:4: nil is not a command", -EINVAL },
	{ "{{ range .s }}{{ end }}", "template: 1:4: range can't iterate over string", -EINVAL },
	/* parse errors */
	{ "{{ .s ", "template: 1:7: unclosed action", -EINVAL },
	{ "{{ if .t }}x", "template: 1:4: unexpected EOF: no {{end}} for this block", -EINVAL },
	{ "x{{ end }}", "template: 1:5: unexpected {{end}}", -EINVAL },
	{ "{{ else }}", "template: 1:4: unexpected {{else}}", -EINVAL },
	{ "{{ \"abc }}", "template: 1:4: unterminated quoted string", -EINVAL },
	{ "{{ `abc }}", "template: 1:4: unterminated raw quoted string", -EINVAL },
	{ "{{ \"\\q\" }}", "template: 1:4: invalid syntax: bad escape in \"\\q\"", -EINVAL },
	{ "{{ 1x }}", "template: 1:4: bad number syntax: \"1x\"", -EINVAL },
	{ "{{ }}", "template: 1:4: missing value for command", -EINVAL },
	{ "{{ .s | }}", "template: 1:9: missing command after |", -EINVAL },
	{ "{{ ( .s }}", "template: 1:9: unexpected \"}}\" in command", -EINVAL },
	{ "{{ .s ) }}", "template: 1:7: unexpected \")\" in command", -EINVAL },
	{ "{{ /* c */ }}", "template: 1:4: unexpected \"/\" in command", -EINVAL },
	{ "{{/* open", "template: 1:1: unclosed comment", -EINVAL },
	{ "{{/* c */ x }}", "template: 1:1: comment ends before closing delimiter", -EINVAL },
	{ "{{ break }}", "template: 1:4: {{break}} outside {{range}}", -EINVAL },
	{ "{{ define \"x\" }}{{ end }}", "template: 1:4: {{define}} is not supported", -EINVAL },
	{ "{{ template \"x\" }}", "template: 1:4: {{template}} is not supported", -EINVAL },
	{ "{{ if }}{{ end }}", "template: 1:7: missing value for command", -EINVAL },
	{ "{{ 1.foo }}", NULL, -EINVAL },
	{ "{{ \"a\".b }}", "template: 1:7: unexpected \".b\": a field on a literal or a function",
	  -EINVAL },
	{ "{{ .s @ }}", "template: 1:7: unexpected \"@\" in command", -EINVAL },
	{ "{{ .s \x01 }}", "template: 1:7: unexpected byte 0x01 in command", -EINVAL },
};

static json_t *data(void)
{
	json_error_t je;
	json_t *d = json_loads(data_json, 0, &je);
	ck_assert_msg(d, "%s", je.text);
	return d;
}

START_TEST(test_good)
{
	const struct good *g = &goods[_i];
	json_t *d = data();
	struct wf_tmpl_error err;
	char *out = NULL;
	size_t n = 0;
	int e = wf_tmpl_render(g->tmpl, strlen(g->tmpl), d, &out, &n, &err);
	ck_assert_msg(e == 0, "%s: %d %s", g->tmpl, e, err.message);
	ck_assert_msg(strcmp(out, g->out) == 0, "%s: got [%s] want [%s]", g->tmpl, out, g->out);
	ck_assert_uint_eq(n, strlen(g->out));
	free(out);
	json_decref(d);
}
END_TEST

START_TEST(test_bad)
{
	const struct bad *b = &bads[_i];
	json_t *d = data();
	struct wf_tmpl_error err;
	char *out = (char *)"untouched";
	int e = wf_tmpl_render(b->tmpl, strlen(b->tmpl), d, &out, NULL, &err);
	ck_assert_msg(e == b->error, "%s: got %d want %d (%s)", b->tmpl, e, b->error, err.message);
	ck_assert_str_eq(out, "untouched");
	ck_assert_uint_gt(err.line, 0);
	ck_assert_uint_gt(err.column, 0);
	if (b->message)
		ck_assert_msg(strcmp(err.message, b->message) == 0, "%s: got [%s] want [%s]",
			      b->tmpl, err.message, b->message);
	else
		ck_assert_msg(strncmp(err.message, "template: 1:", 12) == 0, "%s", err.message);
	json_decref(d);
}
END_TEST

/* The output cap: 256 KiB, as Tinkerbell; one byte more is an error. */
START_TEST(test_output_cap)
{
	json_t *d = json_object();
	struct wf_tmpl_error err;
	char *out = NULL;
	size_t n;
	/* 16 x 16 x 1024 = 256 KiB exactly, then one more byte. */
	json_object_set_new(
		d, "k",
		json_string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	const char *fit = "{{ range 256 }}{{ $.k }}{{ end }}";
	ck_assert_int_eq(wf_tmpl_render(fit, strlen(fit), d, &out, &n, &err), 0);
	ck_assert_uint_eq(n, 256 * 1024);
	free(out);
	const char *over = "{{ range 256 }}{{ $.k }}{{ end }}x";
	ck_assert_int_eq(wf_tmpl_render(over, strlen(over), d, &out, &n, &err), -E2BIG);
	ck_assert_msg(strstr(err.message, "rendered template exceeds 262144 bytes"), "%s",
		      err.message);
	ck_assert_uint_eq(err.line, 1);
	ck_assert_uint_eq(err.column, 34);
	json_decref(d);
}
END_TEST

/* A template over WF_TMPL_MAX_SIZE, nesting past WF_TMPL_MAX_DEPTH and
 * a render past WF_TMPL_MAX_STEPS are refused. */
START_TEST(test_limits)
{
	struct wf_tmpl_error err;
	char *out = NULL;
	size_t big = WF_TMPL_MAX_SIZE + 1;
	char *s = malloc(big);
	memset(s, 'x', big);
	ck_assert_int_eq(wf_tmpl_render(s, big, NULL, &out, NULL, &err), -E2BIG);
	ck_assert_int_eq(wf_tmpl_render(s, big - 1, NULL, &out, NULL, &err), 0);
	free(out);
	free(s);

	struct buf b = BUF_INIT(1 << 20);
	for (int i = 0; i < WF_TMPL_MAX_DEPTH + 1; i++)
		buf_puts(&b, "{{ if true }}");
	for (int i = 0; i < WF_TMPL_MAX_DEPTH + 1; i++)
		buf_puts(&b, "{{ end }}");
	ck_assert_int_eq(wf_tmpl_render(b.data, b.len, NULL, &out, NULL, &err), -EINVAL);
	ck_assert_msg(strstr(err.message, "nesting deeper than 64"), "%s", err.message);
	buf_reset(&b);
	for (int i = 0; i < WF_TMPL_MAX_DEPTH + 1; i++)
		buf_puts(&b, "(");
	buf_puts(&b, "1");
	for (int i = 0; i < WF_TMPL_MAX_DEPTH + 1; i++)
		buf_puts(&b, ")");
	char *act;
	ck_assert_int_gt(asprintf(&act, "{{ %s }}", b.data), 0);
	ck_assert_int_eq(wf_tmpl_render(act, strlen(act), NULL, &out, NULL, &err), -EINVAL);
	ck_assert_msg(strstr(err.message, "nesting deeper than 64"), "%s", err.message);
	free(act);
	buf_free(&b);

	const char *loop = "{{ range 1000000 }}{{ end }}";
	ck_assert_int_eq(wf_tmpl_render(loop, strlen(loop), NULL, &out, NULL, &err), -E2BIG);
	ck_assert_msg(strstr(err.message, "more than 1000000 steps"), "%s", err.message);
}
END_TEST

static json_t *load_fixture(const char *name)
{
	char path[4096];
	json_error_t je;
	unit_fixture_path(path, sizeof(path), name);
	json_t *v = json_load_file(path, 0, &je);
	ck_assert_msg(v, "%s: %s", path, je.text);
	return v;
}

/* The data of a Workflow: hardwareMap keys, .Hardware with Go's field
 * names and zero values, .hardware as it is. */
START_TEST(test_data)
{
	json_t *hw = load_fixture("template-ubuntu.hw.json");
	json_t *map = json_pack("{s:s}", "device_1", "08:00:27:9e:f5:3a");
	json_t *d = wf_tmpl_data(hw, map);
	struct wf_tmpl_error err;
	char *out;
	const char *t =
		"{{ .device_1 }}|{{ .Hardware.Disks }}|{{ $i := index .Hardware.Interfaces 0 }}"
		"{{ $i.DHCP.MAC }}|{{ $i.DHCP.Arch }}|{{ $i.DHCP.IP.Address }}|{{ $i.DHCP.LeaseTime }}|"
		"{{ $i.DHCP.NameServers }}|{{ $i.DHCP.UEFI }}|{{ $i.DHCP.IfaceName }}|{{ $i.DHCP.VLANID }}|"
		"{{ $i.Netboot.AllowPXE }}|{{ $i.DisableDHCP }}|{{ $i.DHCP.IP.Family }}|"
		"{{ .Hardware.Metadata.Instance.ID }}|{{ .Hardware.UserData }}|"
		"{{ .Hardware.Metadata.State }}{{ with .Hardware.Metadata.Facility }}x{{ end }}|"
		"{{ .hardware.metadata.name }}|{{ .hardware.spec.interfaces }}";
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(wf_tmpl_render(t, strlen(t), d, &out, NULL, &err), 0);
	ck_assert_str_eq(
		out, "08:00:27:9e:f5:3a|[/dev/nvme0n1]|08:00:27:9e:f5:3a|x86_64|192.168.2.50|86400|"
		     "[1.1.1.1 8.8.8.8]|false|||true|false|0|08:00:27:9e:f5:3a|||machine1|"
		     "[map[dhcp:map[arch:x86_64 hostname:machine1 ip:map[address:192.168.2.50 "
		     "gateway:192.168.2.1 netmask:255.255.255.0] lease_time:86400 "
		     "mac:08:00:27:9e:f5:3a name_servers:[1.1.1.1 8.8.8.8] uefi:false] "
		     "netboot:map[allowPXE:true allowWorkflow:true]]]");
	free(out);
	/* A field that the Go struct does not have is an error. */
	const char *bad = "{{ (index .Hardware.Interfaces 0).DHCP.Nope }}";
	ck_assert_int_eq(wf_tmpl_render(bad, strlen(bad), d, &out, NULL, &err), -EINVAL);
	ck_assert_str_eq(err.message, "template: 1:4: map has no entry for key \"Nope\"");
	json_decref(d);
	/* No Hardware at all: empty Disks, so index fails with its position. */
	d = wf_tmpl_data(NULL, NULL);
	const char *none = "{{ .Hardware.Disks }}{{ index .Hardware.Disks 0 }}";
	ck_assert_int_eq(wf_tmpl_render(none, strlen(none), d, &out, NULL, &err), -EINVAL);
	ck_assert_str_eq(err.message, "template: 1:25: error calling index: index out of range: 0");
	json_decref(d);
	json_decref(map);
	json_decref(hw);
}
END_TEST

/* The playground's Ubuntu template renders to what Tinkerbell renders:
 * on x86_64 it kexecs, on aarch64 it reboots with sysrq. */
START_TEST(test_ubuntu)
{
	static const char *const arch[] = { "x86_64", "aarch64" };
	static const char *const want[] = { "template-ubuntu.out", "template-ubuntu-arm.out" };
	json_t *hw = load_fixture("template-ubuntu.hw.json");
	json_t *map = json_pack("{s:s}", "device_1", "08:00:27:9e:f5:3a");
	size_t tn, wn, n;
	char *t = unit_fixture("template-ubuntu.tmpl", WF_TMPL_MAX_SIZE, &tn);
	struct wf_tmpl_error err;

	json_t *dhcp = json_object_get(
		json_array_get(json_object_get(json_object_get(hw, "spec"), "interfaces"), 0),
		"dhcp");
	json_object_set_new(dhcp, "arch", json_string(arch[_i]));
	json_t *d = wf_tmpl_data(hw, map);
	char *w = unit_fixture(want[_i], WF_TMPL_MAX_SIZE, &wn), *out;
	ck_assert_int_eq(wf_tmpl_render(t, tn, d, &out, &n, &err), 0);
	ck_assert_str_eq(out, w);
	ck_assert_uint_eq(n, wn);
	free(out);
	free(w);
	free(t);
	json_decref(d);
	json_decref(map);
	json_decref(hw);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("template");
	TCase *tc = tcase_create("template");
	tcase_add_loop_test(tc, test_good, 0, sizeof(goods) / sizeof(goods[0]));
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bads) / sizeof(bads[0]));
	UNIT_TEST(tc, test_output_cap);
	UNIT_TEST(tc, test_limits);
	UNIT_TEST(tc, test_data);
	tcase_add_loop_test(tc, test_ubuntu, 0, 2);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
