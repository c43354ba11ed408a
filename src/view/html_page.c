/* html_page.c - the page of a model (see html_page.h).  The style and
 * the script are the literals below (in pieces: ISO C promises 4,095
 * bytes in one). */
#include "view/html_page.h"

#include <inttypes.h>
#include <string.h>

#include "base/buf.h"

/* Up to the title: the style, the heading, the start of the data. */
static const char *const head[] = {
	"<!DOCTYPE html>\n"
	"<html lang=\"en\">\n"
	"<head>\n"
	"<meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<title>stfs</title>\n"
	"<link rel=\"icon\" href=\"data:,\">\n"
	"<style>\n"
	"body { font: 14px/1.4 \"DejaVu Sans\", system-ui, sans-serif; margin: 16px 24px; color: #1a1a1a; background: #fff; }\n"
	"h1 { font-size: 18px; margin: 0 0 4px; word-break: break-all; }\n"
	"p.sum { margin: 0 0 4px; color: #333; }\n"
	"p.rule { margin: 0 0 12px; color: #555; font-size: 12px; }\n"
	"details { margin: 2px 0 2px 14px; }\n"
	"details > summary { cursor: pointer; padding: 2px 0; }\n"
	"summary b { font-weight: 600; }\n"
	"summary span, td.q { color: #555; font-size: 12px; }\n"
	"table { border-collapse: collapse; margin: 4px 0 8px 14px; }\n"
	"td, th { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; vertical-align: middle; text-align: left; }\n"
	"th { font-weight: 600; font-size: 12px; color: #444; }\n"
	"td.n { font-family: \"DejaVu Sans Mono\", monospace; word-break: break-all; max-width: 26em; }\n"
	"td.st { font-family: \"DejaVu Sans Mono\", monospace; font-size: 11.5px; white-space: pre; min-width: 17em; }\n"
	"td.st .bad { color: #b00020; font-weight: 600; }\n"
	"img { display: block; border: 1px solid #ddd; background: #f4f4f4; }\n"
	"button.more { margin: 4px 0 8px 14px; }\n"
	"</style>\n"
	"</head>\n"
	"<body>\n"
	"<h1 id=\"title\"></h1>\n"
	"<p class=\"sum\" id=\"sum\"></p>\n"
	"<p class=\"rule\">Heatmap: each pixel is the value of largest magnitude in its block of the tensor, sign kept (blue &minus;, white 0, red +; NaN green, +Inf yellow, &minus;Inf magenta). Histogram: 100 bins over the finite values, log count. Pictures and statistics are computed when they come into view; click a thumbnail for the full picture.</p>\n"
	"<noscript><p>This page builds its tree with JavaScript; the pictures are in ../.png/ and the statistics in ../.stats/.</p></noscript>\n"
	"<div id=\"tree\"></div>\n"
	"<script>\n"
	"\"use strict\";\n"
	"const D = {\"title\": \n",
};

/* After the data: the script that builds the tree. */
static const char *const app[] = {
	"]};\n"
	"</script>\n"
	"<script>\n"
	"\"use strict\";\n"
	"(function () {\n"
	"const T = D.t, PAGE = 100, OPEN = 32;\n"
	"function num(n) {\n"
	"\tconst u = [\"\", \"k\", \"M\", \"G\", \"T\", \"P\"];\n"
	"\tlet i = 0;\n"
	"\twhile (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }\n"
	"\treturn i ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) + u[i] : String(n);\n"
	"}\n"
	"function size(n) {\n"
	"\tconst u = [\"B\", \"KiB\", \"MiB\", \"GiB\", \"TiB\", \"PiB\"];\n"
	"\tlet i = 0;\n"
	"\twhile (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }\n"
	"\treturn i ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) + \" \" + u[i] : n + \" B\";\n"
	"}\n"
	"function paths(t) {\n"
	"\tif (t[5] === 0)\n"
	"\t\treturn [t[0] + \".png\", t[0] + \".hist.png\"];\n"
	"\tif (t[5] === 1) {\n"
	"\t\tconst p = t[0].split(\".\").join(\"/\");\n"
	"\t\treturn [p + \".png\", p + \".hist.png\"];\n"
	"\t}\n"
	"\treturn [t[5], t[6]];\n"
	"}\n"
	"function url(p) {\n"
	"\treturn D.png + p.split(\"/\").map(encodeURIComponent).join(\"/\");\n"
	"}\n"
	"function el(tag, cls, text) {\n"
	"\tconst e = document.createElement(tag);\n"
	"\tif (cls) e.className = cls;\n"
	"\tif (text !== undefined) e.textContent = text;\n"
	"\treturn e;\n"
	"}\n"
	"function node(name) {\n"
	"\treturn { name: name, kids: new Map(), tensors: [], n: 0, params: 0,\n"
	"\t\t bytes: 0, dtypes: new Map() };\n"
	"}\n"
	"function count(nd, t) {\n"
	"\tnd.n++;\n"
	"\tnd.params += t[4];\n"
	"\tnd.bytes += t[3];\n"
	"\tnd.dtypes.set(t[1], (nd.dtypes.get(t[1]) || 0) + 1);\n"
	"}\n"
	"/* the tree: a tensor belongs to its module, its name without the last\n"
	" * dotted component (stfs-inspect --group) */\n"
	"const root = node(\"\");\n"
	"for (let i = 0; i < T.length; i++) {\n"
	"\tconst parts = T[i][0].split(\".\");\n"
	"\tlet nd = root;\n"
	"\tcount(nd, T[i]);\n"
	"\tfor (let k = 0; k + 1 < parts.length; k++) {\n"
	"\t\tlet c = nd.kids.get(parts[k]);\n"
	"\t\tif (!c) { c = node(parts[k]); nd.kids.set(parts[k], c); }\n"
	"\t\tnd = c;\n"
	"\t\tcount(nd, T[i]);\n"
	"\t}\n"
	"\tnd.tensors.push(i);\n"
	"}\n"
	"function facts(nd) {\n"
	"\tconst d = [...nd.dtypes].map(x => x[0] + (nd.dtypes.size > 1 ? \" \\u00d7\" + x[1] : \"\")).join(\", \");\n"
	"\treturn nd.n + (nd.n === 1 ? \" tensor\" : \" tensors\") + \" \\u00b7 \" + num(nd.params) +\n"
	"\t\t\" parameters \\u00b7 \" + size(nd.bytes) + \" \\u00b7 \" + d;\n"
	"}\n"
	"/* statistics: s/INDEX.js calls stfs_stats(INDEX, .stats/ object) */\n"
	"const cells = new Map();\n"
	"window.stfs_stats = function (i, s) {\n"
	"\tconst td = cells.get(i);\n"
	"\tif (!td) return;\n"
	"\ttd.textContent = \"\";\n"
	"\tconst f = x => x === null ? \"\\u2013\" : typeof x === \"number\" && !Number.isInteger(x) ? x.toPrecision(4) : String(x);\n"
	"\ttd.append(\"min \" + f(s.min) + \"  max \" + f(s.max) + \"\\nmean \" + f(s.mean) + \"  std \" + f(s.std));\n"
	"\tconst bad = (s.nan || 0) + (s[\"+inf\"] || 0) + (s[\"-inf\"] || 0);\n"
	"\tif (s.nan !== undefined) {\n"
	"\t\tconst b = el(\"span\", bad ? \"bad\" : \"\", \"\\nNaN \" + s.nan + \"  +Inf \" + s[\"+inf\"] + \"  \\u2212Inf \" + s[\"-inf\"]);\n"
	"\t\ttd.append(b);\n"
	"\t}\n"
	"\ttd.append(\"\\nzeros \" + s.zeros + \" of \" + s.count);\n"
	"};\n"
	"const seen = new IntersectionObserver(function (es) {\n"
	"\tfor (const e of es) {\n"
	"\t\tif (!e.isIntersecting) continue;\n"
	"\t\tseen.unobserve(e.target);\n"
	"\t\tconst sc = document.createElement(\"script\");\n"
	"\t\tsc.src = \"s/\" + e.target.dataset.i + \".js\";\n"
	"\t\tdocument.head.appendChild(sc);\n"
	"\t}\n"
	"}, { rootMargin: \"200px\" });\n"
	"function thumb(href, w, h, bw, bh, alt) {\n"
	"\tconst s = Math.min(bw / w, bh / h, 1);\n",
	"\tconst a = el(\"a\");\n"
	"\ta.href = href;\n"
	"\tconst im = el(\"img\");\n"
	"\tim.loading = \"lazy\";\n"
	"\tim.decoding = \"async\";\n"
	"\tim.width = Math.max(1, Math.round(w * s));\n"
	"\tim.height = Math.max(1, Math.round(h * s));\n"
	"\tim.alt = alt;\n"
	"\tim.src = href;\n"
	"\ta.appendChild(im);\n"
	"\treturn a;\n"
	"}\n"
	"function row(i) {\n"
	"\tconst t = T[i], tr = el(\"tr\");\n"
	"\tconst leaf = t[0].slice(t[0].lastIndexOf(\".\") + 1);\n"
	"\tconst n = el(\"td\", \"n\", leaf);\n"
	"\tn.title = t[0];\n"
	"\ttr.append(n, el(\"td\", \"\", t[1]), el(\"td\", \"\", \"[\" + t[2].join(\", \") + \"]\"),\n"
	"\t\t  el(\"td\", \"\", num(t[4])), el(\"td\", \"\", size(t[3])));\n"
	"\tconst st = el(\"td\", \"st\");\n"
	"\ttr.appendChild(st);\n"
	"\tif (!t[9]) {\n"
	"\t\tst.textContent = \"values not decoded\";\n"
	"\t\ttr.append(el(\"td\"), el(\"td\"));\n"
	"\t\treturn tr;\n"
	"\t}\n"
	"\tst.textContent = \"\\u2026\";\n"
	"\tcells.set(i, st);\n"
	"\ttr.dataset.i = i;\n"
	"\tseen.observe(tr);\n"
	"\tconst p = paths(t);\n"
	"\tconst h = el(\"td\"), g = el(\"td\");\n"
	"\th.appendChild(thumb(url(p[0]), t[7], t[8], 220, 160, \"heatmap of \" + t[0]));\n"
	"\tg.appendChild(thumb(url(p[1]), 640, 420, 200, 160, \"histogram of \" + t[0]));\n"
	"\ttr.append(h, g);\n"
	"\treturn tr;\n"
	"}\n"
	"function more(parent, list, make, at) {\n"
	"\tconst end = Math.min(at + PAGE, list.length);\n"
	"\tfor (let k = at; k < end; k++)\n"
	"\t\tparent.appendChild(make(list[k]));\n"
	"\treturn end;\n"
	"}\n"
	"function tensors(box, list) {\n"
	"\tconst tb = el(\"table\"), head = el(\"tr\");\n"
	"\tfor (const h of [\"tensor\", \"dtype\", \"shape\", \"parameters\", \"bytes\", \"statistics\", \"heatmap\", \"histogram\"])\n"
	"\t\thead.appendChild(el(\"th\", \"\", h));\n"
	"\ttb.appendChild(head);\n"
	"\tbox.appendChild(tb);\n"
	"\tlet at = more(tb, list, row, 0);\n"
	"\tif (at < list.length) {\n"
	"\t\tconst b = el(\"button\", \"more\");\n"
	"\t\tconst label = () => b.textContent = \"show \" + Math.min(PAGE, list.length - at) + \" more of \" + (list.length - at);\n"
	"\t\tlabel();\n"
	"\t\tb.onclick = () => { at = more(tb, list, row, at); if (at < list.length) label(); else b.remove(); };\n"
	"\t\tbox.appendChild(b);\n"
	"\t}\n"
	"}\n"
	"const natural = new Intl.Collator(undefined, { numeric: true });\n"
	"function module(nd, path) {\n"
	"\tconst d = el(\"details\"), s = el(\"summary\");\n"
	"\ts.append(el(\"b\", \"\", nd.name), \" \", el(\"span\", \"\", facts(nd)));\n"
	"\ts.title = path;\n"
	"\td.appendChild(s);\n"
	"\td.addEventListener(\"toggle\", function () {\n"
	"\t\tif (d.open && d.children.length === 1)\n"
	"\t\t\tfill(d, nd, path + \".\");\n"
	"\t});\n"
	"\t/* small modules open at once: a small model is all in view */\n"
	"\tif (nd.n <= OPEN)\n"
	"\t\td.open = true;\n"
	"\treturn d;\n"
	"}\n"
	"function fill(box, nd, prefix) {\n"
	"\tconst kids = [...nd.kids.values()].sort((a, b) => natural.compare(a.name, b.name));\n"
	"\tlet at = more(box, kids, c => module(c, prefix + c.name), 0);\n"
	"\tif (at < kids.length) {\n"
	"\t\tconst b = el(\"button\", \"more\");\n"
	"\t\tconst label = () => b.textContent = \"show \" + Math.min(PAGE, kids.length - at) + \" more modules of \" + (kids.length - at);\n"
	"\t\tlabel();\n"
	"\t\tb.onclick = () => { b.remove(); at = more(box, kids, c => module(c, prefix + c.name), at); if (at < kids.length) { label(); box.appendChild(b); } };\n"
	"\t\tbox.appendChild(b);\n"
	"\t}\n"
	"\tif (nd.tensors.length)\n"
	"\t\ttensors(box, nd.tensors);\n"
	"}\n"
	"document.getElementById(\"title\").textContent = D.title;\n"
	"document.title = D.title + \" \\u2014 stfs\";\n"
	"document.getElementById(\"sum\").textContent = facts(root);\n"
	"fill(document.getElementById(\"tree\"), root, \"\");\n"
	"})();\n",
	"</script>\n"
	"</body>\n"
	"</html>\n",
};

static int
add_all(struct buf *b, const char *const *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf_adds(b, p[i]))
			return -1;
	return 0;
}

int
html_page_json_string(struct buf *b, const char *s, size_t len)
{
	size_t i;
	int rc = buf_adds(b, "\"");

	for (i = 0; i < len && !rc; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&')
			rc = buf_addf(b, "\\u%04x", c);
		else if (c == '"' || c == '\\')
			rc = buf_addf(b, "\\%c", c);
		else
			rc = buf_add(b, &c, 1);
	}
	return rc | buf_adds(b, "\"");
}

int
html_page_begin(struct buf *b, const char *title, size_t len)
{
	return add_all(b, head, sizeof(head) / sizeof(head[0])) ||
	       html_page_json_string(b, title, len) ||
	       buf_adds(b, ", \"png\": \"../.png/\", \"t\": [\n") ? -1 : 0;
}

/* 0 when the path is what the page makes of the name by *code (0: the
 * name, 1: its dots as slashes, -1: set it from this path), else 1 and
 * *code 2. */
static int
path(const struct html_page_tensor *t, const char *p, size_t len,
     const char *suffix, int *code)
{
	size_t n = t->name_len, sl = strlen(suffix), i;
	int flat = 1, tree = 1;

	if (len != n + sl || memcmp(p + n, suffix, sl))
		flat = tree = 0;
	for (i = 0; i < n && (flat || tree); i++) {
		flat &= p[i] == t->name[i];
		tree &= p[i] == (t->name[i] == '.' ? '/' : t->name[i]);
	}
	if (*code < 0)
		*code = flat ? 0 : tree ? 1 : 2;
	if ((*code == 0 && flat) || (*code == 1 && tree))
		return 0;
	*code = 2;
	return 1;
}

int
html_page_tensor(struct buf *b, const struct html_page_tensor *t, int first)
{
	int code = -1, rc;
	uint32_t k;

	rc = buf_adds(b, first ? "[" : ",\n[");
	rc |= html_page_json_string(b, t->name, t->name_len);
	rc |= buf_addf(b, ",\"%s\",[", t->dtype);
	for (k = 0; k < t->rank; k++)
		rc |= buf_addf(b, "%s%" PRIu64, k ? "," : "", t->shape[k]);
	rc |= buf_addf(b, "],%" PRIu64 ",%" PRIu64 ",", t->nbytes, t->numel);
	if (path(t, t->heat, t->heat_len, ".png", &code) |
	    path(t, t->hist, t->hist_len, ".hist.png", &code)) {
		rc |= html_page_json_string(b, t->heat, t->heat_len);
		rc |= buf_adds(b, ",");
		rc |= html_page_json_string(b, t->hist, t->hist_len);
	} else {
		rc |= buf_addf(b, "%d,0", code);
	}
	return rc | buf_addf(b, ",%u,%u,%d]", t->w, t->h, t->drawn ? 1 : 0);
}

int
html_page_end(struct buf *b)
{
	return add_all(b, app, sizeof(app) / sizeof(app[0]));
}
