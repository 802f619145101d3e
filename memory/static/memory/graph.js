// Knowledge graph: fetch entities and relations, lay them out with a small
// force simulation (repulsion between nodes, springs along edges, a pull to
// the centre), then draw SVG. Expired relations are dashed.
(function () {
  "use strict";
  const svg = document.getElementById("graph");
  if (!svg) return;
  const NS = "http://www.w3.org/2000/svg";
  const W = 1000, H = 620;

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    parent.appendChild(node);
    return node;
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

  function draw(data) {
    const { nodes, edges } = data;
    if (!nodes.length) {
      el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "edge-label" }, svg)
        .textContent = "No entities yet.";
      return;
    }
    const byId = layout(nodes, edges);
    const edgeLayer = el("g", {}, svg), nodeLayer = el("g", {}, svg);
    for (const e of edges) {
      const a = byId.get(e.src), b = byId.get(e.dst);
      if (!a || !b) continue;
      el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "edge" + (e.live ? "" : " expired") }, edgeLayer);
      el("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, "text-anchor": "middle", class: "edge-label" }, edgeLayer)
        .textContent = e.rel;
    }
    for (const n of nodes) {
      const g = el("g", { class: "node", transform: `translate(${n.x},${n.y})` }, nodeLayer);
      el("circle", { r: 9 }, g);
      el("title", {}, g).textContent = `${n.name} (${n.type})`;
      el("text", { x: 13, y: 4 }, g).textContent = n.name;
    }
  }

  fetch(svg.dataset.src, { credentials: "same-origin" })
    .then((r) => r.json())
    .then(draw);
})();
