import { isPublicKeyText } from "../../protocol/model-signature.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/flags.ts";

/** Whom the pool trusts: the models' signing key, the edge's shared secret, the operators' admin token. */
export const TRUST_OPTIONS = defineTable({
  /**
   * Ed25519 public key (base64 of its 32 raw bytes) every model file must be signed with; a file unsigned or
   * signed otherwise is refused. Unset: unsigned models are served, and the pool says so loudly.
   */
  modelPublicKey: {
    flag: "model-public-key",
    env: "MODEL_PUBLIC_KEY",
    type: "parsed",
    placeholder: "KEY",
    defaultText: "none",
    help: "serve only model files signed by this Ed25519 key (base64, from `npm run model -- keygen`); without one, unsigned models are served",
    parse(raw): string {
      if (!isPublicKeyText(raw)) {
        throw new UsageError(
          "must be an Ed25519 public key: base64 of 32 bytes, as `npm run model -- keygen` prints it",
        );
      }
      return raw.trim();
    },
  },
  /** When set, inference requests must carry the edge's signature. Environment only. */
  sharedSecret: {
    flag: false,
    env: "REGIONAL_SHARED_SECRET",
    type: "string",
    placeholder: "SECRET",
    defaultText: "unset",
    help: 'inference endpoints require the edge\'s HMAC signature (401 without); gRPC inference requires "authorization: Bearer <token>" metadata, the token being hex HMAC-SHA256("edgecascade-grpc-v1") with the secret (UNAUTHENTICATED without)',
  },
  /** When set, model control accepts `Authorization: Bearer <token>`; unset, it is refused. Environment only. */
  adminToken: {
    flag: false,
    env: "ADMIN_TOKEN",
    type: "string",
    placeholder: "TOKEN",
    defaultText: "unset",
    help: 'model control requires "Authorization: Bearer <token>" (refused when unset)',
  },
});
