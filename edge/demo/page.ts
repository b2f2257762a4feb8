import { drawingToFeatures } from "./features.ts";

/** Places the demo can pretend to be in (sent as x-edgecascade-location; honoured by local stacks only). */
const PLACES: readonly [string, string][] = [
  ["", "where I am (request.cf)"],
  ["40.71,-74.01", "New York"],
  ["37.77,-122.42", "San Francisco"],
  ["51.51,-0.13", "London"],
  ["50.11,8.68", "Frankfurt"],
  ["35.68,139.69", "Tokyo"],
  ["1.35,103.82", "Singapore"],
  ["-33.87,151.21", "Sydney"],
];

const STYLE = `
*{box-sizing:border-box}[hidden]{display:none!important}body{font:15px/1.45 system-ui,-apple-system,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
main{max-width:760px;margin:0 auto;padding:16px}h1{font-size:1.3rem;margin:0 0 4px}p.lead{margin:0 0 14px;color:#556}
.cols{display:flex;flex-wrap:wrap;gap:16px}.card{background:#fff;border-radius:10px;padding:14px;box-shadow:0 1px 3px #0002;flex:1 1 300px}
canvas#pad{width:100%;max-width:320px;aspect-ratio:1;border:2px dashed #99a;border-radius:8px;touch-action:none;background:#fff;display:block}
.row{display:flex;flex-wrap:wrap;gap:8px;margin-top:10px;align-items:center}button,select{font:inherit;padding:8px 12px;border-radius:8px;border:1px solid #99a;background:#fff}
button.primary{background:#1d4ed8;color:#fff;border-color:#1d4ed8}#label{font-size:3.2rem;font-weight:700;line-height:1}
.badge{display:inline-block;padding:2px 10px;border-radius:999px;color:#fff;font-weight:600;font-size:.9rem}
.cache{background:#2a9d8f}.edge{background:#457b9d}.regional{background:#b08900}.degraded{background:#e76f51}
.bars{margin-top:10px;display:grid;grid-template-columns:max-content minmax(0,1fr) max-content;gap:3px 8px;align-items:center;font-size:.85rem}
.bar{display:contents}.bar span{text-align:right;white-space:nowrap}.bar em{font-style:normal;white-space:nowrap}
.bar div{height:12px;background:#457b9d;border-radius:3px;min-width:1px;max-width:100%}
#key-row input{font:inherit;padding:6px 8px;border:1px solid #99a;border-radius:6px;min-width:12em}#timing{font-family:ui-monospace,monospace;font-size:.85rem;margin:8px 0 0;padding-left:18px}
canvas#preview{width:96px;height:96px;image-rendering:pixelated;border:1px solid #ccd;border-radius:4px}.muted{color:#667;font-size:.85rem}
#error{color:#c1121f}#form{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:6px;max-height:340px;overflow:auto}
#form label{display:flex;flex-direction:column;font-size:.75rem;color:#445}#form input{font:inherit;padding:4px 6px;border:1px solid #99a;border-radius:6px}`;

/** The browser side: drawing (pointer events cover mouse, touch and pen), features, classify, display. */
const SCRIPT = `
const toFeatures = (${drawingToFeatures.toString()});
const $ = (id) => document.getElementById(id);
const pad = $("pad"), ctx = pad.getContext("2d", { willReadFrequently: true });
let drawing = false, last = null, models = [], model = null, dirty = false;
function resize() { const s = pad.getBoundingClientRect().width; if (s > 0) { pad.width = pad.height = Math.round(s * devicePixelRatio); } clearPad(); }
function clearPad() { ctx.clearRect(0, 0, pad.width, pad.height); dirty = false; }
function pos(e) { const r = pad.getBoundingClientRect(); return [(e.clientX - r.left) * pad.width / r.width, (e.clientY - r.top) * pad.height / r.height]; }
pad.addEventListener("pointerdown", (e) => { drawing = true; last = pos(e); pad.setPointerCapture(e.pointerId); stroke(e); });
pad.addEventListener("pointermove", (e) => { if (drawing) stroke(e); });
for (const t of ["pointerup", "pointercancel"]) pad.addEventListener(t, () => { if (drawing) { drawing = false; if (dirty) classifyDrawing(); } });
function stroke(e) {
  const p = pos(e); ctx.strokeStyle = "#000"; ctx.lineCap = ctx.lineJoin = "round"; ctx.lineWidth = pad.width / 11;
  ctx.beginPath(); ctx.moveTo(last[0], last[1]); ctx.lineTo(p[0], p[1]); ctx.stroke(); last = p; dirty = true;
}
function classifyDrawing() {
  const img = ctx.getImageData(0, 0, pad.width, pad.height).data;
  const alpha = new Uint8Array(pad.width * pad.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = img[i * 4 + 3];
  const features = toFeatures(alpha, pad.width, pad.height);
  if (features) classify(features, null);
}
function preview(features) {
  if (!isDrawing()) return;
  const c = $("preview").getContext("2d"), d = c.createImageData(8, 8);
  features.forEach((v, i) => { const g = 255 - Math.round(v * 255 / 16); d.data.set([g, g, g, 255], i * 4); });
  c.putImageData(d, 0, 0);
}
const isDrawing = () => model && model.demo === "drawing-8x8";
/** The selected model's way of collecting a row: the drawing pad, or one number field per feature. */
function selectModel(name) {
  model = models.find((m) => m.name === name) || models[0];
  $("model").value = model.name;
  $("draw").hidden = !isDrawing(); $("numbers").hidden = isDrawing(); $("preview").hidden = !isDrawing();
  $("lead").textContent = isDrawing()
    ? "Draw a digit. It is reduced to 8×8 values 0–16, the way the UCI digits were made, and classified by the edge."
    : "Enter the " + model.width + " features (or send a random held-out row) and classify them at the edge.";
  const form = $("form"); form.innerHTML = "";
  if (!isDrawing()) model.features.forEach((f, i) => {
    const label = document.createElement("label"); label.textContent = f;
    const input = document.createElement("input"); input.type = "number"; input.step = "any"; input.name = "f" + i;
    label.appendChild(input); form.appendChild(label);
  });
  $("result").hidden = true; $("label").textContent = "?"; $("true-label").textContent = ""; $("error").textContent = "";
  if (isDrawing()) resize();
}
function readForm() {
  const values = [...$("form").querySelectorAll("input")].map((input) => input.value.trim() === "" ? NaN : Number(input.value));
  const bad = values.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) { $("error").textContent = "feature " + model.features[bad] + " needs a number"; return null; }
  return values;
}
function parseServerTiming(h) {
  return (h || "").split(",").map((s) => s.trim()).filter(Boolean).map((entry) => {
    const [name, ...params] = entry.split(";").map((x) => x.trim());
    const o = { name };
    for (const p of params) { const [k, v] = p.split("="); o[k] = v === undefined ? "" : v.replace(/^"|"$/g, ""); }
    return o;
  });
}
async function classify(features, truth) {
  preview(features);
  $("error").textContent = "";
  $("true-label").textContent = truth === null ? "" : "true label: " + model.labels[truth];
  const headers = { "content-type": "application/json" };
  const key = $("api-key").value.trim(); if (key) headers.authorization = "Bearer " + key;
  const place = $("place").value; if (place) headers["x-edgecascade-location"] = place;
  const body = { model: model.name, inputs: features, parameters: { cascade: $("cascade").value } };
  const t0 = performance.now();
  try {
    const res = await fetch("/v1/classify", { method: "POST", headers, body: JSON.stringify(body) });
    const rtt = performance.now() - t0;
    const text = await res.text();
    let data; try { data = JSON.parse(text); } catch { data = { error: text.slice(0, 200) || res.statusText }; }
    if (res.status === 401) $("key-row").hidden = false;
    if (!res.ok) {
      const hint = res.status === 401 ? (key ? " (the edge refused this key)" : " (this edge requires an API key: enter one above)") : "";
      $("error").textContent = res.status + ": " + (data.error || "request failed") + hint; return;
    }
    show(data, res, rtt);
  } catch (err) { $("error").textContent = String(err); }
}
function show(data, res, rtt) {
  const p = data.predictions[0];
  $("label").textContent = p.label;
  $("confidence").textContent = (p.confidence * 100).toFixed(1) + "% confident · " + data.model + " version " + data.version;
  const who = data.servedBy, kind = who.startsWith("regional:") ? "regional" : who;
  const badge = $("served-by"); badge.textContent = who; badge.className = "badge " + kind;
  const order = p.scores.map((s, i) => [s, i]).sort((a, b) => b[0] - a[0]).slice(0, 5);
  $("scores").innerHTML = "";
  for (const [s, i] of order) {
    const row = document.createElement("div"); row.className = "bar";
    row.innerHTML = "<span></span><div></div><em></em>";
    row.children[0].textContent = model.labels[i]; row.children[1].style.width = (s * 100).toFixed(2) + "%";
    row.children[2].textContent = (s * 100).toFixed(1) + "%"; $("scores").appendChild(row);
  }
  const timing = $("timing"); timing.innerHTML = "";
  for (const t of parseServerTiming(res.headers.get("server-timing"))) {
    const li = document.createElement("li");
    li.textContent = t.name + (t.desc ? " (" + t.desc + ")" : "") + ": " + (t.dur !== undefined ? t.dur + " ms" : "-");
    timing.appendChild(li);
  }
  const li = document.createElement("li"); li.textContent = "round trip (browser): " + rtt.toFixed(1) + " ms"; timing.appendChild(li);
  $("result").hidden = false;
}
$("clear").onclick = () => { clearPad(); };
$("send").onclick = () => classifyDrawing();
$("form").onsubmit = (e) => { e.preventDefault(); const values = readForm(); if (values) classify(values, null); };
$("model").onchange = () => selectModel($("model").value);
$("sample").onclick = () => {
  const s = model.samples[Math.floor(Math.random() * model.samples.length)];
  if (isDrawing()) clearPad();
  else [...$("form").querySelectorAll("input")].forEach((input, i) => { input.value = String(s.input[i]); });
  classify(s.input, s.label);
};
fetch("/demo/models").then((r) => r.json()).then((list) => {
  models = list;
  $("model").innerHTML = "";
  for (const m of models) { const o = document.createElement("option"); o.value = m.name; o.textContent = m.name; $("model").appendChild(o); }
  selectModel((models.find((m) => m.demo === "drawing-8x8") || models[0]).name);
}).catch((err) => { $("error").textContent = "cannot list the models: " + err; });
addEventListener("resize", resize); resize();`;

const PLACE_OPTIONS = PLACES.map(([value, name]) => `<option value="${value}">${name}</option>`).join("");

/** The demo page: self-contained HTML, no external resources. */
export const DEMO_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgecascade — classification at the edge</title><style>${STYLE}</style></head>
<body><main>
<h1>edgecascade</h1>
<p class="lead"><span id="lead"></span> Answers come from the cache, from the model's edge variant in the Worker,
or from a regional pool when the edge is unsure.</p>
<div class="cols">
<section class="card">
<div class="row" style="margin-top:0"><label>Model <select id="model" aria-label="model"></select></label><button id="sample">Random sample</button></div>
<div id="draw"><canvas id="pad" aria-label="drawing pad"></canvas>
<div class="row"><button id="send" class="primary">Classify</button><button id="clear">Clear</button></div></div>
<div id="numbers" hidden><form id="form" aria-label="features"></form>
<div class="row"><button class="primary" type="submit" form="form">Classify</button></div></div>
<div class="row"><label>Cascade <select id="cascade"><option>auto</option><option>edge</option><option>regional</option></select></label>
<label>Pretend I am in <select id="place">${PLACE_OPTIONS}</select></label></div>
<div class="row" id="key-row" hidden><label>API key <input id="api-key" type="password" autocomplete="off" spellcheck="false"
aria-label="API key"></label><span class="muted">kept in this page only: sent with each request, never stored</span></div>
</section>
<section class="card" aria-live="polite">
<div class="row" style="margin-top:0"><canvas id="preview" width="8" height="8" aria-label="8x8 features sent"></canvas>
<div><div id="label">?</div><div id="confidence" class="muted">draw, or send a random sample</div><div id="true-label" class="muted"></div></div></div>
<div id="result" hidden><p>Answered by <span id="served-by" class="badge"></span></p>
<div id="scores" class="bars"></div>
<p class="muted" style="margin:10px 0 0">Server-Timing</p><ul id="timing"></ul></div>
<p id="error" role="alert"></p>
</section>
</div>
<p class="muted">Sample data: UCI Optical Recognition of Handwritten Digits (E. Alpaydin, C. Kaynak); UCI Breast Cancer
Wisconsin (Diagnostic) (W. Wolberg, W. Street, O. Mangasarian).</p>
</main><script>${SCRIPT}</script></body></html>`;
