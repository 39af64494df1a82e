// Page code of the roofline explorer (hwlib.web.roofline_explorer): form, SVG plot and kernel
// table. Every number comes from hw.call("hwlib.roofline.…"), generated from hwlib's Python.
const D = DATA.defaults;
const accByName = Object.fromEntries(DATA.accelerators.map((a) => [a.name, a]));
// Okabe & Ito colour-blind-safe palette, with a different marker shape per kernel as well.
const COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];
const SHAPES = ["circle", "square", "triangle", "diamond", "triangle-down", "plus"];
const inputs = {};
const add = (pair) => { inputs[pair[1].name] = pair[1]; return h("div", { class: "hwlib-field" }, ...pair); };
const sliderId = `${uid}-slider`;
const slider = h("input", { id: sliderId, type: "range", min: "-2", max: "5", step: "0.01", value: String(Math.log10(D.intensity)),
                            "aria-label": "arithmetic intensity, log scale" });
const form = h("div", { class: "hwlib-form hwlib-form-row" },
  add(select("accelerator", "accelerator", DATA.accelerators.map((a) => [a.name, a.name]), D.accelerator)),
  add(select("precision", "precision", [], "")),
  add(field("intensity", "intensity I (FLOP/byte)", D.intensity)),
  h("div", { class: "hwlib-field hwlib-slider" }, h("label", { for: sliderId, text: "slide I (0.01 … 100 000, log scale)" }), slider));
const readout = h("p", { class: "hwlib-readout", "aria-live": "polite" });
const W = 640, H = 400, M = { l: 92, r: 18, t: 16, b: 52 };
const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "hwlib-plot" });
const tbody = h("tbody");
const table = h("table", { class: "hwlib-results hwlib-kernels" },
  h("caption", { text: "Kernels on this roofline (their intensity in the chosen precision)" }),
  h("thead", {}, h("tr", {}, ...["", "kernel", "intensity I", "attainable", "bound"].map((t) => h("th", { scope: "col", text: t })))), tbody);
root.append(form, errorBox, readout, h("div", { class: "hwlib-plot-box" }, svg), h("div", { class: "hwlib-scroll" }, table));

function applyAccelerator() {
  const acc = accByName[inputs.accelerator.value];
  const previous = inputs.precision.value || D.precision;
  const have = DATA.precisions.filter((p) => p in acc.flops);
  inputs.precision.replaceChildren(...have.map((p) => h("option", { value: p, text: p })));
  inputs.precision.value = have.includes(previous) ? previous : have.includes("bf16") ? "bf16" : have.includes("fp16") ? "fp16" : have[0];
}
const marker = (shape, x, y, r, color, extra = {}) => {
  const common = { fill: color, stroke: "var(--hwlib-bg)", "stroke-width": "1", ...extra };
  if (shape === "circle") return s("circle", { cx: x, cy: y, r, ...common });
  if (shape === "square") return s("rect", { x: x - r, y: y - r, width: 2 * r, height: 2 * r, ...common });
  const pts = { triangle: [[0, -1.2], [1.1, 0.9], [-1.1, 0.9]], "triangle-down": [[0, 1.2], [1.1, -0.9], [-1.1, -0.9]],
    diamond: [[0, -1.3], [1.1, 0], [0, 1.3], [-1.1, 0]],
    plus: [[-0.35, -1.1], [0.35, -1.1], [0.35, -0.35], [1.1, -0.35], [1.1, 0.35], [0.35, 0.35], [0.35, 1.1], [-0.35, 1.1], [-0.35, 0.35], [-1.1, 0.35], [-1.1, -0.35], [-0.35, -0.35]] }[shape];
  return s("polygon", { points: pts.map(([a, b]) => `${x + a * r},${y + b * r}`).join(" "), ...common });
};

function draw(acc, precision, peak, point, kernels) {
  const xs = [point.ridge, readNumber(inputs.intensity), ...kernels.map((k) => k.intensity)];
  const x0 = 10 ** Math.floor(Math.log10(Math.min(...xs) / 2)), x1 = 10 ** Math.ceil(Math.log10(Math.max(...xs) * 2));
  const y1 = 10 ** Math.ceil(Math.log10(peak * 1.5));
  const y0 = 10 ** Math.floor(Math.log10(Math.min(peak, acc.bandwidth * x0)));
  const X = (v) => M.l + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * (W - M.l - M.r);
  const Y = (v) => H - M.b - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * (H - M.t - M.b);
  svg.replaceChildren();
  const grid = s("g", { class: "hwlib-grid" });
  for (let e = Math.log10(x0); e <= Math.log10(x1) + 1e-9; e++) {
    const x = X(10 ** e);
    grid.append(s("line", { x1: x, x2: x, y1: M.t, y2: H - M.b }));
    grid.append(s("text", { x, y: H - M.b + 16, "text-anchor": "middle" }, rt.format(10 ** e, "g")));
  }
  for (let e = Math.log10(y0); e <= Math.log10(y1) + 1e-9; e++) {
    const y = Y(10 ** e);
    grid.append(s("line", { x1: M.l, x2: W - M.r, y1: y, y2: y }));
    grid.append(s("text", { x: M.l - 6, y: y + 4, "text-anchor": "end" }, units("format_si", { x: 10 ** e, unit: "FLOP/s", digits: 1 })));
  }
  grid.append(s("text", { x: (M.l + W - M.r) / 2, y: H - 10, "text-anchor": "middle", class: "hwlib-axis-title" }, "arithmetic intensity I (FLOP/byte)"));
  grid.append(s("text", { x: 14, y: (M.t + H - M.b) / 2, "text-anchor": "middle", class: "hwlib-axis-title",
                          transform: `rotate(-90 14 ${(M.t + H - M.b) / 2})` }, `attainable (${precision})`));
  svg.append(grid);
  // The roof: the attainable performance at the plot's edges and at the ridge, computed by hwlib.
  const at = (I) => hw.call("hwlib.roofline.attainable", { intensity: I, peak_flops: peak, bandwidth: acc.bandwidth });
  const roof = [[x0, at(x0)], [point.ridge, at(point.ridge)], [x1, at(x1)]];
  svg.append(s("polyline", { class: "hwlib-roof", points: roof.map(([a, b]) => `${X(a)},${Y(b)}`).join(" ") }));
  svg.append(s("line", { class: "hwlib-ridge", x1: X(point.ridge), x2: X(point.ridge), y1: Y(peak), y2: H - M.b }));
  svg.append(s("text", { x: X(point.ridge) - 6, y: Y(peak) - 8, "text-anchor": "end", class: "hwlib-ridge-label" },
    `ridge I* = ${rt.format(point.ridge, ".3g")}`));
  kernels.forEach((k, i) => {
    const g = s("g", { class: "hwlib-kernel" });
    g.append(marker(SHAPES[i % SHAPES.length], X(k.intensity), Y(k.attainable), 6.5, COLORS[i % COLORS.length]));
    g.append(s("title", {}, `${k.label}: I = ${rt.format(k.intensity, ".3g")} FLOP/byte, ${FORMAT.rate(k.attainable)}, ${k.bound}-bound`));
    svg.append(g);
  });
  const I = readNumber(inputs.intensity);
  svg.append(s("line", { class: "hwlib-guide", x1: X(I), x2: X(I), y1: Y(point.attainable), y2: H - M.b }));
  svg.append(s("circle", { class: "hwlib-you", cx: X(I), cy: Y(point.attainable), r: 9 }));
  svg.setAttribute("aria-label", `Log-log roofline of the ${acc.name} in ${precision}: a memory roof rising with intensity up to the ridge at ` +
    `${rt.format(point.ridge, ".3g")} FLOP/byte, then a flat compute roof at ${FORMAT.rate(peak)}. The chosen intensity ` +
    `${rt.format(I, ".3g")} FLOP/byte is ${point.bound}-bound at ${FORMAT.rate(point.attainable)}. Kernels marked: ` +
    kernels.map((k) => `${k.label} (${rt.format(k.intensity, ".3g")} FLOP/byte)`).join("; ") + ".");
}

function update() {
  try {
    clearError();
    const acc = accByName[inputs.accelerator.value];
    const precision = inputs.precision.value;
    const peak = acc.flops[precision];
    const kwargs = { intensity: readNumber(inputs.intensity), peak_flops: peak, bandwidth: acc.bandwidth };
    const at = (kw) => ({ ridge: hw.call("hwlib.roofline.ridge_point", { peak_flops: kw.peak_flops, bandwidth: kw.bandwidth }),
      attainable: hw.call("hwlib.roofline.attainable", kw), bound: hw.call("hwlib.roofline.bound", kw) });
    const point = at(kwargs);
    point.fraction_of_peak = point.attainable / peak;   // for the readout only
    // A kernel's intensity in the chosen precision: the element size is the precision's own.
    const kernels = DATA.kernels.map((k) => {
      const intensity = hw.call(k.fn, { ...k.kwargs, bytes_per_element: precision });
      return { label: k.label, intensity, ...at({ intensity, peak_flops: peak, bandwidth: acc.bandwidth }) };
    });
    readout.replaceChildren(
      h("strong", { text: `${FORMAT.rate(point.attainable)}` }),
      ` attainable at I = ${rt.format(kwargs.intensity, ".3g")} FLOP/byte: ${rt.format(point.fraction_of_peak, ".1%")} of the ` +
      `${precision} peak ${FORMAT.rate(peak)}. `,
      h("strong", { class: `hwlib-bound-${point.bound}`, text: `${point.bound}-bound` }),
      point.bound === "memory" ? ` (I < ridge I* = π/β = ${rt.format(point.ridge, ".3g")} FLOP/byte): min(π, β·I) = β·I.`
        : ` (I ≥ ridge I* = π/β = ${rt.format(point.ridge, ".3g")} FLOP/byte): min(π, β·I) = π.`);
    tbody.replaceChildren(...kernels.map((k, i) => {
      const key = h("td", {});
      const mini = s("svg", { viewBox: "-9 -9 18 18", width: "16", height: "16", "aria-hidden": "true" });
      mini.append(marker(SHAPES[i % SHAPES.length], 0, 0, 6.5, COLORS[i % COLORS.length]));
      key.append(mini);
      return h("tr", {}, key, h("td", { text: k.label }), h("td", { text: rt.format(k.intensity, k.intensity >= 1000 ? ",.0f" : ".3g") }),
        h("td", { text: FORMAT.rate(k.attainable) }), h("td", { text: k.bound }));
    }));
    draw(acc, precision, peak, point, kernels);
    markReady({ ...point, kernels }, { ...kwargs, accelerator: acc.name, precision });
  } catch (err) {
    showError(err);
    readout.replaceChildren();
  }
}

root.addEventListener("input", (event) => {
  if (event.target === inputs.accelerator) applyAccelerator();
  if (event.target === slider) inputs.intensity.value = rt.format(10 ** Number(slider.value), ".3g");
  if (event.target === inputs.intensity) {
    const v = Number(inputs.intensity.value);
    if (v > 0) slider.value = String(Math.log10(v));
  }
  update();
});
applyAccelerator();
update();
