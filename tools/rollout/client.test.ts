import { describe, expect, it } from "vitest";
import { failureReason } from "./client.ts";

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("failureReason: a refusal is told from a pool never reached", () => {
  it("words an answer by its status and the pool's own error, with a hint for the token", () => {
    const refused = failureReason({ status: 401, body: '{"error":"invalid admin token","code":"unauthorized"}' });
    expect(refused).toBe("HTTP 401: invalid admin token (is ADMIN_TOKEN the pools' admin token?)");
    expect(failureReason({ status: 409, body: '{"error":"revision 3 is older","code":"conflict"}' })).toBe(
      "HTTP 409: revision 3 is older",
    );
    expect(failureReason({ status: 502, body: "<html>bad gateway</html>" })).toBe("HTTP 502: <html>bad gateway</html>");
  });

  it("words a call that reached no pool by its code: DNS, a refused connection, a timeout", () => {
    expect(failureReason({ error: errno("ENOTFOUND", "getaddrinfo ENOTFOUND pool-us.example") })).toBe(
      "unreachable (ENOTFOUND): getaddrinfo ENOTFOUND pool-us.example",
    );
    expect(failureReason({ error: errno("ECONNREFUSED", "connect ECONNREFUSED 10.0.0.1:8000") })).toBe(
      "unreachable (ECONNREFUSED): connect ECONNREFUSED 10.0.0.1:8000",
    );
    expect(failureReason({ error: errno("UND_ERR_HEADERS_TIMEOUT", "Headers Timeout Error") })).toBe(
      "unreachable (UND_ERR_HEADERS_TIMEOUT): Headers Timeout Error",
    );
  });
});
