#!/usr/bin/env bash
# npm run models: rebuild the two sample models from scratch, reproducibly.
#   1. scripts/build_models.py trains them (Debian's sklearn, onnx and numpy) and exports ONNX files and CSVs
#      of the rows they were not trained on;
#   2. `npm run model -- quantize` makes the digits edge variant int8;
#   3. `npm run model -- import` validates, calibrates and measures each, into a fresh repository;
#   4. the sample models in models/ are replaced by those (other models there are left alone).
# With MODEL_SIGNING_KEY=<private key file> (npm run model -- keygen), import signs every file it writes.
set -euo pipefail
cd "$(dirname "$0")/.."
python=""
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import sklearn, onnx, numpy' 2>/dev/null; then python="$py"; break; fi
done
if [ -z "$python" ]; then
  cat >&2 <<'MSG'
npm run models needs Python 3 with scikit-learn, onnx and numpy. On Debian/Ubuntu:
  sudo apt-get update && sudo apt-get install -y python3-sklearn python3-onnx python3-numpy
(The built models are committed: running and testing edgecascade needs no Python.)
MSG
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" scripts/build_models.py "$work/raw"
model() { node tools/model.ts "$@"; }
model quantize --in "$work/raw/digits-edge-fp32.onnx" --out "$work/raw/digits-edge.onnx"
model import --name digits --models "$work/models" \
  --full "$work/raw/digits-full.onnx" --edge "$work/raw/digits-edge.onnx" --data "$work/raw/digits.csv" --agreement 0.99 \
  --demo drawing-8x8 --description "Handwritten digits: fp32 MLP 64-256-128-10 (ReLU, softmax) on raw 8x8 pixel values 0-16" \
  --source "UCI Optical Recognition of Handwritten Digits (E. Alpaydin, C. Kaynak), via Debian python3-sklearn"
model import --name breast-cancer --models "$work/models" \
  --full "$work/raw/breast-cancer-full.onnx" --edge "$work/raw/breast-cancer-edge.onnx" \
  --data "$work/raw/breast-cancer.csv" --labels malignant,benign --agreement 0.97 \
  --description "Breast cancer diagnosis from 30 cell-nucleus features: random forest of 100 trees (ai.onnx.ml TreeEnsembleClassifier)" \
  --source "UCI Breast Cancer Wisconsin (Diagnostic) (W. Wolberg, W. Street, O. Mangasarian), via Debian python3-sklearn"

for name in digits digits-edge breast-cancer breast-cancer-edge; do
  rm -rf "models/$name"
  mv "$work/models/$name" "models/$name"
done
echo "models/ rebuilt: digits, digits-edge, breast-cancer, breast-cancer-edge"
