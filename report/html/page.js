/* page.js: the script of alloctap-report's html page (report/html.h). It reads the page's data
 * (the script element alloctap-data), draws the curve, and for the moment or window chosen on
 * it the flame graph of a view and the table of sites. A URL fragment drives the same
 * functions a click or a key calls (for tests and links):
 *   #at=peak|all  select=A,B (columns; A=B: the moment at column A's end)  view=live|bytes|
 *   allocs|temps|leaks  search=TEXT  table=bottomup|topdown  sort=name|bytes|value|self|blocks
 *   zoom=FRAME (the first frame whose name starts so)
 * and once drawn the body carries data-ready="1" and what it shows: data-root (the flame
 * graph's total), data-root-n (its blocks or calls), data-choice, data-found, data-rows,
 * data-load-ms (from the page's start to its first drawing done). */
(function () {
	'use strict';
	var D = JSON.parse(document.getElementById('alloctap-data').textContent);
	var G = D.data, F = G.frames, S = G.sites, NC = G.ncols, CW = G.width;
	var XMAX = Math.max(D.live.xmax, D.rss.xmax, 1);
	var SVGNS = "http://www.w3.org/2000/svg";
	var $ = function (id) { return document.getElementById(id); };
	var state = { kind: 'peak', a: 0, b: NC - 1, view: 'live', search: '', zoom: null,
		      table: 'bottomup', sort: 'value' };
	var tree = null;

	/* ---- figures ---- */
	var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
	/* As the text outputs write them (report/units.c): tenths truncated, not rounded. */
	function bytes(v) {
		if (D.exact || v < 1024) return v + ' B';
		var k = 1, scale = 1024;
		while (k < 6 && Math.floor(v / scale) >= 1024) { scale *= 1024; k++; }
		var whole = Math.floor(v / scale);
		return whole + '.' + Math.floor((v - whole * scale) * 10 / scale) + ' ' + UNITS[k];
	}
	function trim(s) { return s.indexOf('.') < 0 ? s : s.replace(/\.?0+$/, ''); }
	function decimals(step) { return Math.max(0, -Math.floor(Math.log10(step) + 1e-9)); }
	/* The unit of x: times in s, ms, us or ns by the span; events as they are. */
	function xunit() {
		if (!D.times) return { div: 1, name: 'events' };
		if (XMAX >= 1e9) return { div: 1e9, name: 's' };
		if (XMAX >= 1e6) return { div: 1e6, name: 'ms' };
		if (XMAX >= 1e3) return { div: 1e3, name: 'us' };
		return { div: 1, name: 'ns' };
	}
	var XU = xunit();
	function xtext(x, step) {
		var v = x / XU.div, d = step ? decimals(step / XU.div) : 6;
		return D.times ? trim(v.toFixed(d)) + ' ' + XU.name : 'event ' + Math.round(v);
	}
	function niceStep(span, n) {
		var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
		var m = [1, 2, 5, 10];
		for (var i = 0; i < m.length; i++) if (m[i] * p >= raw) return m[i] * p;
		return 10 * p;
	}
	/* A byte axis: a step of 1, 2 or 5 (or 2.5) times a power of ten of the largest value's
	 * unit, so labels read in units. */
	function byteTicks(ymax) {
		var k = 0;
		while (!D.exact && ymax >= Math.pow(1024, k + 1) && k < 6) k++;
		var u = Math.pow(1024, k), step = niceStep(ymax / u, 4) * u, t = [];
		for (var v = 0; v <= ymax * 1.0001; v += step)
			t.push([v, v === 0 ? '0' : D.exact ? Math.round(v) + ' B' :
				trim((v / u).toFixed(decimals(step / u))) + ' ' + UNITS[k]]);
		return t;
	}

	function el(name, attrs, parent) {
		var e = document.createElementNS(SVGNS, name);
		for (var k in attrs) e.setAttribute(k, attrs[k]);
		if (parent) parent.appendChild(e);
		return e;
	}

	/* ---- the curve ---- */
	var C = { W: 1000, H: 240, L: 78, R: 16, T: 22, B: 36 };
	var chart = null, selRect = null, YMAX = 1;
	function px(x) { return C.L + (C.W - C.L - C.R) * x / XMAX; }
	function py(y) { return C.T + (C.H - C.T - C.B) * (1 - y / YMAX); }
	function seriesMax(s) {
		var m = 0;
		for (var i = 0; i < s.b.length; i += 3) m = Math.max(m, s.b[i + 1]);
		return m;
	}
	function polyline(s, cls, colour) {
		if (!s.b.length) return;
		var pts = [], last = null;
		for (var i = 0; i < s.b.length; i += 3) {
			var x = px(s.b[i] * s.width).toFixed(1);
			if (last !== null) pts.push(x + ',' + last);
			last = py(s.b[i + 2]).toFixed(1);
			pts.push(x + ',' + py(s.b[i + 1]).toFixed(1), x + ',' + last);
		}
		pts.push(px(s.xmax).toFixed(1) + ',' + last);
		el('polyline', { 'class': cls, fill: 'none', stroke: colour, 'stroke-width': 1.5,
				 points: pts.join(' ') }, chart);
	}
	function drawChart() {
		YMAX = Math.max(seriesMax(D.live), seriesMax(D.rss), 1);
		var yt = byteTicks(YMAX);
		YMAX = Math.max(YMAX, yt[yt.length - 1][0]);
		chart = el('svg', { 'class': 'chart', width: C.W, height: C.H });
		for (var i = 0; i < yt.length; i++) {
			var y = py(yt[i][0]);
			el('line', { 'class': 'grid', x1: C.L, x2: C.W - C.R, y1: y, y2: y }, chart);
			el('text', { x: C.L - 6, y: y + 4, 'text-anchor': 'end', 'class': 'ytick' },
			   chart).textContent = yt[i][1];
		}
		/* x ticks: as many as fit 90 px apart, the last label kept inside the chart */
		var n = Math.max(1, Math.floor((C.W - C.L - C.R) / 90));
		var step = niceStep(XMAX, n);
		if (!D.times) step = Math.max(1, Math.round(step));
		for (var x = 0; x <= XMAX * 1.0001; x += step) {
			var X = px(x);
			el('line', { 'class': 'grid', x1: X, x2: X, y1: C.T, y2: C.H - C.B }, chart);
			el('text', { x: X, y: C.H - C.B + 14, 'text-anchor': X > C.W - 50 ? 'end' :
				     'middle', 'class': 'xtick' }, chart).textContent =
				D.times ? trim((x / XU.div).toFixed(decimals(step / XU.div))) :
				String(Math.round(x));
		}
		el('line', { 'class': 'axis', x1: C.L, x2: C.W - C.R, y1: C.H - C.B, y2: C.H - C.B },
		   chart);
		el('line', { 'class': 'axis', x1: C.L, x2: C.L, y1: C.T, y2: C.H - C.B }, chart);
		el('text', { x: (C.L + C.W) / 2, y: C.H - 6, 'text-anchor': 'middle',
			     'class': 'xlabel' }, chart).textContent = D.times ? 'time (' + XU.name + ')' :
			'events (the trace has no times)';
		/* the legend, in a row above the plot, each entry after the text before it ends */
		$('chart').appendChild(chart);
		var lx = C.L + 8;
		function legend(text, colour, dashed) {
			if (dashed) {
				el('line', { x1: lx, x2: lx + 18, y1: 10, y2: 10, stroke: colour,
					     'stroke-dasharray': '3,3' }, chart);
				lx += 22;
			}
			var t = el('text', { x: lx, y: 14, fill: colour, 'class': 'legend' }, chart);
			t.textContent = text;
			lx += t.getComputedTextLength() + 24;
		}
		legend('live bytes', '#36c');
		legend(D.rss_records ? 'RSS' : 'RSS: no records', '#c33');
		if (D.peak_x !== undefined && D.peak) { /* the heap peak of every process together */
			var X = px(D.peak_x);
			el('line', { 'class': 'peak', x1: X, x2: X, y1: C.T, y2: C.H - C.B,
				     stroke: '#36c', 'stroke-dasharray': '3,3' }, chart);
			legend('heap peak, at ' + xtext(D.peak_x, XMAX / 1000), '#36c', 1); /* to 0.1% of the axis */
		}
		polyline(D.live, 'live', '#36c');
		polyline(D.rss, 'rss', '#c33');
		selRect = el('rect', { 'class': 'sel', x: 0, y: C.T, width: 0,
				       height: C.H - C.T - C.B, display: 'none' }, chart);
		$('xname').textContent = D.times ? 'time' : 'events';
		var down = null;
		function colAt(ev) {
			var r = chart.getBoundingClientRect(), x = (ev.clientX - r.left - C.L) /
				(C.W - C.L - C.R) * XMAX;
			return Math.max(0, Math.min(NC - 1, Math.floor(x / CW)));
		}
		chart.addEventListener('mousedown', function (ev) { down = [ev.clientX, colAt(ev)]; });
		chart.addEventListener('mousemove', function (ev) {
			if (down && Math.abs(ev.clientX - down[0]) > 3) showSel(Math.min(down[1], colAt(ev)),
								     Math.max(down[1], colAt(ev)));
			var r = chart.getBoundingClientRect(), x = (ev.clientX - r.left - C.L) /
				(C.W - C.L - C.R) * XMAX;
			if (x < 0 || x > XMAX) { $('tip').style.display = 'none'; return; }
			showTip(ev, [xtext(x, CW), 'live: ' + at(D.live, x), 'RSS: ' +
				     (D.rss_records ? at(D.rss, x) : 'no records')]);
		});
		chart.addEventListener('mouseleave', function () { $('tip').style.display = 'none'; });
		chart.addEventListener('mouseup', function (ev) {
			if (!down) return;
			var c = colAt(ev);
			if (Math.abs(ev.clientX - down[0]) <= 3) choose('moment', down[1], down[1]);
			else choose('window', Math.min(down[1], c), Math.max(down[1], c));
			down = null;
		});
	}
	/* A series at x: its bucket's last value (and its most, where higher). */
	function at(s, x) {
		var k = Math.floor(x / s.width), v = null;
		for (var i = 0; i < s.b.length && s.b[i] <= k; i += 3)
			v = s.b[i] === k && s.b[i + 1] > s.b[i + 2] ?
				bytes(s.b[i + 2]) + ' (up to ' + bytes(s.b[i + 1]) + ')' : bytes(s.b[i + 2]);
		return v === null ? 'none yet' : v;
	}
	function showTip(ev, lines) {
		var tip = $('tip');
		tip.innerHTML = '';
		lines.forEach(function (t) {
			if (t) tip.appendChild(document.createElement('div')).textContent = t;
		});
		tip.style.display = 'block';
		tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 420) + 'px';
		tip.style.top = (ev.clientY + 14) + 'px';
	}
	function colX(c) { return Math.min(c * CW, XMAX); }
	function showSel(a, b) {
		var x0 = px(colX(a)), x1 = px(colX(b + 1));
		selRect.setAttribute('x', x0);
		selRect.setAttribute('width', Math.max(2, x1 - x0));
		selRect.setAttribute('display', '');
	}

	/* ---- values of a site for the choice ---- */
	function liveAt(s, b) {
		var v = 0, n = 0, c = s.c;
		for (var i = 0; i < c.length && c[i] <= b; i += 7) { v = c[i + 1]; n = c[i + 2]; }
		return [v, n];
	}
	function inWindow(s, a, b, k) {
		var v = 0, n = 0, c = s.c;
		for (var i = 0; i < c.length && c[i] <= b; i += 7)
			if (c[i] >= a) { v += c[i + k]; n += c[i + k + 1]; }
		return [v, n];
	}
	/* [value, second figure] of site s for the view: bytes and blocks, or count and bytes. */
	function value(s) {
		var v = state.view;
		if (v === 'leaks') return s.end;
		if (v === 'live') return state.kind === 'peak' ? s.peak : liveAt(s, state.b);
		if (v === 'bytes') { var r = inWindow(s, state.a, state.b, 3); return [r[1], r[0]]; }
		if (v === 'allocs') return inWindow(s, state.a, state.b, 3);
		return inWindow(s, state.a, state.b, 5);
	}
	var COUNTS = { allocs: 'allocations', temps: 'temporaries' };
	function said(v, n) {
		if (state.view === 'allocs' || state.view === 'temps')
			return v + ' ' + COUNTS[state.view] + ' (' + bytes(n) + ')';
		return bytes(v) + ' in ' + n + (state.view === 'bytes' ? ' allocations' : ' blocks');
	}

	/* ---- the flame graph ---- */
	function frameText(id) {
		var f = F[id];
		return f[1] ? f[0] + ' (' + f[1] + ')' : f[0];
	}
	function build() {
		var root = { id: -1, name: 'all', where: '', v: 0, n: 0, kids: {}, list: null, up: null };
		var procs = D.processes > 1;
		for (var i = 0; i < S.length; i++) {
			var s = S[i], r = value(s);
			if (!r[0]) continue;
			var node = root, path = s.s;
			root.v += r[0]; root.n += r[1];
			if (procs && s.pid) path = ['p' + s.pid].concat(path);
			for (var j = 0; j < path.length; j++) {
				var k = path[j], kid = node.kids[k];
				if (!kid) {
					kid = node.kids[k] = typeof k === 'string' ?
						{ id: -1, name: 'process ' + k.slice(1), where: '' } :
						{ id: k, name: F[k][0], where: F[k][1] };
					kid.v = 0; kid.n = 0; kid.kids = {}; kid.up = node;
				}
				kid.v += r[0]; kid.n += r[1];
				node = kid;
			}
		}
		(function order(n, x, depth) {
			n.x = x; n.depth = depth;
			n.list = Object.keys(n.kids).map(function (k) { return n.kids[k]; });
			n.list.sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : 1); });
			for (var i = 0; i < n.list.length; i++) { order(n.list[i], x, depth + 1); x += n.list[i].v; }
		})(root, 0, 0);
		return root;
	}
	var FW = 1200, ROW = 18, CHAR = 6.7;
	function label(text, w) {
		var fit = Math.floor((w - 6) / CHAR);
		if (fit < 3) return '';
		return text.length <= fit ? text : text.slice(0, fit - 1) + '\u2026';
	}
	function drawFlame() {
		var root = tree, z = state.zoom || root, depth = 0, svg;
		$('flame').innerHTML = '';
		svg = el('svg', { 'class': 'flame', width: FW });
		var scale = z.v ? FW / z.v : 0;
		function put(n, x, w) {
			var g = el('g', { 'class': 'f', 'data-x': x.toFixed(3), 'data-w': w.toFixed(3) }, svg);
			var share = root.v ? (100 * n.v / root.v).toFixed(2) : '0.00';
			var text = n.id >= 0 ? frameText(n.id) : n.name;
			el('title', {}, g).textContent = text + ': ' + said(n.v, n.n) + ' (' + share + '%)';
			el('rect', { x: x.toFixed(3), y: n.depth * ROW, width: Math.max(w, 0.5).toFixed(3),
				     height: ROW - 1, fill: colour(n), rx: 2 }, g);
			el('text', { x: (x + 3).toFixed(3), y: n.depth * ROW + 13 }, g).textContent =
				label(n.name, w);
			g.node = n;
			if (state.search && matches(n)) g.setAttribute('class', 'f hit');
			depth = Math.max(depth, n.depth);
		}
		for (var a = z; a; a = a.up) put(a, 0, FW); /* the zoomed frame and its callers */
		(function down(n) {
			for (var i = 0; i < n.list.length; i++) {
				var k = n.list[i], w = k.v * scale;
				if (w < 0.3) continue;
				put(k, (k.x - z.x) * scale, w);
				down(k);
			}
		})(z);
		svg.setAttribute('height', (depth + 1) * ROW + 4); /* the frames drawn, no more */
		svg.addEventListener('click', function (ev) {
			var g = ev.target.closest('g.f');
			if (g) zoom(g.node === root || g.node === state.zoom ? null : g.node);
		});
		svg.addEventListener('mousemove', function (ev) {
			var g = ev.target.closest('g.f'), tip = $('tip');
			if (!g) { tip.style.display = 'none'; return; }
			var n = g.node;
			showTip(ev, [n.id >= 0 ? F[n.id][0] : n.name, n.where ? 'at ' + n.where : '',
				     said(n.v, n.n), (root.v ? (100 * n.v / root.v).toFixed(2) : '0.00') +
				     '% of ' + bytesOrCount(root.v)]);
		});
		svg.addEventListener('mouseleave', function () { $('tip').style.display = 'none'; });
		$('flame').appendChild(svg);
	}
	function bytesOrCount(v) {
		return COUNTS[state.view] ? v + ' ' + COUNTS[state.view] : bytes(v);
	}
	function colour(n) {
		var h = 0, t = n.name;
		for (var i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) >>> 0;
		if (n.id < 0) return '#c8c8d8';
		return 'hsl(' + (10 + h % 45) + ',' + (70 + h % 20) + '%,' + (58 + (h >> 8) % 14) + '%)';
	}
	function zoom(n) {
		state.zoom = n;
		drawFlame();
	}

	/* ---- search ---- */
	function matches(n) {
		var q = state.search.toLowerCase();
		return n.id >= 0 && q && (n.name.toLowerCase().indexOf(q) >= 0 ||
					  n.where.toLowerCase().indexOf(q) >= 0);
	}
	/* The share of the frames that match: each matching frame counted unless a caller of it
	 * matched already. */
	function found() {
		if (!state.search) return '';
		var v = 0, frames = 0;
		(function walk(n) {
			if (matches(n)) { v += n.v; frames++; return; }
			n.list.forEach(walk);
		})(tree);
		return frames ? state.search + ': ' + bytesOrCount(v) + ', ' +
			(tree.v ? (100 * v / tree.v).toFixed(2) : '0.00') + '% of ' + bytesOrCount(tree.v) :
			state.search + ': no frame matches';
	}
	function search(q) {
		state.search = q;
		$('search').value = q;
		drawFlame();
		$('found').textContent = found();
		document.body.setAttribute('data-found', $('found').textContent);
	}

	/* ---- the table of sites ---- */
	/* The frame a site allocates from: its size class where it has one, else the caller of
	 * the allocation function (the function itself without callers). */
	function leaf(s) {
		var k = s.s.length, last = F[s.s[k - 1]];
		if (last[0].indexOf('size ') === 0 && !last[1]) return s.s[k - 1];
		return k >= 2 ? s.s[k - 2] : s.s[0];
	}
	/* The table's rows: bottom-up, one per frame that allocates (function and line);
	 * top-down, one per function, inclusive (a site counted once however often the function
	 * is in its stack), its file where all its frames share one. */
	function rows() {
		var by = {}, out = [], top = state.table === 'topdown';
		for (var i = 0; i < S.length; i++) {
			var s = S[i], r = value(s);
			if (!r[0]) continue;
			var l = leaf(s), ids = top ? s.s : [l], seen = {};
			for (var j = 0; j < ids.length; j++) {
				var f = F[ids[j]], key = top ? f[0] : ids[j];
				var file = top ? f[1].replace(/:[0-9]+$/, '') : f[1];
				if (seen[key]) continue;
				seen[key] = 1;
				var row = by[key] || (by[key] = { name: f[0], where: file, value: 0, self: 0,
								  n: 0, sites: 0, first: ids[j] });
				if (row.where !== file) row.where = '(several files)';
				row.value += r[0]; row.n += r[1]; row.sites++;
				if (top ? F[l][0] === f[0] : true) row.self += r[0];
			}
		}
		for (var k in by) out.push(by[k]);
		var key = state.sort;
		out.sort(function (a, b) {
			if (key === 'name') return a.name < b.name ? -1 : a.name > b.name ? 1 : a.first - b.first;
			return b[key] - a[key] || a.first - b.first;
		});
		return out;
	}
	function drawTable() {
		var list = rows(), total = tree.v, t = document.createElement('table');
		var heads = [['name', 'frame'], [null, 'file:line'], ['value', state.table === 'topdown' ?
			'inclusive' : 'value'], ['self', 'self'], ['n', COUNTS[state.view] ? 'bytes' :
			state.view === 'bytes' ? 'allocations' : 'blocks'], [null, 'share'], [null, 'sites']];
		var tr = t.insertRow();
		heads.forEach(function (h) {
			if (h[0] === 'self' && state.table === 'bottomup') return;
			var th = document.createElement('th');
			th.textContent = h[1];
			if (h[0]) {
				th.className = 'k' + (state.sort === h[0] ? ' on' : '');
				th.setAttribute('data-sort', h[0]);
				th.addEventListener('click', function () { sortBy(h[0]); });
			}
			tr.appendChild(th);
		});
		list.slice(0, 100).forEach(function (r) {
			var tr = t.insertRow();
			var cells = [r.name, r.where, bytesOrCount(r.value)];
			if (state.table === 'topdown') cells.push(bytesOrCount(r.self));
			cells.push(COUNTS[state.view] ? bytes(r.n) : String(r.n),
				   (total ? (100 * r.value / total).toFixed(2) : '0.00') + '%', String(r.sites));
			cells.forEach(function (c, i) {
				var td = tr.insertCell();
				td.textContent = c;
				td.className = i < 2 ? 's' : 'n';
			});
		});
		$('table').innerHTML = '';
		$('table').appendChild(t);
		document.body.setAttribute('data-rows', list.length);
	}
	function sortBy(key) {
		state.sort = key;
		drawTable();
	}

	/* ---- the choice ---- */
	var TITLES = { live: 'Live', bytes: 'Bytes allocated', allocs: 'Allocations',
		       temps: 'Temporaries', leaks: 'Leaks: live at the end' };
	function choiceText() {
		if (state.kind === 'peak') return 'the heap peak (each process at its own)';
		if (state.kind === 'all') return 'the whole trace';
		var from = colX(state.a), to = colX(state.b + 1), step = Math.max(CW, 1);
		if (state.kind === 'moment')
			return 'the moment at ' + xtext(to, step) + ' (in the window from ' +
				xtext(from, step) + ')';
		return 'the window from ' + xtext(from, step) + ' to ' + xtext(to, step);
	}
	function redraw() {
		tree = build();
		if (state.zoom) { /* the zoomed frame again, by its path, in the new tree */
			var path = [], n = state.zoom, m = tree;
			for (; n && n.up; n = n.up) path.unshift(n);
			for (var i = 0; m && i < path.length; i++)
				m = m.list.filter(function (k) { return k.id === path[i].id && k.name === path[i].name; })[0];
			state.zoom = m || null;
		}
		var what = state.view === 'leaks' ? '' : state.view === 'live' ?
			(state.kind === 'window' ? ' at the end of ' : ' at ') + choiceText() :
			' in ' + (state.kind === 'peak' ? 'the whole trace' : choiceText());
		$('flame-title').textContent = TITLES[state.view] + what + ': ' + said(tree.v, tree.n) +
			' (click a frame to zoom, the root to zoom out)';
		$('choice').textContent = 'chosen: ' + choiceText();
		drawFlame();
		$('found').textContent = found();
		drawTable();
		var b = document.body;
		b.setAttribute('data-root', tree.v);
		b.setAttribute('data-root-n', tree.n);
		b.setAttribute('data-choice', choiceText());
		b.setAttribute('data-found', $('found').textContent);
	}
	function choose(kind, a, b) {
		state.kind = kind;
		state.a = kind === 'peak' || kind === 'all' ? 0 : a;
		state.b = kind === 'peak' || kind === 'all' ? NC - 1 : b;
		if (kind === 'moment' || kind === 'window') showSel(state.a, state.b);
		else selRect.setAttribute('display', 'none');
		redraw();
	}
	function setView(v) {
		state.view = v;
		$('view').value = v;
		redraw();
	}

	/* ---- start ---- */
	drawChart();
	$('at-peak').addEventListener('click', function () { choose('peak'); });
	$('at-all').addEventListener('click', function () { choose('all'); });
	$('view').addEventListener('change', function () { setView($('view').value); });
	$('search').addEventListener('input', function () { search($('search').value); });
	$('table-kind').addEventListener('change', function () {
		state.table = $('table-kind').value;
		drawTable();
	});
	var hook = {};
	location.hash.slice(1).split('&').forEach(function (kv) {
		var i = kv.indexOf('=');
		if (i > 0) hook[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
	});
	if (hook.view && TITLES[hook.view]) { state.view = hook.view; $('view').value = hook.view; }
	if (hook.table) { state.table = hook.table; $('table-kind').value = hook.table; }
	if (hook.sort) state.sort = { bytes: 'value', blocks: 'n' }[hook.sort] || hook.sort;
	if (hook.search) { state.search = hook.search; $('search').value = hook.search; }
	if (hook.select) {
		var ab = hook.select.split(',').map(Number), a = Math.max(0, Math.min(NC - 1, ab[0])),
		    b = Math.max(a, Math.min(NC - 1, ab.length > 1 ? ab[1] : ab[0]));
		choose(a === b ? 'moment' : 'window', a, b);
	} else {
		choose(hook.at === 'all' ? 'all' : 'peak');
	}
	if (hook.zoom) {
		var want = null;
		(function find(n) {
			if (!want && n.name.indexOf(hook.zoom) === 0 && n.up) want = n;
			n.list.forEach(find);
		})(tree);
		if (want) zoom(want);
		var zg = [].filter.call(document.querySelectorAll('svg.flame g.f'), function (g) {
			return g.node === want;
		})[0];
		document.body.setAttribute('data-zoomed', zg ? zg.querySelector('rect').getAttribute('width') : 'none');
	}
	document.body.setAttribute('data-load-ms', Math.round(performance.now()));
	document.body.setAttribute('data-ready', '1');
})();
