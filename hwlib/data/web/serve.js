// Page code of the serving planner (hwlib.web.serving_planner): a form and a table. It computes
// nothing itself: `hwlib.serve_plan.plan`, generated from the Python with the simulator it runs,
// gives every number, so the page reproduces `hwlib serve` request for request.
const D = DATA.defaults;
const F = DATA.formulas;
const gpuOptions = DATA.accelerators.map((a) => [a.name, a.name]);
const modelOptions = DATA.models.map((m) => [m, m]);
const inputs = [
  ...select("model", "model", modelOptions, D.model),
  ...select("gpu", "GPU", gpuOptions, D.gpu),
  ...select("precision", "precision", [["", "the GPU's 16-bit"], ...DATA.precisions.map((p) => [p, p])], ""),
  ...field("rate_rps", "arrival rate (requests/s)", D.rate_rps),
  ...field("prompt_mean", "mean prompt (tokens)", D.prompt_mean),
  ...field("output_mean", "mean output (tokens)", D.output_mean),
  ...select("dist", "lengths", [["geometric", "geometric (chat-like)"], ["fixed", "fixed at the mean"]], "geometric"),
  ...field("ttft_slo_s", "TTFT objective (s)", D.ttft_slo_s),
  ...field("tpot_slo_s", "TPOT objective (s)", D.tpot_slo_s),
  ...field("percentile", "at percentile", D.percentile),
  ...select("chunked", "scheduling", [["yes", "chunked prefill"], ["no", "prefill-first"]], "yes"),
  ...field("prefix_hit_rate", "prefix-cache hit rate", D.prefix_hit_rate),
  ...select("disaggregated", "prefill/decode", [["no", "on the same GPUs"], ["yes", "disaggregated"]], "no"),
  ...field("n_requests", "simulated requests", D.n_requests),
];
const form = h("div", { class: "hwlib-form" }, ...inputs);
const summary = h("p", { class: "hwlib-readout", "aria-live": "polite" });
const table = h("table", { class: "hwlib-table" });
root.append(form, errorBox, summary, h("div", { class: "hwlib-scroll" }, table));
const value = (key) => root.querySelector(`#${uid}-${key}`).value;
const number = (key) => readNumber(root.querySelector(`#${uid}-${key}`));
const kwargsOf = () => ({
  model: value("model"), gpu: value("gpu"), precision: value("precision") || null,
  rate_rps: number("rate_rps"), prompt_mean: number("prompt_mean"), output_mean: number("output_mean"),
  prompt_dist: value("dist"), output_dist: value("dist"), ttft_slo_s: number("ttft_slo_s"),
  tpot_slo_s: number("tpot_slo_s"), percentile: number("percentile"), chunked: value("chunked") === "yes",
  prefix_hit_rate: number("prefix_hit_rate"), disaggregated: value("disaggregated") === "yes",
  n_requests: number("n_requests"),
});
const row = (cells, head = false) => h("tr", {}, ...cells.map((c) => h(head ? "th" : "td", { text: c })));
const draw = () => {
  clearError();
  let kwargs, plan;
  try {
    kwargs = kwargsOf();
    plan = hw.call("hwlib.serve_plan.plan", kwargs);
  } catch (err) { showError(err); return; }
  table.replaceChildren(row(["TP", "replicas", "GPUs", "KV blocks", "max concurrency",
    `TTFT p${rt.format(plan.inputs.percentile, "g")}`, `TPOT p${rt.format(plan.inputs.percentile, "g")}`,
    "goodput (req/s)", "$/h", "$/M tokens"], true));
  for (const c of plan.candidates) {
    if (c.replicas === null) { table.append(row([`TP${c.tp}`, c.reason, "", "", "", "", "", "", "", ""])); continue; }
    const j = c.judged;
    table.append(row([`TP${c.tp}${plan.best && plan.best.tp === c.tp ? " ← cheapest" : ""}`, String(c.replicas),
      String(c.gpus), rt.format(c.kv_blocks, ",.0f"), String(c.max_concurrency), FORMAT.seconds(j.ttft_s),
      FORMAT.seconds(j.tpot_s), rt.format(c.goodput_rps, ".3g"),
      c.usd_per_hour === null ? "no price" : FORMAT.usd(c.usd_per_hour),
      c.usd_per_million_tokens === null ? "" : FORMAT.usd(c.usd_per_million_tokens)]));
  }
  table.append(row(["formulas", `R: ${F["plan.replica_rate_rps"]}`, F["plan.gpus"], F["plan.kv_blocks"], F.max_concurrency, F["plan.slo"], "",
    F["plan.goodput_rps"], F["plan.usd_per_hour"], F["plan.usd_per_million_tokens"]]));
  summary.textContent = plan.best === null
    ? "No configuration meets both objectives within the GPUs allowed: relax an objective."
    : `Cheapest: TP${plan.best.tp} × ${plan.best.replicas} = ${plan.best.gpus} GPU(s) of ${plan.inputs.gpu} in ` +
      `${plan.inputs.precision}; each replica's step is ${F.step_time_s}. KV fragmentation ` +
      `${rt.format(plan.fragmentation, ".2%")} (${F.fragmentation}).`;
  markReady(plan, kwargs);
};
form.addEventListener("change", draw);
draw();
