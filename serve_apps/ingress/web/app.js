// Wiring: the key, notices, the ask form and the whole-page dialog.
import { describe, getKey, json, setKey } from "./api.js";
import { AnswerColumn } from "./answer.js";
import { Documents } from "./documents.js";
import { colour, drawPage, loadPage } from "./draw.js";

const $ = (id) => document.getElementById(id);
const notice = $("notice");

function notify(message) {
  notice.textContent = message;
  notice.hidden = !message;
}

async function checkKey(docs) {
  $("key-state").textContent = getKey() ? "Checking key…" : "No key set.";
  try {
    await json("/v1/documents");
    $("key-state").textContent = getKey() ? "Key accepted." : "";
    notify("");
    await docs.refresh();
  } catch (err) {
    $("key-state").textContent = "";
    notify(describe(err));
  }
}

async function openPage(ev) {
  const dialog = $("page-dialog"), canvas = $("page-canvas");
  $("page-title").textContent = `${ev.doc}, page ${ev.page}`;
  try {
    const { view, image } = await loadPage(ev.doc_id || ev.doc, ev.page);
    drawPage(canvas, image, view.units, 3);
    canvas.setAttribute("aria-label",
      `Page ${ev.page} of ${ev.doc} with the boxes of its ${view.units.length} units`);
    canvas.dataset.units = String(view.units.length);
    const kinds = [...new Set(view.units.map((u) => u.modality))];
    $("page-legend").replaceChildren(...kinds.map((k) => {
      const li = document.createElement("li");
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = colour(k);
      li.append(sw, ` ${k} (${view.units.filter((u) => u.modality === k).length})`);
      return li;
    }));
    if (!dialog.open) dialog.showModal();
  } catch (err) {
    notify(`Could not open the page: ${describe(err)}`);
  }
}

function main() {
  const docs = new Documents(notify);
  $("key").value = getKey();
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setKey($("key").value.trim());
    checkKey(docs);
  });
  $("key-forget").addEventListener("click", () => {
    setKey("");
    $("key").value = "";
    checkKey(docs);
  });
  $("page-close").addEventListener("click", () => $("page-dialog").close());
  let asked = 0;
  $("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const question = $("question").value.trim();
    if (!question) return;
    const modes = [$("mode-a").value, $("mode-b").value].filter(Boolean);
    const answers = $("answers");
    answers.replaceChildren();
    answers.classList.toggle("two", modes.length > 1);
    notify("");
    asked += 1;
    modes.forEach((m, i) => new AnswerColumn(answers, m, `${asked}-${i}`, openPage).ask(question));
  });
  checkKey(docs);
}

main();
