#!/usr/bin/env bash
# Refresh the demo's code object from the emulator's `exceptions` fixture
# (whose HIP source and build live in backend-amd/emulator/fixtures/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cp "$here/../../backend-amd/emulator/fixtures/gfx942/exceptions.co" "$here/exceptions.gfx942.co"
echo "regen: $here/exceptions.gfx942.co"
