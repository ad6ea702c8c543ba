// Page renders on a <canvas> with unit boxes drawn at their page-relative bboxes.
import { blobUrl, json } from "./api.js";

// The same colours as engine/parse/overlay.py.
export const COLOURS = {
  text: [31, 119, 180], title: [214, 39, 40], list: [23, 190, 207], table: [44, 160, 44],
  image: [255, 127, 14], equation: [148, 103, 189], code: [140, 86, 75],
  caption: [227, 119, 194], header: [127, 127, 127], footer: [127, 127, 127],
  page_number: [127, 127, 127],
};

export function colour(modality, alpha = 1) {
  const [r, g, b] = COLOURS[modality] || [0, 0, 0];
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

const pages = new Map(); // "doc/page" -> Promise<{view, image}>

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error("the page image could not be decoded"));
    img.src = url;
  });
}

// The page view (GET /v1/documents/{doc}/pages/{page}) and its decoded render, cached.
export function loadPage(doc, page) {
  const key = `${doc}/${page}`;
  if (!pages.has(key)) {
    const p = (async () => {
      const view = await json(`/v1/documents/${encodeURIComponent(doc)}/pages/${page}`);
      const image = view.image_url ? await loadImage(await blobUrl(view.image_url)) : null;
      return { view, image };
    })();
    p.catch(() => pages.delete(key));
    pages.set(key, p);
  }
  return pages.get(key);
}

export function forgetPages() { pages.clear(); }

// The part of a page a thumbnail shows: ``bbox`` with a margin, at least half the page
// wide and a quarter high (page-relative, clamped to the page).
export function around(bbox, margin = 0.06) {
  if (!bbox) return [0, 0, 1, 1];
  const span = (lo, hi, least) => {
    let a = lo - margin, b = hi + margin;
    if (b - a < least) { const grow = (least - (b - a)) / 2; a -= grow; b += grow; }
    if (a < 0) { b -= a; a = 0; }
    if (b > 1) { a -= b - 1; b = 1; }
    return [Math.max(0, a), Math.min(1, b)];
  };
  const [x0, x1] = span(bbox[0], bbox[2], 0.5), [y0, y1] = span(bbox[1], bbox[3], 0.25);
  return [x0, y0, x1, y1];
}

// Draw ``image`` (or the part ``crop`` of it, page-relative) with each box {bbox, modality}
// at the render's own pixel size. The canvas records where it sits on the render:
// data-origin "x,y" and data-page "width,height", in render pixels.
export function drawPage(canvas, image, boxes, width = 3, crop = [0, 0, 1, 1]) {
  const pw = image ? image.naturalWidth : 612, ph = image ? image.naturalHeight : 792;
  const ox = Math.round(crop[0] * pw), oy = Math.round(crop[1] * ph);
  canvas.width = Math.round(crop[2] * pw) - ox;
  canvas.height = Math.round(crop[3] * ph) - oy;
  canvas.dataset.origin = `${ox},${oy}`;
  canvas.dataset.page = `${pw},${ph}`;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  if (image) ctx.drawImage(image, -ox, -oy);
  for (const box of boxes) {
    if (!box.bbox) continue;
    const [x0, y0, x1, y1] = box.bbox;
    const rect = [x0 * pw - ox, y0 * ph - oy, (x1 - x0) * pw, (y1 - y0) * ph];
    ctx.fillStyle = colour(box.modality, 0.12);
    ctx.fillRect(...rect);
    ctx.strokeStyle = colour(box.modality);
    ctx.lineWidth = width;
    ctx.strokeRect(...rect);
  }
}
