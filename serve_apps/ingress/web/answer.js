// One answer column per mode: the streamed answer, [n] citations, evidence cards, graph.
import { describe, stream } from "./api.js";
import { around, drawPage, loadPage } from "./draw.js";
import { drawGraph, graphFor } from "./graph.js";

function node(tag, cls, value) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (value !== undefined) n.textContent = value;
  return n;
}

// Answer text with each [n] as a link to evidence card n of this column.
export function withCitations(target, said, col) {
  target.replaceChildren();
  let last = 0;
  for (const m of said.matchAll(/\[(\d+)\]/g)) {
    target.append(said.slice(last, m.index));
    const a = node("a", "cite", m[0]);
    a.href = `#ev-${col}-${m[1]}`;
    target.append(a);
    last = m.index + m[0].length;
  }
  target.append(said.slice(last));
}

export class AnswerColumn {
  constructor(parent, mode, col, openPage) {
    this.mode = mode;
    this.col = col;
    this.openPage = openPage;
    this.root = node("article", "answer-col");
    this.root.dataset.mode = mode;
    this.root.setAttribute("aria-label", `Answer in ${mode} mode`);
    this.root.append(node("h3", "", `Mode: ${mode}`));
    this.status = node("p", "muted", "Searching…");
    this.status.setAttribute("aria-live", "polite");
    this.answer = node("p", "answer-text");
    this.abstain = node("p", "abstain");
    this.abstain.hidden = true;
    this.error = node("p", "error");
    this.error.hidden = true;
    this.cards = node("ol", "cards");
    this.graph = node("section", "graph-box");
    this.graph.hidden = true;
    this.root.append(this.status, this.answer, this.abstain, this.error, this.cards, this.graph);
    parent.append(this.root);
  }

  async ask(question) {
    let said = "";
    try {
      await stream({ question, mode: this.mode }, (name, data) => {
        if (name === "token") {
          said += data.token;
          withCitations(this.answer, said, this.col);
          this.status.textContent = "Answering…";
        } else if (name === "evidence") {
          this.finish(said, data);
        } else if (name === "error") {
          this.fail(describeEvent(data));
        }
      });
    } catch (err) {
      this.fail(describe(err));
    }
  }

  fail(message) {
    this.status.textContent = "";
    this.error.textContent = message;
    this.error.hidden = false;
  }

  finish(said, data) {
    this.status.textContent = `Done in ${(data.timings.total || 0).toFixed(2)} s.`;
    this.root.dataset.done = "1";
    if (data.abstained) {
      this.root.classList.add("abstained");
      this.abstain.textContent = "No answer: the documents do not support one. Reason: " +
        (data.reason || "the answerer did not find the answer in the evidence.");
      this.abstain.hidden = false;
    }
    data.evidence.forEach((ev, i) => this.cards.append(this.card(ev, i + 1)));
    const units = data.evidence.map((e) => e.unit_id).filter(Boolean);
    if (units.length) this.showGraph(units.slice(0, 5));
  }

  card(ev, n) {
    const li = node("li", "card");
    li.id = `ev-${this.col}-${n}`;
    li.dataset.bbox = JSON.stringify(ev.bbox);
    li.dataset.modality = ev.modality;
    const open = node("button", "card-open");
    open.type = "button";
    open.setAttribute("aria-label", `[${n}] ${ev.doc} page ${ev.page}: open the whole page`);
    const canvas = node("canvas", "thumb");
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label",
      `Page ${ev.page} of ${ev.doc}, the ${ev.modality} evidence outlined`);
    open.append(canvas);
    open.addEventListener("click", () => this.openPage(ev));
    const meta = node("p", "meta");
    meta.append(node("strong", "", `[${n}] `), node("span", `tag ${ev.modality}`, ev.modality),
      ` score ${ev.score.toFixed(3)} · ${ev.doc} · page ${ev.page}`);
    li.append(open, meta, node("p", "snippet", ev.text.slice(0, 240)));
    loadPage(ev.doc_id || ev.doc, ev.page).then(({ image }) => {
      drawPage(canvas, image, [{ bbox: ev.bbox, modality: ev.modality }], 4, around(ev.bbox));
      li.dataset.drawn = "1";
    }).catch((err) => li.append(node("p", "error", `No page image: ${describe(err)}`)));
    return li;
  }

  async showGraph(units) {
    this.graph.replaceChildren(node("h4", "", "Graph around the evidence"));
    this.graph.hidden = false;
    try {
      const g = await graphFor(units);
      if (!g.nodes.length) {
        this.graph.append(node("p", "muted", "No graph nodes for this evidence."));
        return;
      }
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.classList.add("graph");
      drawGraph(svg, g);
      this.graph.append(svg);
      this.graph.dataset.nodes = String(g.nodes.length);
    } catch (err) {
      this.graph.append(node("p", "error", `Graph unavailable: ${describe(err)}`));
    }
  }
}

function describeEvent(body) {
  const retry = body.retryable ? " You can try again." : "";
  return `The answer stopped: ${body.error}${retry}`;
}
