// Knowledge graph: fetch entities and relations, lay them out with a small
// force simulation (repulsion between nodes, springs along edges, a pull to
// the centre), then draw SVG. Expired relations are dashed.
//
// Time travel: the slider picks a day between the space's first and last
// fact validity and refetches graph.json?as_of= (and known_at= when "as
// known then" is ticked); the URL follows, so /graph/?as_of=YYYY-MM-DD opens
// at that instant. Roaming: clicking a node keeps only the nodes within N
// hops of it. Edge labels would overlap in a dense picture, so they are
// drawn only for the edges of the hovered or selected node.
(function () {
  "use strict";
  const svg = document.getElementById("graph");
  if (!svg) return;
  const NS = "http://www.w3.org/2000/svg";
  const W = 1000, H = 620, DAY = 86400000;
  const slider = document.getElementById("graph-as-of");
  const label = document.getElementById("graph-as-of-label");
  const known = document.getElementById("graph-known");
  const hops = document.getElementById("graph-hops");
  const status = document.getElementById("graph-status");
  const panel = document.getElementById("graph-details");
  let data = { nodes: [], edges: [] };
  let focus = null;
  let timer = null;
  // The instant the URL asked for, kept exactly until the slider moves (the
  // slider itself only holds whole days inside the space's range).
  let pinned = slider ? slider.dataset.initial : "";

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    parent.appendChild(node);
    return node;
  }

  function day(s) { return Date.parse(s + "T00:00:00Z"); }
  function iso(ms) { return new Date(ms).toISOString().slice(0, 10); }
  const first = slider ? day(slider.dataset.first) : 0;
  const last = slider ? day(slider.dataset.last) : 0;

  function asOf() {
    if (pinned) return pinned;
    if (!slider || slider.dataset.now === "1") return "";
    return iso(first + Number(slider.value) * DAY);
  }

  function layout(nodes, edges) {
    nodes.forEach((n, i) => {
      const a = (2 * Math.PI * i) / Math.max(1, nodes.length);
      n.x = W / 2 + 220 * Math.cos(a); n.y = H / 2 + 200 * Math.sin(a); n.vx = 0; n.vy = 0;
    });
    const byId = new Map(nodes.map((n) => [n.id, n]));
    for (let step = 0; step < 300; step++) {
      const cool = 1 - step / 300;
      for (let i = 0; i < nodes.length; i++) {
        for (let j = i + 1; j < nodes.length; j++) {
          const a = nodes[i], b = nodes[j];
          let dx = a.x - b.x, dy = a.y - b.y;
          const d2 = Math.max(dx * dx + dy * dy, 25);
          const f = 6000 / d2;
          const d = Math.sqrt(d2);
          dx /= d; dy /= d;
          a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f;
        }
      }
      for (const e of edges) {
        const a = byId.get(e.src), b = byId.get(e.dst);
        if (!a || !b || a === b) continue;
        const dx = b.x - a.x, dy = b.y - a.y;
        const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1);
        const f = (d - 140) * 0.02;
        a.vx += (dx / d) * f; a.vy += (dy / d) * f; b.vx -= (dx / d) * f; b.vy -= (dy / d) * f;
      }
      for (const n of nodes) {
        n.vx += (W / 2 - n.x) * 0.004; n.vy += (H / 2 - n.y) * 0.004;
        n.x = Math.min(W - 60, Math.max(60, n.x + n.vx * cool));
        n.y = Math.min(H - 30, Math.max(30, n.y + n.vy * cool));
        n.vx *= 0.5; n.vy *= 0.5;
      }
    }
    return byId;
  }

  // The node ids within `depth` hops of `start`, edges taken both ways.
  function within(start, depth) {
    const keep = new Set([start]);
    let frontier = [start];
    for (let i = 0; i < depth; i++) {
      const next = [];
      for (const e of data.edges) {
        for (const [a, b] of [[e.src, e.dst], [e.dst, e.src]]) {
          if (frontier.includes(a) && !keep.has(b)) { keep.add(b); next.push(b); }
        }
      }
      frontier = next;
    }
    return keep;
  }

  function showLabels(id, on) {
    svg.querySelectorAll(".edge-label").forEach((t) => {
      const touches = t.dataset.src === String(id) || t.dataset.dst === String(id);
      if (touches) t.classList.toggle("shown", on || t.dataset.src === String(focus) || t.dataset.dst === String(focus));
    });
  }

  function details(n) {
    if (!panel) return;
    panel.hidden = !n;
    panel.replaceChildren();
    if (!n) return;
    const h = document.createElement("h2");
    h.textContent = `${n.name} (${n.type})`;
    panel.appendChild(h);
    const link = document.createElement("a");
    link.href = svg.dataset.entity.replace(/0\/$/, `${n.id}/`);
    link.textContent = svg.dataset.entityLabel;
    panel.appendChild(link);
    if (n.details.length) {
      const ul = document.createElement("ul");
      for (const text of n.details) {
        const li = document.createElement("li");
        li.textContent = text;
        ul.appendChild(li);
      }
      panel.appendChild(ul);
    }
  }

  function draw() {
    svg.replaceChildren();
    const keep = focus === null ? null : within(focus, Number(hops ? hops.value : 2));
    const nodes = data.nodes.filter((n) => !keep || keep.has(n.id)).map((n) => ({ ...n }));
    const ids = new Set(nodes.map((n) => n.id));
    const edges = data.edges.filter((e) => ids.has(e.src) && ids.has(e.dst));
    svg.dataset.nodes = nodes.map((n) => n.name).sort().join("|");
    if (status) {
      status.textContent = status.dataset.text.replace("{shown}", nodes.length)
        .replace("{total}", data.nodes.length).replace("{edges}", edges.length);
    }
    if (!nodes.length) {
      el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "edge-label shown" }, svg)
        .textContent = svg.dataset.empty;
      return;
    }
    const byId = layout(nodes, edges);
    const edgeLayer = el("g", {}, svg), labelLayer = el("g", {}, svg), nodeLayer = el("g", {}, svg);
    for (const e of edges) {
      const a = byId.get(e.src), b = byId.get(e.dst);
      if (!a || !b) continue;
      const line = el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "edge" + (e.live ? "" : " expired") }, edgeLayer);
      el("title", {}, line).textContent = e.text || e.rel;
      const t = el("text", {
        x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, "text-anchor": "middle",
        class: "edge-label", "data-src": e.src, "data-dst": e.dst,
      }, labelLayer);
      t.textContent = e.rel;
    }
    for (const n of nodes) {
      const g = el("g", {
        class: "node" + (n.id === focus ? " focus" : ""), transform: `translate(${n.x},${n.y})`,
        tabindex: "0", role: "button", "data-id": n.id, "aria-label": n.name,
      }, nodeLayer);
      el("circle", { r: 9 }, g);
      el("title", {}, g).textContent = `${n.name} (${n.type})`;
      el("text", { x: 13, y: 4 }, g).textContent = n.name;
      const pick = () => { focus = focus === n.id ? null : n.id; details(focus === null ? null : n); draw(); };
      g.addEventListener("click", pick);
      g.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick(); } });
      g.addEventListener("mouseenter", () => showLabels(n.id, true));
      g.addEventListener("mouseleave", () => showLabels(n.id, false));
    }
    if (focus !== null) showLabels(focus, true);
  }

  function load() {
    const at = asOf();
    const params = new URLSearchParams();
    if (at) {
      params.set("as_of", at);
      if (known && known.checked) params.set("known_at", at);
    }
    const query = params.toString();
    history.replaceState(null, "", location.pathname + (query ? `?${query}` : ""));
    if (label) label.textContent = at || label.dataset.now;
    fetch(svg.dataset.src + (query ? `?${query}` : ""), { credentials: "same-origin" })
      .then((r) => r.json())
      .then((json) => {
        if (json.error) { if (status) status.textContent = json.error; return; }
        data = json;
        if (focus !== null && !data.nodes.some((n) => n.id === focus)) { focus = null; details(null); }
        draw();
      });
  }

  if (slider) {
    slider.max = String(Math.max(0, Math.round((last - first) / DAY)));
    const initial = slider.dataset.initial;
    if (initial) {
      slider.value = String(Math.min(Number(slider.max), Math.max(0, Math.round((day(initial) - first) / DAY))));
      slider.dataset.now = "0";
    } else {
      slider.value = slider.max;
      slider.dataset.now = "1";
    }
    const moved = () => {
      slider.dataset.now = "0";
      pinned = "";
      if (label) label.textContent = asOf();
      clearTimeout(timer);
      timer = setTimeout(load, 150);
    };
    slider.addEventListener("input", moved);
    slider.addEventListener("change", moved);
  }
  if (known) known.addEventListener("change", load);
  if (hops) hops.addEventListener("change", draw);
  const now = document.getElementById("graph-now");
  if (now) now.addEventListener("click", () => { slider.value = slider.max; slider.dataset.now = "1"; pinned = ""; load(); });
  const clear = document.getElementById("graph-clear");
  if (clear) clear.addEventListener("click", () => { focus = null; details(null); draw(); });
  load();
})();
