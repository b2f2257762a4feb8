import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineCommand } from "../../cli/command.ts";
import { RefusedError } from "../../cli/errors.ts";
import { defaultKeyDir, generateModelKeys, PRIVATE_KEY_FILE, PUBLIC_KEY_FILE, SIGNING_KEY_ENV } from "./keys.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

const DESCRIPTION = `Makes an Ed25519 key pair for signing model files. The private key goes to DIR/${PRIVATE_KEY_FILE}
(PKCS#8 PEM, readable by you only), the public key to DIR/${PUBLIC_KEY_FILE} (base64 of its 32 bytes).`;

const EPILOG = `Then: sign with --signing-key DIR/${PRIVATE_KEY_FILE} (or ${SIGNING_KEY_ENV}=...) on import, sign and
npm run models, and give the public key to the pools (--model-public-key / MODEL_PUBLIC_KEY) and to the
Worker (the MODEL_PUBLIC_KEY var).`;

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

export const keygenCommand = defineCommand({
  name: "keygen",
  summary: "make an Ed25519 key pair for signing model files (the private key outside the repository)",
  usage: "npm run model -- keygen [--out DIR] [--force]",
  description: DESCRIPTION,
  epilog: EPILOG,
  flags: {
    out: {
      type: "string",
      placeholder: "DIR",
      defaultText:
        "$XDG_CONFIG_HOME/edgecascade, else ~/.config/edgecascade: outside\nthe repository, so the private key is never committed",
      help: "where to write",
    },
    force: { type: "boolean", help: "replace an existing key pair there" },
  },
  async run(values, _args, out) {
    const dir = resolve(values.out ?? defaultKeyDir());
    const privatePath = join(dir, PRIVATE_KEY_FILE);
    const publicPath = join(dir, PUBLIC_KEY_FILE);
    if (!values.force && ((await exists(privatePath)) || (await exists(publicPath)))) {
      throw new RefusedError(
        `${dir} already holds a key pair; pass --force to replace it (its signatures stop verifying)`,
      );
    }
    const keys = await generateModelKeys();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(privatePath, keys.privatePem, { mode: 0o600 });
    await chmod(privatePath, 0o600);
    await writeFile(publicPath, `${keys.publicKey}\n`);
    const inRepo = !relative(REPO, dir).startsWith("..");
    if (inRepo) out.note(`note: ${dir} is inside the repository; *.key files are gitignored, keep it that way`);
    out.log(`private key  ${privatePath}  (keep it secret; sign with --signing-key or ${SIGNING_KEY_ENV})`);
    out.log(`public key   ${publicPath}`);
    out.log(`key id       ${keys.keyId}`);
    out.log(`MODEL_PUBLIC_KEY=${keys.publicKey}`);
    return 0;
  },
});
