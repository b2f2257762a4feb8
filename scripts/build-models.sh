#!/usr/bin/env bash
# Rebuilds models/ with scripts/build_models.py, using a Python that has Debian's sklearn, onnx and numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import sklearn, onnx, numpy' 2>/dev/null; then
    exec "$py" scripts/build_models.py "$@"
  fi
done
cat >&2 <<'MSG'
npm run models needs Python 3 with scikit-learn, onnx and numpy. On Debian/Ubuntu:
  sudo apt-get update && sudo apt-get install -y python3-sklearn python3-onnx python3-numpy
(The built models are committed: running and testing edgecascade needs no Python.)
MSG
exit 1
