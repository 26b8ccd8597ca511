/* memgraph view: one scope's knowledge graph on a canvas, its facts over time, and the text
   each fact came from. Everything shown comes from the JSON block #memgraph-data and every
   string from it reaches the page through textContent, never as markup. Nothing is fetched.

   Layout: a force simulation in this file (Barnes-Hut repulsion over a quadtree, springs on
   relations, a weak pull to the centre), run a few milliseconds per frame so the page stays
   responsive while it settles; a dragged node stays where it is dropped. */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("memgraph-data").textContent);
  const ENTITIES = data.entities, FACTS = data.facts, RELATIONS = data.relations;
  const EPISODES = data.episodes, TYPES = data.types, SOURCES = data.sources;
  const N = ENTITIES.length, M = RELATIONS.length;
  const PALETTE = ["#3b6fd4", "#e07b24", "#2f9e6b", "#c8455a", "#8a5bd1", "#b08a14",
                   "#1e9bb5", "#d3569f", "#6b7f3a", "#7d5a44", "#5566a0", "#9a4d8e"];
  const MAX_LABELS = 250;       // labels drawn per frame at most
  const MAX_RINGS = 2000;       // search matches ringed at most
  const MAX_ARROWS = 500;       // a selected entity's links get arrowheads up to this many
  const MAX_EDGE_LABELS = 40;   // ... and their types written on them up to this many
  const PANEL_ROWS = 100;       // facts or relations listed before "show all"
  const FRAME_BUDGET_MS = 9;    // simulation time per frame ...
  const MAX_FRAME_BUDGET_MS = 40; // ... or up to half the time between frames, when they are slow
  const SPRINGY_DRAG = 2000;    // up to this many nodes a drag pulls its neighbours along;
                                // beyond, a whole-graph tick per frame would halve the frame rate

  const $ = (id) => document.getElementById(id);
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const fmt = (t) => (t ? String(t).replace("T", " ").replace(/(\.\d+)?Z$/, " UTC") : "?");
  const plural = (n, one, many) => n.toLocaleString("en-US") + " " + (n === 1 ? one : many || one + "s");

  // ------------------------------------------------------------------ indexes
  const factStart = new Int32Array(N + 1);
  for (const fact of FACTS) factStart[fact[0] + 1]++;
  for (let i = 0; i < N; i++) factStart[i + 1] += factStart[i];

  const from = new Int32Array(M), to = new Int32Array(M), degree = new Int32Array(N);
  for (let r = 0; r < M; r++) {
    from[r] = RELATIONS[r][0]; to[r] = RELATIONS[r][1];
    degree[from[r]]++; degree[to[r]]++;
  }
  const linkStart = new Int32Array(N + 1), links = new Int32Array(2 * M);
  for (let i = 0; i < N; i++) linkStart[i + 1] = linkStart[i] + degree[i];
  {
    const fill = linkStart.slice(0, N);
    for (let r = 0; r < M; r++) { links[fill[from[r]]++] = r; links[fill[to[r]]++] = r; }
  }
  const radius = new Float32Array(N);
  for (let i = 0; i < N; i++) radius[i] = 3.5 + Math.min(9, 1.3 * Math.sqrt(degree[i]));
  const byDegree = Array.from({ length: N }, (_, i) => i).sort((a, b) => degree[b] - degree[a]);
  const lowerNames = ENTITIES.map((e) => String(e[0]).toLowerCase());
  const colorOf = (type) => PALETTE[type % PALETTE.length];
  const ofType = TYPES.map(() => []);
  ENTITIES.forEach((entity, i) => ofType[entity[1]].push(i));

  // The moments at which something appears or disappears: the slider's stops.
  const stops = (() => {
    const seen = new Set();
    for (const e of ENTITIES) if (e[3]) seen.add(e[3]);
    for (const f of FACTS) { if (f[2]) seen.add(f[2]); if (f[3]) seen.add(f[3]); }
    for (const r of RELATIONS) { if (r[3]) seen.add(r[3]); if (r[4]) seen.add(r[4]); }
    return Array.from(seen).sort();
  })();

  // --------------------------------------------------------------- visibility
  const typeOn = new Uint8Array(TYPES.length).fill(1);
  const sourceOn = new Uint8Array(SOURCES.length).fill(1);
  const nodeOn = new Uint8Array(N), edgeOn = new Uint8Array(M), factOn = new Uint8Array(FACTS.length);
  let at = null; // null: now (current facts); else an ISO time, as in Memory.as_of
  const counts = { nodes: 0, edges: 0, facts: 0 };

  // as_of's rule, on the same strings: validFrom <= t < validTo; now: not expired.
  const live = (validFrom, validTo) =>
    at === null ? validTo === null : (validFrom || "") <= at && (validTo === null || validTo > at);

  function recompute() {
    counts.nodes = counts.edges = counts.facts = 0;
    for (let f = 0; f < FACTS.length; f++) {
      const fact = FACTS[f];
      factOn[f] = sourceOn[fact[4]] && live(fact[2], fact[3]) ? 1 : 0;
    }
    for (let i = 0; i < N; i++) {
      const entity = ENTITIES[i];
      let on = 0;
      if (typeOn[entity[1]]) {
        for (let f = factStart[i]; f < factStart[i + 1] && !on; f++) on = factOn[f];
        if (!on && sourceOn[entity[2]]) on = at === null || (entity[3] || "") <= at ? 1 : 0;
      }
      nodeOn[i] = on;
    }
    // A relation valid at t shows its two ends, even one with no fact valid then.
    for (let r = 0; r < M; r++) {
      const rel = RELATIONS[r];
      const on = typeOn[ENTITIES[from[r]][1]] && typeOn[ENTITIES[to[r]][1]] &&
        sourceOn[rel[5]] && live(rel[3], rel[4]);
      edgeOn[r] = on ? 1 : 0;
      if (on) { nodeOn[from[r]] = 1; nodeOn[to[r]] = 1; counts.edges++; }
    }
    for (let i = 0; i < N; i++) if (nodeOn[i]) {
      counts.nodes++;
      for (let f = factStart[i]; f < factStart[i + 1]; f++) counts.facts += factOn[f];
    }
    const shown = $("counts");
    shown.textContent = plural(counts.nodes, "entity", "entities") +
      " · " + plural(counts.edges, "relation") + " · " + plural(counts.facts, "fact") +
      (at === null ? " (now)" : " as of " + fmt(at));
    shown.dataset.nodes = String(counts.nodes);
    shown.dataset.edges = String(counts.edges);
    shown.dataset.facts = String(counts.facts);
  }

  // ------------------------------------------------------------------- layout
  const x = new Float64Array(N), y = new Float64Array(N);
  const vx = new Float64Array(N), vy = new Float64Array(N), fixed = new Uint8Array(N);
  const sim = { alpha: 1, alphaMin: 0.001, alphaTarget: 0, decay: 1 - Math.pow(0.001, 1 / 300),
                velocityKeep: 0.6, linkDistance: 30, charge: -30, gravity: 0.05, theta2: 0.81 };
  const linkBias = new Float64Array(M), linkStrength = new Float64Array(M);
  for (let r = 0; r < M; r++) {
    const a = degree[from[r]], b = degree[to[r]];
    linkBias[r] = a / (a + b);
    linkStrength[r] = 1 / Math.min(a, b);
  }

  // A start near the answer: breadth-first from the most connected node of each
  // component, every node placed around the one that reached it.
  (function initialPositions() {
    const golden = Math.PI * (3 - Math.sqrt(5));
    const placed = new Uint8Array(N), queue = new Int32Array(N);
    let count = 0, component = 0;
    for (const root of byDegree) {
      if (placed[root]) continue;
      const spread = 14 * Math.sqrt(count);
      x[root] = spread * Math.cos(component * golden);
      y[root] = spread * Math.sin(component * golden);
      component++;
      placed[root] = 1; count++;
      let head = 0, tail = 0;
      queue[tail++] = root;
      while (head < tail) {
        const u = queue[head++];
        let child = 0;
        const base = u * 2.399963;
        for (let k = linkStart[u]; k < linkStart[u + 1]; k++) {
          const r = links[k], v = from[r] === u ? to[r] : from[r];
          if (placed[v]) continue;
          placed[v] = 1; count++; child++;
          const angle = base + child * golden, distance = 18 + 5 * Math.sqrt(child);
          x[v] = x[u] + distance * Math.cos(angle);
          y[v] = y[u] + distance * Math.sin(angle);
          queue[tail++] = v;
        }
      }
    }
  })();

  // Quadtree in flat arrays: cell c has four children from first[c], a chain of bodies
  // (body[c], then next[]) when it is a leaf, and its mass and weighted centre.
  let cap = 16 + 8 * N;
  let first = new Int32Array(cap), body = new Int32Array(cap), size = new Float64Array(cap);
  let mass = new Float64Array(cap), sumX = new Float64Array(cap), sumY = new Float64Array(cap);
  const next = new Int32Array(Math.max(1, N)), stack = new Int32Array(4 * 64 + 8);
  let cells = 0, rootX = 0, rootY = 0;

  function grow() {
    cap *= 2;
    const more = (old, Kind) => { const fresh = new Kind(cap); fresh.set(old); return fresh; };
    first = more(first, Int32Array); body = more(body, Int32Array); size = more(size, Float64Array);
    mass = more(mass, Float64Array); sumX = more(sumX, Float64Array); sumY = more(sumY, Float64Array);
  }

  function cell(side) {
    if (cells + 1 > cap) grow();
    first[cells] = -1; body[cells] = -1; size[cells] = side;
    return cells++;
  }

  function buildTree() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < N; i++) {
      if (x[i] < x0) x0 = x[i]; if (x[i] > x1) x1 = x[i];
      if (y[i] < y0) y0 = y[i]; if (y[i] > y1) y1 = y[i];
    }
    const side = Math.max(x1 - x0, y1 - y0, 1) * 1.0001;
    cells = 0; rootX = x0; rootY = y0;
    cell(side);
    for (let i = 0; i < N; i++) {
      let c = 0, left = x0, top = y0, half = side / 2, depth = 0;
      for (;;) {
        if (first[c] < 0) {
          if (body[c] < 0) { body[c] = i; next[i] = -1; break; }
          if (depth > 24) { next[i] = body[c]; body[c] = i; break; } // (nearly) the same point
          if (cells + 4 > cap) grow();
          const k = cells;
          for (let q = 0; q < 4; q++) cell(half);
          first[c] = k;
          const j = body[c];
          body[c] = -1;
          const qj = (x[j] >= left + half ? 1 : 0) + (y[j] >= top + half ? 2 : 0);
          body[k + qj] = j; next[j] = -1;
        }
        const q = (x[i] >= left + half ? 1 : 0) + (y[i] >= top + half ? 2 : 0);
        if (q & 1) left += half;
        if (q & 2) top += half;
        c = first[c] + q; half /= 2; depth++;
      }
    }
    // Children are created after their parent, so one backward pass sums them up.
    for (let c = cells - 1; c >= 0; c--) {
      let m = 0, sx = 0, sy = 0;
      if (first[c] < 0) {
        for (let j = body[c]; j >= 0; j = next[j]) { m++; sx += x[j]; sy += y[j]; }
      } else {
        for (let k = first[c]; k < first[c] + 4; k++) { m += mass[k]; sx += sumX[k]; sy += sumY[k]; }
      }
      mass[c] = m; sumX[c] = sx; sumY[c] = sy;
    }
  }

  function repel(alpha) {
    const strength = sim.charge * alpha, theta2 = sim.theta2;
    for (let i = 0; i < N; i++) {
      const xi = x[i], yi = y[i];
      let fx = 0, fy = 0, top = 0;
      stack[top++] = 0;
      while (top > 0) {
        const c = stack[--top], m = mass[c];
        if (m === 0) continue;
        let dx = sumX[c] / m - xi, dy = sumY[c] / m - yi, d2 = dx * dx + dy * dy;
        if (first[c] >= 0) {
          if (size[c] * size[c] / theta2 >= d2) {
            const k = first[c];
            stack[top++] = k; stack[top++] = k + 1; stack[top++] = k + 2; stack[top++] = k + 3;
            continue;
          }
          if (d2 < 1) d2 = Math.sqrt(d2);
          const w = strength * m / d2;
          fx += dx * w; fy += dy * w;
          continue;
        }
        for (let j = body[c]; j >= 0; j = next[j]) {
          if (j === i) continue;
          dx = x[j] - xi; dy = y[j] - yi; d2 = dx * dx + dy * dy;
          if (d2 === 0) { dx = ((i * 7 + j) % 13 - 6) * 1e-3 || 1e-3; dy = ((i + j * 5) % 11 - 5) * 1e-3; d2 = dx * dx + dy * dy; }
          if (d2 < 1) d2 = Math.sqrt(d2);
          const w = strength / d2;
          fx += dx * w; fy += dy * w;
        }
      }
      vx[i] += fx; vy[i] += fy;
    }
  }

  function tick() {
    const alpha = sim.alpha;
    if (N > 1) { buildTree(); repel(alpha); }
    for (let r = 0; r < M; r++) {
      const s = from[r], t = to[r];
      if (s === t) continue;
      let dx = x[t] + vx[t] - x[s] - vx[s], dy = y[t] + vy[t] - y[s] - vy[s];
      let l = Math.sqrt(dx * dx + dy * dy) || 1e-3;
      l = (l - sim.linkDistance) / l * alpha * linkStrength[r];
      dx *= l; dy *= l;
      const b = linkBias[r];
      vx[t] -= dx * b; vy[t] -= dy * b;
      vx[s] += dx * (1 - b); vy[s] += dy * (1 - b);
    }
    const pull = sim.gravity * alpha;
    for (let i = 0; i < N; i++) {
      if (fixed[i]) { vx[i] = vy[i] = 0; continue; }
      vx[i] = (vx[i] - x[i] * pull) * sim.velocityKeep;
      vy[i] = (vy[i] - y[i] * pull) * sim.velocityKeep;
      x[i] += vx[i]; y[i] += vy[i];
    }
    sim.alpha += (sim.alphaTarget - sim.alpha) * sim.decay;
    stats.ticks++;
  }

  const running = () => sim.alpha >= sim.alphaMin || sim.alphaTarget > 0;

  // ------------------------------------------------------------------ drawing
  const canvas = $("graph"), ctx = canvas.getContext("2d");
  const camera = { k: 1, tx: 0, ty: 0 };
  let width = 1, height = 1, ratio = 1, cameraTouched = false;
  let selected = -1, hovered = -1, dragNode = -1, matches = null;
  const stats = { ticks: 0, tickMs: 0, draws: 0, drawMs: 0, frames: [], settledAt: null, startedAt: performance.now() };

  function resize() {
    const box = canvas.getBoundingClientRect();
    ratio = window.devicePixelRatio || 1;
    width = Math.max(1, box.width); height = Math.max(1, box.height);
    canvas.width = Math.round(width * ratio); canvas.height = Math.round(height * ratio);
    if (!cameraTouched) fit();
    schedule();
  }

  function fit() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity, any = false;
    for (let i = 0; i < N; i++) {
      if (!nodeOn[i]) continue;
      any = true;
      if (x[i] < x0) x0 = x[i]; if (x[i] > x1) x1 = x[i];
      if (y[i] < y0) y0 = y[i]; if (y[i] > y1) y1 = y[i];
    }
    if (!any) { x0 = y0 = -50; x1 = y1 = 50; }
    const k = Math.min(2.5, 0.9 * Math.min(width / Math.max(x1 - x0, 40), height / Math.max(y1 - y0, 40)));
    camera.k = k;
    camera.tx = width / 2 - k * (x0 + x1) / 2;
    camera.ty = height / 2 - k * (y0 + y1) / 2;
  }

  const neighbours = new Uint8Array(N);
  function markNeighbours() {
    neighbours.fill(0);
    if (selected < 0) return;
    for (let k = linkStart[selected]; k < linkStart[selected + 1]; k++) {
      const r = links[k];
      if (edgeOn[r]) { neighbours[from[r]] = 1; neighbours[to[r]] = 1; }
    }
  }

  function draw() {
    const started = performance.now();
    const k = camera.k;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.setTransform(ratio * k, 0, 0, ratio * k, ratio * camera.tx, ratio * camera.ty);
    const x0 = -camera.tx / k - 20, y0 = -camera.ty / k - 20;
    const x1 = (width - camera.tx) / k + 20, y1 = (height - camera.ty) / k + 20;
    const inView = (i) => x[i] >= x0 && x[i] <= x1 && y[i] >= y0 && y[i] <= y1;
    const focus = selected >= 0;

    ctx.lineWidth = 1 / k;
    ctx.strokeStyle = focus ? "rgba(120,130,150,0.18)" : "rgba(100,110,130,0.45)";
    ctx.beginPath();
    for (let r = 0; r < M; r++) {
      if (!edgeOn[r]) continue;
      const s = from[r], t = to[r];
      if (focus && (s === selected || t === selected)) continue;
      if (!inView(s) && !inView(t)) continue;
      ctx.moveTo(x[s], y[s]); ctx.lineTo(x[t], y[t]);
    }
    ctx.stroke();

    let focusEdges = 0;
    if (focus) {
      for (let q = linkStart[selected]; q < linkStart[selected + 1]; q++) focusEdges += edgeOn[links[q]];
      ctx.strokeStyle = ctx.fillStyle = "#1d2330";
      // Thick lines are stroked one by one: one path of many overlapping thick lines is
      // far slower to rasterize. A hub's links stay one-pixel lines in a single path.
      const thick = focusEdges <= MAX_ARROWS;
      ctx.lineWidth = (thick ? 2 : 1) / k;
      if (!thick) ctx.beginPath();
      for (let q = linkStart[selected]; q < linkStart[selected + 1]; q++) {
        const r = links[q];
        if (!edgeOn[r]) continue;
        if (thick) ctx.beginPath();
        ctx.moveTo(x[from[r]], y[from[r]]); ctx.lineTo(x[to[r]], y[to[r]]);
        if (thick) ctx.stroke();
      }
      if (!thick) ctx.stroke();
      if (thick) {
        ctx.beginPath();
        for (let q = linkStart[selected]; q < linkStart[selected + 1]; q++) {
          if (edgeOn[links[q]]) arrow(from[links[q]], to[links[q]]);
        }
        ctx.fill();
      }
    }

    for (let type = 0; type < TYPES.length; type++) {
      ctx.fillStyle = colorOf(type);
      for (let pass = 0; pass < 2; pass++) { // dimmed first, then the selection's neighbourhood
        if (pass === 1 && !focus) break;
        ctx.globalAlpha = focus && pass === 0 ? 0.25 : 1;
        ctx.beginPath();
        for (const i of ofType[type]) {
          if (!nodeOn[i] || !inView(i)) continue;
          if (focus && (pass === 0) === (neighbours[i] === 1 || i === selected)) continue;
          const r = radius[i];
          if (r * k < 2) { ctx.rect(x[i] - r, y[i] - r, 2 * r, 2 * r); continue; } // a dot: no need for a circle
          ctx.moveTo(x[i] + r, y[i]);
          ctx.arc(x[i], y[i], r, 0, 2 * Math.PI);
        }
        ctx.fill();
      }
    }
    ctx.globalAlpha = 1;

    if (matches && matches.length) {
      ctx.lineWidth = 2.5 / k; ctx.strokeStyle = "#f2b01e";
      ctx.beginPath();
      for (let n = 0; n < matches.length && n < MAX_RINGS; n++) {
        const i = matches[n];
        if (!nodeOn[i] || !inView(i)) continue;
        ctx.moveTo(x[i] + radius[i] + 3 / k, y[i]);
        ctx.arc(x[i], y[i], radius[i] + 3 / k, 0, 2 * Math.PI);
      }
      ctx.stroke();
    }
    if (selected >= 0 && nodeOn[selected]) {
      ctx.lineWidth = 3 / k; ctx.strokeStyle = "#1d2330";
      ctx.beginPath(); ctx.arc(x[selected], y[selected], radius[selected] + 4 / k, 0, 2 * Math.PI); ctx.stroke();
    }

    // Labels in screen space, most connected first, within a budget.
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.lineJoin = "round";
    let labels = 0;
    const label = (i, strong, faint) => {
      const sx = x[i] * k + camera.tx + radius[i] * k + 4, sy = y[i] * k + camera.ty;
      const text = ENTITIES[i][0].length > 40 ? ENTITIES[i][0].slice(0, 39) + "…" : ENTITIES[i][0];
      ctx.lineWidth = 3; ctx.strokeStyle = "rgba(246,247,249,0.9)";
      ctx.strokeText(text, sx, sy);
      ctx.fillStyle = strong ? "#111" : faint ? "#9aa2b2" : "#39414f";
      ctx.fillText(text, sx, sy);
      labels++;
    };
    if (focus) {
      for (let q = linkStart[selected]; q < linkStart[selected + 1] && labels < MAX_LABELS; q++) {
        const r = links[q];
        if (!edgeOn[r]) continue;
        const s = from[r], t = to[r];
        if (focusEdges <= MAX_EDGE_LABELS) edgeLabel(r, s, t);
        const other = s === selected ? t : s;
        if (inView(other)) label(other, false);
      }
      if (nodeOn[selected]) label(selected, true);
    }
    for (const i of byDegree) { // the rest, most connected first, once zoomed in enough
      if (labels >= MAX_LABELS) break;
      if (!nodeOn[i] || !inView(i) || radius[i] * k < 4.5) continue;
      if (focus && (i === selected || neighbours[i])) continue;
      label(i, false, focus);
    }
    if (hovered >= 0 && nodeOn[hovered]) label(hovered, true);

    stats.draws++;
    stats.drawMs += performance.now() - started;
  }

  function arrow(s, t) {
    const dx = x[t] - x[s], dy = y[t] - y[s], l = Math.sqrt(dx * dx + dy * dy);
    if (l < 1e-6) return;
    const ux = dx / l, uy = dy / l, k = camera.k;
    const tipX = x[t] - ux * (radius[t] + 1 / k), tipY = y[t] - uy * (radius[t] + 1 / k);
    const size = 7 / k;
    ctx.moveTo(tipX, tipY);
    ctx.lineTo(tipX - ux * size - uy * size * 0.5, tipY - uy * size + ux * size * 0.5);
    ctx.lineTo(tipX - ux * size + uy * size * 0.5, tipY - uy * size - ux * size * 0.5);
    ctx.closePath();
  }

  function edgeLabel(r, s, t) {
    const k = camera.k;
    const mx = (x[s] + x[t]) / 2 * k + camera.tx, my = (y[s] + y[t]) / 2 * k + camera.ty;
    ctx.font = "11px system-ui, sans-serif";
    ctx.lineWidth = 3; ctx.strokeStyle = "rgba(246,247,249,0.95)";
    ctx.strokeText(RELATIONS[r][2], mx, my);
    ctx.fillStyle = "#5a6275";
    ctx.fillText(RELATIONS[r][2], mx, my);
    ctx.font = "12px system-ui, sans-serif";
  }

  // While only the camera moves (a pan or zoom with the layout at rest), frames scale and
  // shift a snapshot of the last full drawing instead of drawing every node and link
  // again; a full drawing follows once the camera has been still for a moment.
  const scene = document.createElement("canvas"), sceneCtx = scene.getContext("2d");
  let shot = null, changed = true, still = 0;

  function render() {
    if (!changed && shot && !running()) {
      const s = camera.k / shot.k;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      ctx.setTransform(s, 0, 0, s, ratio * (camera.tx - shot.tx * s), ratio * (camera.ty - shot.ty * s));
      ctx.drawImage(scene, 0, 0);
      return;
    }
    draw();
    changed = false;
    shot = null;
    if (!running()) {
      if (scene.width !== canvas.width || scene.height !== canvas.height) {
        scene.width = canvas.width; scene.height = canvas.height;
      }
      sceneCtx.clearRect(0, 0, scene.width, scene.height);
      sceneCtx.drawImage(canvas, 0, 0);
      shot = { k: camera.k, tx: camera.tx, ty: camera.ty };
    }
  }

  let scheduled = false;
  function request() {
    if (!scheduled) { scheduled = true; requestAnimationFrame(frame); }
  }
  function schedule() { // something drawn changed
    changed = true;
    request();
  }
  function scheduleCamera() { // only the camera moved
    request();
    clearTimeout(still);
    still = setTimeout(schedule, 150);
  }

  let lastFrame = 0, frameGap = 16;
  function advance() { // the simulation's share of a frame
    if (!running()) return;
    // When drawing is slow (a software-rendered canvas, a dense graph) frames are far
    // apart anyway; then up to half the gap goes to the layout, so it settles sooner.
    const budget = Math.min(MAX_FRAME_BUDGET_MS, Math.max(FRAME_BUDGET_MS, frameGap / 2));
    const started = performance.now();
    do { tick(); } while (running() && performance.now() - started < budget);
    stats.tickMs += performance.now() - started;
    if (!cameraTouched) fit();
    if (!running() && stats.settledAt === null) stats.settledAt = performance.now() - stats.startedAt;
  }

  function frame(now) {
    scheduled = false;
    frameGap = lastFrame ? Math.min(1000, now - lastFrame) : 16;
    lastFrame = now;
    stats.frames.push(now);
    if (stats.frames.length > 120) stats.frames.shift();
    advance();
    render();
    if (running()) request();
    else lastFrame = 0; // the next frame starts a new run: no gap to learn from
  }

  function reheat(target) {
    sim.alphaTarget = target;
    if (sim.alpha < target) sim.alpha = target;
    schedule();
  }

  // -------------------------------------------------------------- interaction
  const toWorld = (clientX, clientY) => {
    const box = canvas.getBoundingClientRect();
    return [(clientX - box.left - camera.tx) / camera.k, (clientY - box.top - camera.ty) / camera.k];
  };

  function hit(clientX, clientY) {
    const [wx, wy] = toWorld(clientX, clientY);
    const slack = 3 / camera.k;
    let best = -1, bestD = Infinity;
    for (let i = 0; i < N; i++) {
      if (!nodeOn[i]) continue;
      const dx = x[i] - wx, dy = y[i] - wy, d = dx * dx + dy * dy, reach = radius[i] + slack;
      if (d <= reach * reach && d < bestD) { best = i; bestD = d; }
    }
    return best;
  }

  let press = null;
  canvas.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    canvas.setPointerCapture(event.pointerId);
    const node = hit(event.clientX, event.clientY);
    press = { x: event.clientX, y: event.clientY, tx: camera.tx, ty: camera.ty, node, moved: false };
    if (node >= 0) { dragNode = node; }
    canvas.classList.add("dragging");
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!press) {
      const node = hit(event.clientX, event.clientY);
      if (node !== hovered) { hovered = node; canvas.classList.toggle("over-node", node >= 0); schedule(); }
      return;
    }
    const dx = event.clientX - press.x, dy = event.clientY - press.y;
    if (!press.moved && dx * dx + dy * dy < 9) return;
    press.moved = true;
    if (dragNode >= 0) {
      const [wx, wy] = toWorld(event.clientX, event.clientY);
      fixed[dragNode] = 1; x[dragNode] = wx; y[dragNode] = wy;
      cameraTouched = true;
      if (N <= SPRINGY_DRAG) reheat(0.08);
      schedule();
    } else {
      camera.tx = press.tx + dx; camera.ty = press.ty + dy;
      cameraTouched = true;
      scheduleCamera();
    }
  });
  const release = (event) => {
    if (!press) return;
    if (!press.moved && event.type === "pointerup") select(press.node, false);
    if (dragNode >= 0 && press.moved && N <= SPRINGY_DRAG) reheat(0); // it stays pinned where dropped
    press = null; dragNode = -1;
    canvas.classList.remove("dragging");
  };
  canvas.addEventListener("pointerup", release);
  canvas.addEventListener("pointercancel", release);
  canvas.addEventListener("pointerleave", () => { if (hovered >= 0 && !press) { hovered = -1; schedule(); } });

  function zoomAt(factor, sx, sy) {
    const k = Math.min(40, Math.max(0.01, camera.k * factor));
    camera.tx = sx - (sx - camera.tx) * (k / camera.k);
    camera.ty = sy - (sy - camera.ty) * (k / camera.k);
    camera.k = k;
    cameraTouched = true;
    scheduleCamera();
  }
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = canvas.getBoundingClientRect();
    const step = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    zoomAt(Math.exp(-step * 0.0015), event.clientX - box.left, event.clientY - box.top);
  }, { passive: false });
  canvas.addEventListener("keydown", (event) => {
    const keys = { "+": 1.25, "=": 1.25, "-": 0.8 };
    if (keys[event.key]) zoomAt(keys[event.key], width / 2, height / 2);
    else if (event.key === "0") { cameraTouched = false; fit(); schedule(); }
    else if (event.key === "Escape") select(-1, false);
    else return;
    event.preventDefault();
  });
  window.addEventListener("resize", resize);

  // ------------------------------------------------------------- side panel
  function select(i, centre) {
    selected = i;
    markNeighbours();
    if (i >= 0 && centre) {
      camera.tx = width / 2 - x[i] * camera.k;
      camera.ty = height / 2 - y[i] * camera.k;
      cameraTouched = true;
    }
    renderPanel();
    schedule();
  }

  function provenance(item, episodeIndex) {
    if (episodeIndex < 0) { item.append(el("div", "gone", "No source text recorded for this fact.")); return; }
    const episode = EPISODES[episodeIndex];
    if (episode[1] === null) {
      item.append(el("div", "gone", "Source text " + episode[0] + " is no longer stored (purged)."));
      return;
    }
    const quote = el("blockquote", "source-text", episode[1]);
    quote.title = "said " + fmt(episode[2]) + (episode[3] >= 0 ? " · source " + SOURCES[episode[3]] : "") + " · " + episode[0];
    item.append(quote);
    item.append(el("div", "when", "↳ from " + episode[0] + ", said " + fmt(episode[2])));
  }

  function factItem(f) {
    const fact = FACTS[f];
    const item = el("li", fact[3] === null ? "" : "expired");
    item.dataset.fact = String(f);
    item.append(el("div", "content", fact[1]));
    item.append(el("div", "when", fmt(fact[2]) + " → " + (fact[3] === null ? "current" : fmt(fact[3])) +
      " · source " + SOURCES[fact[4]]));
    provenance(item, fact[5]);
    return item;
  }

  function renderPanel() {
    const facts = $("facts"), others = $("other-facts"), rels = $("relations");
    facts.replaceChildren(); others.replaceChildren(); rels.replaceChildren();
    $("details").hidden = selected < 0;
    $("panel-hint").hidden = selected >= 0;
    if (selected < 0) return;
    const entity = ENTITIES[selected];
    $("entity-name").textContent = entity[0];
    $("entity-meta").textContent = TYPES[entity[1]] + " · source " + SOURCES[entity[2]] +
      " · recorded " + fmt(entity[3]) + (nodeOn[selected] ? "" : " · not shown at this time or with these filters");
    $("facts-title").textContent = at === null ? "Current facts" : "Facts as of " + fmt(at);
    let hiddenBySource = 0;
    const valid = [], invalid = [];
    for (let f = factStart[selected]; f < factStart[selected + 1]; f++) {
      if (!sourceOn[FACTS[f][4]]) { hiddenBySource++; continue; }
      (factOn[f] ? valid : invalid).push(f);
    }
    fill(facts, valid, factItem, "fact", "facts");
    if (!valid.length) facts.append(el("li", "hint", "No facts valid at this time."));
    if (hiddenBySource) facts.append(el("li", "hint", plural(hiddenBySource, "fact") + " from unticked sources hidden."));
    fill(others, invalid, factItem, "fact", "facts");
    $("other-title").textContent = "Not valid at this time (" + invalid.length.toLocaleString("en-US") + ")";
    $("other").hidden = invalid.length === 0;
    const shown = [];
    for (let q = linkStart[selected]; q < linkStart[selected + 1]; q++) if (edgeOn[links[q]]) shown.push(links[q]);
    fill(rels, shown, relationItem, "relation");
    if (!shown.length) rels.append(el("li", "hint", "No relations at this time."));
  }

  // The first PANEL_ROWS items, then a button for the rest: a hub may hold thousands.
  function fill(list, items, render, one, many) {
    const add = (start, end) => { for (let n = start; n < end; n++) list.append(render(items[n])); };
    add(0, Math.min(items.length, PANEL_ROWS));
    if (items.length <= PANEL_ROWS) return;
    const more = el("li", "more");
    const button = el("button", "", "Show all " + plural(items.length, one, many));
    button.type = "button";
    button.addEventListener("click", () => { more.remove(); add(PANEL_ROWS, items.length); });
    more.append(button);
    list.append(more);
  }

  function relationItem(r) {
    const rel = RELATIONS[r], outgoing = from[r] === selected, other = outgoing ? to[r] : from[r];
    const item = el("li");
    item.append(outgoing ? rel[2] + " → " : "← " + rel[2] + " ");
    const button = el("button", "", ENTITIES[other][0]);
    button.type = "button";
    button.addEventListener("click", () => select(other, true));
    item.append(button);
    item.append(el("div", "when", fmt(rel[3]) + " → " + (rel[4] === null ? "current" : fmt(rel[4]))));
    return item;
  }

  // ------------------------------------------------------------------ search
  const search = $("search"), results = $("results");
  let resultItems = [], active = 0;

  function runSearch() {
    const query = search.value.trim().toLowerCase();
    results.replaceChildren(); resultItems = []; active = 0;
    if (!query) { matches = null; results.hidden = true; schedule(); return; }
    const prefix = [], inside = [];
    for (let i = 0; i < N; i++) {
      const found = lowerNames[i].indexOf(query);
      if (found === 0) prefix.push(i); else if (found > 0) inside.push(i);
    }
    const byWeight = (a, b) => degree[b] - degree[a];
    matches = prefix.sort(byWeight).concat(inside.sort(byWeight));
    for (const i of matches.slice(0, 12)) {
      const item = el("li", "", ENTITIES[i][0]);
      item.setAttribute("role", "option");
      item.append(el("span", "type", TYPES[ENTITIES[i][1]] + (nodeOn[i] ? "" : " · hidden now")));
      item.addEventListener("mousedown", (event) => { event.preventDefault(); choose(i); });
      results.append(item);
      resultItems.push(i);
    }
    if (!resultItems.length) results.append(el("li", "hint", "No entity matches."));
    if (matches.length > 12) results.append(el("li", "hint", plural(matches.length, "match", "matches") + ", best 12 shown"));
    highlight();
    results.hidden = false;
    schedule();
  }

  function highlight() {
    Array.from(results.querySelectorAll("li[role=option]")).forEach((item, n) =>
      item.setAttribute("aria-selected", n === active ? "true" : "false"));
  }

  function choose(i) {
    results.hidden = true;
    select(i, true);
  }

  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!resultItems.length) return;
      active = (active + (event.key === "ArrowDown" ? 1 : resultItems.length - 1)) % resultItems.length;
      highlight();
    } else if (event.key === "Enter") {
      if (resultItems.length) choose(resultItems[active]);
    } else if (event.key === "Escape") {
      search.value = ""; runSearch();
    } else return;
    event.preventDefault();
  });
  search.addEventListener("blur", () => { results.hidden = true; });
  search.addEventListener("focus", () => { if (search.value.trim()) runSearch(); });

  // ----------------------------------------------------------------- filters
  function checklist(container, names, on, countsOf, counted) {
    names.forEach((name, n) => {
      const label = el("label");
      const box = el("input");
      box.type = "checkbox"; box.checked = true; box.value = String(n);
      box.dataset.name = name;
      box.addEventListener("change", () => { on[n] = box.checked ? 1 : 0; refresh(); });
      label.append(box);
      if (container.id === "types") {
        const swatch = el("span", "swatch");
        swatch.style.background = colorOf(n);
        label.append(swatch);
      }
      label.append(el("span", "name", name));
      const count = el("span", "count", countsOf[n].toLocaleString("en-US"));
      count.title = countsOf[n].toLocaleString("en-US") + " " + counted;
      label.append(count);
      container.append(label);
    });
  }
  const typeCounts = new Array(TYPES.length).fill(0), sourceCounts = new Array(SOURCES.length).fill(0);
  for (const entity of ENTITIES) typeCounts[entity[1]]++;
  for (const fact of FACTS) sourceCounts[fact[4]]++;
  for (const rel of RELATIONS) sourceCounts[rel[5]]++;
  checklist($("types"), TYPES, typeOn, typeCounts, "entities");
  checklist($("sources"), SOURCES, sourceOn, sourceCounts, "facts and relations, expired ones included");
  document.querySelectorAll("button.all").forEach((button) => {
    button.addEventListener("click", () => {
      const boxes = Array.from($(button.dataset.group).querySelectorAll("input"));
      const value = !boxes.every((box) => box.checked);
      const on = button.dataset.group === "types" ? typeOn : sourceOn;
      boxes.forEach((box, n) => { box.checked = value; on[n] = value ? 1 : 0; });
      refresh();
    });
  });

  // -------------------------------------------------------------------- time
  const slider = $("time");
  slider.max = String(stops.length);
  slider.value = String(stops.length);
  function setTime() {
    const position = Number(slider.value);
    at = position >= stops.length ? null : stops[position];
    $("time-label").textContent = at === null ? "Now (current facts)" : "As of " + fmt(at);
    refresh();
  }
  slider.addEventListener("input", setTime);
  slider.disabled = stops.length === 0;

  function refresh() {
    recompute();
    markNeighbours();
    renderPanel();
    if (search.value.trim()) runSearch();
    schedule();
  }

  // ------------------------------------------------------------------- start
  $("title").textContent = "memgraph · " + (data.scope || "memory");
  const notes = [];
  if (data.total.entities > N) {
    notes.push("Showing the " + N.toLocaleString("en-US") + " most connected of " +
      data.total.entities.toLocaleString("en-US") + " entities, and the relations among them " +
      "(the page stays responsive up to " + data.maxEntities.toLocaleString("en-US") +
      "). memgraph view --max-entities N changes the cap.");
  }
  if (data.shortenedEpisodes) {
    notes.push(plural(data.shortenedEpisodes, "source text") + " longer than " +
      data.maxEpisodeChars.toLocaleString("en-US") + " characters are shortened here.");
  }
  if (notes.length) { $("notice").textContent = notes.join(" "); $("notice").hidden = false; }
  $("empty").hidden = N > 0;
  if (data.generatedAt) $("generated").textContent = "Written " + fmt(data.generatedAt) + " by memgraph view.";
  setTime();
  resize();

  // For scripts that drive the page (the browser test, the benchmark): read-only state
  // and the same actions a person takes.
  const indexOf = (name) => ENTITIES.findIndex((e) => e[0] === name);
  window.memgraphView = Object.freeze({
    counts: () => Object.assign({}, counts),
    stops: () => stops.slice(),
    camera: () => Object.assign({}, camera),
    selected: () => (selected >= 0 ? ENTITIES[selected][0] : null),
    visibleNames: () => ENTITIES.filter((_, i) => nodeOn[i]).map((e) => e[0]),
    screenPosition: (name) => {
      const i = indexOf(name);
      if (i < 0) return null;
      const box = canvas.getBoundingClientRect();
      return { x: box.left + x[i] * camera.k + camera.tx, y: box.top + y[i] * camera.k + camera.ty };
    },
    settled: () => !running(),
    settle: () => { while (running() && sim.alphaTarget === 0) tick(); if (!cameraTouched) fit(); changed = true; render(); },
    stats: () => {
      const f = stats.frames, span = f.length > 1 ? f[f.length - 1] - f[0] : 0;
      return { ticks: stats.ticks, msPerTick: stats.ticks ? stats.tickMs / stats.ticks : 0,
               draws: stats.draws, msPerDraw: stats.draws ? stats.drawMs / stats.draws : 0,
               fps: span > 0 ? (f.length - 1) * 1000 / span : 0, settledAfterMs: stats.settledAt };
    },
    dragFrames: (count) => new Promise((resolve) => {
      const i = byDegree[0], times = [];
      const step = (now) => {
        times.push(now);
        fixed[i] = 1; x[i] += 2; cameraTouched = true;
        if (N <= SPRINGY_DRAG) { sim.alphaTarget = 0.08; sim.alpha = Math.max(sim.alpha, 0.08); advance(); }
        changed = true; render();
        if (times.length <= count) { requestAnimationFrame(step); return; }
        sim.alphaTarget = 0; schedule();
        resolve(count * 1000 / (times[times.length - 1] - times[0]));
      };
      requestAnimationFrame(step);
    }),
    panFrames: (count, full) => new Promise((resolve) => { // full: draw everything each frame
      const times = [];
      const step = (now) => {
        times.push(now);
        camera.tx += 2; cameraTouched = true;
        if (full) changed = true;
        render();
        if (times.length <= count) { requestAnimationFrame(step); return; }
        schedule();
        resolve(count * 1000 / (times[times.length - 1] - times[0]));
      };
      requestAnimationFrame(step);
    }),
    timeDraws: (count) => {
      const started = performance.now();
      for (let n = 0; n < count; n++) { camera.tx += 0.5; draw(); }
      schedule();
      return (performance.now() - started) / count;
    },
  });
  document.body.dataset.ready = "true";
})();
