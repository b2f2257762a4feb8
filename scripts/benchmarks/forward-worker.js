// The floor of `npm run bench:edge`'s forward overhead: the least a Worker can do to forward a call to a
// region (read the body, POST it with the caller's content type and edgecascade headers, return the answer),
// run by the same Miniflare/workerd as the edge Worker and reaching the pool the same way (the REGION service
// binding, as the local stack binds its regions). What the edge's forward costs beyond this is its own.
const FORWARDED = ["content-type", "x-edgecascade-timestamp", "x-edgecascade-signature", "x-edgecascade-deadline-ms"];

export default {
  async fetch(request, env) {
    const headers = {};
    for (const name of FORWARDED) {
      const value = request.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    const answer = await env.REGION.fetch(`${env.TARGET}${new URL(request.url).pathname}`, {
      method: "POST",
      headers,
      body: await request.arrayBuffer(),
    });
    return new Response(await answer.arrayBuffer(), {
      status: answer.status,
      headers: { "content-type": answer.headers.get("content-type") ?? "application/json" },
    });
  },
};
