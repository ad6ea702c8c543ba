// The graph around evidence units as a small SVG: seeds in the middle, the rest on a ring.
import { json } from "./api.js";

const NS = "http://www.w3.org/2000/svg";
const KIND_COLOURS = {
  entity: "#9467bd", table: "#2ca02c", image: "#ff7f0e", equation: "#8c564b",
  table_row: "#98df8a", table_column: "#98df8a", table_cell: "#c7e9c0",
  table_header: "#74c476", table_row_group: "#74c476", caption: "#e377c2",
};

function el(name, attrs, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

export async function graphFor(unitIds, hops = 1, limit = 24) {
  const q = unitIds.map((u) => `unit=${encodeURIComponent(u)}`).join("&");
  return json(`/v1/graph?${q}&hops=${hops}&limit=${limit}`);
}

function layout(nodes, size) {
  const c = size / 2, pos = new Map();
  // the units' own anchors in the middle, the entities naming them around, hops outside
  const anchors = nodes.filter((n) => n.seed && n.kind !== "entity");
  const named = nodes.filter((n) => n.seed && n.kind === "entity");
  const rest = nodes.filter((n) => !n.seed);
  const ring = (list, r, turn) => list.forEach((n, i) => {
    const a = turn + (2 * Math.PI * i) / Math.max(1, list.length);
    pos.set(n.id, [c + r * Math.cos(a), c + r * Math.sin(a)]);
  });
  if (anchors.length === 1) pos.set(anchors[0].id, [c, c]); else ring(anchors, size * 0.1, 0);
  ring(named, size * 0.24, Math.PI / 5);
  ring(rest, size * 0.4, Math.PI / 7);
  return pos;
}

export function drawGraph(svg, graph, size = 400) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.setAttribute("role", "img");
  const pos = layout(graph.nodes, size);
  svg.setAttribute("aria-label", `Graph: ${graph.nodes.length} nodes, ${graph.edges.length} edges`);
  for (const e of graph.edges) {
    const a = pos.get(e.src), b = pos.get(e.dst);
    if (!a || !b) continue;
    const line = el("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: "edge" });
    line.appendChild(el("title", {}, e.type));
    svg.appendChild(line);
  }
  for (const n of graph.nodes) {
    const [x, y] = pos.get(n.id);
    const g = el("g", { class: `node${n.seed ? " seed" : ""}`, "data-kind": n.kind });
    g.appendChild(el("circle", { cx: x, cy: y, r: n.seed ? 9 : 6,
      fill: KIND_COLOURS[n.kind] || "#1f77b4" }));
    const label = n.name.length > 18 ? `${n.name.slice(0, 17)}…` : n.name;
    g.appendChild(el("text", { x: x + 10, y: y + 4 }, label));
    g.appendChild(el("title", {}, `${n.kind}: ${n.name}`));
    svg.appendChild(g);
  }
}
