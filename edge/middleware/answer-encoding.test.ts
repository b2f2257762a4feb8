import { describe, expect, it } from "vitest";
import { clientAcceptEncoding, v2AnswerCoding } from "./answer-encoding.ts";

const infer = { method: "POST", path: "/v2/models/digits/infer" };

describe("v2AnswerCoding", () => {
  it("compresses only a 200 infer answer, with the coding Triton would choose", () => {
    expect(v2AnswerCoding({ ...infer, acceptEncoding: "gzip, deflate" }, 200)).toBe("gzip");
    expect(v2AnswerCoding({ ...infer, acceptEncoding: "deflate" }, 200)).toBe("deflate");
    expect(v2AnswerCoding({ ...infer, path: "/v2/models/digits/versions/1/infer/", acceptEncoding: "gzip" }, 200)).toBe(
      "gzip",
    );
    expect(v2AnswerCoding({ ...infer, acceptEncoding: "br" }, 200)).toBe("identity");
    expect(v2AnswerCoding({ ...infer, acceptEncoding: "gzip" }, 400)).toBe("identity");
  });

  it("marks every other answer identity when the request has Accept-Encoding, and leaves the rest alone", () => {
    for (const path of ["/v2", "/v2/health/ready", "/v2/models/digits", "/v2/models/digits/config"]) {
      expect(v2AnswerCoding({ method: "GET", path, acceptEncoding: "gzip, deflate" }, 200)).toBe("identity");
    }
    expect(v2AnswerCoding({ ...infer, acceptEncoding: undefined }, 200)).toBeUndefined();
    expect(v2AnswerCoding({ ...infer, acceptEncoding: "" }, 200)).toBeUndefined();
  });
});

describe("clientAcceptEncoding", () => {
  it("is the client's own header, which Cloudflare keeps in cf.clientAcceptEncoding when it replaces it", () => {
    const seen = (cf: unknown, header?: string) =>
      clientAcceptEncoding({
        cf,
        headers: new Headers(header ? { "accept-encoding": header } : {}),
      } as unknown as Request);
    expect(seen({ clientAcceptEncoding: "gzip, deflate" }, "br, gzip")).toBe("gzip, deflate");
    expect(seen({ clientAcceptEncoding: "" }, "br, gzip")).toBeUndefined();
    expect(seen(undefined, "deflate")).toBe("deflate");
    expect(seen({}, undefined)).toBeUndefined();
  });
});
