// Upload (drag and drop or the file input), per-document ingest progress, the list.
import { describe, json, request } from "./api.js";
import { forgetPages } from "./draw.js";

const ACCEPTED = [".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".txt", ".md", ".json"];
const FINAL = new Set(["done", "failed"]);

function text(tag, value, cls) {
  const node = document.createElement(tag);
  node.textContent = value;
  if (cls) node.className = cls;
  return node;
}

export class Documents {
  constructor(notify) {
    this.notify = notify;
    this.jobs = document.getElementById("jobs");
    this.body = document.querySelector("#docs tbody");
    this.empty = document.getElementById("docs-empty");
    const drop = document.getElementById("drop"), input = document.getElementById("files");
    input.addEventListener("change", () => { this.upload([...input.files]); input.value = ""; });
    drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (ev) => {
      ev.preventDefault();
      drop.classList.remove("over");
      this.upload([...ev.dataTransfer.files]);
    });
    document.getElementById("refresh").addEventListener("click", () => this.refresh());
  }

  async upload(files) {
    if (!files.length) return;
    const bad = files.filter((f) => !ACCEPTED.some((s) => f.name.toLowerCase().endsWith(s)));
    if (bad.length) {
      this.notify(`Not uploaded: ${bad.map((f) => f.name).join(", ")}. ` +
                  `Use PDF, image or text files (${ACCEPTED.join(" ")}).`);
      files = files.filter((f) => !bad.includes(f));
      if (!files.length) return;
    }
    const form = new FormData();
    for (const f of files) form.append("files", f, f.name);
    const item = text("li", `Uploading ${files.map((f) => f.name).join(", ")}…`, "job");
    this.jobs.prepend(item);
    try {
      const job = await json("/v1/documents", { method: "POST", body: form });
      this.poll(job, item);
    } catch (err) {
      item.replaceChildren(text("span", `Upload failed: ${describe(err)}`, "error"));
    }
  }

  async poll(job, item) {
    for (;;) {
      this.showJob(job, item);
      if (FINAL.has(job.status)) break;
      await new Promise((r) => setTimeout(r, 1000));
      try {
        job = await json(`/v1/jobs/${job.job_id}`);
      } catch (err) {
        item.appendChild(text("p", `Progress unknown: ${describe(err)}`, "error"));
        return;
      }
    }
    this.refresh();
  }

  showJob(job, item) {
    item.replaceChildren();
    item.dataset.status = job.status;
    for (const d of job.documents) {
      const line = text("div", "", `job-doc ${d.status}`);
      line.dataset.doc = d.doc_id;
      line.appendChild(text("strong", d.filename));
      line.appendChild(text("span", ` ${d.status}`, "status"));
      if (!FINAL.has(d.status)) {
        const bar = document.createElement("progress");
        bar.setAttribute("aria-label", `Ingesting ${d.filename}`);
        line.appendChild(bar);
      } else if (d.status === "done") {
        const count = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;
        line.appendChild(text("span", ` ${count(d.n_pages, "page")}, ${count(d.n_units, "unit")}`,
          "muted"));
      }
      if (d.error) line.appendChild(text("p", `Why it failed: ${d.error}`, "error"));
      item.appendChild(line);
    }
    if (job.error) item.appendChild(text("p", `Job failed: ${job.error}`, "error"));
  }

  async refresh() {
    let docs;
    try {
      docs = await json("/v1/documents");
    } catch (err) {
      this.notify(describe(err));
      return;
    }
    this.body.replaceChildren(...docs.map((d) => this.row(d)));
    this.empty.hidden = docs.length > 0;
  }

  row(d) {
    const tr = document.createElement("tr");
    tr.dataset.doc = d.doc_id;
    tr.appendChild(text("td", d.filename));
    const status = text("td", d.status, `status ${d.status}`);
    if (d.error) status.appendChild(text("div", d.error, "error"));
    tr.appendChild(status);
    tr.appendChild(text("td", String(d.n_pages)));
    const cell = document.createElement("td");
    const del = text("button", "Delete", "danger");
    del.type = "button";
    del.setAttribute("aria-label", `Delete ${d.filename}`);
    del.addEventListener("click", () => this.remove(d, del));
    cell.appendChild(del);
    tr.appendChild(cell);
    return tr;
  }

  async remove(d, button) {
    button.disabled = true;
    try {
      await request(`/v1/documents/${encodeURIComponent(d.doc_id)}`, { method: "DELETE" });
      forgetPages();
    } catch (err) {
      this.notify(`Could not delete ${d.filename}: ${describe(err)}`);
    }
    await this.refresh();
  }
}
