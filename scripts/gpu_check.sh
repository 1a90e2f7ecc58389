#!/usr/bin/env bash
# A few PPO updates on a GPU: prints learner steps per second (rollout, update, total) per variant,
# CPU vs CUDA. Installs nothing: uses .venv when present, else the python on PATH (torch needed).
# Usage: scripts/gpu_check.sh            (about 1-2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
exec timeout 170 "$PY" scripts/gpu_check.py "$@"
