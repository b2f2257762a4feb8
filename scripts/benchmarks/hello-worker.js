// The baseline of `npm run bench:edge`: the smallest Worker there is, run by the same Miniflare/workerd on
// the same kind of socket as the edge Worker, so the ratio shows what the edge's own work costs. It reads
// the request body (the bench sends every scenario the same POST): workerd resets a keep-alive connection
// whose request body a Worker left unread.
export default {
  async fetch(request) {
    await request.arrayBuffer();
    return new Response("Hello World!");
  },
};
