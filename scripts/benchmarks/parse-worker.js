// A reference of `npm run bench:edge`, not its baseline: what any Worker that answers a classify request pays
// before doing anything of its own — read and parse the JSON body, check its inputs, answer JSON of the
// classify answer's shape (a constant: no model, no cache). The edge Worker's cache hit and edge answer
// against it show the edge's own work; hello-world against it shows what reading a JSON request costs workerd.
const scores = [0.001, 0.002, 0.003, 0.98, 0.001, 0.002, 0.003, 0.004, 0.002, 0.002];

export default {
  async fetch(request) {
    const body = await request.json();
    if (!Array.isArray(body.inputs)) {
      return new Response('{"error":"inputs must be an array"}', {
        status: 400,
        headers: { "content-type": "application/json" },
      });
    }
    const answer = { model: body.model, predictions: [{ class: 3, label: "3", confidence: 0.98, scores }] };
    return new Response(JSON.stringify(answer), { headers: { "content-type": "application/json" } });
  },
};
