// Shared page code of the in-page calculators (hwlib/web/widgets.py inlines it after `root`, `hw`
// and `DATA`). It builds elements and prints numbers with hwlib.units' own (generated) formatters.
// It computes no formula: every number comes from `hw`, the JavaScript generated from hwlib.
const rt = hw.$rt;
const uid = root.id;
const h = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
};
const svgNS = "http://www.w3.org/2000/svg";
const s = (tag, attrs = {}, text) => {
  const node = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
};
const units = (name, kwargs) => hw.call(`hwlib.units.${name}`, kwargs);
const FORMAT = {
  bytes: (x) => `${units("format_bytes", { n: x })}  (${units("format_bytes", { n: x, binary: true })})`,
  seconds: (x) => units("format_seconds", { s: x }),
  usd: (x) => units("format_usd", { x }),
  flop: (x) => units("format_flops", { x }),
  rate: (x) => units("format_rate", { x }),
  "tokens/s": (x) => units("format_si", { x, unit: "tokens/s" }),
  count: (x) => `${rt.format(x, ",.0f")}  (${rt.format(x, ".3g")})`,
  ratio: (x) => rt.format(x, ".2f"),
  percent: (x) => rt.format(x, ".1%"),
};
// A typed number, read by the generated hwlib.units.parse_number ("7e9", "1_000", " 0.4 ", "15T",
// "40%"); empty or unreadable text raises a ValueError that names the field by its label.
const fieldLabel = (input) => {
  const label = root.querySelector(`label[for="${input.id}"]`);
  return label ? label.textContent : input.name;
};
const readNumber = (input) => hw.call("hwlib.units.parse_number", { text: input.value, name: fieldLabel(input) });
// Large defaults are shown as 1e+12 rather than 1000000000000 (Python's float() reads both).
const shown = (value) => (typeof value === "number" && Math.abs(value) >= 1e10 ? rt.format(value, ".6g") : String(value));
const field = (key, label, value, attrs = {}) => {
  const id = `${uid}-${key}`;
  const input = h("input", { id, name: key, type: "text", inputmode: "decimal", autocomplete: "off",
                             spellcheck: "false", value: shown(value), ...attrs });
  return [h("label", { for: id, text: label }), input];
};
const select = (key, label, options, value) => {
  const id = `${uid}-${key}`;
  const node = h("select", { id, name: key });
  for (const [v, text] of options) node.append(h("option", { value: v, text, selected: v === value }));
  return [h("label", { for: id, text: label }), node];
};
const encode = (obj) => JSON.stringify(obj, (k, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v));
const errorBox = h("p", { class: "hwlib-error", role: "alert", "aria-live": "polite", hidden: true });
const showError = (err) => {
  const python = err instanceof rt.PyError;
  errorBox.textContent = python ? `Cannot compute: ${err.message}` : `Internal error: ${err}`;
  errorBox.hidden = false;
  root.dataset.error = python ? `${err.pytype}: ${err.message}` : String(err);
  root.dataset.state = "error";
  delete root.dataset.result;
  if (!python) console.error(err);
};
const clearError = () => { errorBox.hidden = true; errorBox.textContent = ""; delete root.dataset.error; };
const markReady = (result, kwargs) => {
  root.dataset.result = encode(result);
  root.dataset.kwargs = encode(kwargs);
  root.dataset.state = "ready";
  if (!root.dataset.firstResultMs) root.dataset.firstResultMs = performance.now().toFixed(1);
};
window.hwlibWidgets = window.hwlibWidgets || {};
window.hwlibWidgets[uid] = { hw, DATA };
