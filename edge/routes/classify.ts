import { Hono } from "hono";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import { WARM_UP_HEADER } from "../../protocol/headers.ts";
import type { AppEnv } from "../app-env.ts";
import { limitBody } from "../middleware/body-limit.ts";
import { BUDGET_HEADER } from "../regions/budget.ts";
import { answerClassify } from "./classify-answer.ts";
import { contextLocation } from "./context-location.ts";
import { applyServed } from "./served-headers.ts";

/**
 * `POST /v1/classify`: the simple JSON API for apps. Most of these requests never reach this route: the
 * Worker's fast path (edge/fast-path/) answers them with the same code; this one takes what it declines.
 */
export const classify = new Hono<AppEnv>();

classify.post("/classify", limitBody(), async (c) => {
  const { model, served, rows, body } = await answerClassify(
    {
      runtime: c.get("runtime"),
      tenant: c.get("tenant"),
      startedAt: c.get("startedAt"),
      budgetHeader: c.req.header(BUDGET_HEADER),
      locate: () => contextLocation(c),
      warmUpHeader: c.req.header(WARM_UP_HEADER),
      named: (name) => c.set("model", name),
      trace: c.get("trace"),
    },
    await c.req.arrayBuffer(),
    c.req.header("content-type"),
  );
  applyServed(c, model, served, rows);
  return c.body(body, 200, { "content-type": "application/json" });
});

refuseOtherMethods(classify, { "/classify": ["POST"] });
