// Page code of the LLM calculator (hwlib.web.llm_calculator). It draws the form and the table; the
// numbers, labels, formulas and refusals come from hw.call("hwlib.calculator.estimate", …), the
// JavaScript generated from hwlib's Python (the same function chapter 9 calls).
const D = DATA.defaults;
const accByName = Object.fromEntries(DATA.accelerators.map((a) => [a.name, a]));
const modelByName = Object.fromEntries(DATA.models.map((m) => [m.name, m]));
const SHAPE = [["vocab_size", "vocabulary V"], ["d_model", "width d (hidden)"], ["n_layers", "layers L"],
  ["n_heads", "attention heads h"], ["n_kv_heads", "KV heads h_kv"], ["d_ff", "MLP width d_ff"],
  ["max_context", "max context"], ["n_experts", "experts E (1: dense)"], ["top_k", "experts per token k"]];
const FLAGS = [["gated_mlp", "SwiGLU MLP (3 matrices)"], ["tied_embeddings", "output head tied to the embedding"],
  ["learned_positions", "learned position table"], ["bias", "biases and LayerNorm (GPT style)"]];
const KV_SHAPE = new Set(["n_layers", "n_kv_heads"]);   // what a bare parameter count still needs
const first = modelByName[D.model];

const inputs = {};
const add = (pair, extra = {}) => { inputs[pair[1].name] = pair[1]; return h("div", { class: "hwlib-field", ...extra }, ...pair); };
const modelOptions = [...DATA.models.map((m) => [m.name, m.name]), ["__config", "paste a config.json…"],
  ["__shape", "custom shape…"], ["__params", "parameter count…"]];
// A Hugging Face config.json, read by hwlib.models.from_config_dict (generated from the Python).
const configId = `${uid}-config_json`;
const configBox = h("textarea", { id: configId, name: "config_json", rows: 6, spellcheck: "false",
  placeholder: '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, ...}' });
inputs.config_json = configBox;
const configField = h("div", { class: "hwlib-field hwlib-wide", "data-config": "1" },
  h("label", { for: configId, text: "config.json (the file's text, as on the model's Hugging Face page)" }), configBox);
const group = (legend, ...children) => h("fieldset", {}, h("legend", { text: legend }), h("div", { class: "hwlib-grid" }, ...children));
const shapeSet = group("Model", add(select("model", "model", modelOptions, D.model), { class: "hwlib-field hwlib-wide" }),
  add(field("n_params", "parameters N", "7e9"), { "data-params": "1" }),
  ...SHAPE.map(([k, label]) => add(field(k, label, first[k]), { "data-shape": k })),
  add(field("head_dim", "head dim d_head", "128"), { "data-params": "1" }), configField);
const flagBoxes = {};
const flagRow = h("div", { class: "hwlib-flags" });
for (const [k, label] of FLAGS) {
  const id = `${uid}-${k}`;
  flagBoxes[k] = h("input", { id, type: "checkbox", name: k, checked: Boolean(first[k]) });
  flagRow.append(h("div", { class: "hwlib-flag", "data-shape": k }, flagBoxes[k], h("label", { for: id, text: label })));
}
shapeSet.append(flagRow);
const contextOf = (name) => String(Math.min(DATA.default_seq_len, modelByName[name].max_context));
const trainSet = group("Training",
  add(field("tokens", "training tokens D (empty: inference only)", D.tokens)),
  add(field("train_seq_len", "training sequence length s (tokens)", D.train_seq_len)),
  add(field("micro_batch", "micro-batch b (sequences per GPU step)", D.micro_batch)),
  add(select("attention", "attention kernel", DATA.attention.map((a) => [a, a === "flash" ? "FlashAttention" : "standard (scores stored)"]), "flash")),
  add(select("recompute", "activation recompute", DATA.recompute.map((r) => [r, r]), "none")),
  add(select("activations", "activation count", DATA.activations.map(([v, label]) => [v, label]), "fused")),
  add(select("zero_stage", "ZeRO stage", ["0", "1", "2", "3"].map((z) => [z, z]), "0")),
  add(select("fp32_grads", "gradients", [["false", "bf16 (16 B of state per parameter)"], ["true", "fp32, as for gradient accumulation (18 B)"]], "false")),
  add(select("finetune", "what is trained", DATA.finetune.map(([v, label]) => [v, label]), "none")),
  add(field("lora_rank", "LoRA rank r", 64)));
const serveSet = group("Serving",
  add(field("seq_len", "context per sequence (tokens)", D.seq_len)),
  add(field("batch", "serving batch B (sequences decoded together)", D.batch)),
  add(select("weights_dtype", "weights dtype", DATA.dtypes.map((d) => [d, d]), "bf16")),
  add(select("kv_dtype", "KV cache dtype", DATA.dtypes.map((d) => [d, d]), "bf16")));
const hwSet = group("Hardware",
  add(select("gpu", "accelerator (spec sheet)", DATA.accelerators.map((a) => [a.name, a.name]), D.gpu)),
  add(select("precision", "precision of the peak FLOP/s", [], "")), add(field("n_gpus", "GPUs G", D.n_gpus)),
  add(field("mfu", "MFU u (0 < u ≤ 1)", D.mfu)), add(field("scaling_efficiency", "scaling efficiency η (0 < η ≤ 1)", 1)),
  add(field("price_per_hour", "price, USD per GPU-hour (empty: the sheet's)", D.price_per_hour)));
const specNote = h("p", { class: "hwlib-note" });
hwSet.append(specNote);
const shapeNodes = () => shapeSet.querySelectorAll("[data-shape]");

const tbody = h("tbody");
const missing = h("ul", { class: "hwlib-note hwlib-missing" });
const table = h("table", { class: "hwlib-results" },
  h("caption", { text: "Every quantity with its formula and the numbers that went in (GB = 10⁹ bytes, GiB = 2³⁰ bytes). " +
                       "The code is hwlib.calculator.estimate, compiled to JavaScript when the book was built." }),
  h("thead", {}, h("tr", {}, ...["quantity", "value", "formula", "numbers"].map((t) => h("th", { scope: "col", text: t })))), tbody);
root.append(h("div", { class: "hwlib-form hwlib-stack" }, shapeSet, trainSet, serveSet, hwSet), errorBox,
  h("div", { class: "hwlib-scroll" }, table), missing);

const MODES = { __shape: "shape", __params: "params", __config: "config" };
const mode = () => MODES[inputs.model.value] || "named";
function applyModel() {
  const m = mode();
  if (m === "named") {
    const shape = modelByName[inputs.model.value];
    for (const [k] of SHAPE) inputs[k].value = String(shape[k]);
    for (const [k] of FLAGS) flagBoxes[k].checked = Boolean(shape[k]);
    // a new model starts from its own defaults: 4096 tokens, or its context when shorter
    inputs.seq_len.value = contextOf(shape.name);
    inputs.train_seq_len.value = contextOf(shape.name);
  }
  for (const node of shapeNodes()) node.hidden = m === "config" || (m === "params" && !KV_SHAPE.has(node.dataset.shape));
  for (const node of shapeSet.querySelectorAll("[data-params]")) node.hidden = m !== "params";
  configField.hidden = m !== "config";
  for (const [k] of FLAGS) flagBoxes[k].disabled = m === "params";
}
// A LoRA or QLoRA fine-tune keeps its frozen weights on every GPU: ZeRO does not apply, the rank does.
function applyFinetune() {
  const adapters = inputs.finetune.value !== "none";
  if (adapters) inputs.zero_stage.value = "0";
  inputs.zero_stage.disabled = adapters;
  inputs.lora_rank.disabled = !adapters;
}
function applyGpu() {
  const acc = accByName[inputs.gpu.value];
  const previous = inputs.precision.value;
  const have = DATA.precisions.filter((p) => p in acc.flops);
  inputs.precision.replaceChildren(h("option", { value: "", text: "auto: bf16, else fp16" }),
    ...have.map((p) => h("option", { value: p, text: p })));
  inputs.precision.value = have.includes(previous) ? previous : "";
  // the sheet's dated price, or none: never the previous part's price
  inputs.price_per_hour.value = acc.price_per_hour_usd === null ? "" : String(acc.price_per_hour_usd);
  specNote.textContent = `Spec sheet: ${acc.name}, ${FORMAT.bytes(acc.memory_bytes)} at ${units("format_bandwidth", { x: acc.bandwidth })}` +
    `; dense peaks ${have.map((p) => `${p} ${FORMAT.rate(acc.flops[p])}`).join(", ")}. Sources: ${acc.source_bandwidth}.` +
    (acc.price_per_hour_usd === null ? ` The sheet has no price for the ${acc.name}: the cost uses the price you enter.` : "");
}

// Text read as hwlib.units.parse_number reads it ("15T", "7e9", "40%", "4k" for lengths); an empty or
// unreadable field raises a ValueError that names the field by its label.
const CONTEXT_FIELDS = new Set(["seq_len", "train_seq_len", "max_context"]);
const readField = (key) => hw.call("hwlib.units.parse_number",
  { text: inputs[key].value, name: fieldLabel(inputs[key]), context: CONTEXT_FIELDS.has(key) });
const readOptional = (key) => (inputs[key].value.trim() === "" ? null : readField(key));
function readKwargs() {
  const m = mode();
  const kw = {};
  const shape = {};
  let config = null;
  if (m === "named") kw.model = inputs.model.value;
  else if (m === "config") {
    try { config = JSON.parse(configBox.value); } catch (e) {
      throw new rt.PyError("ValueError", `the config.json field is not JSON (${e.message}); paste the whole file`);
    }
    kw.model = hw.call("hwlib.models.from_config_dict", { cfg: config, name: "pasted config", source: "pasted config.json" });
  }
  else if (m === "shape") {
    for (const [k] of SHAPE) shape[k] = readField(k);
    for (const [k] of FLAGS) shape[k] = flagBoxes[k].checked;
    kw.model = hw.call("hwlib.models.custom", { name: "custom shape", ...shape });
  } else {
    for (const k of ["n_params", "n_layers", "n_kv_heads", "head_dim"]) kw[k] = readField(k);
  }
  for (const k of ["seq_len", "batch", "micro_batch", "n_gpus", "mfu", "scaling_efficiency"]) kw[k] = readField(k);
  kw.train_seq_len = readOptional("train_seq_len");      // empty: 4096 or the model's context
  kw.tokens = readOptional("tokens");                    // empty: inference only, as in Python
  kw.price_per_hour = readOptional("price_per_hour");    // empty: the spec sheet's price
  kw.precision = inputs.precision.value || null;
  kw.gpu = inputs.gpu.value;
  for (const k of ["weights_dtype", "kv_dtype", "recompute", "attention", "activations"]) kw[k] = inputs[k].value;
  kw.zero_stage = Number(inputs.zero_stage.value);
  kw.fp32_grads = inputs.fp32_grads.value === "true";
  kw.finetune = inputs.finetune.value;
  kw.lora_rank = readField("lora_rank");
  return { kw, record: { mode: m, shape, config, ...kw, model: m === "named" ? kw.model : null } };
}

function update() {
  try {
    clearError();
    const { kw, record } = readKwargs();
    const est = hw.call("hwlib.calculator.estimate", kw);
    const rows = Object.values(est.quantities).map((q) => ({ ...q, text: hw.call("hwlib.calculator.Quantity.text", { self: q }) }));
    tbody.replaceChildren(...rows.map((r) => h("tr", {}, h("th", { scope: "row", text: r.label }),
      h("td", { class: "hwlib-value" }, h("output", { "data-key": r.key, "data-value": String(r.value), text: r.text })),
      h("td", { class: "hwlib-formula" }, h("code", { text: r.formula })), h("td", { class: "hwlib-inputs", text: r.inputs }))));
    missing.replaceChildren(...est.warnings.map((w) => h("li", { class: "hwlib-warning", text: `Note: ${w}` })),
      ...Object.entries(est.missing).map(([k, why]) => h("li", { text: `${k} not computed: it needs ${why}` })));
    markReady({ rows: rows.map(({ __class__, ...r }) => r), missing: est.missing, warnings: est.warnings }, record);
  } catch (err) {
    showError(err);
    tbody.replaceChildren();
    missing.replaceChildren();
  }
}

root.addEventListener("input", (event) => {
  if (event.target === inputs.model) applyModel();
  if (event.target === inputs.gpu) applyGpu();
  if (event.target === inputs.finetune) applyFinetune();
  if (event.target === configBox) {   // a new config starts from its own lengths, as a named model does
    try {
      const shape = hw.call("hwlib.models.from_config_dict", { cfg: JSON.parse(configBox.value) });
      inputs.seq_len.value = inputs.train_seq_len.value = String(Math.min(DATA.default_seq_len, shape.max_context));
    } catch (e) { /* update() shows why the config cannot be read */ }
    update();
    return;
  }
  if (mode() === "named" && (SHAPE.some(([k]) => event.target === inputs[k]) || event.target.type === "checkbox")) {
    inputs.model.value = "__shape";          // editing a named shape makes it a custom one
    applyModel();
  }
  update();
});
applyModel();
applyGpu();
applyFinetune();
update();
