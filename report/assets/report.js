// agentmap report: renders the overview and the session pages from the data
// the page carries (see report/data.go for the layout). No network, no
// library: SVG strings for charts, a canvas for the timeline.
(() => {
'use strict';
// Positions of a session row (report/data.go sessionRow).
const S = {id:0, agent:1, repos:2, models:3, start:4, dur:5, outcome:6, in:7, cw:8, cr:9, out:10, tokens:11, cost:12,
  calls:13, requests:14, errors:15, retries:16, delays:17, delayMs:18, maxCtx:19, compactions:20, subagents:21,
  events:22, trunc:23, turns:24, outTok:25, unpriced:26, nu:27};
const KINDS = ['read','search','edit','exec','verify','mcp','skill','subagent','web','tool','llm','user','error','delay','compaction'];
const OUTPUT_KINDS = ['commit','pr_merge','pr_close','pr_comment','ticket','artifact','skill_write','model_switch'];
// Ten hues apart from one another and from the grey of "other" (#9aa0a8),
// so that no two series of the chart over time look alike.
const PALETTE = ['#4c8bf5','#e8890c','#2f9e44','#8e5bd8','#d6409f','#2bb3c0','#a0642b','#d93f3f','#c9a400','#84cc16'];
const OTHER = '#9aa0a8';

const $ = (s, el) => (el || document).querySelector(s);
const esc = v => String(v).replace(/[&<>"']/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
const int = n => Math.round(n).toLocaleString('en-US');
// tok writes a token count short: 12,345 as 12k, then 1.2M, 1.23G. The unit
// is chosen after rounding, so that 999,600 reads 1.0M, never 1000k.
const tok = n => { if (Math.round(n) < 1e4) return int(n);
  for (const [u, d, s] of [[1e3, 0, 'k'], [1e6, 1, 'M']]) { const v = (n / u).toFixed(d); if (+v < 1000) return v + s; }
  return (n / 1e9).toFixed(2) + 'G'; };
// fixed writes n with d decimals and a comma between thousands ($7,474.66)
const fixed = (n, d) => { const [i, f] = Math.abs(n).toFixed(d).split('.'); return (n < 0 ? '-' : '') + i.replace(/\B(?=(\d{3})+$)/g, ',') + (f ? '.' + f : ''); };
// a cost under a tenth of a cent that is not 0 reads "<$0.001", never "$0.000"
const usd = n => n > 0 && n < 0.001 ? '<$0.001' : '$' + fixed(n, n && n < 0.1 ? 3 : 2);
// A request whose log recorded no usage (a Cursor transcript never does)
// has no tokens and no cost to show, not 0 of each: its figures read "not
// recorded", as do those of a sum of nothing else (an agent, a repository,
// a model); a card whose sums leave such sessions out says how many.
const NR = 'not recorded';
// noUsage: a session whose requests all recorded no usage.
const noUsage = r => r[S.requests] > 0 && !r[S.tokens];
// costOf says a cost that leaves out tokens of unpriced models: "unpriced"
// when nothing of it had a price, "$X +unpriced" when part of it had (a 0
// is never shown for tokens that were used, docs/costs.md); and "not
// recorded" when the sessions it sums include some that recorded no usage
// (nr) and none that recorded any (tokens 0).
const costOf = (n, unpriced, nr, tokens) => nr && !tokens ? NR : !unpriced ? usd(n) : n ? usd(n) + ' +unpriced' : 'unpriced';
const tokOf = (n, nr) => nr && !n ? NR : tok(n);
const rowCost = r => noUsage(r) ? NR : costOf(r[S.cost], r[S.unpriced].length);
const rowTok = r => noUsage(r) ? NR : tok(r[S.tokens]);
// partly: some of the session's requests recorded no usage, not all: its
// tokens and cost are the others', marked "*" as show and list mark them.
const partly = r => r[S.nu] > 0 && !noUsage(r);
// html is a figure as HTML: escaped, its "+unpriced" set smaller, so that a
// narrow table keeps room for its names; "not recorded" muted.
const html = s => s === NR ? '<span class="nr">' + NR + '</span>' : esc(s).replace(' +unpriced', ' <small class="unp">+unpriced</small>');
// plural counts a noun: "1 session", "2 sessions".
const plural = (n, one, many) => int(n) + ' ' + (n === 1 ? one : many || one + 's');
// dur writes a duration: 9.5s, 42s, 3m07s, 2h05m. Each unit is chosen after
// rounding to the precision it is written with: 9.96 s reads 10s, 59.6 s
// 1m00s, never 10.0s or 60s.
const dur = ms => { if (!ms || ms < 0) return '-';
  const tenths = (ms / 1000).toFixed(1); if (+tenths < 10) return tenths + 's';
  const s = Math.round(ms / 1000); if (s < 60) return s + 's';
  const m = Math.floor(s / 60); if (m < 60) return m + 'm' + String(s % 60).padStart(2, '0') + 's';
  return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0') + 'm'; };
// clock writes a time of the session (m:ss or h:mm:ss) with d decimals of a
// second, by default one where the time is not a whole second. It rounds
// before it splits the time up, so that 59.96 s reads 1:00.0, never 0:60.0.
const clock = (ms, d) => { ms = Math.max(0, ms); if (d === undefined) d = ms % 1000 ? 1 : 0;
  const q = 10 ** d, u = Math.round(ms / 1000 * q), s = Math.floor(u / q), h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60);
  return (h ? h + ':' + String(m).padStart(2, '0') : String(m)) + ':' + String(s % 60).padStart(2, '0') + (d ? '.' + String(u % q).padStart(d, '0') : ''); };
const dayOf = ms => { const d = new Date(ms); return d.getFullYear()+'-'+String(d.getMonth()+1).padStart(2,'0')+'-'+String(d.getDate()).padStart(2,'0'); };
const when = ms => ms ? new Date(ms).toLocaleString(undefined, {year:'numeric', month:'short', day:'numeric', hour:'2-digit', minute:'2-digit'}) : '-';
// Times are shown in the zone of the browser reading the page: utcOffset
// names the offset at a moment ("UTC+9", "UTC-3:30"), ZONE the zone itself,
// its IANA name where the browser gives one.
const utcOffset = min => { if (!min) return 'UTC'; const a = Math.abs(min);
  return 'UTC' + (min < 0 ? '-' : '+') + Math.floor(a / 60) + (a % 60 ? ':' + String(a % 60).padStart(2, '0') : ''); };
const zoneAt = ms => utcOffset(-new Date(ms || Date.now()).getTimezoneOffset());
const ZONE = (() => { try { return Intl.DateTimeFormat().resolvedOptions().timeZone || zoneAt(); } catch (e) { return zoneAt(); } })();
const cssVar = n => getComputedStyle(document.documentElement).getPropertyValue(n).trim();

window.agentmap = {ready: false};
let D, STR, ROWS, AGG, shown = [], page = 0;
const F = {agent:'', repo:'', model:'', outcome:'', from:'', to:'', q:''};

// unpack inflates one data element: base64, then gzip through the browser.
async function unpack(id) {
  const el = document.getElementById(id);
  const bin = atob(el.textContent);
  const u8 = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
  const stream = new Blob([u8]).stream().pipeThrough(new DecompressionStream('gzip'));
  return JSON.parse(await new Response(stream).text());
}

// sessionData is session i's page: its chunk inflated (the last one is
// kept, neighbours are often opened in turn) and its events rebuilt from
// their columns (report/columns.go) as one object each.
let chunk = {k: -1};
// The sessions' data follows the script in the page (the overview is drawn
// while the browser reads it): parsed is when all of it is there.
const parsed = new Promise(r => document.readyState === 'loading' ? addEventListener('DOMContentLoaded', r) : r());
async function sessionData(i) {
  let lo = 0, hi = D.chunks.length - 1;
  while (lo < hi) { const m = (lo + hi + 1) >> 1; if (D.chunks[m] <= i) lo = m; else hi = m - 1; }
  if (chunk.k !== lo) { await parsed; chunk = {k: lo, pages: await unpack('c' + lo)}; }
  const P = chunk.pages[i - D.chunks[lo]], C = P.ev, T = P.str, ev = new Array(C.count);
  for (let j = 0, t = 0; j < C.count; j++) {
    t += C.t[j];
    const e = ev[j] = {t, k: T[C.k[j]], l: C.l[j]};
    if (C.lb[j]) e.n = T[C.lb[j]];
  }
  for (const key in C.sp) {
    const [idx, vals] = C.sp[key], str = STRING_COLUMNS.has(key), list = key === 'fu' || key === 'tg';
    for (let j = 0, at = 0; j < idx.length; j++) {
      at += idx[j];
      const v = vals[j];
      ev[at][key] = v === undefined ? 1 : str ? T[v] : list ? v.map(x => T[x]) : v;
    }
  }
  return {lanes: P.lanes, files: P.files, out: P.out || [], repos: P.repos, pathMode: P.pathMode, tasks: P.tasks, ev};
}
const STRING_COLUMNS = new Set(['tool', 'cat', 'c', 'src', 'stop']);

// ---- filters ----
function keep(i) {
  const r = ROWS[i];
  if (F.agent && STR[r[S.agent]] !== F.agent) return false;
  if (F.outcome && STR[r[S.outcome]] !== F.outcome) return false;
  if (F.repo && !r[S.repos].some(x => STR[x] === F.repo)) return false;
  if (F.model && !r[S.models].some(x => STR[x] === F.model)) return false;
  if (F.from || F.to) { if (!r[S.start]) return false; const d = dayOf(r[S.start]); if ((F.from && d < F.from) || (F.to && d > F.to)) return false; }
  if (F.q) {
    const q = F.q.toLowerCase();
    const hay = [STR[r[S.id]], STR[r[S.agent]], ...r[S.repos].map(x => STR[x]), ...r[S.models].map(x => STR[x])].join(' ').toLowerCase();
    if (!hay.includes(q)) return false;
  }
  return true;
}
function applyFilters() { shown = []; for (let i = 0; i < ROWS.length; i++) if (keep(i)) shown.push(i); page = 0; listOrder = null; }

// byName orders names as a reader looks for them: case aside (agent-tail
// beside Agent-X, not after every capital) and numbers by their value (app2
// before app10), the exact text deciding between names that differ only so.
const collate = new Intl.Collator('en', {numeric: true, sensitivity: 'base'}).compare;
const byName = (a, b) => collate(a, b) || (a < b ? -1 : a > b ? 1 : 0);
function buildFilters() {
  const vals = {agent: new Set(), repo: new Set(), model: new Set(), outcome: new Set()};
  for (const r of ROWS) {
    vals.agent.add(STR[r[S.agent]]); vals.outcome.add(STR[r[S.outcome]]);
    r[S.repos].forEach(x => vals.repo.add(STR[x])); r[S.models].forEach(x => vals.model.add(STR[x]));
  }
  const sel = (k, label) => '<label>'+label+' <select data-f="'+k+'"><option value="">all</option>' +
    [...vals[k]].filter(v => v).sort(byName).map(v => '<option>'+esc(v)+'</option>').join('') + '</select></label>';
  $('#filters').innerHTML = sel('agent','Agent') + sel('repo','Repository') + sel('model','Model') + sel('outcome','Outcome') +
    '<label>From <input type="date" data-f="from"></label><label>To <input type="date" data-f="to"></label>' +
    '<button id="reset">Reset</button><span class="muted" id="count"></span>';
  $('#filters').addEventListener('change', e => { const k = e.target.dataset.f; if (!k) return; F[k] = e.target.value; refresh(); });
  $('#reset').onclick = () => { for (const k in F) F[k] = ''; $('#search').value = '';
    document.querySelectorAll('[data-f]').forEach(el => el.value = ''); refresh(); };
  $('#search').addEventListener('input', e => { F.q = e.target.value.trim(); refresh(); });
}
function refresh() { applyFilters(); if (location.hash.startsWith('#s/')) location.hash = '#'; else overviewView(); }

// ---- aggregation over the shown sessions ----
function tally(list, keyFn, add) {
  const m = new Map();
  for (const x of list) { const k = keyFn(x); let v = m.get(k); if (!v) { v = []; m.set(k, v); } add(v, x); }
  return m;
}
// runs calls f with the offset (and the number) of each run of n values of
// a flat list (report/data.go agg).
const runs = (list, n, f) => { if (list) for (let o = 0, j = 0; o < list.length; o += n, j++) f(o, j); };

// aggregate sums the shown sessions. Maps are keyed by string-table
// index (numbers hash faster than strings) and named when drawn (named).
// A repository's and an agent's counters have a fifth: how many of their
// sessions used a model without a price (their cost leaves it out), and a
// sixth: how many recorded no usage at all (noUsage). A model's have, after
// its tokens, cost and sessions, the sessions in which its requests recorded
// no usage.
function aggregate() {
  const A = {sessions: shown.length, tokens: 0, cost: 0, calls: 0, errors: 0, requests: 0, retries: 0, compactions: 0, delayMs: 0,
    unpriced: 0, nr: 0, multiRepo: 0,
    repo: new Map(), agent: new Map(), model: new Map(), outcome: new Map(), es: new Map(), ec: new Map(), verb: new Map(),
    mcp: new Map(), file: new Map(), sa: new Map(), dc: new Map(), cat: new Map(), ctx: new Map()};
  const add = (m, k, x, y, z, w, u, q) => { let v = m.get(k); if (!v) { v = [0, 0, 0, 0, 0, 0]; m.set(k, v); } v[0] += x; v[1] += y || 0; v[2] += z || 0; v[3] += w || 0; v[4] += u || 0; v[5] += q || 0; };
  for (const i of shown) {
    const r = ROWS[i], a = AGG[i], u = r[S.unpriced].length ? 1 : 0, nr = noUsage(r) ? 1 : 0;
    A.tokens += r[S.tokens]; A.cost += r[S.cost]; A.calls += r[S.calls]; A.errors += r[S.errors]; A.requests += r[S.requests];
    A.retries += r[S.retries]; A.compactions += r[S.compactions]; A.delayMs += r[S.delayMs]; A.unpriced += u; A.nr += nr;
    // a session counts whole in each of its repositories (the card says so),
    // once in a repository name two of its repositories share (two
    // checkouts of one project, both named after it)
    const repos = r[S.repos].length > 1 ? [...new Set(r[S.repos])] : r[S.repos];
    if (repos.length > 1) A.multiRepo++;
    if (!repos.length) add(A.repo, 0, 1, r[S.tokens], r[S.cost], r[S.errors], u, nr);
    for (const x of repos) add(A.repo, x, 1, r[S.tokens], r[S.cost], r[S.errors], u, nr);
    add(A.agent, r[S.agent], 1, r[S.tokens], r[S.cost], r[S.errors], u, nr);
    add(A.outcome, r[S.outcome], 1);
    runs(a.es, 2, o => add(A.es, a.es[o], a.es[o + 1]));
    runs(a.ec, 2, o => add(A.ec, a.ec[o], a.ec[o + 1]));
    runs(a.v, 4, o => add(A.verb, a.v[o], a.v[o + 1], a.v[o + 2], a.v[o + 3]));
    runs(a.m, 4, o => add(A.mcp, a.m[o] * 1048576 + a.m[o + 1], a.m[o + 2], a.m[o + 3]));
    runs(a.f, 3, o => add(A.file, a.f[o], a.f[o + 1], a.f[o + 2], 1));
    runs(a.sa, 2, o => add(A.sa, a.sa[o], a.sa[o + 1]));
    runs(a.dc, 3, o => add(A.dc, a.dc[o], a.dc[o + 1], a.dc[o + 2]));
    runs(a.cat, 3, o => add(A.cat, a.cat[o], a.cat[o + 1], a.cat[o + 2]));
    runs(a.mt, 5, (o, j) => { const n = a.mt[o + 1] + a.mt[o + 2] + a.mt[o + 3] + a.mt[o + 4]; add(A.model, a.mt[o], n, a.mc[j], 1, n ? 0 : 1); });
    const c = r[S.maxCtx];
    let b = 0; while (b < CTX.length - 1 && !(c >= CTX[b][0] && c < CTX[b][1])) b++;
    add(A.ctx, b, 1, r[S.compactions]);
  }
  return A;
}
// named turns a map keyed by string index into [name, counters] entries.
const named = (m, none) => [...m.entries()].map(([k, v]) => [k > 1048575 ? STR[Math.floor(k / 1048576)] + ' · ' + STR[k % 1048576] : (STR[k] || none || '(none)'), v]);
const CTX = [[0, 1, 'none recorded'], [1, 50e3, '< 50k'], [50e3, 100e3, '50k–100k'], [100e3, 150e3, '100k–150k'], [150e3, 200e3, '150k–200k'],
  [200e3, 500e3, '200k–500k'], [500e3, 1e6, '500k–1M'], [1e6, Infinity, '≥ 1M']];

// ---- building blocks ----
// table renders rows of [name, numbers...]; cols are [header, format]
// (format gets the cell and its row, which may carry more than the columns);
// bar is the column drawn as a bar (its share of the largest). opts: err
// draws the bar in the error colour; stack, a list of [column, colour,
// label], draws the bar as those columns end to end instead (the sum a
// table is ranked by), with a legend; path cuts a long name's directories,
// keeping the file name whole (pathName; a row marked plain is not a path);
// tail keeps whole what follows a name's " · " (an MCP tool, tailName); repo
// writes the repository of a "repo: path" name in a column of its own,
// before the path; cls classes the table (for its layout); none is what an
// empty table says.
function table(cols, rows, bar, opts) {
  opts = opts || {};
  const st = opts.stack, size = r => st ? st.reduce((n, [c]) => n + (r[c] || 0), 0) : r[bar] || 0;
  let max = 1; for (const r of rows) max = Math.max(max, size(r));
  const w = v => (100 * (v || 0) / max).toFixed(1) + '%';
  const barCell = r => !st ? '<div class="bar' + (opts.err ? ' err' : '') + '" style="width:' + w(r[bar]) + '"></div>' :
    '<div class="bars">' + st.map(([c, col]) => r[c] ? '<div class="bar" style="width:' + w(r[c]) + ';background:' + col + '"></div>' : '').join('') + '</div>';
  const name = r => { if (!opts.repo) return '<td class="name" title="' + esc(joined(r[0])) + '">' + (opts.path && !r.plain ? pathName(r[0]) : opts.tail ? tailName(r[0]) : esc(r[0])) + '</td>';
    const k = r[0].indexOf(SEP), repo = k < 0 ? '' : r[0].slice(0, k), p = k < 0 ? r[0] : r[0].slice(k + 1);
    return '<td class="name repo" title="' + esc(repo) + '">' + (repo ? esc(repo) : '<span class="muted">-</span>') + '</td><td class="name file" title="' + esc(joined(r[0])) + '">' + pathName(p) + '</td>'; };
  let s = (st ? '<div class="legend">bar: ' + st.map(([, col, label]) => '<span><i class="sw" style="background:' + col + '"></i>' + esc(label) + '</span>').join(' + ') + '</div>' : '') +
    '<div class="scroll"><table' + (opts.repo ? ' class="files"' : opts.cls ? ' class="' + opts.cls + '"' : '') + '><thead><tr>' + (opts.repo ? '<th>repository</th>' : '') + cols.map((c, i) => '<th' + (i ? ' class="n"' : '') + '>' + esc(c[0]) + '</th>').join('') +
    '<th></th></tr></thead><tbody>';
  for (const r of rows) {
    s += '<tr>' + cols.map((c, i) => i ? '<td class="n" data-v="' + r[i] + '">' + html(c[1](r[i], r)) + '</td>' : name(r)).join('') +
      '<td class="barcell">' + barCell(r) + '</td></tr>';
  }
  if (!rows.length) s += '<tr><td class="muted" colspan="' + (cols.length + (opts.repo ? 2 : 1)) + '">' + esc(opts.none || 'none') + '</td></tr>';
  return s + '</tbody></table></div>';
}
// pathName sets a path ("repo: dir/file") so that, where it is too long
// for its cell, what is cut is its directories, from the outermost (an
// ellipsis at their start: "…/stages/"), then the end of its repository,
// never its file name: the nearest directory and the name are what tell
// two files apart. The cell's title has it whole. The directories are
// laid out right to left, so that they overflow at their start; the bdi
// keeps their text in its order (a leading "." or trailing "/" would
// otherwise move to the other end).
// SEP joins a repository's name and a path in a file's label (a NUL, which
// neither holds; report/data.go's repoSep); joined writes it as ": ".
const SEP = '\u0000', joined = p => p.replace(SEP, ': ');
const pathName = p => { const r = p.indexOf(SEP), repo = r < 0 ? '' : p.slice(0, r) + ': ', rest = r < 0 ? p : p.slice(r + 1), k = rest.lastIndexOf('/') + 1;
  return '<span class="path">' + (repo ? '<span class="repo">' + esc(repo) + '</span>' : '') + (k ? '<span class="dir"><bdi>' + esc(rest.slice(0, k)) + '</bdi></span>' : '') +
    '<span class="base">' + esc(rest.slice(k)) + '</span></span>'; };
// tailName sets "server · tool" so that, where it is too long for its cell,
// the server loses its end and the tool stays whole: the tools of one server
// often begin alike (create_entities, create_relations), and cut at their
// end their rows would read the same. The cell's title has it whole.
const tailName = p => { const k = p.indexOf(' · ');
  return k < 0 ? esc(p) : '<span class="path"><span class="head">' + esc(p.slice(0, k)) + '</span><span class="base tail">' + esc(p.slice(k)) + '</span></span>'; };
// cutAt keeps the first n rows, and says when it left some out ("top 50
// of 60"): a table that is cut says so.
const cutAt = (rows, n) => ({rows: rows.slice(0, n), note: rows.length > n ? 'top ' + n + ' of ' + int(rows.length) : ''});
const notes = (...n) => n.filter(x => x).join(' · ');
const card = (title, body, note, wide) => '<section class="card' + (wide ? ' wide' : '') + '"><h2>' + esc(title) + (note ? '<small>' + esc(note) + '</small>' : '') + '</h2>' + body + '</section>';
const entries = (m, by, n, none) => named(m, none).sort((a, b) => b[1][by] - a[1][by] || (a[0] < b[0] ? -1 : 1)).slice(0, n || 1e9);
const pct = x => (100 * x).toFixed(1) + '%';

// ---- overview ----
const chartState = {metric: 'sessions', stack: 'model', unit: 'auto'};
function overviewView() {
  document.body.dataset.view = 'overview';
  if (!ROWS.length) return emptyView();
  const A = aggregate();
  if (window.agentmap.marks) window.agentmap.marks.aggregated = performance.now();
  $('#count').textContent = shown.length === ROWS.length ? plural(ROWS.length, 'session') : shown.length + ' of ' + plural(ROWS.length, 'session');
  // data-value is the figure as a number (the tests read it), whatever the text says
  // sub is a line under the figure's name, saying what it leaves out
  const kpi = (k, v, text, title, one, many, sub) => '<div class="kpi" data-kpi="' + k + '" data-value="' + v + '"><b title="' + esc(title + (sub ? '; ' + sub : '')) + '">' +
    html(text) + '</b><span>' + esc(v === 1 ? one : many || one + 's') + '</span>' + (sub ? '<small class="sub">' + esc(sub) + '</small>' : '') + '</div>';
  const n = (k, v, one, many) => kpi(k, v, int(v), int(v), one, many), cost = Math.round(A.cost * 1e6) / 1e6;
  // sessions whose logs recorded no usage count in neither the tokens nor the cost: both cards say so
  const nrNote = A.nr ? plural(A.nr, 'session') + ' recorded no usage, not counted' : '', tokText = tokOf(A.tokens, A.nr);
  const nrSub = tokText === NR ? '' : nrNote;
  let s = '<div class="kpis">' + n('sessions', A.sessions, 'session') + kpi('tokens', A.tokens, tokText, int(A.tokens), 'token', '', nrSub) +
    kpi('cost', cost, costOf(cost, A.unpriced, A.nr, A.tokens), '$' + fixed(cost, 6) + (A.unpriced ? '; ' + plural(A.unpriced, 'session') + ' used models without a price, whose tokens it leaves out' : ''), 'estimated cost (USD)', 'estimated cost (USD)', nrSub) +
    n('calls', A.calls, 'tool call') + n('requests', A.requests, 'model request') + n('errors', A.errors, 'error') + n('retries', A.retries, 'retry', 'retries') + n('compactions', A.compactions, 'compaction') + '</div>';
  s += '<div class="grid">';
  s += card('Over time', '<div class="controls"><b id="daytitle"></b><select id="metric" aria-label="what the chart counts"><option value="sessions">sessions</option><option value="tokens">tokens</option><option value="cost">cost</option></select>' +
    ' stacked by <select id="stack" aria-label="stacked by"><option value="model">model</option><option value="agent">agent</option></select>' +
    ' per <select id="unit" aria-label="per"><option value="auto">day, week or month</option><option value="day">day</option><option value="week">week</option><option value="month">month</option></select>' +
    '<span class="muted" id="daynote"></span></div><div id="daychart"></div>', '', true);
  // rows are [name, sessions, tokens, cost, errors, sessions with unpriced
  // models, sessions that recorded no usage]
  const T = [['sessions', int], ['tokens', (x, r) => tokOf(x, r[6])], ['cost', (x, r) => costOf(x, r[5], r[6], r[2])], ['errors', int]];
  const repos = cutAt(entries(A.repo, 0, 0, '(no repository)').map(([k, v]) => [k, ...v]), 50);
  s += card('By repository', table([['repository', 0], ...T], repos.rows, 1),
    notes(repos.note, A.multiRepo ? 'a session in several repositories counts in each' : '', nrNote));
  s += card('By agent', table([['agent', 0], ...T], entries(A.agent, 0).map(([k, v]) => [k, ...v]), 1), nrNote);
  const unpriced = new Set(); for (const i of shown) for (const x of ROWS[i][S.unpriced]) unpriced.add(STR[x]);
  // rows are [model, tokens, cost, sessions, unpriced, sessions in which its requests recorded no usage]
  s += card('By model', table([['model', 0], ['tokens', (x, r) => tokOf(x, r[5])], ['cost', (x, r) => costOf(x, r[4], r[5], r[1])], ['sessions', int]],
    entries(A.model, 0).map(([k, v]) => [k, v[0], v[1], v[2], unpriced.has(k), v[3]]), 1), notes(unpriced.size ? 'unpriced: no price known' : '', nrNote));
  s += card('Outcomes', table([['outcome', 0], ['sessions', int]], entries(A.outcome, 0).map(([k, v]) => [k, ...v]), 1));
  s += card('Errors by source', table([['source', 0], ['errors', int]], entries(A.es, 0).map(([k, v]) => [k, ...v]), 1, {err: 1}));
  s += card('Errors by class', table([['class', 0], ['errors', int]], entries(A.ec, 0).map(([k, v]) => [k, ...v]), 1, {err: 1}));
  // only the verbs that failed or were retried at least once
  const verbs = cutAt(named(A.verb).filter(([, v]) => v[1] + v[2] > 0).map(([k, v]) => [k, v[0], v[1], v[2], v[1] / v[0]]).sort((a, b) => (b[2] + b[3]) - (a[2] + a[3]) || b[1] - a[1]), 40);
  s += card('Shell verbs that fail or are retried', table([['verb', 0], ['runs', int], ['failed', int], ['retried', int], ['fail rate', pct]], verbs.rows, 2,
    {stack: [[2, 'var(--err)', 'failed'], [3, 'var(--warn)', 'retried']], none: A.verb.size ? 'no shell verb failed or was retried' : 'no shell command ran'}), verbs.note);
  const mcp = cutAt(named(A.mcp).map(([k, v]) => [k, v[0], v[1], v[1] / v[0]]).sort((a, b) => b[1] - a[1]), 40);
  s += card('MCP servers and tools', table([['server · tool', 0], ['calls', int], ['failed', int], ['fail rate', pct]], mcp.rows, 1, {tail: 1}), mcp.note);
  s += card('Subagent types', table([['type', 0], ['launches', int]], entries(A.sa, 0).map(([k, v]) => [k, ...v]), 1));
  s += card('Context fill (largest main-agent context)', table([['max context', 0], ['sessions', int], ['compactions', int]],
    CTX.map((c, i) => [c[2], ...(A.ctx.get(i) || [0, 0])]), 1), plural(A.compactions, 'compaction'));
  s += card('Delays', table([['cause', 0], ['delays', int], ['time', dur]], entries(A.dc, 1).map(([k, v]) => [k, ...v]), 2), 'total ' + dur(A.delayMs));
  s += card('Where tool time went', table([['category', 0], ['calls', int], ['time', dur]], entries(A.cat, 1).map(([k, v]) => [k, ...v]), 2));
  // Ranked by reads and edits, which the bar draws end to end. The card
  // spans the page, the repository in a column of its own, so that a row
  // is read without its tooltip: the repository and the file name whole.
  const files = cutAt(named(A.file).map(([k, v]) => [k, v[0], v[1], v[2]]).sort((a, b) => (b[1] + b[2]) - (a[1] + a[2])), 40);
  s += card('Files read and edited most', table([['file', 0], ['reads', int], ['edits', int], ['sessions', int]], files.rows, 1,
    {path: 1, repo: 1, stack: [[1, 'var(--k-read)', 'reads'], [2, 'var(--k-edit)', 'edits']]}), files.note, true);
  s += card('Sessions', '<div id="sessions"></div>', '', true);
  $('#view').innerHTML = s + '</div>';
  $('#metric').value = chartState.metric; $('#stack').value = chartState.stack; $('#unit').value = chartState.unit;
  $('#metric').onchange = e => { chartState.metric = e.target.value; dayChart(); };
  $('#stack').onchange = e => { chartState.stack = e.target.value; dayChart(); };
  $('#unit').onchange = e => { chartState.unit = e.target.value; dayChart(); };
  dayChart();
  sessionList();
}

// emptyView is the page of a report that holds no session: what it would
// show, and how sessions come to be there, rather than a dashboard of
// empty tables. A report whose filters (--since, --agent…) kept none of
// the sessions there are (D.filtered) says that instead: mapping the logs
// again would not change it.
function emptyView() {
  $('#filters').style.display = 'none'; $('#search').style.display = 'none';
  const scope = $('.scope').textContent;
  if (D.filtered) {
    $('#view').innerHTML = '<section class="card empty" id="empty"><h2>No session matches</h2>' +
      '<p>None of the sessions mapped matches this report\'s filters' + (scope ? ' (' + esc(scope) + ')' : '') + '.</p>' +
      '<p><code>agentmap list</code> shows the sessions there are, and takes the same filters (<code>--since</code>, <code>--until</code>, <code>--agent</code>, <code>--repo</code>, <code>--outcome</code>). ' +
      'Write the report again with filters that match some, or none: <code>agentmap report</code>.</p></section>';
    return;
  }
  $('#view').innerHTML = '<section class="card empty" id="empty"><h2>No sessions yet</h2>' +
    '<p>This report holds no session' + (scope ? ' (' + esc(scope) + ')' : '') + '.</p>' +
    '<p>agentmap maps each session of your coding agents (Claude Code, Codex, Cursor…) from their logs. To map the sessions there are:</p>' +
    '<pre><code>agentmap scan</code></pre><p>It reads every log once, writes the maps and exits (<code>agentmap install</code> sets up the service that maps them as you work). ' +
    'Then write this report again: <code>agentmap report</code>.</p>' +
    '<p class="muted">With sessions mapped, a <code>--since</code>, <code>--agent</code> or <code>--repo</code> that none of them matches leaves the report empty too: <code>agentmap list</code> shows the sessions there are.</p></section>';
}

// SLOT is the quarter hour of a.ts, in ms (report/data.go slotMs).
const SLOT = 9e5;
// bucketOf names the bar a time falls in: its day, or the Monday of its
// week or its month when the sessions span too long for days.
function bucketOf(ms, unit) {
  const d = new Date(ms);
  if (unit === 'week') d.setDate(d.getDate() - (d.getDay() + 6) % 7);
  if (unit === 'month') return dayOf(ms).slice(0, 7);
  return dayOf(d.getTime());
}
// bucketName names a bar in the tooltip and the table: its date, its
// month, or the Monday of its week, said to be that ("week of 2024-11-11").
const bucketName = (d, unit) => unit === 'week' ? 'week of ' + d : d;
// axisDate labels a bar under the chart, short enough for a phone and
// never ambiguous: a day or a week by its month's name ("Nov 11", the year
// where it starts or changes: "Nov 11 ’24"), a month as "2024-11".
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const axisDate = (d, withYear) => d.length === 7 ? d : MONTHS[+d.slice(5, 7) - 1] + ' ' + +d.slice(8, 10) + (withYear ? ' \u2019' + d.slice(2, 4) : '');
// ticks chooses the y axis of a chart whose largest bar is max: a step of
// 1, 2 or 5 × 10^k (whole for counts), at most five of them up to top, the
// first multiple at or above max, to which the bars are scaled; label writes
// a tick exactly, with the decimals its step needs (tok() and usd() round).
function ticks(max, metric) {
  max = max || 1;
  let k = Math.floor(Math.log10(max / 5)), m = [1, 2, 5, 10].find(m => m * 10 ** k * 5 >= max * (1 - 1e-12));
  if (m === 10) { m = 1; k++; }
  if (metric !== 'cost' && k < 0) { m = 1; k = 0; }
  const step = m * 10 ** k, n = Math.max(1, Math.ceil(max / step - 1e-9)), top = n * step;
  const fixed = (v, d) => v.toLocaleString('en-US', {minimumFractionDigits: d, maximumFractionDigits: d});
  const [u, suffix] = metric !== 'tokens' ? [1, ''] : top >= 1e9 ? [1e9, 'G'] : top >= 1e6 ? [1e6, 'M'] : top >= 1e4 ? [1e3, 'k'] : [1, ''];
  const d = Math.max(0, Math.round(Math.log10(u)) - k);
  const label = metric === 'cost' ? v => '$' + fixed(v, k < 0 ? Math.max(2, -k) : 0) : v => v ? fixed(v / u, d) + suffix : '0';
  return {n, top, label, values: Array.from({length: n + 1}, (_, g) => g * step)};
}
// chartWidth is the width of the chart over time's card, as the browser
// last laid it out, or a guess from the window's before it has: the card
// spans the page's main column, less their paddings and borders.
let laidOut = 0;
const chartWidth = () => Math.max(280, laidOut || Math.min(innerWidth - 16, 1500) - (innerWidth <= 600 ? 20 : 40) - 30);
function dayChart() {
  const {metric, stack} = chartState;
  const days = new Map(), keys = new Map();
  // unp holds the days, and day + '\0' + agent, whose cost leaves out the
  // tokens of models without a price: the chart draws what was priced, and
  // says so; the tooltip and the table mark those figures "+unpriced".
  const unp = new Set();
  // A session with no start time (its log gave none; 0) has no day: it
  // is left out of the chart and said so, rather than stretch its axis
  // back to 1970.
  let lo = Infinity, hi = -Infinity, nr = 0, undated = 0;
  // Sessions count on the day they started; tokens and cost on the day of
  // their requests, as usage dates them: a session whose requests span
  // more than its first quarter hour has them by quarter hour (a.ts), in
  // the reader's zone like every time on the page.
  const spread = a => metric !== 'sessions' && a.ts;
  for (const i of shown) if (ROWS[i][S.start]) {
    lo = Math.min(lo, ROWS[i][S.start]); hi = Math.max(hi, ROWS[i][S.start]);
    if (spread(AGG[i])) runs(AGG[i].ts, 3, o => { hi = Math.max(hi, AGG[i].ts[o] * SLOT); });
  }
  // By default days, or weeks or months when the sessions span too long
  // for a readable bar a day; the select chooses.
  const spanDays = (hi - lo) / 864e5, unit = chartState.unit !== 'auto' ? chartState.unit : spanDays <= 92 ? 'day' : spanDays <= 730 ? 'week' : 'month';
  $('#daytitle').textContent = 'Per ' + unit;
  // a cost of 0 (an unpriced model's) is neither drawn nor in the legend,
  // but opens its day, so that a day of unpriced usage has its row; nor are
  // the tokens of requests that recorded none
  const put = (day, k, v) => { let d = days.get(day); if (!d) { d = new Map(); days.set(day, d); } if (metric !== 'sessions' && !v) return;
    d.set(k, (d.get(k) || 0) + v); keys.set(k, (keys.get(k) || 0) + v); };
  for (const i of shown) {
    if (!ROWS[i][S.start]) { undated++; continue; }
    const r = ROWS[i], a = AGG[i], day = bucketOf(r[S.start], unit);
    if (metric !== 'sessions' && noUsage(r)) nr++;
    if (spread(a)) {
      runs(a.ts, 3, (o, j) => {
        const d = bucketOf(a.ts[o] * SLOT, unit), k = stack === 'agent' ? STR[r[S.agent]] : STR[a.ts[o + 1]];
        // the day of a quarter hour of an unpriced model's tokens says so
        if (metric === 'cost' && r[S.unpriced].includes(a.ts[o + 1])) { unp.add(d); if (stack === 'agent') unp.add(d + '\0' + k); }
        put(d, k, metric === 'tokens' ? a.ts[o + 2] : a.tc[j]);
      });
      continue;
    }
    if (metric === 'cost' && r[S.unpriced].length) { unp.add(day); if (stack === 'agent') unp.add(day + '\0' + STR[r[S.agent]]); }
    if (stack === 'agent') put(day, STR[r[S.agent]], metric === 'sessions' ? 1 : metric === 'tokens' ? r[S.tokens] : r[S.cost]);
    else if (metric === 'sessions') put(day, STR[r[S.models][0]], 1);
    else if (metric === 'tokens') {
      let known = 0;
      runs(a.mt, 5, o => { const n = a.mt[o + 1] + a.mt[o + 2] + a.mt[o + 3] + a.mt[o + 4]; known += n; put(day, STR[a.mt[o]], n); });
      if (r[S.tokens] > known) put(day, STR[r[S.models][0]], r[S.tokens] - known); // beyond the event cap
    } else {
      let known = 0;
      runs(a.mt, 5, (o, j) => { known += a.mc[j]; put(day, STR[a.mt[o]], a.mc[j]); });
      put(day, STR[r[S.models][0]], r[S.cost] - known > 1e-9 ? r[S.cost] - known : 0);
    }
  }
  $('#daynote').textContent = notes(unp.size ? 'unpriced usage not included' : '', nr ? plural(nr, 'session') + ' with no usage recorded not included' : '', undated ? plural(undated, 'session') + ' with no start time not included' : '');
  const el = $('#daychart');
  if (!days.size) { el.innerHTML = '<p class="muted">no sessions</p>'; return; }
  // every day between the first and the last, so gaps show
  const sorted = [...days.keys()].sort(), list = [];
  for (let d = new Date((sorted[0].length === 7 ? sorted[0] + '-01' : sorted[0]) + 'T12:00:00'), end = sorted[sorted.length - 1]; ;) {
    const k = bucketOf(d.getTime(), unit); if (list[list.length - 1] !== k) list.push(k); if (k >= end || list.length > 3660) break;
    d.setDate(d.getDate() + (unit === 'week' ? 7 : 1));
  }
  let order = [...keys.entries()].sort((a, b) => b[1] - a[1]).map(e => e[0]);
  if (order.length > 9) { // fold the long tail into "other"
    const top = new Set(order.slice(0, 8));
    for (const [day, d] of days) { let o = 0; for (const [k, v] of [...d]) if (!top.has(k)) { o += v; d.delete(k); if (unp.has(day + '\0' + k)) unp.add(day + '\0other'); } if (o) d.set('other', o); }
    order = [...order.slice(0, 8), 'other'];
  }
  const color = k => k === 'other' ? OTHER : PALETTE[order.indexOf(k) % PALETTE.length];
  // The picture is as wide as its card, one unit a CSS pixel, so that its
  // labels keep their size on a phone; T and R keep the top label and the
  // last date inside it. The width is the card's as last laid out (at
  // first a guess from the window's): reading it now would lay the whole
  // page out before its time, tens of milliseconds on every filter. A
  // ResizeObserver hears of the width once the browser has laid the card
  // out anyway, and draws the chart again when it differs.
  const W = chartWidth(), H = W < 600 ? 180 : 220, L = 54, B = 22, T = 12, R = 30, PH = H - B - T, n = list.length, bw = (W - L - R) / n;
  el.dataset.w = W;
  if (!el.sized) {
    el.sized = new ResizeObserver(es => {
      if (!el.isConnected) { el.sized.disconnect(); return; }
      const w = es[es.length - 1].contentRect.width;
      if (w > 0) { laidOut = Math.round(w); if (Math.abs(chartWidth() - el.dataset.w) > 1) dayChart(); }
    });
    el.sized.observe(el);
  }
  const totals = list.map(d => [...(days.get(d) || new Map()).values()].reduce((a, b) => a + b, 0));
  const Y = ticks(Math.max(...totals), metric), f = metric === 'tokens' ? tok : int;
  // fmt writes a figure of the tooltip and the table: a cost says when it leaves out unpriced tokens
  const fmt = k => metric !== 'cost' ? f : (x, r) => costOf(x, unp.has(k ? r.key + '\0' + k : r.key));
  let svg = '<svg class="chart" viewBox="0 0 ' + W + ' ' + H + '" role="img" aria-label="' + metric + ' per ' + unit + '">';
  Y.values.forEach((v, g) => { const y = T + PH * (1 - g / Y.n); svg += '<line class="axis" x1="' + L + '" x2="' + (W - R) + '" y1="' + y + '" y2="' + y + '"/><text x="' + (L - 6) + '" y="' + (y + 4) + '" text-anchor="end">' + esc(Y.label(v)) + '</text>'; });
  list.forEach((d, i) => {
    let y = T + PH; const day = days.get(d);
    if (day) for (const k of order) { const v = day.get(k); if (!v) continue; const h = PH * v / Y.top; y -= h;
      svg += '<rect x="' + (L + i * bw + bw * 0.1).toFixed(2) + '" y="' + y.toFixed(2) + '" width="' + Math.max(0.8, bw * 0.8).toFixed(2) + '" height="' + Math.max(0.5, h).toFixed(2) + '" fill="' + color(k) + '" data-d="' + i + '"/>'; }
    svg += '<rect x="' + (L + i * bw) + '" y="0" width="' + bw + '" height="' + (T + PH) + '" fill="transparent" data-d="' + i + '"/>';
  });
  const every = Math.ceil(n / Math.max(2, Math.min(10, Math.floor((W - L - R) / 64))));
  let year = '';
  list.forEach((d, i) => { if (i % every === 0) { svg += '<text x="' + (L + i * bw + bw / 2) + '" y="' + (H - 6) + '" text-anchor="middle">' + axisDate(d, d.slice(0, 4) !== year) + '</text>'; year = d.slice(0, 4); } });
  svg += '</svg>';
  const legend = '<div class="legend">' + order.map(k => '<span><i class="sw" style="background:' + color(k) + '"></i>' + esc(k) + '</span>').join('') + '</div>';
  // a row is named as the tooltip names its bar; its key is the bucket
  const rows = list.map((d, i) => Object.assign([bucketName(d, unit), ...order.map(k => (days.get(d) || new Map()).get(k) || 0), totals[i]], {key: d}))
    .filter(r => r[r.length - 1] || unp.has(r.key));
  const tbl = '<details><summary>Table</summary>' + table([[unit, 0], ...order.map(k => [k, fmt(k)]), ['total', fmt('')]], rows, order.length + 1) + '</details>';
  // no bar at all when no model of the sessions shown has a price
  if (!Math.max(...totals) && unp.size) { el.innerHTML = '<p class="muted">No cost to draw: the models of these sessions have no price.</p>' + tbl; return; }
  // nor when none of them recorded usage (an axis of 0 to 1 would be made up)
  if (!Math.max(...totals) && metric !== 'sessions') { el.innerHTML = '<p class="muted">No ' + metric + ' to draw: the sessions shown recorded no token usage.</p>'; return; }
  el.innerHTML = svg + legend + tbl;
  const svgEl = $('svg', el), tip = $('#tip');
  svgEl.addEventListener('mousemove', e => {
    const i = e.target.dataset && e.target.dataset.d; if (i === undefined) { tip.style.display = 'none'; return; }
    const d = list[+i], day = days.get(d) || new Map();
    tip.innerHTML = '<b>' + bucketName(d, unit) + '</b><table>' + order.filter(k => day.get(k)).map(k => '<tr><td><i class="sw" style="background:' + color(k) + '"></i>' + esc(k) + '</td><td class="n">' + esc(fmt(k)(day.get(k), {key: d})) + '</td></tr>').join('') +
      '<tr><td><b>total</b></td><td class="n"><b>' + esc(fmt('')(totals[+i], {key: d})) + '</b></td></tr></table>';
    tip.style.display = 'block'; tip.style.left = Math.min(innerWidth - 280, e.clientX + 14) + 'px'; tip.style.top = (e.clientY + 14) + 'px';
  });
  svgEl.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
}

const PAGE = 50;
// The session list is ranked by one of its columns (newest first by
// default), a page at a time. listOrder is the shown sessions in that order,
// made again when the filters or the ranking change.
const SORTS = {started: S.start, duration: S.dur, calls: S.calls, tokens: S.tokens, cost: S.cost, errors: S.errors};
const listSort = {key: 'started', desc: true};
let listOrder = null;
function listed() {
  if (listOrder) return listOrder;
  if (listSort.key === 'started' && listSort.desc) return listOrder = shown; // the page's sessions come newest first
  const c = SORTS[listSort.key], d = listSort.desc ? -1 : 1;
  // a session whose usage was not recorded ranks below every recorded figure
  const v = c === S.tokens || c === S.cost ? i => noUsage(ROWS[i]) ? -1 : ROWS[i][c] : i => ROWS[i][c];
  return listOrder = shown.slice().sort((a, b) => d * (v(a) - v(b)) || a - b);
}
// cutCell is a cell of the session list cut at its width, its title whole.
const cutCell = v => '<td class="name" title="' + esc(v) + '">' + esc(v) + '</td>';
function sessionList() {
  const el = $('#sessions'), list = listed(), n = list.length, pages = Math.max(1, Math.ceil(n / PAGE));
  page = Math.max(0, Math.min(page, pages - 1));
  const th = (label, key, num) => {
    const c = (num ? 'n ' : '') + 'sort', on = listSort.key === key, dir = on ? (listSort.desc ? 'descending' : 'ascending') : '';
    return '<th class="' + c + '"' + (on ? ' aria-sort="' + dir + '"' : '') + '><button data-sort="' + key + '" title="rank by ' + label + (on ? ', ' + (listSort.desc ? 'ascending' : 'descending') + ' next' : '') + '">' +
      label + (key === 'started' ? ' <small class="muted">' + esc(ZONE) + '</small>' : '') + '<span class="arrow">' + (on ? (listSort.desc ? '▾' : '▴') : '') + '</span></button></th>';
  };
  let s = '<div class="scroll-x"><table><thead><tr>' + th('started', 'started') + '<th>session</th><th>agent</th><th>repository</th><th>models</th>' + th('duration', 'duration', 1) + th('calls', 'calls', 1) +
    th('tokens', 'tokens', 1) + th('cost', 'cost', 1) + th('errors', 'errors', 1) + '<th>outcome</th></tr></thead><tbody>';
  for (const i of list.slice(page * PAGE, page * PAGE + PAGE)) {
    const r = ROWS[i], id = STR[r[S.id]];
    s += '<tr class="click" data-s="' + i + '"><td>' + esc(when(r[S.start])) + '</td><td class="name"><a href="#s/' + i + '" title="' + esc(id) + '">' + esc(id.length > 18 ? id.slice(0, 18) + '…' : id) + '</a></td><td>' + esc(STR[r[S.agent]]) +
      '</td>' + cutCell(r[S.repos].map(x => STR[x]).join(', ') || '-') + cutCell(r[S.models].map(x => STR[x]).join(', ')) + '<td class="n">' + dur(r[S.dur]) +
      '</td><td class="n">' + int(r[S.calls]) + '</td><td class="n">' + esc(rowTok(r) + (partly(r) ? '*' : '')) + '</td><td class="n">' + html(rowCost(r)) + (partly(r) ? '*' : '') + '</td><td class="n">' + int(r[S.errors]) + '</td><td>' + esc(STR[r[S.outcome]] || '-') + '</td></tr>';
  }
  if (!n) s += '<tr><td colspan="11" class="muted">no session matches</td></tr>';
  const parts = list.filter(i => partly(ROWS[i])).length;
  const btn = (id, label, on) => '<button id="' + id + '"' + (on ? '' : ' disabled') + '>' + label + '</button>';
  s += '</tbody></table></div><div class="pager">' + btn('first', '« first', page) + btn('prev', '‹ previous', page) +
    '<span class="muted">page ' + (page + 1) + ' of ' + pages + ' (' + plural(n, 'session') + ')</span>' + btn('next', 'next ›', page < pages - 1) + btn('last', 'last »', page < pages - 1) +
    (pages > 1 ? '<label class="muted">go to page <input id="pagejump" type="number" min="1" max="' + pages + '" value="' + (page + 1) + '"></label>' : '') + '</div>' +
    (parts ? '<p class="muted" id="partly">* ' + plural(parts, 'session') + ' some of whose model requests recorded no token usage: the tokens and cost are those of the others.</p>' : '');
  el.innerHTML = s;
  const go = p => { page = p; sessionList(); };
  $('#first').onclick = () => go(0); $('#prev').onclick = () => go(page - 1); $('#next').onclick = () => go(page + 1); $('#last').onclick = () => go(pages - 1);
  // a page number out of range goes to the nearest page there is, and the
  // field then says which page is shown (an empty one, the page it was on)
  const jump = $('#pagejump'); if (jump) jump.onchange = () => { const p = Math.round(+jump.value);
    go(jump.value.trim() === '' || isNaN(p) ? page : Math.max(1, Math.min(p, pages)) - 1); };
  el.querySelector('thead').addEventListener('click', e => { const b = e.target.closest('button[data-sort]'); if (!b) return;
    const k = b.dataset.sort; listSort.desc = listSort.key === k ? !listSort.desc : true; listSort.key = k; listOrder = null; page = 0; sessionList();
    const again = $('#sessions button[data-sort="' + k + '"]'); if (again) again.focus(); });
  el.querySelector('tbody').addEventListener('click', e => { const tr = e.target.closest('tr[data-s]'); if (tr && e.target.tagName !== 'A') location.hash = '#s/' + tr.dataset.s; });
}

// ---- session page ----
async function sessionView(i) {
  document.body.dataset.view = 'loading';
  const r = ROWS[i];
  if (!r) { $('#view').innerHTML = '<p>No such session. <a href="#">Back to the overview</a></p>'; return; }
  const marks = window.agentmap.marks || {};
  marks.sessionStart = performance.now();
  const P = await sessionData(i);
  marks.sessionData = performance.now();
  const asked = /^#s\/(\d+)$/.exec(location.hash);
  if (!D.single && (!asked || +asked[1] !== i)) return; // another view was asked for meanwhile
  const id = STR[r[S.id]];
  // a list (of models, of repositories) wraps between its names, a name
  // inside itself only when it is wider than the field
  const field = (k, v, attr) => '<div' + (attr ? ' data-field="' + attr + '" data-value="' + esc(v[1]) + '"' : '') + '><span>' + k + '</span><b>' +
    // each name keeps its comma, so that a line never begins with one
    (Array.isArray(v[0]) ? v[0].map((x, i, a) => '<span class="one">' + esc(x) + (i < a.length - 1 ? ',' : '') + '</span>').join(' ') || '-' : esc(v[0])) + '</b></div>';
  let s = (D.single ? '' : '<p><a href="#">‹ Overview</a></p>') + '<h1>' + esc(id) + '</h1>';
  s += '<div class="hdr">' + field('agent', [STR[r[S.agent]]]) + field('repository', [P.repos]) + field('models', [r[S.models].map(x => STR[x])]) +
    field('started', [r[S.start] ? when(r[S.start]) + ' ' + zoneAt(r[S.start]) : '-']) + field('duration', [dur(r[S.dur])]) + field('outcome', [STR[r[S.outcome]] || '-']);
  // the usage of a session whose log recorded none is not a row of zeros
  const nr = noUsage(r), tk = k => nr ? NR : int(r[k]);
  s += field('input tokens', [tk(S.in), r[S.in]], 'in') + field('cache write', [tk(S.cw), r[S.cw]], 'cw') + field('cache read', [tk(S.cr), r[S.cr]], 'cr') +
    field('output tokens', [tk(S.out), r[S.out]], 'out') + field('total tokens', [tk(S.tokens), r[S.tokens]], 'tokens') + field('cost', [rowCost(r), r[S.cost]], 'cost') +
    field('calls / requests', [int(r[S.calls]) + ' / ' + int(r[S.requests])]) + field('errors / retries', [int(r[S.errors]) + ' / ' + int(r[S.retries])]) +
    field('delays', [int(r[S.delays]) + ' (' + dur(r[S.delayMs]) + ')']) + field('max context / compactions', [tok(r[S.maxCtx]) + ' / ' + r[S.compactions]]) + '</div>';
  if (r[S.trunc]) s += '<p class="tag bad">This map was cut at its event cap: the timeline shows the earliest ' + plural(P.ev.length, 'event') + '; the totals count the whole session.</p>';
  if (r[S.tokens] !== r[S.in] + r[S.cw] + r[S.cr] + r[S.out]) s += '<p class="muted">The split by kind counts the requests kept in the map; the total counts the whole session.</p>';
  const reqs = P.ev.filter(e => e.k === 'llm'), bare = reqs.filter(e => !(e.i || e.cw || e.cr || e.o)).length;
  if (nr) s += '<p class="muted" id="nousage">The log of this session recorded no token usage for its ' + plural(r[S.requests], 'model request') + ': its tokens and cost are not known.</p>';
  else if (bare) s += '<p class="muted" id="nousage">' + int(bare) + ' of its ' + plural(reqs.length, 'model request') + ' recorded no token usage: the tokens and cost count the others.</p>';
  s += '<section class="card wide"><h2>Timeline<small>' + plural(P.ev.length, 'event') + ' on ' + plural(P.lanes.length, 'lane') + ' · wheel, pinch or +/− to zoom, drag to pan, point at or tap a mark for its details</small></h2>' +
    '<div class="controls"><button id="zin" title="zoom in">+</button><button id="zout" title="zoom out">−</button><button id="zfit">Fit</button><span id="range" class="muted"></span></div>' +
    '<div class="legend">' + KINDS.map(k => '<span><i class="sw" style="background:var(--k-' + k + ')"></i>' + k + '</span>').join('') +
    '<span><i class="sw" style="background:var(--k-out)"></i>output</span><span>▲ error</span><span>● retry</span></div>' +
    '<div class="tl"><div class="tlwrap"><canvas class="timeline" id="timeline" tabindex="0" aria-label="timeline of the session events" aria-describedby="tlkeys" aria-controls="details"></canvas></div>' +
    '<div id="details" aria-live="polite"><span class="muted">Point at a mark.</span></div></div>' +
    '<p class="muted keys" id="tlkeys">Keys, on the timeline: ← → the previous or next mark of the lane, ↑ ↓ the lane above or below, Home End its first or last mark, ' +
    'Shift+← → or Page Up Down to pan, + − to zoom, 0 to fit, Esc to clear.</p></section>';
  s += '<div class="grid" style="margin-top:14px">';
  // A lane's cost leaves out its requests to the session's unpriced models,
  // found on its events (and, where the map was cut at its event cap, by the
  // lane's model).
  const unp = new Set(r[S.unpriced].map(x => STR[x])), laneUnp = P.lanes.map(l => !!(r[S.trunc] && l.tokens && unp.has(l.model)));
  if (unp.size) for (const e of P.ev) if (e.k === 'llm' && (e.i || e.cw || e.cr || e.o) && unp.has(e.n || 'unknown')) laneUnp[e.l] = true;
  P.unpriced = unp; // the details pane says it of a request too
  const laneNr = l => l.requests > 0 && !l.tokens; // a lane whose requests recorded no usage
  s += card('Lanes', '<div class="scroll"><table class="lanes"><thead><tr><th>lane</th><th>kind</th><th>type</th><th>model</th><th class="n">events</th><th class="n">calls</th><th class="n">requests</th><th class="n">errors</th><th class="n">tokens</th><th class="n">cost</th><th>outcome</th></tr></thead><tbody>' +
    P.lanes.map((l, j) => '<tr><td class="name" title="' + esc(l.id) + '">' + esc(l.id) + '</td><td>' + esc(l.kind || '-') + '</td><td>' + esc(l.type || '-') + '</td><td>' + esc(l.model || '-') + '</td><td class="n">' + int(l.events) + '</td><td class="n">' + int(l.calls) +
      '</td><td class="n">' + int(l.requests) + '</td><td class="n">' + int(l.errors) + '</td><td class="n">' + esc(laneNr(l) ? NR : tok(l.tokens)) + '</td><td class="n">' + html(laneNr(l) ? NR : costOf(l.cost, laneUnp[j])) + '</td><td>' + esc(l.outcome || '-') + '</td></tr>').join('') + '</tbody></table></div>', '', true);
  // Places outside any repository follow the files: a map keeps only their
  // bucket label (/tmp (scratch), ~), so they are counted by touches.
  // Ranked by reads, edits and hits, which the bar draws end to end.
  const byUse = (a, b) => (b.ed + b.rd + b.h) - (a.ed + a.rd + a.h);
  const files = P.files.slice().sort(byUse), out = P.out.slice().sort(byUse);
  s += card('Files touched', table([['file', 0], ['reads', int], ['edits', int], ['hits', int], ['op', x => x || '-']],
    files.map(f => [(f.r ? f.r + SEP : '') + f.p, f.rd, f.ed, f.h, f.op]).concat(out.map(o => Object.assign([o.p + ' (outside any repository)', o.rd, o.ed, o.h, ''], {plain: 1}))), 1,
    {path: 1, cls: 'touched', stack: [[1, 'var(--k-read)', 'reads'], [2, 'var(--k-edit)', 'edits'], [3, 'var(--k-search)', 'hits']]}),
    plural(files.length, 'file') + (out.length ? ', ' + plural(out.length, 'place') + ' outside any repository' : '') + ', path mode ' + (P.pathMode || 'relative'), true);
  $('#view').innerHTML = s + '</div>';
  marks.sessionHTML = performance.now();
  const tl = new Timeline($('#timeline'), P, r[S.dur]);
  marks.timeline = performance.now();
  window.agentmap.timeline = tl;
  $('#zin').onclick = () => tl.zoom(0.5); $('#zout').onclick = () => tl.zoom(2); $('#zfit').onclick = () => tl.fit();
  document.body.dataset.view = 'session';
  window.scrollTo(0, 0);
}

// Timeline draws every event as a mark on its lane's row, on one clock.
class Timeline {
  constructor(canvas, P, durMs) {
    this.c = canvas; this.P = P; this.ev = P.ev; this.rowH = 24; this.axisH = 24; this.gutter = 160;
    this.lanes = P.lanes.map(() => []);
    // A session whose log records no times (a Cursor transcript has every
    // event at 0) is laid out in order instead, a slot of a second per
    // event, the axis counting events: at is each event's place.
    this.ordinal = this.ev.length > 1 && this.ev.every(e => e.t === 0);
    if (this.ordinal) durMs = 0;
    this.at = this.ev.map((e, i) => this.ordinal ? i * 1000 : e.t);
    this.span = this.ev.map((e, i) => {
      if (this.ordinal) return [i * 1000, i * 1000 + 600];
      const d = e.k === 'llm' ? -(e.lat || 0) : (e.k === 'delay' || e.k === 'compaction') ? (e.ms || 0) : (e.d || 0);
      return d < 0 ? [e.t + d, e.t] : [e.t, e.t + d];
    });
    this.maxSpan = P.lanes.map(() => 0);
    this.ev.forEach((e, i) => { this.lanes[e.l].push(i); this.maxSpan[e.l] = Math.max(this.maxSpan[e.l], this.span[i][1] - this.span[i][0]); });
    let lo = 0, hi = Math.max(1, durMs || 0);
    for (const [a, b] of this.span) { if (a < lo) lo = a; if (b > hi) hi = b; }
    this.min = lo; this.max = hi + (hi - lo) * 0.01; this.hover = -1;
    this.fit();
    const ro = new ResizeObserver(() => this.draw()); ro.observe(canvas.parentElement);
    canvas.addEventListener('wheel', e => { e.preventDefault(); this.zoom(Math.exp(e.deltaY * 0.0015), this.timeAt(e.offsetX)); }, {passive: false});
    // Pointer events, so that a mouse, a pen and a finger all work: a drag
    // pans, two fingers pinch to zoom around their middle, a mouse points
    // at a mark for its details and a tap (or a click) selects one. The
    // canvas keeps the pointers it was pressed with (setPointerCapture), so
    // a drag that leaves it goes on.
    const down = new Map(); let gesture = null, tap = null;
    const local = e => { const r = canvas.getBoundingClientRect(); return {x: e.clientX - r.left, y: e.clientY - r.top}; };
    const begin = () => { // the gesture of the pointers now down, from the view now shown
      const p = [...down.values()];
      gesture = p.length === 1 ? {x: p[0].x, t0: this.t0, t1: this.t1}
        : p.length >= 2 ? {d: Math.max(8, Math.abs(p[0].x - p[1].x)), at: this.timeAt((p[0].x + p[1].x) / 2), span: this.t1 - this.t0} : null;
    };
    canvas.addEventListener('pointerdown', e => {
      if (e.pointerType === 'mouse' && e.button !== 0) return;
      canvas.setPointerCapture(e.pointerId); canvas.focus({preventScroll: true});
      down.set(e.pointerId, local(e)); begin();
      tap = down.size === 1 ? {id: e.pointerId, ...local(e)} : null;
    });
    canvas.addEventListener('pointermove', e => {
      const p = local(e);
      if (!down.has(e.pointerId)) { if (e.pointerType === 'mouse') this.point(this.hit(p.x, p.y)); return; }
      down.set(e.pointerId, p);
      if (tap && Math.hypot(p.x - tap.x, p.y - tap.y) > 6) tap = null;
      const g = gesture, q = [...down.values()];
      if (!g) return;
      if (q.length === 1 && g.x !== undefined) { const dt = (p.x - g.x) / this.scale(); this.set(g.t0 - dt, g.t1 - dt); }
      else if (q.length >= 2 && g.d) {
        const span = g.span * g.d / Math.max(8, Math.abs(q[0].x - q[1].x)), mid = (q[0].x + q[1].x) / 2;
        const t0 = g.at - (mid - this.gutter) * span / (this.width() - this.gutter - 8);
        this.set(t0, t0 + span);
      }
    });
    const up = e => {
      if (!down.has(e.pointerId)) return;
      const p = local(e);
      down.delete(e.pointerId); begin();
      if (e.type === 'pointerup' && tap && tap.id === e.pointerId) this.point(this.hit(p.x, p.y));
      tap = null;
    };
    canvas.addEventListener('pointerup', up); canvas.addEventListener('pointercancel', up);
    // window-wide listeners go when the page leaves this session
    const mq = matchMedia('(prefers-color-scheme: dark)');
    const onTheme = () => { if (canvas.isConnected) this.draw(); else release(); };
    const release = () => { mq.removeEventListener('change', onTheme); ro.disconnect(); };
    mq.addEventListener('change', onTheme);
    canvas.addEventListener('keydown', e => { if (this.key(e)) e.preventDefault(); });
  }
  // key does what a key asks of the focused timeline (the page lists them,
  // #tlkeys): it reports whether the key was the timeline's.
  key(e) {
    const k = e.key, span = this.t1 - this.t0;
    if (e.ctrlKey || e.metaKey || e.altKey) return false;
    if (k === '+' || k === '=') this.zoom(0.5);
    else if (k === '-' || k === '_') this.zoom(2);
    else if (k === '0') this.fit();
    else if (k === 'PageUp' || (e.shiftKey && k === 'ArrowLeft')) this.set(this.t0 - span / 2, this.t1 - span / 2);
    else if (k === 'PageDown' || (e.shiftKey && k === 'ArrowRight')) this.set(this.t0 + span / 2, this.t1 + span / 2);
    else if (k === 'ArrowLeft' || k === 'ArrowRight') this.select(this.step(k === 'ArrowRight' ? 1 : -1));
    else if (k === 'ArrowUp' || k === 'ArrowDown') this.select(this.laneStep(k === 'ArrowDown' ? 1 : -1));
    else if (k === 'Home' || k === 'End') { const a = this.lanes[this.current()]; if (a.length) this.select(k === 'Home' ? a[0] : a[a.length - 1]); }
    else if (k === 'Escape') this.point(-1);
    else return false;
    return true;
  }
  // current is the lane of the selected mark, else the first with any.
  current() { return this.hover >= 0 ? this.ev[this.hover].l : Math.max(0, this.lanes.findIndex(a => a.length)); }
  // step is the mark d places after the selected one on its lane (with
  // none selected, the first mark in view, or the lane's first).
  step(d) {
    const a = this.lanes[this.current()]; if (!a.length) return -1;
    if (this.hover < 0) { const j = a.findIndex(i => this.span[i][1] >= this.t0); return a[j < 0 ? 0 : j]; }
    let lo = 0, hi = a.length - 1; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < this.hover) lo = m + 1; else hi = m; }
    return a[Math.max(0, Math.min(a.length - 1, lo + d))];
  }
  // laneStep is the mark of the next lane with any, d = 1 below or -1
  // above, nearest in time to the selected one.
  laneStep(d) {
    const at = this.hover >= 0 ? this.at[this.hover] : (this.t0 + this.t1) / 2;
    for (let l = this.current() + d; l >= 0 && l < this.lanes.length; l += d) {
      const a = this.lanes[l]; if (!a.length) continue;
      let lo = 0, hi = a.length - 1; while (lo < hi) { const m = (lo + hi) >> 1; if (this.at[a[m]] < at) lo = m + 1; else hi = m; }
      return lo > 0 && at - this.at[a[lo - 1]] <= this.at[a[lo]] - at ? a[lo - 1] : a[lo];
    }
    return this.hover;
  }
  // select shows mark i's details, as pointing at it does, and brings it
  // into view (the zoom kept) when it is out of it.
  select(i) {
    if (i < 0) return;
    const [a, b] = this.span[i], span = this.t1 - this.t0;
    if (b < this.t0 || a > this.t1) { const m = (a + b) / 2; this.set(m - span / 2, m + span / 2); }
    this.point(i);
  }
  width() { return this.c.parentElement.clientWidth; }
  scale() { return (this.width() - this.gutter - 8) / (this.t1 - this.t0); }
  x(t) { return this.gutter + (t - this.t0) * this.scale(); }
  timeAt(x) { return this.t0 + (x - this.gutter) / this.scale(); }
  fit() { this.set(this.min, this.max); }
  set(t0, t1) {
    const span = Math.max(20, Math.min(t1 - t0, (this.max - this.min) * 1.5));
    const mid = (t0 + t1) / 2; this.t0 = mid - span / 2; this.t1 = mid + span / 2; this.draw();
  }
  zoom(f, at) { at = at === undefined ? (this.t0 + this.t1) / 2 : at; this.set(at - (at - this.t0) * f, at + (this.t1 - at) * f); }
  // first index in lane l whose event may reach t
  first(l, t) { const a = this.lanes[l], lim = t - this.maxSpan[l]; let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (this.at[a[m]] < lim) lo = m + 1; else hi = m; } return lo; }
  // theme reads the colours of the current theme (light or dark, as the
  // system says), again whenever it changes.
  theme() {
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    if (this.dark === dark) return;
    this.dark = dark; this.colors = {}; for (const k of [...KINDS, 'out']) this.colors[k] = cssVar('--k-' + k);
    this.fg = cssVar('--fg'); this.muted = cssVar('--muted'); this.line = cssVar('--line'); this.hi = cssVar('--hi'); this.err = cssVar('--err'); this.warn = cssVar('--warn');
  }
  draw() {
    if (!this.c.isConnected) return;
    this.theme();
    const c = this.c, dpr = devicePixelRatio || 1, W = this.width(), H = this.axisH + this.lanes.length * this.rowH + 8;
    if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) { c.width = Math.round(W * dpr); c.height = Math.round(H * dpr); c.style.height = H + 'px'; }
    const g = c.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, W, H);
    g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
    // axis
    const span = this.t1 - this.t0, steps = [100, 250, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 144e5, 288e5, 864e5];
    const step = steps.find(s => s * this.scale() >= 90 && (!this.ordinal || s >= 1e3)) || steps[steps.length - 1];
    // every label of the axis has the decimals its step needs, so that each
    // is exact (0:03.25, not 0:03.3) and all are alike (0:03.50, not 0:03.5)
    const decimals = step % 1000 === 0 ? 0 : step % 100 === 0 ? 1 : 2;
    g.fillStyle = this.muted; g.strokeStyle = this.line; g.lineWidth = 1;
    for (let t = Math.ceil(this.t0 / step) * step; t <= this.t1; t += step) {
      const x = Math.round(this.x(t)) + 0.5; if (x < this.gutter) continue;
      g.beginPath(); g.moveTo(x, this.axisH - 4); g.lineTo(x, H); g.stroke(); g.fillText(this.ordinal ? '#' + Math.round(t / 1e3) : clock(t, decimals), x + 3, 11);
    }
    // The marks are gathered into one path per colour and each path filled
    // once: a canvas draws 20,000 rectangles of one path in a few
    // milliseconds, where a fill and a colour change per mark take a
    // hundred times longer. Delays go under the calls, model requests and
    // user turns under the error and retry signs.
    const sc = this.scale(), t0 = this.t0, t1 = this.t1, G = this.gutter, rh = this.rowH;
    const bars = new Map(), bar = col => { let p = bars.get(col); if (!p) { p = new Path2D(); bars.set(col, p); } return p; };
    const delays = new Map(), delay = col => { let p = delays.get(col); if (!p) { p = new Path2D(); delays.set(col, p); } return p; };
    const tri = new Path2D(), rings = new Path2D();
    let drawn = 0, hover = null;
    this.lanes.forEach((idx, l) => {
      const y = this.axisH + l * rh;
      if (l % 2) { g.fillStyle = this.hi; g.fillRect(0, y, W, rh); }
      for (let j = this.first(l, t0); j < idx.length; j++) {
        const i = idx[j], e = this.ev[i]; if (this.at[i] > t1) break;
        const sp = this.span[i]; if (sp[1] < t0) continue;
        const x0 = G + (sp[0] - t0) * sc, w = Math.max(2, (sp[1] - sp[0]) * sc);
        const col = this.colors[OUTPUT_KINDS.includes(e.k) ? 'out' : e.k] || this.colors.tool;
        if (e.k === 'delay') { delay(col).rect(x0, y + 2, w, rh - 4); bar(col).rect(x0, y + 2, w, 2); }
        else if (e.k === 'llm' || e.k === 'user') bar(col).rect(x0, y + rh - 8, w, 5);
        else bar(e.e ? this.err : col).rect(x0, y + 6, w, rh - 14);
        if (e.e) { const m = x0 + w / 2; tri.moveTo(m - 4, y + 5); tri.lineTo(m + 4, y + 5); tri.lineTo(m, y + 11); tri.closePath(); }
        if (e.r !== undefined) { const m = x0 + w / 2; rings.moveTo(m + 3, y + rh - 4); rings.arc(m, y + rh - 4, 3, 0, 7); }
        if (i === this.hover) hover = [x0 - 1.5, y + 3, w + 3, rh - 6];
        drawn++;
      }
    });
    g.save(); g.beginPath(); g.rect(G, 0, W - G, H); g.clip();
    g.globalAlpha = 0.25; for (const [col, p] of delays) { g.fillStyle = col; g.fill(p); } g.globalAlpha = 1;
    for (const [col, p] of bars) { g.fillStyle = col; g.fill(p); }
    g.fillStyle = this.err; g.fill(tri);
    g.strokeStyle = this.warn; g.lineWidth = 2; g.stroke(rings);
    if (hover) { g.strokeStyle = this.fg; g.lineWidth = 1.5; g.strokeRect(...hover); }
    g.restore();
    g.fillStyle = this.fg;
    // A subagent's label is its type and the start of its id: lanes of one
    // type (seven "memory-graph-analyst") are told apart by the id alone, so
    // a label too long for the gutter loses the end of its type, never the
    // id. Measured once: the font and the gutter do not change.
    if (!this.labels) this.labels = this.P.lanes.map(lane => {
      const main = lane.kind === 'main' || lane.id === 'main', id = main ? '' : ' · ' + lane.id.replace(/^sa-/, '').slice(0, 6);
      let type = main ? 'main' : lane.type || 'subagent', cut = '';
      while (type.length > 1 && g.measureText(type + cut + id).width > this.gutter - 12) { type = type.slice(0, -1).trimEnd(); cut = '…'; }
      return type + cut + id;
    });
    this.labels.forEach((name, l) => g.fillText(name, 6, this.axisH + l * rh + rh / 2));
    g.fillStyle = this.line; g.fillRect(this.gutter - 1, 0, 1, H);
    c.dataset.marks = drawn; c.dataset.events = this.ev.length; c.dataset.t0 = Math.round(this.t0); c.dataset.t1 = Math.round(this.t1);
    const r = $('#range'); if (r) r.textContent = this.ordinal ? 'events #' + Math.max(0, Math.ceil(this.t0 / 1e3)) + ' – #' + Math.min(this.ev.length - 1, Math.floor(this.t1 / 1e3)) + ' shown (the log records no times: in order)'
      : clock(Math.max(0, this.t0)) + ' – ' + clock(this.t1) + ' shown';
  }
  // hit is the mark at (x, y) on the canvas, or -1. Marks of one time can
  // lie on one another (a delay has its tool call's span): the one drawn
  // at y wins (a call or a request over the delay band behind it, whose
  // top edge is its own), then the nearest, then the narrowest, then the
  // one drawn last, on top.
  hit(x, y) {
    const l = Math.floor((y - this.axisH) / this.rowH); if (l < 0 || l >= this.lanes.length || x < this.gutter) return -1;
    const t = this.timeAt(x), tol = 4 / this.scale(), idx = this.lanes[l], dy = y - this.axisH - l * this.rowH, rh = this.rowH;
    const band = k => k === 'delay' ? dy >= 1 && dy <= rh - 1 : k === 'llm' || k === 'user' ? dy >= rh - 9 : dy >= 5 && dy <= rh - 7;
    let best = -1, bestD = Infinity, bestIn = false;
    for (let j = this.first(l, t - tol); j < idx.length; j++) {
      const i = idx[j]; if (this.at[i] > t + tol) break;
      const [a, b] = this.span[i], w = Math.max(b - a, 2 / this.scale());
      const d = t < a ? a - t : t > a + w ? t - a - w : -1 / Math.max(w, 1e-9); // inside: the narrowest wins
      if (d > tol) continue;
      const k = this.ev[i].k, inBand = band(k);
      if (best < 0 || (inBand && !bestIn) || (inBand === bestIn && (d < bestD || (d === bestD && (this.ev[best].k === 'delay' || k !== 'delay'))))) { best = i; bestD = d; bestIn = inBand; }
    }
    return best;
  }
  // pointOf gives the page coordinates of event i's mark (for tests and
  // links): a delay's at its top edge, where no other mark is drawn.
  pointOf(i) {
    const e = this.ev[i], [a, b] = this.span[i], rect = this.c.getBoundingClientRect();
    const x0 = this.x(a), w = Math.max(2, this.x(b) - x0);
    const dy = e.k === 'llm' || e.k === 'user' ? this.rowH - 6 : e.k === 'delay' ? 3 : this.rowH / 2;
    return {x: rect.left + x0 + w / 2, y: rect.top + this.axisH + e.l * this.rowH + dy};
  }
  point(i) {
    if (i === this.hover) return;
    this.hover = i; this.draw();
    const el = $('#details');
    if (i < 0) { el.innerHTML = '<span class="muted">Point at a mark.</span>'; return; }
    const e = this.ev[i], lane = this.P.lanes[e.l], rows = [];
    const add = (k, v) => { if (v !== undefined && v !== '' && v !== null) rows.push('<dt>' + k + '</dt><dd>' + esc(v) + '</dd>'); };
    add('event', '#' + i + ' ' + e.k + (e.e ? ' (failed)' : '')); add('lane', lane.id + (lane.type ? ' (' + lane.type + ')' : '')); add('at', this.ordinal ? 'no time recorded' : clock(e.t));
    add(e.k === 'exec' || e.k === 'verify' ? 'verb' : e.k === 'llm' ? 'model' : e.k === 'mcp' ? 'server/tool' : e.k === 'web' ? 'host' : e.k === 'delay' ? 'cause' : e.k === 'commit' || e.k.startsWith('pr_') ? 'repository' : 'name', e.n);
    add('tool', e.tool); add('category', e.cat);
    const tg = (e.f || []).map((f, j) => { const x = this.P.files[f]; return (x.r ? x.r + ': ' : '') + x.p + (e.fu && e.fu[j] ? ' (' + e.fu[j] + ')' : ''); }).concat(e.tg || []);
    if (tg.length) add('targets', tg.join(', '));
    add('exit code', e.x); add('error class', e.c); add('error source', e.src);
    if (e.r !== undefined) add('retry of', '#' + e.r + (e.a ? ' (attempt ' + e.a + ')' : ''));
    const used = e.i || e.cw || e.cr || e.o;
    if (e.k === 'llm' && !used) add('tokens', NR); // the log recorded no usage for it
    else if (e.k === 'llm') { add('input', int(e.i || 0)); add('cache write', int(e.cw || 0)); add('cache read', int(e.cr || 0)); add('output', int(e.o || 0)); }
    if (e.k === 'llm') add('stop', e.stop);
    add('cost', e.$ ? usd(e.$) : e.k !== 'llm' ? undefined : !used ? NR : this.P.unpriced && this.P.unpriced.has(e.n || 'unknown') ? 'unpriced' : undefined);
    if (e.lat !== undefined) add('latency', dur(e.lat));
    if (e.d !== undefined) add('duration', dur(e.d) === '-' ? '0s' : dur(e.d));
    if (e.ms) add(e.k === 'delay' ? 'delay' : 'time', dur(e.ms));
    if (e.ob !== undefined) add('output bytes', int(e.ob));
    if (e.k === 'compaction') { add('tokens before', int(e.pre || 0)); add('tokens after', int(e.post || 0)); }
    if (e.k === 'user') add('prompt length', int(e.ch || 0) + ' chars');
    if (e.ref !== undefined) add('caused by', '#' + e.ref);
    el.innerHTML = '<dl data-seq="' + i + '">' + rows.join('') + '</dl>';
  }
}

// footer says when the page was made and in which zones its times are:
// the scope's dates (--since, --until) are the generating machine's, the
// page's times and days the reader's.
function footer() {
  const g = D.generated || '', at = Date.parse(g), el = $('#foot');
  if (!el) return;
  const genOff = /([+-])(\d\d):(\d\d)$/.exec(g), genMin = genOff ? (genOff[1] === '-' ? -1 : 1) * (genOff[2] * 60 + +genOff[3]) : 0;
  const same = !isNaN(at) && genMin === -new Date(at).getTimezoneOffset();
  el.innerHTML = (g ? 'Generated ' + esc(g.slice(0, 10) + ' ' + g.slice(11, 16)) + ' ' + esc(D.zone || utcOffset(genMin)) +
    (D.single ? '. ' : ', the zone of the dates in the scope above. ') : '') +
    'Times and days on this page are in ' + (same ? 'that zone too (this browser\'s: <span id="zone">' + esc(ZONE) + '</span>).' : 'this browser\'s zone: <span id="zone">' + esc(ZONE) + '</span>.');
}

// ---- routing ----
function route() {
  const tip = $('#tip'); if (tip) tip.style.display = 'none';
  const m = /^#s\/(\d+)$/.exec(location.hash);
  if (D.single) return sessionView(0);
  if (m) return sessionView(+m[1]);
  overviewView();
}

async function start() {
  try {
    const marks = window.agentmap.marks = {start: performance.now()};
    D = await unpack('ov'); STR = D.str; ROWS = D.s; AGG = D.a;
    marks.unpacked = performance.now();
    if (D.single) { $('#filters').style.display = 'none'; $('#search').style.display = 'none'; }
    else buildFilters();
    footer();
    applyFilters();
    marks.filtered = performance.now();
    await route();
    marks.rendered = performance.now();
    addEventListener('hashchange', route);
    window.agentmap.renderMs = performance.now();
    window.agentmap.ready = true;
  } catch (err) {
    $('#view').innerHTML = '<p class="tag bad">This report could not be shown: ' + esc(err && err.message) + '</p>';
    throw err;
  }
}
start();
})();
